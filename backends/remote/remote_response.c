/* SPDX-License-Identifier: MIT */
/* A server's answer into the call's results. Each result is found where
 * Tesseract puts it (apply and abstract_eval: the outputs nested by their
 * dots; jvp, vjp: keyed by dotted names; jacobian: {output: {input: ...}}),
 * decoded by the library's payload code (base64, json, lz4; binref is
 * refused: a server's file paths mean nothing here) into the call's dtype,
 * and copied into the buffer core gave, or one sized now when its shape
 * depends on values. Anything else is TSR_E_PLUGIN_RESULT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"
#include "codecs/array_decode.h"
#include "codecs/json_hoist.h"

typedef struct reader {
    const remote_schema *s;
    const remote_sink *sink;
    const tsr_args *a;
    json_t *root;
    tsr_error err;
    payload_ctx ctx;
    char *why;
    size_t n;
} reader;

/* The value at a dotted name in obj: a key of its own (how Tesseract keys
 * derivatives), else nested objects (how it nests outputs). */
static json_t *lookup(json_t *obj, const char *name) {
    json_t *v = json_object_get(obj, name);
    if (v) return v;
    char seg[SCHEMA_MAX_NAME + 1];
    for (const char *at = name; json_is_object(obj);) {
        size_t len = strcspn(at, ".");
        if (len > SCHEMA_MAX_NAME) return NULL;
        memcpy(seg, at, len);
        seg[len] = '\0';
        obj = json_object_get(obj, seg);
        if (!at[len]) return obj;
        at += len + 1;
    }
    return NULL;
}

/* The output and the input whose names place result k (either NULL). */
static void result_fields(const reader *r, int32_t k, const char **out, const char **in) {
    const tsr_args *a = r->a;
    const tsr_plugin *d = &r->s->desc;
    *out = *in = NULL;
    switch (a->endpoint) {
    case TSR_EP_JVP: *out = d->outputs[a->wrt_out[k]].name; break;
    case TSR_EP_VJP: *in = d->inputs[a->wrt_in[k]].name; break;
    case TSR_EP_JACOBIAN:
        *out = d->outputs[a->wrt_out[k / a->n_wrt_in]].name;
        *in = d->inputs[a->wrt_in[k % a->n_wrt_in]].name;
        break;
    default: *out = d->outputs[k].name; break;
    }
}

/* "the answer's output 'y' <what>", "... jacobian block 'y'/'x' ...". */
static int bad_answer(reader *r, int32_t k, const char *what) {
    const char *out, *in;
    result_fields(r, k, &out, &in);
    if (out && in) snprintf(r->why, r->n, "the answer's jacobian block '%s'/'%s' %s", out, in, what);
    else if (out) snprintf(r->why, r->n, "the answer's output '%s' %s", out, what);
    else snprintf(r->why, r->n, "the answer's result for input '%s' %s", in, what);
    return TSR_E_PLUGIN_RESULT;
}

/* Where result k is in the answer; its path for messages in path. */
static json_t *find_result(reader *r, int32_t k, char *path, size_t n) {
    const char *out, *in;
    result_fields(r, k, &out, &in);
    snprintf(path, n, "%s%s%s", out ? out : "", out && in ? "/" : "", in ? in : "");
    json_t *v = out ? lookup(r->root, out) : r->root;
    return in ? lookup(v, in) : v;
}

/* The decoded array into result k: checked against the shape core
 * expects, or given a buffer now when its shape depends on values. */
static int store(reader *r, int32_t k, const decoded_array *dec) {
    tsr_array *res = &r->a->results[k];
    const tsr_array before = *res, *e = &before; /* as core set it */
    const tsr_array *x = &dec->array;
    if (e->data && (x->rank != e->rank ||
                    memcmp(x->shape, e->shape, (size_t)x->rank * sizeof(int64_t)) != 0)) {
        char got[96], expected[96], what[220];
        snprintf(what, sizeof what, "has shape %s, not %s",
                 shape_str(x->shape, x->rank, got, sizeof got),
                 shape_str(e->shape, e->rank, expected, sizeof expected));
        return bad_answer(r, k, what);
    }
    res->dtype = e->dtype;
    res->rank = x->rank;
    memcpy(res->shape, x->shape, (size_t)x->rank * sizeof(int64_t));
    if (r->a->endpoint == TSR_EP_ABSTRACT_EVAL) return 0; /* core checks the shape */
    size_t bytes = (size_t)shape_count(x->shape, x->rank) * tsr_dtype_size(x->dtype);
    void *to = e->data;
    if (!to) {
        int code = TSR_E_PLUGIN_RESULT;
        char cause[400];
        to = r->sink->alloc(r->sink->user, k, &code, cause, sizeof cause);
        if (!to) {
            snprintf(r->why, r->n, "the answer cannot be kept: %s", cause);
            return code;
        }
    }
    memcpy(to, x->data, bytes);
    return 0;
}

static int read_result(reader *r, int32_t k) {
    char path[2 * SCHEMA_MAX_NAME + 2];
    json_t *v = find_result(r, k, path, sizeof path);
    if (!v) return bad_answer(r, k, "is missing");
    decoded_array dec;
    int abstract = r->a->endpoint == TSR_EP_ABSTRACT_EVAL;
    int rc = decode_array_value(v, r->a->results[k].dtype, abstract, &r->ctx, path, &dec);
    if (rc) {
        snprintf(r->why, r->n, "the answer cannot be read: %s", r->err.message);
        return rc == TSR_E_NOMEM ? rc : TSR_E_PLUGIN_RESULT;
    }
    rc = store(r, k, &dec);
    free(dec.buffer);
    return rc;
}

int remote_response_read(const remote_schema *s, const remote_sink *sink, const char *text,
                         size_t len, char *why, size_t n) {
    reader r = {.s = s, .sink = sink, .a = sink->args, .why = why, .n = n};
    r.ctx.err = &r.err;
    json_error_t jerr;
    hoist_doc hoist;
    r.root = hoist_parse(text, len, 0, &hoist, &jerr);
    int rc = 0;
    if (!json_is_object(r.root)) {
        char start[320];
        remote_excerpt(text, len, start, sizeof start);
        if (r.root) snprintf(why, n, "the answer is not a JSON object: %s", start);
        else
            snprintf(why, n, "the answer is not JSON (line %d, column %d: %s): %s", jerr.line,
                     jerr.column, jerr.text, start);
        rc = TSR_E_PLUGIN_RESULT;
    }
    r.ctx.hoist = &hoist;
    for (int32_t k = 0; !rc && k < r.a->n_results; k++) rc = read_result(&r, k);
    json_decref(r.root);
    hoist_free(&hoist);
    return rc;
}
