/* SPDX-License-Identifier: MIT */
/* A call as Tesseract's request body: {"inputs": {...}} nested by the dots
 * of the field names, the wrt lists of dotted names, and tangent_vector /
 * cotangent_vector keyed by dotted names. Arrays are written by the
 * library's payload code in base64 ({"shape", "dtype"} for abstract_eval);
 * TEXT fields as JSON strings, JSON fields as their JSON. Derivatives at
 * paths inside JSON fields are named by their paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"
#include "codecs/array_encode.h"
#include "codecs/json_hoist.h"

typedef struct writer {
    json_writer jw;
    const remote_schema *s;
    const tsr_args *a;
    int abstract;
    tsr_error err;
    payload_ctx ctx;
    uint64_t bytes;
} writer;

/* How many leading segments the parents of a and b share: "p.v" and
 * "p.w" share "p"; "p.v" and "q" none. */
static int common_parents(const char *a, const char *b) {
    int k = 0;
    for (;;) {
        size_t la = strcspn(a, "."), lb = strcspn(b, ".");
        if (!a[la] || !b[lb] || la != lb || memcmp(a, b, la) != 0) return k;
        a += la + 1;
        b += lb + 1;
        k++;
    }
}

static int parent_count(const char *name) {
    int k = 0;
    for (; *name; name++) k += *name == '.';
    return k;
}

/* A TEXT or JSON input's bytes (the host gives them to every endpoint,
 * abstract_eval included), or NULL. */
static const char *value_bytes(const tsr_array *x, size_t *len) {
    *len = x->data && x->dtype == TSR_UINT8 && x->rank == 1 ? (size_t)x->shape[0] : 0;
    return x->data && x->dtype == TSR_UINT8 && x->rank == 1 ? x->data : NULL;
}

/* abstract_eval: arrays inside a JSON value as {"shape", "dtype"}, as
 * tesseract-core's abstract inputs describe them. */
static void abstract_arrays(json_t *v, int depth) {
    if (depth > REMOTE_MAX_JSON_DEPTH) return;
    size_t i;
    const char *key;
    json_t *x, *tmp;
    if (json_is_array(v)) json_array_foreach(v, i, x) abstract_arrays(x, depth + 1);
    if (!json_is_object(v)) return;
    json_t *type = json_object_get(v, "object_type");
    if (json_is_string(type) && strcmp(json_string_value(type), "array") == 0) {
        json_object_foreach_safe(v, tmp, key, x)
            if (strcmp(key, "shape") != 0 && strcmp(key, "dtype") != 0) json_object_del(v, key);
        return;
    }
    json_object_foreach(v, key, x) abstract_arrays(x, depth + 1);
}

/* A TEXT input as a JSON string; a JSON input as its own text, once it
 * parses as one JSON value (so that no text can add to the request
 * around it). */
static int write_value(writer *w, int32_t i) {
    const tsr_field *f = &w->s->desc.inputs[i];
    size_t len;
    const char *text = value_bytes(&w->a->inputs[i], &len);
    int json = remote_input(w->s, i)->kind == REMOTE_JSON;
    if (!text)
        return payload_fail(&w->ctx, TSR_E_ARGUMENT, f->name,
                            "a %s field is passed as uint8 bytes of rank 1",
                            json ? "JSON" : "text");
    json_error_t jerr;
    json_t *v = NULL;
    hoist_doc hoist = {0};
    if (!json) v = json_stringn(text, len);
    else if (w->abstract || len < HOIST_MIN) v = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
    else v = hoist_parse(text, len, JSON_DECODE_ANY, &hoist, &jerr);
    if (!v) {
        hoist_free(&hoist);
        if (!json)
            return payload_fail(&w->ctx, TSR_E_PAYLOAD, f->name, "is not UTF-8 text");
        return payload_fail(&w->ctx, TSR_E_PAYLOAD, f->name,
                            "is not one JSON value (line %d, column %d: %s)", jerr.line,
                            jerr.column, jerr.text);
    }
    hoist_free(&hoist);
    if (json && !w->abstract) {
        json_decref(v);
        jw_raw_value(&w->jw, text, len);
        return 0;
    }
    if (json) abstract_arrays(v, 0);
    char *out = remote_json_text(v);
    json_decref(v);
    if (!out) return payload_fail(&w->ctx, TSR_E_NOMEM, f->name, "out of memory");
    jw_raw_value(&w->jw, out, strlen(out));
    free(out);
    return 0;
}

static int write_array(writer *w, const tsr_array *x, const char *path) {
    if (w->abstract) return write_shape_dtype(&w->jw, x, &w->ctx, path);
    static const array_out base64 = {.enc = TSR_ENCODING_BASE64};
    int64_t count = 1;
    for (int32_t d = 0; d < x->rank; d++) count *= x->shape[d];
    w->bytes += (uint64_t)count * tsr_dtype_size(x->dtype);
    return write_encoded_array(&w->jw, x, &base64, &w->ctx, path);
}

/* "inputs": every input, nested by its dots. The schema lists the fields
 * of a nested model together (remote_fields.c reads them depth first), so
 * one pass opens and closes each object once. */
