/* SPDX-License-Identifier: MIT */
/*
 * Derivatives inside a JSON field (plugin.h, "Derivatives inside JSON
 * values"): "weights" is a dict of float64 arrays in Tesseract's encoding
 * (base64 data), parsed with jansson; s = x + sum over keys of sum(w^2).
 * jvp, vjp and jacobian take paths "weights.{key}" (and the whole array
 * field "x"); a path result gets the key's shape and is allocated here.
 * "mode" = "int_result" makes path results int64, which the host refuses.
 * "cfg" is a JSON field that is not differentiable.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/plugin.h>

static const char *const modes[] = {"good", "int_result"};
static const tsr_array mode_default = {.data = (void *)"good", .dtype = TSR_UINT8, .rank = 1,
                                       .shape = {4}};
static const tsr_array cfg_default = {.data = (void *)"{}", .dtype = TSR_UINT8, .rank = 1,
                                      .shape = {2}};

enum { IN_WEIGHTS, IN_X, IN_MODE, IN_CFG };
static const tsr_field inputs[] = {
    {.name = "weights", .kind = TSR_KIND_JSON, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "mode", .kind = TSR_KIND_TEXT, .choices = modes, .n_choices = 2,
     .default_value = &mode_default},
    {.name = "cfg", .kind = TSR_KIND_JSON, .default_value = &cfg_default},
};
static const tsr_field outputs[] = {
    {.name = "s", .dtype = TSR_FLOAT64, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE},
};

/* ---- weights ------------------------------------------------------------- */

typedef struct weight {
    const char *key;
    int32_t rank;
    int64_t shape[TSR_MAX_FIELD_RANK];
    int64_t n;
    double *v;
} weight;

typedef struct weights {
    json_t *doc;
    weight *w;
    size_t n;
} weights;

static int b64_value(char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
}

/* Decode base64 into exactly want bytes at out; 0 or -1. */
static int b64_decode(const char *s, unsigned char *out, size_t want) {
    size_t len = strlen(s), got = 0;
    while (len > 0 && s[len - 1] == '=') len--;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_value(s[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (got == want) return -1;
            out[got++] = (unsigned char)(acc >> bits);
        }
    }
    return got == want ? 0 : -1;
}

static void weights_free(weights *ws) {
    for (size_t i = 0; i < ws->n; i++) free(ws->w[i].v);
    free(ws->w);
    json_decref(ws->doc);
}

static int weights_parse(tsr_ctx *ctx, const tsr_array *in, weights *ws) {
    memset(ws, 0, sizeof *ws);
    json_error_t err;
    ws->doc = json_loads(tsr_input_text(in), 0, &err);
    if (!ws->doc || !json_is_object(ws->doc))
        return tsr_ctx_errorf(ctx, "weights: a JSON object of arrays expected");
    ws->w = calloc(json_object_size(ws->doc) + 1, sizeof *ws->w);
    if (!ws->w) return tsr_ctx_errorf(ctx, "out of memory");
    const char *key;
    json_t *a;
    json_object_foreach(ws->doc, key, a) {
        weight *w = &ws->w[ws->n++];
        w->key = key;
        json_t *shape = json_object_get(a, "shape"), *data = json_object_get(a, "data");
        const char *dtype = json_string_value(json_object_get(a, "dtype"));
        const char *buf = json_string_value(json_object_get(data, "buffer"));
        const char *enc = json_string_value(json_object_get(data, "encoding"));
        if (!json_is_array(shape) || json_array_size(shape) > TSR_MAX_FIELD_RANK || !dtype ||
            strcmp(dtype, "float64") != 0 || !buf || !enc || strcmp(enc, "base64") != 0)
            return tsr_ctx_invalid(ctx, "inputs.weights", NULL,
                                   "weights: each value is a base64 float64 array");
        w->rank = (int32_t)json_array_size(shape);
        w->n = 1;
        for (int32_t d = 0; d < w->rank; d++) {
            json_int_t dim = json_integer_value(json_array_get(shape, (size_t)d));
            if (dim < 0 || dim > 1 << 20) return tsr_ctx_errorf(ctx, "weights.%s: bad shape", key);
            w->shape[d] = dim;
            w->n *= dim;
        }
        w->v = malloc((size_t)w->n * sizeof(double) + 1);
        if (!w->v) return tsr_ctx_errorf(ctx, "out of memory");
        if (b64_decode(buf, (unsigned char *)w->v, (size_t)w->n * sizeof(double)) != 0)
            return tsr_ctx_errorf(ctx, "weights.{%s}: its data does not hold its shape", key);
    }
    return 0;
}

