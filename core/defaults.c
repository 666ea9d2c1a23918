/* SPDX-License-Identifier: MIT */
/* Defaults and optional inputs: their checks at load, the host's copy of
 * each default, and filling in the inputs a call left out. A default is
 * copied so that every mode (and a worker's imported schema) hands the
 * plugin the same bytes, and so that the plugin's static data is read only
 * once. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "codecs/utf8.h"

#define ALIGN_UP(n) (((n) + TSR_ALIGNMENT - 1) / TSR_ALIGNMENT * TSR_ALIGNMENT)

static int refuse(tsr_error *err, const char *component, const char *what, const char *field,
                  const char *cause) {
    error_set(err, TSR_E_DESCRIPTOR, "component '%s': %s '%s': %s", component, what, field,
              cause);
    return TSR_E_DESCRIPTOR;
}

int backend_default_mismatch(const tsr_field *f, const tsr_dim *dims, const tsr_array *d,
                             char *why, size_t n) {
    if (d->dtype != f->dtype) {
        const char *given = tsr_dtype_name(d->dtype);
        snprintf(why, n, "its default has dtype %s, the field is %s", given ? given : "(invalid)",
                 tsr_dtype_name(f->dtype));
        return -1;
    }
    int any_rank = f->rank == TSR_RANK_ANY;
    if (any_rank ? (d->rank < 0 || d->rank > TSR_MAX_FIELD_RANK) : d->rank != f->rank) {
        snprintf(why, n, "its default has rank %d, the field %d", (int)d->rank, (int)f->rank);
        return -1;
    }
    /* Fixed dims must agree; symbols and wildcards take any size (a symbol
     * is bound at call time, like a given input's). */
    for (int32_t i = 0; i < d->rank; i++) {
        if (d->shape[i] < 0) {
            snprintf(why, n, "its default has dimension %d of size %lld", (int)i,
                     (long long)d->shape[i]);
            return -1;
        }
        if (!any_rank && !dims[i].symbol && dims[i].size != TSR_DIM_ANY && d->shape[i] != dims[i].size) {
            snprintf(why, n, "its default has size %lld in dimension %d, the field declares %lld",
                     (long long)d->shape[i], (int)i, (long long)dims[i].size);
            return -1;
        }
    }
    size_t bytes;
    if (shape_bytes(d, &bytes) != 0 || bytes > TSR_MAX_DEFAULT_BYTES) {
        snprintf(why, n, "its default is larger than %zu bytes", TSR_MAX_DEFAULT_BYTES);
        return -1;
    }
    if (bytes > 0 && !d->data) {
        snprintf(why, n, "its default has elements but no data");
        return -1;
    }
    return 0;
}

int defaults_load(const char *component, field_info *fi, const tsr_field *f, const char *what,
                  tsr_error *err) {
    const tsr_array *d = f->default_value;
    int optional = (f->flags & TSR_FIELD_OPTIONAL) != 0;
    int input = strcmp(what, "input") == 0;
    fi->field.default_value = NULL;
    if (!input && (d || optional))
        return refuse(err, component, what, f->name,
                      d ? "an output cannot have a default" : "an output cannot be optional");
    if (!d) return 0;
    if (optional)
        return refuse(err, component, what, f->name,
                      "it is both optional and has a default (give it one or the other)");
    char why[200];
    if (backend_default_mismatch(f, fi->dims, d, why, sizeof why) != 0)
        return refuse(err, component, what, f->name, why);
    size_t bytes;
    shape_bytes(d, &bytes); /* checked above */
    if (f->kind != TSR_KIND_ARRAY) {
        if (!utf8_valid(d->data, bytes))
            return refuse(err, component, what, f->name, "its default is not valid UTF-8");
        if (f->n_choices > 0 && tsr_text_choice(d, f->choices, f->n_choices) < 0)
            return refuse(err, component, what, f->name,
                          "its default is not one of its choices");
    }
    /* Never NULL, even when empty: a NULL input reads as "not given". One
     * byte more, a NUL, after text (plugin.h: text is a C string). */
    size_t alloc = ALIGN_UP(bytes + 1);
    void *copy = aligned_alloc(TSR_ALIGNMENT, alloc);
    if (!copy) {
        error_set(err, TSR_E_NOMEM, "component '%s': out of memory copying the default of %s '%s'",
                  component, what, f->name);
        return TSR_E_NOMEM;
    }
    if (bytes) memcpy(copy, d->data, bytes);
    ((char *)copy)[bytes] = '\0';
    fi->default_copy = *d;
    fi->default_copy.data = copy;
    fi->field.default_value = &fi->default_copy;
    return 0;
}

void defaults_free(field_info *fs, int32_t n) {
    for (int32_t i = 0; fs && i < n; i++) {
        free(fs[i].default_copy.data);
        fs[i].default_copy.data = NULL;
        fs[i].field.default_value = NULL;
    }
}

static const char *wrt_label(tsr_endpoint ep) { return ep_wrt_in_label(ep); }

int defaults_fill(tsr_call *call) {
    const tsr_component *c = call->comp;
    for (int32_t i = 0; i < c->n_in; i++) {
        if (call->input_bound[i]) continue;
        const field_info *f = &c->in[i];
        if (f->field.default_value)
            call->inputs[i] = *f->field.default_value;
        else if (f->field.flags & TSR_FIELD_OPTIONAL)
            call->inputs[i] = (tsr_array){.data = NULL, .dtype = TSR_DTYPE_INVALID, .rank = 0};
        else
            return call_fail_at(call, TSR_E_MISSING, "inputs", f->field.name,
                                "input '%s' is missing", f->field.name);
    }
    tsr_endpoint ep = call->ep;
    if (!ep_is_derivative(ep) || !call->wrt_set)
        return 0;
    for (int32_t k = 0; k < call->n_wrt_in; k++) {
        int32_t i = call->wrt_in[k];
        if (!call->input_bound[i] && tsr_input_absent(&call->inputs[i]))
            return call_fail_at(call, TSR_E_MISSING, "inputs", c->in[i].field.name,
                                "%s: optional input '%s' was left out, so it cannot be "
                                "differentiated",
                                wrt_label(ep), c->in[i].field.name);
    }
    return 0;
}
