/* SPDX-License-Identifier: MIT */
/* A call as Tesseract's request body: {"inputs": {...}} nested by the dots
 * of the field names, the wrt lists of dotted names, and tangent_vector /
 * cotangent_vector keyed by dotted names. Arrays are written by the
 * library's payload code in base64 ({"shape", "dtype"} for abstract_eval);
 * plain fields as JSON values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"
#include "codecs/array_encode.h"

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

/* A plain input: a JSON boolean, integer or number; for abstract_eval,
 * which has no values, the schema's default. */
static int write_plain(writer *w, int32_t i) {
    const tsr_field *f = &w->s->desc.inputs[i];
    const tsr_array *x = &w->a->inputs[i];
    if (w->abstract) {
        const char *d = remote_input(w->s, i)->default_json;
        if (!d)
            return payload_fail(&w->ctx, TSR_E_UNSUPPORTED, f->name,
                                    "a plain %s without a default in the server's schema: "
                                    "abstract_eval, which is given shapes and dtypes only, has "
                                    "no value to send for it",
                                    tsr_dtype_name(f->dtype));
        jw_raw_value(&w->jw, d, strlen(d));
        return 0;
    }
    switch (f->dtype) {
    case TSR_BOOL: jw_bool(&w->jw, *(const uint8_t *)x->data != 0); return 0;
    case TSR_INT64: jw_int(&w->jw, *(const int64_t *)x->data); return 0;
    default: break;
    }
    double v = *(const double *)x->data;
    if (!isfinite(v))
        return payload_fail(&w->ctx, TSR_E_PAYLOAD, f->name,
                                "is %s, which a plain JSON number cannot be",
                                isnan(v) ? "NaN" : "infinite");
    jw_double(&w->jw, v);
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
        int rc = remote_input(w->s, i)->kind == REMOTE_PLAIN ? write_plain(w, i)
                                                             : write_array(w, &w->a->inputs[i], name);
        if (rc) return rc;
    }
    for (; open > 0; open--) jw_end_object(&w->jw);
    jw_end_object(&w->jw);
    return 0;
}

static void write_names(writer *w, const char *key, const int32_t *idx, int32_t count,
                        const tsr_field *fields) {
    jw_key(&w->jw, key);
    jw_begin_array(&w->jw);
    for (int32_t k = 0; k < count; k++) jw_string(&w->jw, fields[idx[k]].name);
    jw_end_array(&w->jw);
}

/* tangent_vector (jvp: one per jvp_input) or cotangent_vector (vjp: one
 * per vjp_output), keyed by dotted names. */
static int write_seeds(writer *w, const char *key, const int32_t *idx, const tsr_field *fields) {
    jw_key(&w->jw, key);
    jw_begin_object(&w->jw);
    for (int32_t k = 0; k < w->a->n_seeds; k++) {
        char path[PAYLOAD_PATH_MAX];
        path_join(path, key, fields[idx[k]].name);
        jw_key(&w->jw, fields[idx[k]].name);
        int rc = write_array(w, &w->a->seeds[k], path);
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
    switch (a->endpoint) {
    case TSR_EP_JACOBIAN:
        write_names(w, "jac_inputs", a->wrt_in, a->n_wrt_in, d->inputs);
        write_names(w, "jac_outputs", a->wrt_out, a->n_wrt_out, d->outputs);
        break;
    case TSR_EP_JVP:
        write_names(w, "jvp_inputs", a->wrt_in, a->n_wrt_in, d->inputs);
        write_names(w, "jvp_outputs", a->wrt_out, a->n_wrt_out, d->outputs);
        rc = write_seeds(w, "tangent_vector", a->wrt_in, d->inputs);
        break;
    case TSR_EP_VJP:
        write_names(w, "vjp_inputs", a->wrt_in, a->n_wrt_in, d->inputs);
        write_names(w, "vjp_outputs", a->wrt_out, a->n_wrt_out, d->outputs);
        rc = write_seeds(w, "cotangent_vector", a->wrt_out, d->outputs);
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
