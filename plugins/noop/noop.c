/* SPDX-License-Identifier: MIT */
/*
 * noop: y = x.
 *
 * The smallest complete plugin, and the yardstick for call overhead: apply
 * is a single memcpy, so whatever a call costs beyond that is the host's.
 * It still implements every endpoint, as a template for real components.
 */
#include <stdint.h>

#include <tessera/plugin.h>

#include "plugin_util.h"

/* Field indices, in schema order. */
enum { IN_X = 0 };
enum { OUT_Y = 0 };

static const tsr_dim vector_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "any vector of n values (n may be 0)"},
};

static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "an exact copy of x"},
};

/* y's shape (n,) follows from x's, so the host has allocated it; the
 * derivative endpoints below use result_f64(), which also copes with a
 * result left for the plugin to allocate. */
static int noop_apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const tsr_array *x = &args->inputs[IN_X];
    copy_f64(args->results[OUT_Y].data, x->data, x->shape[0]);
    return 0;
}

/* dy = dx: the tangent of x, or zero when x is not among jvp_inputs. */
static int noop_jvp(tsr_ctx *ctx, const tsr_args *args) {
    int64_t n = args->inputs[IN_X].shape[0];
    const double *x_dot = jvp_tangent(args, IN_X);
    for (int32_t k = 0; k < args->n_wrt_out; k++) { /* wrt_out[k] can only be y */
        double *y_dot = result_f64(ctx, args, k, 1, &n);
        if (y_dot == NULL) return -1;
        if (x_dot != NULL) copy_f64(y_dot, x_dot, n);
        else zero_f64(y_dot, n);
    }
    return 0;
}

/* x_bar = y_bar: the cotangent of y, or zero when y is not among vjp_outputs. */
static int noop_vjp(tsr_ctx *ctx, const tsr_args *args) {
    int64_t n = args->inputs[IN_X].shape[0];
    const double *y_bar = vjp_cotangent(args, OUT_Y);
    for (int32_t k = 0; k < args->n_wrt_in; k++) { /* wrt_in[k] can only be x */
        double *x_bar = result_f64(ctx, args, k, 1, &n);
        if (x_bar == NULL) return -1;
        if (y_bar != NULL) copy_f64(x_bar, y_bar, n);
        else zero_f64(x_bar, n);
    }
    return 0;
}

/* dy/dx = I, an (n, n) block for every (output, input) pair asked for. */
static int noop_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    int64_t n = args->inputs[IN_X].shape[0];
    const int64_t block_shape[2] = {n, n};
    for (int32_t k = 0; k < args->n_results; k++) {
        double *block = result_f64(ctx, args, k, 2, block_shape);
        if (block == NULL) return -1;
        scaled_identity_f64(block, n, 1.0);
    }
    return 0;
}

static int noop_abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    tsr_array *y = &args->results[OUT_Y];
    y->dtype = TSR_FLOAT64;
    y->rank = 1;
    y->shape[0] = args->inputs[IN_X].shape[0];
    return 0;
}

static const tsr_plugin noop_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "noop",
    .version = "0.1.0",
    .description = "Identity map y = x on a float64 vector; measures the cost of a call "
                   "beyond the work itself (apply is one memcpy).",
    .inputs = inputs,
    .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs,
    .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = noop_apply,
    .jvp = noop_jvp,
    .vjp = noop_vjp,
    .jacobian = noop_jacobian,
    .abstract_eval = noop_abstract_eval,
};

TSR_PLUGIN_DEFINE(noop_plugin)
