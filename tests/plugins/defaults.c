/* SPDX-License-Identifier: MIT */
/*
 * Inputs that may be left out: a scalar with a default (s = 2), a small
 * array with a default (w = [1, 2, 3]), an optional input (bias, shaped
 * like x) and a required one (x).
 *
 *   y    = s * x + sum(w) + bias     (bias counts as 0 when absent)
 *   seen = [s, sum(w), 1 if bias was given else 0]
 *
 * so that a result shows which inputs the plugin received. jvp and vjp
 * differentiate y with respect to x, s and bias.
 */
#include <tessera/plugin.h>

static const tsr_dim n_dims[] = {TSR_SYM("n")};
static const tsr_dim three[] = {TSR_FIXED(3)};

static double s_default_value = 2.0;
static const tsr_array s_default = {.data = &s_default_value, .dtype = TSR_FLOAT64, .rank = 0};
static double w_default_values[3] = {1.0, 2.0, 3.0};
static const tsr_array w_default = {
    .data = w_default_values, .dtype = TSR_FLOAT64, .rank = 1, .shape = {3}};

enum { IN_X, IN_S, IN_W, IN_BIAS };
enum { OUT_Y, OUT_SEEN };

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "required"},
    {.name = "s", .dtype = TSR_FLOAT64, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "scale", .default_value = &s_default},
    {.name = "w", .dtype = TSR_FLOAT64, .rank = 1, .dims = three, .doc = "weights",
     .default_value = &w_default},
    {.name = "bias", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE | TSR_FIELD_OPTIONAL, .doc = "added when given"},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "seen", .dtype = TSR_FLOAT64, .rank = 1, .dims = three},
};

static double scalar(const tsr_array *a) { return *(const double *)a->data; }

static double sum3(const tsr_array *w) {
    const double *v = w->data;
    return v[0] + v[1] + v[2];
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *in = args->inputs, *bias = &in[IN_BIAS];
    int has_bias = !tsr_input_absent(bias);
    if (has_bias && bias->dtype != TSR_FLOAT64)
        return tsr_ctx_errorf(ctx, "bias: dtype %d", (int)bias->dtype);
    if (!has_bias && (bias->rank != 0 || bias->data))
        return tsr_ctx_errorf(ctx, "an absent bias has rank %d", (int)bias->rank);
    const double *x = in[IN_X].data, *b = bias->data;
    double s = scalar(&in[IN_S]), wsum = sum3(&in[IN_W]);
    double *y = args->results[OUT_Y].data, *seen = args->results[OUT_SEEN].data;
    for (int64_t i = 0; i < in[IN_X].shape[0]; i++) y[i] = s * x[i] + wsum + (has_bias ? b[i] : 0);
    seen[0] = s;
    seen[1] = wsum;
    seen[2] = has_bias;
    return 0;
}

/* d y = s dx + x ds + d bias */
static int jvp(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const tsr_array *in = args->inputs;
    int64_t n = in[IN_X].shape[0];
    const double *x = in[IN_X].data;
    double s = scalar(&in[IN_S]);
    for (int32_t o = 0; o < args->n_wrt_out; o++) {
        double *r = args->results[o].data;
        for (int64_t i = 0; i < n; i++) r[i] = 0;
        for (int32_t k = 0; k < args->n_wrt_in; k++) {
            const double *t = args->seeds[k].data;
            for (int64_t i = 0; i < n; i++)
                r[i] += args->wrt_in[k] == IN_X ? s * t[i]
                        : args->wrt_in[k] == IN_S ? x[i] * t[0]
                                                  : t[i];
        }
    }
    return 0;
}

static int vjp(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const tsr_array *in = args->inputs;
    int64_t n = in[IN_X].shape[0];
    const double *x = in[IN_X].data, *ct = args->seeds[0].data;
    double s = scalar(&in[IN_S]);
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        double *r = args->results[k].data;
        if (args->wrt_in[k] == IN_S) {
            r[0] = 0;
            for (int64_t i = 0; i < n; i++) r[0] += x[i] * ct[i];
        } else {
            for (int64_t i = 0; i < n; i++) r[i] = args->wrt_in[k] == IN_X ? s * ct[i] : ct[i];
        }
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "defaults",
    .version = "1.0",
    .description = "inputs with defaults and an optional input",
    .inputs = inputs,
    .n_inputs = 4,
    .outputs = outputs,
    .n_outputs = 2,
    .apply = apply,
    .jvp = jvp,
    .vjp = vjp,
};
TSR_PLUGIN_DEFINE(plugin)
