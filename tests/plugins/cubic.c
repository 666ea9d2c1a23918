/* SPDX-License-Identifier: MIT */
/*
 * A curved component with first derivatives only (jvp and vjp, no hvp, no
 * jacobian), so that its second derivatives come from the host's central
 * differences of its vjp:
 *
 *   y[i] = s * x[i]^3
 *
 * The Hessian of w . y: d2/dx[i]2 = 6 s w[i] x[i], d2/dx[i] ds = 3 w[i]
 * x[i]^2, d2/ds2 = 0, cross terms between different x[i] zero.
 */
#include <tessera/plugin.h>

static const tsr_dim n_dims[] = {TSR_SYM("n")};

enum { IN_X, IN_S };
enum { OUT_Y };

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "point"},
    {.name = "s", .dtype = TSR_FLOAT64, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "scale"},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "s * x^3"},
};

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const double *x = args->inputs[IN_X].data;
    double s = *(const double *)args->inputs[IN_S].data;
    double *y = args->results[OUT_Y].data;
    for (int64_t i = 0; i < args->inputs[IN_X].shape[0]; i++) y[i] = s * x[i] * x[i] * x[i];
    return 0;
}

static int jvp(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const double *x = args->inputs[IN_X].data;
    double s = *(const double *)args->inputs[IN_S].data;
    int64_t n = args->inputs[IN_X].shape[0];
    double *dy = args->results[0].data;
    for (int64_t i = 0; i < n; i++) dy[i] = 0;
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        const double *t = args->seeds[k].data;
        for (int64_t i = 0; i < n; i++)
            dy[i] += args->wrt_in[k] == IN_X ? 3 * s * x[i] * x[i] * t[i]
                                             : x[i] * x[i] * x[i] * t[0];
    }
    return 0;
}

static int vjp(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const double *x = args->inputs[IN_X].data, *ct = args->seeds[0].data;
    double s = *(const double *)args->inputs[IN_S].data;
    int64_t n = args->inputs[IN_X].shape[0];
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        double *r = args->results[k].data;
        if (args->wrt_in[k] == IN_S) {
            r[0] = 0;
            for (int64_t i = 0; i < n; i++) r[0] += x[i] * x[i] * x[i] * ct[i];
        } else {
            for (int64_t i = 0; i < n; i++) r[i] = 3 * s * x[i] * x[i] * ct[i];
        }
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "cubic",
    .version = "1.0",
    .description = "y = s * x^3 with first derivatives only",
    .inputs = inputs,
    .n_inputs = 2,
    .outputs = outputs,
    .n_outputs = 1,
    .apply = apply,
    .jvp = jvp,
    .vjp = vjp,
};
TSR_PLUGIN_DEFINE(plugin)