/* The weight a path "weights.{key}" names, or NULL (the error set). */
static const weight *weight_at(tsr_ctx *ctx, const weights *ws, const char *path) {
    size_t len = strlen(path);
    if (strncmp(path, "weights.{", 9) != 0 || len < 10 || path[len - 1] != '}' ||
        memchr(path + 9, '}', len - 10)) {
        tsr_ctx_errorf(ctx, "'%s': only paths weights.{key} are differentiable here", path);
        return NULL;
    }
    for (size_t i = 0; i < ws->n; i++)
        if (strlen(ws->w[i].key) == len - 10 && strncmp(ws->w[i].key, path + 9, len - 10) == 0)
            return &ws->w[i];
    tsr_ctx_errorf(ctx, "'%s': weights has no such key", path);
    return NULL;
}

static double sum_sq(const weights *ws) {
    double s = 0;
    for (size_t i = 0; i < ws->n; i++)
        for (int64_t j = 0; j < ws->w[i].n; j++) s += ws->w[i].v[j] * ws->w[i].v[j];
    return s;
}

/* Result k shaped like w and allocated (int64 when mode asks for it). */
static double *alloc_like(tsr_ctx *ctx, const tsr_args *args, int32_t k, const weight *w) {
    tsr_array *r = &args->results[k];
    int bad = tsr_text_choice(&args->inputs[IN_MODE], modes, 2) == 1;
    r->dtype = bad ? TSR_INT64 : TSR_FLOAT64;
    r->rank = w->rank;
    for (int32_t d = 0; d < w->rank; d++) r->shape[d] = w->shape[d];
    return tsr_ctx_alloc(ctx, k);
}

/* ---- endpoints ---------------------------------------------------------- */

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    weights ws;
    int rc = weights_parse(ctx, &args->inputs[IN_WEIGHTS], &ws);
    if (!rc)
        *(double *)args->results[0].data = *(const double *)args->inputs[IN_X].data + sum_sq(&ws);
    weights_free(&ws);
    return rc;
}

static int jvp(tsr_ctx *ctx, const tsr_args *args) {
    weights ws;
    int rc = weights_parse(ctx, &args->inputs[IN_WEIGHTS], &ws);
    double acc = 0;
    for (int32_t k = 0; !rc && k < args->n_wrt_in; k++) {
        const tsr_array *t = &args->seeds[k];
        if (args->wrt_in[k] == IN_X) {
            acc += *(const double *)t->data;
            continue;
        }
        const weight *w = weight_at(ctx, &ws, args->wrt_in_paths[k]);
        if (!w) rc = -1;
        else if (t->dtype != TSR_FLOAT64 || t->rank != w->rank ||
                 memcmp(t->shape, w->shape, (size_t)w->rank * sizeof(int64_t)) != 0)
            rc = tsr_ctx_errorf(ctx, "tangent for '%s': a float64 array shaped like the weight",
                                args->wrt_in_paths[k]);
        for (int64_t j = 0; !rc && j < w->n; j++)
            acc += 2 * w->v[j] * ((const double *)t->data)[j];
    }
    if (!rc) *(double *)args->results[0].data = acc;
    weights_free(&ws);
    return rc;
}

static int vjp(tsr_ctx *ctx, const tsr_args *args) {
    weights ws;
    int rc = weights_parse(ctx, &args->inputs[IN_WEIGHTS], &ws);
    double ct = rc ? 0 : *(const double *)args->seeds[0].data;
    for (int32_t k = 0; !rc && k < args->n_wrt_in; k++) {
        if (args->wrt_in[k] == IN_X) {
            *(double *)args->results[k].data = ct;
            continue;
        }
        const weight *w = weight_at(ctx, &ws, args->wrt_in_paths[k]);
        double *g = w ? alloc_like(ctx, args, k, w) : NULL;
        if (!g) rc = -1;
        for (int64_t j = 0; !rc && j < w->n; j++) g[j] = 2 * ct * w->v[j];
    }
    weights_free(&ws);
    return rc;
}

static int jacobian(tsr_ctx *ctx, const tsr_args *args) {
    weights ws;
    int rc = weights_parse(ctx, &args->inputs[IN_WEIGHTS], &ws);
    /* one output, s: block k is d s / d wrt_in[k] */
    for (int32_t k = 0; !rc && k < args->n_wrt_in; k++) {
        if (args->wrt_in[k] == IN_X) {
            *(double *)args->results[k].data = 1.0;
            continue;
        }
        const weight *w = weight_at(ctx, &ws, args->wrt_in_paths[k]);
        double *g = w ? alloc_like(ctx, args, k, w) : NULL;
        if (!g) rc = -1;
        for (int64_t j = 0; !rc && j < w->n; j++) g[j] = 2 * w->v[j];
    }
    weights_free(&ws);
    return rc;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "json_weights",
    .version = "1.0",
    .inputs = inputs,
    .n_inputs = 4,
    .outputs = outputs,
    .n_outputs = 1,
    .apply = apply,
    .jvp = jvp,
    .vjp = vjp,
    .jacobian = jacobian,
};

TSR_PLUGIN_DEFINE(plugin)
