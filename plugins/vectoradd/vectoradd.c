/* SPDX-License-Identifier: MIT */
/*
 * vectoradd: result = a * s + b, for vectors a, b and a scalar s.
 *
 * Shows a plugin with several differentiable inputs of different ranks:
 * derivatives may be asked w.r.t. any subset of {a, b, s}, in any order,
 * and the scalar s brings blocks of different shapes into the Jacobian.
 */
#include <stdint.h>

#include <tessera/plugin.h>

#include "plugin_util.h"

/* Field indices, in schema order. */
enum { IN_A = 0, IN_B = 1, IN_S = 2 };
enum { OUT_RESULT = 0 };

static const tsr_dim vector_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "a", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "vector scaled by s; length n"},
    {.name = "b", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "vector added to a * s; same length n as a"},
    {.name = "s", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "scalar factor applied to a"},
};

static const tsr_field outputs[] = {
    {.name = "result", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "result[i] = a[i] * s + b[i]; length n"},
};

/* The inputs every endpoint reads, unpacked once. */
typedef struct vectoradd_inputs {
    int64_t n;
    const double *a;
    const double *b;
    double s;
} vectoradd_inputs;

static vectoradd_inputs unpack_inputs(const tsr_args *args) {
    vectoradd_inputs in = {
        .n = args->inputs[IN_A].shape[0],
        .a = args->inputs[IN_A].data,
        .b = args->inputs[IN_B].data,
        .s = *(const double *)args->inputs[IN_S].data,
    };
    return in;
}

static int vectoradd_apply(tsr_ctx *ctx, const tsr_args *args) {
    vectoradd_inputs in = unpack_inputs(args);
    double *result = result_f64(ctx, args, OUT_RESULT, 1, &in.n);
    if (result == NULL) return -1;
    for (int64_t i = 0; i < in.n; i++) result[i] = in.a[i] * in.s + in.b[i];
    return 0;
}

/* d result = da * s + a * ds + db; an input missing from jvp_inputs
 * contributes nothing. */
static int vectoradd_jvp(tsr_ctx *ctx, const tsr_args *args) {
    vectoradd_inputs in = unpack_inputs(args);
    const double *a_dot = jvp_tangent(args, IN_A);
    const double *b_dot = jvp_tangent(args, IN_B);
    const double *s_dot = jvp_tangent(args, IN_S);
    for (int32_t k = 0; k < args->n_wrt_out; k++) { /* wrt_out[k] can only be result */
        double *r_dot = result_f64(ctx, args, k, 1, &in.n);
        if (r_dot == NULL) return -1;
        for (int64_t i = 0; i < in.n; i++) {
            double v = 0.0;
            if (a_dot != NULL) v += a_dot[i] * in.s;
            if (s_dot != NULL) v += in.a[i] * *s_dot;
            if (b_dot != NULL) v += b_dot[i];
            r_dot[i] = v;
        }
    }
    return 0;
}

/* With cotangent c of result: a_bar = c * s, b_bar = c, s_bar = dot(c, a).
 * Without one (result not among vjp_outputs) every VJP is zero. */
static int vectoradd_vjp(tsr_ctx *ctx, const tsr_args *args) {
    vectoradd_inputs in = unpack_inputs(args);
    const double *c = vjp_cotangent(args, OUT_RESULT);
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        int32_t field = args->wrt_in[k];
        int32_t rank = field == IN_S ? 0 : 1;
        int64_t count = field == IN_S ? 1 : in.n;
        double *bar = result_f64(ctx, args, k, rank, &in.n);
        if (bar == NULL) return -1;
        if (c == NULL) {
            zero_f64(bar, count);
        } else if (field == IN_A) {
            for (int64_t i = 0; i < in.n; i++) bar[i] = c[i] * in.s;
        } else if (field == IN_B) {
            copy_f64(bar, c, in.n);
        } else {
            double dot = 0.0;
            for (int64_t i = 0; i < in.n; i++) dot += c[i] * in.a[i];
            *bar = dot;
        }
    }
    return 0;
}

/* Blocks of shape (*out_shape, *in_shape):
 *   d result / d a = s * I   (n, n)
 *   d result / d b = I       (n, n)
 *   d result / d s = a       (n,)     */
static int vectoradd_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    vectoradd_inputs in = unpack_inputs(args);
    const int64_t square[2] = {in.n, in.n};
    for (int32_t o = 0; o < args->n_wrt_out; o++) {   /* wrt_out[o] can only be result */
        for (int32_t i = 0; i < args->n_wrt_in; i++) {
            int32_t k = o * args->n_wrt_in + i;
            int32_t field = args->wrt_in[i];
            double *block = result_f64(ctx, args, k, field == IN_S ? 1 : 2, square);
            if (block == NULL) return -1;
            if (field == IN_A) scaled_identity_f64(block, in.n, in.s);
            else if (field == IN_B) scaled_identity_f64(block, in.n, 1.0);
            else copy_f64(block, in.a, in.n);
        }
    }
    return 0;
}

static int vectoradd_abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    tsr_array *result = &args->results[OUT_RESULT];
    result->dtype = TSR_FLOAT64;
    result->rank = 1;
    result->shape[0] = args->inputs[IN_A].shape[0];
    return 0;
}

static const tsr_plugin vectoradd_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "vectoradd",
    .version = "0.1.0",
    .description = "Scaled vector addition result = a * s + b (a, b float64 vectors of "
                   "length n, s a float64 scalar), differentiable in a, b and s.",
    .inputs = inputs,
    .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs,
    .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = vectoradd_apply,
    .jvp = vectoradd_jvp,
    .vjp = vectoradd_vjp,
    .jacobian = vectoradd_jacobian,
    .abstract_eval = vectoradd_abstract_eval,
};

TSR_PLUGIN_DEFINE(vectoradd_plugin)
