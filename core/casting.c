/* SPDX-License-Identifier: MIT */
/* Option casting=same_kind: an input, tangent or cotangent of another
 * dtype than its field's is converted by Tesseract's rule (numpy's
 * same_kind, refusing values that do not fit; codecs/numeric.c,
 * which payloads use too) into a buffer the call keeps. The converted
 * array stands in for the caller's only while a run uses it: the caller's
 * binding is put back afterwards, so that the next run converts the data
 * the caller holds then, and the call's fast path (nothing revalidated
 * while headers repeat) stays as it is. */
#include <stdlib.h>

#include "internal.h"
#include "codecs/numeric.h"

int cast_accepts(const tsr_call *call, tsr_dtype given, tsr_dtype field) {
    return call->comp->opts.casting == CASTING_SAME_KIND && tsr_dtype_name(given) &&
           dtype_casts_same_kind(given, field);
}

/* The slots of one kind, made at the first conversion. */
static cast_slot *slots(cast_slot **list, int32_t n) {
    if (!*list) *list = calloc((size_t)(n > 0 ? n : 1), sizeof **list);
    return *list;
}

static int grow(cast_slot *s, size_t bytes) {
    if (s->cap >= bytes) return 0;
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) return -1;
    free(s->buf);
    s->buf = p;
    s->cap = bytes;
    return 0;
}

/* Convert *a into slot s as dtype `to` and let the copy stand in for it.
 * what ("input", "tangent_vector", "cotangent_vector") and name make the
 * loc and the label of a refusal. */
static int cast_one(tsr_call *call, cast_slot *s, tsr_array *a, tsr_dtype to, const char *what,
                    const char *name) {
    int64_t count = shape_count(a->shape, a->rank);
    size_t bytes = (size_t)(count > 0 ? count : 0) * tsr_dtype_size(to);
    const char *section = array_section(what);
    char label[SCHEMA_MAX_NAME + 32];
    tsr_array copy = *a;
    copy.dtype = to;
    /* abstract_eval: dtype and shape only */
    if (a->data && count > 0) {
        if (grow(s, bytes) != 0)
            return call_fail_at(call, TSR_E_NOMEM, section, name,
                                "%s: out of memory for %zu bytes converting %s to %s",
                                array_label(what, name, label, sizeof label), bytes, tsr_dtype_name(a->dtype),
                                tsr_dtype_name(to));
        int64_t bad;
        char why[200];
        if (num_convert(a->data, a->dtype, s->buf, to, count, &bad, why, sizeof why) != 0)
            return call_fail_at(call, TSR_E_DTYPE, section, name,
                                "%s: %s (converting %s to %s, casting=same_kind)",
                                array_label(what, name, label, sizeof label), why, tsr_dtype_name(a->dtype), tsr_dtype_name(to));
        copy.data = s->buf;
    }
    s->saved = *a;
    s->active = 1;
    *a = copy;
    return 0;
}

int cast_begin(tsr_call *call) {
    tsr_component *c = call->comp;
    for (int32_t i = 0; i < c->n_in; i++) {
        tsr_array *a = &call->inputs[i];
        /* an absent optional input stays absent (tsr_input_absent) */
        if (a->dtype == c->in[i].field.dtype || (!call->input_bound[i] && tsr_input_absent(a)))
            continue;
        cast_slot *s = slots(&call->cast_in, c->n_in);
        if (!s) return call_fail(call, TSR_E_NOMEM, "out of memory");
        int rc = cast_one(call, &s[i], a, c->in[i].field.dtype, "input", c->in[i].field.name);
        if (rc) return rc;
    }
    int jvp = call->ep == TSR_EP_JVP;
    for (int32_t k = 0; k < call->args.n_seeds; k++) {
        const tsr_field *f = jvp ? &c->in[call->wrt_in[k]].field : &c->out[call->wrt_out[k]].field;
        tsr_array *a = &call->seeds[k];
        /* A seed inside a JSON field is any float array (check_seeds). */
        if (a->dtype == f->dtype || f->kind == TSR_KIND_JSON) continue;
        cast_slot *s = slots(&call->cast_seed, call->cap_results);
        if (!s) return call_fail(call, TSR_E_NOMEM, "out of memory");
        int rc = cast_one(call, &s[k], a, f->dtype, jvp ? "tangent_vector" : "cotangent_vector",
                          f->name);
        if (rc) return rc;
    }
    return 0;
}

static void put_back(cast_slot *list, int32_t n, tsr_array *arrays) {
    for (int32_t k = 0; list && k < n; k++)
        if (list[k].active) {
            arrays[k] = list[k].saved;
            list[k].active = 0;
        }
}

void cast_end(tsr_call *call) {
    put_back(call->cast_in, call->comp->n_in, call->inputs);
    put_back(call->cast_seed, call->cap_results, call->seeds);
}

void cast_release(tsr_call *call) {
    for (int32_t i = 0; call->cast_in && i < call->comp->n_in; i++) free(call->cast_in[i].buf);
    for (int32_t k = 0; call->cast_seed && k < call->cap_results; k++)
        free(call->cast_seed[k].buf);
    free(call->cast_in);
    free(call->cast_seed);
    call->cast_in = call->cast_seed = NULL;
}
