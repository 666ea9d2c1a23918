/* SPDX-License-Identifier: MIT */
/*
 * Every field kind in and out, for the Python package's tests:
 *
 *   inputs   x     float64[n], differentiable
 *            mode  text, one of "double", "negate"
 *            tag   JSON, any value
 *   outputs  y     float64[n], differentiable: 2 x ("double") or -x ("negate")
 *            label text: "<mode>:<n>"
 *            echo  JSON: tag as given (the host's text of it)
 *
 * jvp and vjp differentiate y with respect to x.
 */
#include <stdio.h>
#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim n_dims[] = {TSR_SYM("n")};
static const char *const modes[] = {"double", "negate"};

enum { IN_X, IN_MODE, IN_TAG };
enum { OUT_Y, OUT_LABEL, OUT_ECHO };

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "mode", .dtype = TSR_UINT8, .kind = TSR_KIND_TEXT, .choices = modes,
     .n_choices = 2, .doc = "double or negate"},
    {.name = "tag", .dtype = TSR_UINT8, .kind = TSR_KIND_JSON, .doc = "any JSON value"},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "label", .dtype = TSR_UINT8, .kind = TSR_KIND_TEXT},
    {.name = "echo", .dtype = TSR_UINT8, .kind = TSR_KIND_JSON},
};

static double factor(const tsr_args *args) {
    return strcmp((const char *)args->inputs[IN_MODE].data, "negate") == 0 ? -1.0 : 2.0;
}

/* A text result of len bytes (the host adds the NUL). */
static int put_text(tsr_ctx *ctx, const tsr_args *args, int32_t k, const char *s, size_t len) {
    tsr_array *r = &args->results[k];
    r->dtype = TSR_UINT8;
    r->rank = 1;
    r->shape[0] = (int64_t)len;
    char *p = tsr_ctx_alloc(ctx, k);
    if (!p) return -1;  /* the host recorded why */
    memcpy(p, s, len);
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *x = &args->inputs[IN_X];
    double f = factor(args);
    const double *xv = x->data;
    double *y = args->results[OUT_Y].data;
    for (int64_t i = 0; i < x->shape[0]; i++) y[i] = f * xv[i];
    char label[64];
    int n = snprintf(label, sizeof label, "%s:%lld", (const char *)args->inputs[IN_MODE].data,
                     (long long)x->shape[0]);
    if (n < 0 || (size_t)n >= sizeof label) return tsr_ctx_errorf(ctx, "mode too long");
    int rc = put_text(ctx, args, OUT_LABEL, label, (size_t)n);
    const tsr_array *tag = &args->inputs[IN_TAG];
    return rc ? rc : put_text(ctx, args, OUT_ECHO, tag->data, (size_t)tag->shape[0]);
}

/* y = f x: jvp and vjp are both f times the seed. */
static int linear(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    double f = factor(args);
    int64_t n = args->inputs[IN_X].shape[0];
    const double *s = args->seeds[0].data;
    double *r = args->results[0].data;
    for (int64_t i = 0; i < n; i++) r[i] = f * s[i];
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "kinds",
    .version = "1.0",
    .description = "an array, a text and a JSON field in and out",
    .inputs = inputs,
    .n_inputs = 3,
    .outputs = outputs,
    .n_outputs = 3,
    .apply = apply,
    .jvp = linear,
    .vjp = linear,
};
TSR_PLUGIN_DEFINE(plugin)
