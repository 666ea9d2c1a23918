/* SPDX-License-Identifier: MIT */
/*
 * A plugin whose apply carries rounding-like noise, as a solver's output
 * does, for the gradient-check tests:
 *
 *   y = x^2 + amplitude * noise(x)      x, y float64 (n,), differentiable
 *
 * noise(x) is a deterministic pseudo-random value in [-1, 1) drawn from the
 * bits of x, so that apply repeats exactly but is not smooth at small
 * scales. config "amplitude" (default 1e-9); config "bias" adds bias * x
 * to every derivative (default 0: the derivatives 2x are right).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim vec_n[] = {TSR_SYM("n")};
static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec_n, .flags = TSR_FIELD_DIFFERENTIABLE},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec_n, .flags = TSR_FIELD_DIFFERENTIABLE},
};

typedef struct settings {
    double amplitude, bias;
} settings;

static double number(const char *text, double fallback) { return text ? strtod(text, NULL) : fallback; }

static int init(tsr_ctx *ctx, void **state) {
    settings *s = malloc(sizeof *s);
    if (!s) return tsr_ctx_errorf(ctx, "out of memory");
    s->amplitude = number(tsr_ctx_config(ctx, "amplitude"), 1e-9);
    s->bias = number(tsr_ctx_config(ctx, "bias"), 0.0);
    *state = s;
    return 0;
}

static void fini(void *state) { free(state); }

static double noise(double x) {
    uint64_t z;
    memcpy(&z, &x, sizeof z);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

static double slope(tsr_ctx *ctx, double x) { return 2.0 * x + ((settings *)ctx->state)->bias * x; }

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[0].data;
    double *y = args->results[0].data;
    double a = ((settings *)ctx->state)->amplitude;
    for (int64_t i = 0; i < tsr_array_count(&args->inputs[0]); i++) y[i] = x[i] * x[i] + a * noise(x[i]);
    return 0;
}

/* Diagonal Jacobian: jvp and vjp both scale their seed by the slope. */
static int jvp_vjp(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[0].data, *seed = args->seeds[0].data;
    double *r = args->results[0].data;
    for (int64_t i = 0; i < tsr_array_count(&args->inputs[0]); i++) r[i] = slope(ctx, x[i]) * seed[i];
    return 0;
}

static int jacobian(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[0].data;
    int64_t n = tsr_array_count(&args->inputs[0]);
    double *b = args->results[0].data;
    memset(b, 0, (size_t)(n * n) * sizeof *b);
    for (int64_t i = 0; i < n; i++) b[i * n + i] = slope(ctx, x[i]);
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "noisy",
    .version = "1.0.0",
    .description = "y = x^2 + amplitude * noise(x), with exact derivatives 2x (plus bias * x)",
    .inputs = inputs,
    .n_inputs = 1,
    .outputs = outputs,
    .n_outputs = 1,
    .init = init,
    .fini = fini,
    .apply = apply,
    .jvp = jvp_vjp,
    .vjp = jvp_vjp,
    .jacobian = jacobian,
};

TSR_PLUGIN_DEFINE(plugin)
