/* SPDX-License-Identifier: MIT */
/* A server's answer into the call's results. Each result is found where
 * Tesseract puts it (apply and abstract_eval: the outputs nested by their
 * dots; jvp, vjp: keyed by dotted names; jacobian: {output: {input: ...}}),
 * decoded by the library's payload code (base64, json, lz4; binref is
 * refused: a server's file paths mean nothing here) into the call's dtype,
 * and copied into the buffer core gave, or one sized now when its shape
 * depends on values. A TEXT result is a JSON string, a JSON result any
 * JSON value (arrays inside it as the server encoded them, binref
 * refused), each kept as its bytes in a buffer sized by the answer.
 * Anything else is TSR_E_PLUGIN_RESULT. */
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

/* The output and the input whose names (or paths inside JSON fields)
 * place result k (either NULL). */
static void result_fields(const reader *r, int32_t k, const char **out, const char **in) {
    const tsr_args *a = r->a;
    const tsr_plugin *d = &r->s->desc;
    const char *const *ip = remote_wrt_paths(a, 0), *const *op = remote_wrt_paths(a, 1);
    *out = *in = NULL;
    switch (a->endpoint) {
    case TSR_EP_JVP: *out = remote_wrt_path(d->outputs, a->wrt_out, op, k); break;
    case TSR_EP_VJP:
    case TSR_EP_HVP: *in = remote_wrt_path(d->inputs, a->wrt_in, ip, k); break;
    case TSR_EP_JACOBIAN:
        *out = remote_wrt_path(d->outputs, a->wrt_out, op, k / a->n_wrt_in);
        *in = remote_wrt_path(d->inputs, a->wrt_in, ip, k % a->n_wrt_in);
        break;
    default: *out = d->outputs[k].name; break;
    }
}

/* How result k travels: apply's and abstract_eval's are their outputs';
 * a derivative is an array, at a path inside a JSON field too. */
static remote_kind result_kind(const reader *r, int32_t k) {
    if (r->a->endpoint != TSR_EP_APPLY && r->a->endpoint != TSR_EP_ABSTRACT_EVAL)
        return REMOTE_ARRAY;
    return remote_output(r->s, k)->kind;
}

/* Whether a derivative's result k is at a path inside a JSON field: its
 * dtype is then the answer's (the host set none). */
static int inside_json(const reader *r, int32_t k) {
    const tsr_args *a = r->a;
    switch (a->endpoint) {
    case TSR_EP_JVP: return remote_output(r->s, a->wrt_out[k])->kind == REMOTE_JSON;
    case TSR_EP_VJP:
    case TSR_EP_HVP: return remote_input(r->s, a->wrt_in[k])->kind == REMOTE_JSON;
    case TSR_EP_JACOBIAN:
        return remote_output(r->s, a->wrt_out[k / a->n_wrt_in])->kind == REMOTE_JSON ||
               remote_input(r->s, a->wrt_in[k % a->n_wrt_in])->kind == REMOTE_JSON;
    default: return 0;
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
    res->dtype = inside_json(r, k) ? x->dtype : e->dtype;
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

/* An encoded array inside a JSON result whose data is a binref: the
 * server's file means nothing here. 1 if v holds one. */
static int holds_binref(json_t *v, int depth) {
    size_t i;
    const char *key;
    json_t *x;
    if (depth > REMOTE_MAX_JSON_DEPTH) return 1;
    if (json_is_array(v)) json_array_foreach(v, i, x) if (holds_binref(x, depth + 1)) return 1;
    if (!json_is_object(v)) return 0;
    json_t *enc = json_object_get(json_object_get(v, "data"), "encoding");
    if (json_is_string(enc) && strcmp(json_string_value(enc), "binref") == 0) return 1;
    json_object_foreach(v, key, x) if (holds_binref(x, depth + 1)) return 1;
    return 0;
}

/* A TEXT or JSON result: its bytes into a buffer of their size. */
static int read_value(reader *r, int32_t k, json_t *v, remote_kind kind) {
    if (r->a->endpoint == TSR_EP_ABSTRACT_EVAL) {
        /* A shape without a value says nothing of its length: none. */
        tsr_array *res = &r->a->results[k];
        res->dtype = TSR_UINT8;
        res->rank = 1;
        res->shape[0] = 0;
        return 0;
    }
    if (kind == REMOTE_TEXT && !json_is_string(v)) return bad_answer(r, k, "is not a string");
    if (kind == REMOTE_JSON && holds_binref(v, 0))
        return bad_answer(r, k, "holds a binref array (a file on the server), or nests more "
                                "than 256 deep");
    char *dumped = kind == REMOTE_JSON ? remote_json_text(v) : NULL;
    const char *bytes = dumped ? dumped : json_string_value(v);
    size_t len = dumped ? strlen(dumped) : json_string_length(v);
    if (kind == REMOTE_JSON && !dumped)
        return bad_answer(r, k, "cannot be written again (out of memory, or nested more than "
                                "128 deep)");
    tsr_array *res = &r->a->results[k];
    int rc = 0;
    if (res->data && (res->rank != 1 || (size_t)res->shape[0] != len)) {
        rc = bad_answer(r, k, "is not of the length the host sized");
    } else {
        void *to = res->data;
        res->dtype = TSR_UINT8;
        res->rank = 1;
        res->shape[0] = (int64_t)len;
        if (!to) {
            int code = TSR_E_PLUGIN_RESULT;
            char cause[400];
            to = r->sink->alloc(r->sink->user, k, &code, cause, sizeof cause);
            if (!to) snprintf(r->why, r->n, "the answer cannot be kept: %s", cause);
            if (!to) rc = code;
        }
        if (to) memcpy(to, bytes, len);
    }
    free(dumped);
    return rc;
}

static int read_result(reader *r, int32_t k) {
    char path[2 * SCHEMA_MAX_NAME + 2];
    json_t *v = find_result(r, k, path, sizeof path);
    remote_kind kind = result_kind(r, k);
    if (!v && !(kind != REMOTE_ARRAY && r->a->endpoint == TSR_EP_ABSTRACT_EVAL))
        return bad_answer(r, k, "is missing");
    if (kind != REMOTE_ARRAY) return read_value(r, k, v, kind);
    decoded_array dec;
    int abstract = r->a->endpoint == TSR_EP_ABSTRACT_EVAL;
    tsr_dtype want = inside_json(r, k) ? TSR_DTYPE_INVALID : r->a->results[k].dtype;
    int rc = decode_array_value(v, want, abstract, &r->ctx, path, &dec);
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
    hoist_doc hoist = {0};
    /* Values are kept as text: nothing may be cut out of the answer then. */
    int values = 0;
    for (int32_t k = 0; k < r.a->n_results; k++) values |= result_kind(&r, k) != REMOTE_ARRAY;
    r.root = values ? json_loadb(text, len, 0, &jerr) : hoist_parse(text, len, 0, &hoist, &jerr);
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
