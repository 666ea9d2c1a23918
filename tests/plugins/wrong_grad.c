/* SPDX-License-Identifier: MIT */
/*
 * A plugin whose derivatives are right except in one endpoint, for the
 * gradient-check tests:
 *
 *   y = sin(x + c)        x float64 (n,) differentiable, c float64 () not
 *   s = sum(x^2)
 *
 * config "wrong": the endpoint whose dy/dx is wrong, "jvp", "vjp" (the
 * default), "jacobian", "hvp" or "none". The wrong endpoint uses
 * cos(x + c) + 0.01 * x instead of cos(x + c); ds/dx = 2x is always right.
 * hvp (d2y_i/dx_i2 = -sin(x_i + c), d2s/dx_i2 = 2) uses -sin(x + c) +
 * 0.01 * x when it is the wrong one.
 */
#include <math.h>
#include <string.h>

#include <tessera/plugin.h>

enum { IN_X = 0, IN_C = 1 };
enum { OUT_Y = 0, OUT_S = 1 };

static const tsr_dim vec_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec_n, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "c", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL, .flags = 0},
};

static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec_n, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "s", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL, .flags = TSR_FIELD_DIFFERENTIABLE},
};

/* The state is the endpoint that is wrong (TSR_EP_COUNT: none). */
static tsr_endpoint wrong_choices[] = {TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN, TSR_EP_HVP,
                                       TSR_EP_COUNT};

static int init(tsr_ctx *ctx, void **state) {
    const char *w = tsr_ctx_config(ctx, "wrong");
    int k = 1;
    if (w == NULL || strcmp(w, "vjp") == 0) k = 1;
    else if (strcmp(w, "jvp") == 0) k = 0;
    else if (strcmp(w, "jacobian") == 0) k = 2;
    else if (strcmp(w, "hvp") == 0) k = 3;
    else if (strcmp(w, "none") == 0) k = 4;
    else return tsr_ctx_errorf(ctx, "wrong: '%s' is not jvp, vjp, jacobian, hvp or none", w);
    *state = &wrong_choices[k];
    return 0;
}

/* dy_i/dx_i as the endpoint ep computes it. */
static double dy_dx(tsr_ctx *ctx, tsr_endpoint ep, double x, double c) {
    double d = cos(x + c);
    return *(const tsr_endpoint *)ctx->state == ep ? d + 0.01 * x : d;
}

static int32_t position(const int32_t *list, int32_t n, int32_t field) {
    for (int32_t k = 0; k < n; k++)
        if (list[k] == field) return k;
    return -1;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const double *x = args->inputs[IN_X].data;
    double c = *(const double *)args->inputs[IN_C].data;
    int64_t n = tsr_array_count(&args->inputs[IN_X]);
    double *y = args->results[OUT_Y].data, *s = args->results[OUT_S].data;
    *s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        y[i] = sin(x[i] + c);
        *s += x[i] * x[i];
    }
    return 0;
}

static int jvp(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[IN_X].data;
    double c = *(const double *)args->inputs[IN_C].data;
    int64_t n = tsr_array_count(&args->inputs[IN_X]);
    int32_t at = position(args->wrt_in, args->n_wrt_in, IN_X);
    const double *t = at >= 0 ? args->seeds[at].data : NULL;
    for (int32_t k = 0; k < args->n_wrt_out; k++) {
        double *r = args->results[k].data;
        if (args->wrt_out[k] == OUT_Y) {
            for (int64_t i = 0; i < n; i++) r[i] = t ? dy_dx(ctx, TSR_EP_JVP, x[i], c) * t[i] : 0.0;
        } else {
            *r = 0.0;
            for (int64_t i = 0; t && i < n; i++) *r += 2.0 * x[i] * t[i];
        }
    }
    return 0;
}

static int vjp(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[IN_X].data;
    double c = *(const double *)args->inputs[IN_C].data;
    int64_t n = tsr_array_count(&args->inputs[IN_X]);
    int32_t ay = position(args->wrt_out, args->n_wrt_out, OUT_Y);
    int32_t as = position(args->wrt_out, args->n_wrt_out, OUT_S);
    const double *cy = ay >= 0 ? args->seeds[ay].data : NULL;
    const double *cs = as >= 0 ? args->seeds[as].data : NULL;
    for (int32_t k = 0; k < args->n_wrt_in; k++) { /* only x is differentiable */
        double *r = args->results[k].data;
        for (int64_t i = 0; i < n; i++) {
            r[i] = cy ? dy_dx(ctx, TSR_EP_VJP, x[i], c) * cy[i] : 0.0;
            if (cs) r[i] += 2.0 * x[i] * *cs;
        }
    }
    return 0;
}

static int jacobian(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[IN_X].data;
    double c = *(const double *)args->inputs[IN_C].data;
    int64_t n = tsr_array_count(&args->inputs[IN_X]);
    for (int32_t o = 0; o < args->n_wrt_out; o++) {
        for (int32_t k = 0; k < args->n_wrt_in; k++) {
            double *b = args->results[o * args->n_wrt_in + k].data;
            if (args->wrt_out[o] == OUT_Y) {
                memset(b, 0, (size_t)(n * n) * sizeof *b);
                for (int64_t i = 0; i < n; i++) b[i * n + i] = dy_dx(ctx, TSR_EP_JACOBIAN, x[i], c);
            } else {
                for (int64_t i = 0; i < n; i++) b[i] = 2.0 * x[i];
            }
        }
    }
    return 0;
}

/* seeds: cotangents of hvp_outputs, then the tangent of x (the only
 * differentiable input). */
static int hvp(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[IN_X].data;
    double c = *(const double *)args->inputs[IN_C].data;
    int64_t n = tsr_array_count(&args->inputs[IN_X]);
    int32_t ay = position(args->wrt_out, args->n_wrt_out, OUT_Y);
    int32_t as = position(args->wrt_out, args->n_wrt_out, OUT_S);
    const double *cy = ay >= 0 ? args->seeds[ay].data : NULL;
    const double *cs = as >= 0 ? args->seeds[as].data : NULL;
    int wrong = *(const tsr_endpoint *)ctx->state == TSR_EP_HVP;
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        const double *t = args->seeds[args->n_wrt_out + k].data;
        double *r = args->results[k].data;
        for (int64_t i = 0; i < n; i++) {
            double d2 = -sin(x[i] + c) + (wrong ? 0.01 * x[i] : 0.0);
            r[i] = (cy ? d2 * cy[i] : 0.0) + (cs ? 2.0 * *cs : 0.0);
            r[i] *= t[i];
        }
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "wrong_grad",
    .version = "1.0.0",
    .description = "y = sin(x + c), s = sum(x^2), with dy/dx wrong in the endpoint named by "
                   "config 'wrong' (default vjp)",
    .inputs = inputs,
    .n_inputs = 2,
    .outputs = outputs,
    .n_outputs = 2,
    .init = init,
    .apply = apply,
    .jvp = jvp,
    .vjp = vjp,
    .jacobian = jacobian,
    .hvp = hvp,
};

TSR_PLUGIN_DEFINE(plugin)