static int write_inputs(writer *w) {
    jw_key(&w->jw, "inputs");
    jw_begin_object(&w->jw);
    const char *prev = "";
    int open = 0;
    for (int32_t i = 0; i < w->a->n_inputs; i++) {
        const char *name = w->s->desc.inputs[i].name, *seg = name;
        int common = common_parents(prev, name);
        for (; open > common; open--) jw_end_object(&w->jw);
        for (int k = 0; k < open; k++) seg += strcspn(seg, ".") + 1;
        for (int depth = parent_count(name); open < depth; open++) {
            size_t len = strcspn(seg, ".");
            jw_key_n(&w->jw, seg, len);
            jw_begin_object(&w->jw);
            seg += len + 1;
        }
        prev = name;
        /* An optional input left out stays out: the server applies its own default. */
        if (tsr_input_absent(&w->a->inputs[i])) continue;
        jw_key(&w->jw, seg);
        int rc = remote_input(w->s, i)->kind != REMOTE_ARRAY
                     ? write_value(w, i)
                     : write_array(w, &w->a->inputs[i], name);
        if (rc) return rc;
    }
    for (; open > 0; open--) jw_end_object(&w->jw);
    jw_end_object(&w->jw);
    return 0;
}

static void write_names(writer *w, const char *key, const int32_t *idx, int32_t count,
                        const tsr_field *fields, const char *const *paths) {
    jw_key(&w->jw, key);
    jw_begin_array(&w->jw);
    for (int32_t k = 0; k < count; k++) jw_string(&w->jw, remote_wrt_path(fields, idx, paths, k));
    jw_end_array(&w->jw);
}

/* tangent_vector (jvp: one per jvp_input) or cotangent_vector (vjp: one
 * per vjp_output), keyed by dotted names: the count seeds from first
 * (hvp: its cotangents first, then its tangents). */
static int write_seeds(writer *w, const char *key, const int32_t *idx, const tsr_field *fields,
                       const char *const *paths, int32_t first, int32_t count) {
    jw_key(&w->jw, key);
    jw_begin_object(&w->jw);
    for (int32_t k = 0; k < count; k++) {
        char path[PAYLOAD_PATH_MAX];
        const char *name = remote_wrt_path(fields, idx, paths, k);
        path_join(path, key, name);
        jw_key(&w->jw, name);
        int rc = write_array(w, &w->a->seeds[first + k], path);
        if (rc) return rc;
    }
    jw_end_object(&w->jw);
    return 0;
}

static int write_request(writer *w) {
    const tsr_args *a = w->a;
    const tsr_plugin *d = &w->s->desc;
    jw_begin_object(&w->jw);
    int rc = write_inputs(w);
    if (rc) return rc;
    const char *const *in_paths = remote_wrt_paths(a, 0), *const *out_paths = remote_wrt_paths(a, 1);
    switch (a->endpoint) {
    case TSR_EP_JACOBIAN:
        write_names(w, "jac_inputs", a->wrt_in, a->n_wrt_in, d->inputs, in_paths);
        write_names(w, "jac_outputs", a->wrt_out, a->n_wrt_out, d->outputs, out_paths);
        break;
    case TSR_EP_JVP:
        write_names(w, "jvp_inputs", a->wrt_in, a->n_wrt_in, d->inputs, in_paths);
        write_names(w, "jvp_outputs", a->wrt_out, a->n_wrt_out, d->outputs, out_paths);
        rc = write_seeds(w, "tangent_vector", a->wrt_in, d->inputs, in_paths, 0, a->n_wrt_in);
        break;
    case TSR_EP_VJP:
        write_names(w, "vjp_inputs", a->wrt_in, a->n_wrt_in, d->inputs, in_paths);
        write_names(w, "vjp_outputs", a->wrt_out, a->n_wrt_out, d->outputs, out_paths);
        rc = write_seeds(w, "cotangent_vector", a->wrt_out, d->outputs, out_paths, 0,
                         a->n_wrt_out);
        break;
    case TSR_EP_HVP:
        write_names(w, "hvp_inputs", a->wrt_in, a->n_wrt_in, d->inputs, in_paths);
        write_names(w, "hvp_outputs", a->wrt_out, a->n_wrt_out, d->outputs, out_paths);
        rc = write_seeds(w, "cotangent_vector", a->wrt_out, d->outputs, out_paths, 0,
                         a->n_wrt_out);
        if (!rc)
            rc = write_seeds(w, "tangent_vector", a->wrt_in, d->inputs, in_paths, a->n_wrt_out,
                             a->n_wrt_in);
        break;
    default: break;
    }
    jw_end_object(&w->jw);
    return rc;
}

int remote_request_body(const remote_schema *s, const tsr_args *a, char **body, size_t *len,
                        uint64_t *bytes, char *why, size_t n) {
    writer w = {.s = s, .a = a, .abstract = a->endpoint == TSR_EP_ABSTRACT_EVAL};
    w.ctx.err = &w.err;
    jw_init(&w.jw);
    int rc = write_request(&w);
    *len = w.jw.len;
    *body = rc ? NULL : jw_finish(&w.jw);
    if (rc) jw_discard(&w.jw);
    else if (!*body) rc = payload_fail(&w.ctx, TSR_E_NOMEM, NULL, "out of memory");
    *bytes = w.bytes;
    if (rc) snprintf(why, n, "%s", w.err.message);
    return rc;
}
