/* SPDX-License-Identifier: MIT */
/*
 * banana: the log-density of a twisted ("banana-shaped") Gaussian in two
 * dimensions, a standard target for samplers,
 *
 *     u           = x[1] + beta * (x[0]^2 - sigma^2)
 *     log_density = -x[0]^2 / (2 sigma^2) - u^2 / 2
 *
 * with its gradient and Hessian exact. sigma and beta come from the
 * configuration (keys "sigma", default 1, and "beta", default 1), so the
 * one input is the point: UM-Bridge's samplers (umbridge.emcee) take a
 * model of one input vector and one output. The Hessian is
 *
 *     d2/dx0^2    = -1/sigma^2 - (2 beta x0)^2 - 2 beta u
 *     d2/dx0 dx1  = -2 beta x0
 *     d2/dx1^2    = -1
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <tessera/plugin.h>

#include "plugin_util.h"

enum { IN_X = 0 };
enum { OUT_LOG_DENSITY = 0 };

static const tsr_dim vector_2[] = {TSR_FIXED(2)};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_2,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "the point (x0, x1)"},
};

static const tsr_field outputs[] = {
    {.name = "log_density", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "-x0^2 / (2 sigma^2) - (x1 + beta (x0^2 - sigma^2))^2 / 2, up to a constant"},
};

typedef struct banana_shape {
    double sigma;
    double beta;
} banana_shape;

/* A configuration value as a finite number (sigma > 0), or the default. */
static int config_number(tsr_ctx *ctx, const char *key, double fallback, double *out) {
    const char *text = tsr_ctx_config(ctx, key);
    if (text == NULL) {
        *out = fallback;
        return 0;
    }
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v)) {
        return tsr_ctx_errorf(ctx, "config %s: '%s' is not a finite number", key, text);
    }
    *out = v;
    return 0;
}

static int banana_init(tsr_ctx *ctx, void **state) {
    banana_shape *s = malloc(sizeof *s);
    if (s == NULL) return tsr_ctx_errorf(ctx, "out of memory");
    if (config_number(ctx, "sigma", 1.0, &s->sigma) != 0 ||
        config_number(ctx, "beta", 1.0, &s->beta) != 0) {
        free(s);
        return -1;
    }
    if (!(s->sigma > 0)) {
        double sigma = s->sigma;
        free(s);
        return tsr_ctx_errorf(ctx, "config sigma: must be positive, got %g", sigma);
    }
    *state = s;
    return 0;
}

static void banana_fini(void *state) { free(state); }

/* The value, gradient and Hessian at x. */
typedef struct banana_parts {
    double value;
    double grad[2];
    double hess[2][2];
} banana_parts;

static banana_parts banana_at(const banana_shape *s, const double *x) {
    double inv_s2 = 1.0 / (s->sigma * s->sigma);
    double u = x[1] + s->beta * (x[0] * x[0] - s->sigma * s->sigma);
    double du_dx0 = 2.0 * s->beta * x[0];
    banana_parts p = {
        .value = -0.5 * x[0] * x[0] * inv_s2 - 0.5 * u * u,
        .grad = {-x[0] * inv_s2 - u * du_dx0, -u},
        .hess = {{-inv_s2 - du_dx0 * du_dx0 - 2.0 * s->beta * u, -du_dx0}, {-du_dx0, -1.0}},
    };
    return p;
}

static const double *point(const tsr_args *args) { return args->inputs[IN_X].data; }

static int banana_apply(tsr_ctx *ctx, const tsr_args *args) {
    double *value = result_f64(ctx, args, OUT_LOG_DENSITY, 0, NULL);
    if (value == NULL) return -1;
    *value = banana_at(ctx->state, point(args)).value;
    return 0;
}

/* grad . x_dot, for each jvp_output (only log_density). */
static int banana_jvp(tsr_ctx *ctx, const tsr_args *args) {
    banana_parts p = banana_at(ctx->state, point(args));
    const double *x_dot = jvp_tangent(args, IN_X);
    for (int32_t k = 0; k < args->n_wrt_out; k++) {
        double *out = result_f64(ctx, args, k, 0, NULL);
        if (out == NULL) return -1;
        *out = x_dot == NULL ? 0.0 : p.grad[0] * x_dot[0] + p.grad[1] * x_dot[1];
    }
    return 0;
}

static const int64_t shape_2[] = {2};

/* w * grad, for each vjp_input (only x). */
static int banana_vjp(tsr_ctx *ctx, const tsr_args *args) {
    banana_parts p = banana_at(ctx->state, point(args));
    const double *w = vjp_cotangent(args, OUT_LOG_DENSITY);
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        double *out = result_f64(ctx, args, k, 1, shape_2);
        if (out == NULL) return -1;
        out[0] = w == NULL ? 0.0 : *w * p.grad[0];
        out[1] = w == NULL ? 0.0 : *w * p.grad[1];
    }
    return 0;
}

static int banana_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    banana_parts p = banana_at(ctx->state, point(args));
    for (int32_t k = 0; k < args->n_wrt_out * args->n_wrt_in; k++) {
        double *out = result_f64(ctx, args, k, 1, shape_2);
        if (out == NULL) return -1;
        copy_f64(out, p.grad, 2);
    }
    return 0;
}

/* w * H v: seeds are the cotangents of the hvp_outputs, then the tangents
 * of the hvp_inputs (plugin.h); with one input and one output, at most one
 * of each. */
static int banana_hvp(tsr_ctx *ctx, const tsr_args *args) {
    banana_parts p = banana_at(ctx->state, point(args));
    double w = args->n_wrt_out > 0 ? *(const double *)args->seeds[0].data : 0.0;
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        const double *v = args->seeds[args->n_wrt_out + k].data;
        double *out = result_f64(ctx, args, k, 1, shape_2);
        if (out == NULL) return -1;
        out[0] = w * (p.hess[0][0] * v[0] + p.hess[0][1] * v[1]);
        out[1] = w * (p.hess[1][0] * v[0] + p.hess[1][1] * v[1]);
    }
    return 0;
}

static const tsr_plugin banana_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "banana",
    .version = "0.1.0",
    .description = "Log-density of a twisted Gaussian in 2-D: -x0^2/(2 sigma^2) - "
                   "(x1 + beta (x0^2 - sigma^2))^2 / 2, with exact gradient and Hessian; "
                   "config sigma (default 1), beta (default 1).",
    .inputs = inputs,
    .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs,
    .n_outputs = sizeof outputs / sizeof outputs[0],
    .init = banana_init,
    .fini = banana_fini,
    .apply = banana_apply,
    .jvp = banana_jvp,
    .vjp = banana_vjp,
    .jacobian = banana_jacobian,
    .hvp = banana_hvp,
};

TSR_PLUGIN_DEFINE(banana_plugin)
