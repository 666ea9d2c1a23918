/* SPDX-License-Identifier: MIT */
/* A worker's schema, received as JSON at start, turned back into a
 * descriptor so that the host validates calls exactly as in-process. The
 * host never loads the plugin itself: that is the point of a worker. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "core/schema_json.h"

#include <tessera/payload.h>

/* Owns everything the synthetic descriptor points to. */
struct imported_schema {
    json_t *root;           /* strings point into it */
    tsr_plugin desc;
    tsr_field *fields;      /* inputs then outputs */
    tsr_dim *dims;
    tsr_array *defaults;    /* one per input; used by those that have one */
    const char **choices;   /* every TEXT field's choices, one after another */
    void **default_bufs;    /* their data (tsr_array_from_json) */
    size_t n_defaults;
};

/* Stands in for endpoints that run in the worker: calls never reach it,
 * because worker-mode calls are sent over the channel. */
static int remote_endpoint(tsr_ctx *ctx, const tsr_args *args) {
    (void)args;
    tsr_ctx_error(ctx, "internal error: a worker endpoint was called in the host");
    return -1;
}

static const char *str_or_null(json_t *obj, const char *key) {
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* An input's "required" and "default" keys: a default decoded into an
 * array the imported schema owns, or the optional flag. The host checks
 * the default against the field when it loads the descriptor. */
static int import_default(imported_schema *s, json_t *f, tsr_field *out, size_t i, char *why,
                          size_t n) {
    json_t *def = json_object_get(f, "default");
    if (!def) {
        if (json_is_false(json_object_get(f, "required"))) out->flags |= TSR_FIELD_OPTIONAL;
        return 0;
    }
    if (out->kind != TSR_KIND_ARRAY) {
        /* Text: the string's bytes; JSON: the value's text. */
        char *bytes = json_is_string(def) ? strdup(json_string_value(def))
                                          : json_dumps(def, JSON_ENCODE_ANY | JSON_COMPACT);
        if (!bytes) {
            snprintf(why, n, "out of memory");
            return -1;
        }
        s->default_bufs[i] = bytes;
        s->defaults[i] = (tsr_array){.data = bytes, .dtype = TSR_UINT8, .rank = 1};
        s->defaults[i].shape[0] = (int64_t)strlen(bytes);
        out->default_value = &s->defaults[i];
        return 0;
    }
    char *text = json_dumps(def, JSON_ENCODE_ANY | JSON_COMPACT);
    tsr_error err = {0};
    if (!text) snprintf(err.message, sizeof err.message, "out of memory");
    int rc = text ? tsr_array_from_json(text, strlen(text), out->dtype, &s->defaults[i],
                                        &s->default_bufs[i], &err)
                  : TSR_E_NOMEM;
    free(text);
    if (rc) {
        snprintf(why, n, "the worker's schema has an unreadable default for input '%s': %s",
                 out->name, err.message);
        return -1;
    }
    out->default_value = &s->defaults[i];
    return 0;
}

/* "kind" (absent: an array, as older workers wrote) and "choices". */
static int import_kind(json_t *f, tsr_field *out, const char ***choices, char *why, size_t n) {
    const char *kind = str_or_null(f, "kind");
    if (!kind || strcmp(kind, "array") == 0) out->kind = TSR_KIND_ARRAY;
    else if (strcmp(kind, "text") == 0) out->kind = TSR_KIND_TEXT;
    else if (strcmp(kind, "json") == 0) out->kind = TSR_KIND_JSON;
    else {
        snprintf(why, n, "the worker's schema gives field '%s' an unknown kind", out->name);
        return -1;
    }
    json_t *list = json_object_get(f, "choices");
    if (!list) return 0;
    if (!json_is_array(list)) {
        snprintf(why, n, "the worker's schema has malformed choices for field '%s'", out->name);
        return -1;
    }
    out->choices = *choices;
    out->n_choices = (int32_t)json_array_size(list);
    size_t k;
    json_t *ch;
    json_array_foreach(list, k, ch) *(*choices)++ = json_string_value(ch);   /* NULL: refused at load */
    return 0;
}

static size_t count_choices(json_t *list) {
    size_t total = 0, i;
    json_t *f;
    json_array_foreach(list, i, f) {
        json_t *ch = json_object_get(f, "choices");
        if (json_is_array(ch)) total += json_array_size(ch);
    }
    return total;
}

static int import_fields(imported_schema *s, json_t *list, tsr_field *fields, tsr_dim **dims,
                         const char ***choices, const char *what, char *why, size_t n) {
    size_t i;
    json_t *f;
    json_array_foreach(list, i, f) {
        tsr_field *out = &fields[i];
        json_t *shape = json_object_get(f, "shape");
        out->name = str_or_null(f, "name");
        int dtype = tsr_dtype_from_name(str_or_null(f, "dtype"));
        out->dtype = dtype < 0 ? TSR_DTYPE_INVALID : (tsr_dtype)dtype;
        out->doc = str_or_null(f, "doc");
        out->flags = json_is_true(json_object_get(f, "differentiable")) ? TSR_FIELD_DIFFERENTIABLE : 0;
        if (!out->name || !(json_is_array(shape) || json_is_null(shape)) ||
            json_array_size(shape) > TSR_MAX_FIELD_RANK) {
            snprintf(why, n, "the worker's schema has a malformed %s at position %zu", what, i);
            return -1;
        }
        if (import_kind(f, out, choices, why, n) != 0) return -1;
        /* shape null: any rank */
        out->rank = json_is_null(shape) ? TSR_RANK_ANY : (int32_t)json_array_size(shape);
        out->dims = *dims;
        size_t d;
        json_t *dim;
        json_array_foreach(shape, d, dim) {
            tsr_dim *td = (*dims)++;
            if (json_is_integer(dim)) *td = (tsr_dim){NULL, json_integer_value(dim)};
            else if (json_is_string(dim)) *td = (tsr_dim){json_string_value(dim), TSR_DIM_ANY};
            else *td = (tsr_dim){NULL, TSR_DIM_ANY};
        }
        if (strcmp(what, "input") == 0 && import_default(s, f, out, i, why, n) != 0) return -1;
    }
    return 0;
}

void schema_import_free(imported_schema *s) {
    if (!s) return;
    json_decref(s->root);
    free(s->fields);
    free(s->dims);
    free(s->choices);
    for (size_t i = 0; s->default_bufs && i < s->n_defaults; i++)
        tsr_array_buffer_free(s->default_bufs[i]);
    free(s->default_bufs);
    free(s->defaults);
    free(s);
}

int schema_import(const char *text, imported_schema **out, char *why, size_t n) {
    *out = NULL;
    json_error_t jerr;
    imported_schema *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    s->root = json_loads(text, 0, &jerr);
    json_t *ins = json_object_get(s->root, "inputs"), *outs = json_object_get(s->root, "outputs");
    json_t *eps = json_object_get(s->root, "implemented");
    if (!json_is_array(eps)) eps = json_object_get(s->root, "endpoints");
    if (!json_is_object(s->root) || !json_is_array(ins) || !json_is_array(outs) ||
        !json_is_array(eps)) {
        snprintf(why, n, "the worker sent a malformed schema (%s)",
                 s->root ? "missing inputs, outputs or endpoints" : jerr.text);
        schema_import_free(s);
        return TSR_E_WORKER;
    }
    size_t n_in = json_array_size(ins), n_out = json_array_size(outs);
    if (n_in > SCHEMA_MAX_FIELDS || n_out > SCHEMA_MAX_FIELDS) {
        snprintf(why, n, "the worker's schema has too many fields");
        schema_import_free(s);
        return TSR_E_WORKER;
    }
    s->fields = calloc(n_in + n_out + 1, sizeof *s->fields);
    s->dims = calloc(schema_count_dims(ins) + schema_count_dims(outs) + 1, sizeof *s->dims);
    s->n_defaults = n_in;
    s->defaults = calloc(n_in + 1, sizeof *s->defaults);
    s->default_bufs = calloc(n_in + 1, sizeof *s->default_bufs);
    s->choices = calloc(count_choices(ins) + count_choices(outs) + 1, sizeof *s->choices);
    if (!s->fields || !s->dims || !s->defaults || !s->default_bufs || !s->choices) {
        snprintf(why, n, "out of memory");
        schema_import_free(s);
        return TSR_E_NOMEM;
    }
    tsr_dim *next_dim = s->dims;
    const char **next_choice = s->choices;
    if (import_fields(s, ins, s->fields, &next_dim, &next_choice, "input", why, n) ||
        import_fields(s, outs, s->fields + n_in, &next_dim, &next_choice, "output", why, n)) {
        schema_import_free(s);
        return TSR_E_WORKER;
    }
    tsr_plugin *d = &s->desc;
    d->abi_version = TSR_PLUGIN_ABI_VERSION;
    d->struct_size = sizeof *d;
    d->field_size = sizeof(tsr_field);
    d->flags = json_is_true(json_object_get(s->root, "thread_safe")) ? TSR_PLUGIN_THREAD_SAFE : 0;
    json_t *fd = json_object_get(s->root, "fd");
    d->fd_method = (tsr_fd_method)json_integer_value(json_object_get(fd, "method"));
    d->fd_samples = (uint32_t)json_integer_value(json_object_get(fd, "samples"));
    d->fd_step = json_number_value(json_object_get(fd, "step"));
    d->name = str_or_null(s->root, "name");
    d->version = str_or_null(s->root, "version");
    d->description = str_or_null(s->root, "description");
    d->inputs = s->fields;
    d->n_inputs = (int32_t)n_in;
    d->outputs = s->fields + n_in;
    d->n_outputs = (int32_t)n_out;
    size_t i;
    json_t *e;
    json_array_foreach(eps, i, e) {
        switch (tsr_endpoint_from_name(json_string_value(e))) {
        case TSR_EP_APPLY: d->apply = remote_endpoint; break;
        case TSR_EP_JVP: d->jvp = remote_endpoint; break;
        case TSR_EP_VJP: d->vjp = remote_endpoint; break;
        case TSR_EP_JACOBIAN: d->jacobian = remote_endpoint; break;
        case TSR_EP_ABSTRACT_EVAL: d->abstract_eval = remote_endpoint; break;
        case TSR_EP_HVP: d->hvp = remote_endpoint; break;
        default: break;
        }
    }
    *out = s;
    return 0;
}

const tsr_plugin *schema_import_descriptor(const imported_schema *s) { return &s->desc; }
