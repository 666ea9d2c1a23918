/* SPDX-License-Identifier: MIT */
/*
 * A plugin compiled against the previous main's plugin.h (frozen in
 * tests/abi/prev_main/), standing for a plugin binary built before this
 * release: y = scale * x + offset, with scale an input that has a default
 * (a member appended to tsr_field, covered by field_size), offset from the
 * host's config at init (state), jvp and vjp, a log line, and a failure
 * reported through the host API. It exports the ABI version and the
 * struct sizes it was compiled with, for the test to compare with the
 * current header.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tessera/plugin.h>

static const tsr_dim n_dims[] = {TSR_SYM("n")};
static double scale_default_value = 2.0; /* tsr_array.data is not const */
static const tsr_array scale_default = {.data = &scale_default_value,
                                        .dtype = TSR_FLOAT64, .rank = 0};
static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "the vector"},
    {.name = "scale", .dtype = TSR_FLOAT64, .rank = 0, .doc = "the factor",
     .default_value = &scale_default},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE},
};

typedef struct state {
    double offset;
} state;

static int init(tsr_ctx *ctx, void **out) {
    state *s = malloc(sizeof *s);
    if (!s) {
        tsr_ctx_error(ctx, "out of memory");
        return 1;
    }
    const char *offset = tsr_ctx_config(ctx, "offset");
    s->offset = offset ? strtod(offset, NULL) : 0.0;
    tsr_ctx_log(ctx, TSR_LOG_INFO, "prev_main plugin ready");
    *out = s;
    return 0;
}

static void fini(void *s) { free(s); }

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *x = &args->inputs[0], *scale = &args->inputs[1];
    const double *xs = x->data, a = *(const double *)scale->data;
    const state *s = ctx->state;
    int64_t n = tsr_array_count(x);
    if (n > 0 && isnan(xs[0])) return tsr_ctx_errorf(ctx, "x[0] is NaN"), 1;
    double *y = args->results[0].data;   /* shaped by the host: y is (n,) */
    for (int64_t i = 0; i < n; i++) y[i] = a * xs[i] + s->offset;
    return 0;
}

/* jvp: dy = scale * dx; vjp: dx = scale * dy (only x is differentiable). */
static int linear(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *seed = &args->seeds[0];
    const double *in = seed->data, a = *(const double *)args->inputs[1].data;
    double *out = args->results[0].data;
    (void)ctx;
    for (int64_t i = 0; i < tsr_array_count(seed); i++) out[i] = a * in[i];
    return 0;
}

static const tsr_plugin plugin = {
    .abi_version = TSR_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(tsr_plugin),
    .field_size = sizeof(tsr_field),
    .name = "prev_main",
    .version = "1.0",
    .inputs = inputs, .n_inputs = 2, .outputs = outputs, .n_outputs = 1,
    .init = init, .fini = fini, .apply = apply, .jvp = linear, .vjp = linear,
};
TSR_PLUGIN_DEFINE(plugin)

/* What this plugin was compiled with, beside the entry point, for the test
 * to compare with the current header (dlsym). */
TSR_PLUGIN_EXPORT const uint32_t prev_main_abi_version = TSR_PLUGIN_ABI_VERSION;
TSR_PLUGIN_EXPORT const size_t prev_main_sizes[] = {
    sizeof(tsr_plugin), sizeof(tsr_field), sizeof(tsr_array), sizeof(tsr_args),
    sizeof(tsr_host_api), sizeof(tsr_ctx), sizeof(tsr_dim)};
