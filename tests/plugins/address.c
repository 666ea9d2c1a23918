/* SPDX-License-Identifier: MIT */
/*
 * A plugin that says where it reads its input, for the bindings' zero-copy
 * tests, with outputs of each kind for their non-differentiable cases:
 *
 *   x: float64 (n,), differentiable
 *     -> y: float64 (n,) = 2 x, differentiable
 *        address: uint64 scalar, the address of x's data as the plugin sees it
 *        first: float64 scalar = x[0] (0 if n == 0), not differentiable
 *        y_at: uint64 scalar, the address the plugin writes y to
 *
 * Only apply is written; the host serves jvp, vjp and jacobian by central
 * differences (fd_method). In-process, an input passed without a copy has
 * the caller's address; a result written into the caller's own buffer
 * (tsr_call_set_result_buffer) has that buffer's.
 */
#include <stdint.h>

#include <tessera/plugin.h>

static const tsr_dim dims_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = dims_n,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "any vector"},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = dims_n,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "2 x"},
    {.name = "address", .dtype = TSR_UINT64, .rank = 0, .dims = NULL, .flags = 0,
     .doc = "where the plugin found x's data"},
    {.name = "first", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL, .flags = 0,
     .doc = "x[0], or 0 for an empty x"},
    {.name = "y_at", .dtype = TSR_UINT64, .rank = 0, .dims = NULL, .flags = 0,
     .doc = "where the plugin writes y"},
};

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const tsr_array *x = &args->inputs[0];
    const double *xs = x->data;
    double *y = args->results[0].data;
    for (int64_t i = 0; i < x->shape[0]; i++) y[i] = 2.0 * xs[i];
    *(uint64_t *)args->results[1].data = (uint64_t)(uintptr_t)x->data;
    *(double *)args->results[2].data = x->shape[0] > 0 ? xs[0] : 0.0;
    *(uint64_t *)args->results[3].data = (uint64_t)(uintptr_t)y;
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "address",
    .version = "1.0",
    .description = "Reports the address at which it reads its input.",
    .inputs = inputs,
    .n_inputs = 1,
    .outputs = outputs,
    .n_outputs = 4,
    .apply = apply,
    .fd_method = TSR_FD_CENTRAL,
};
TSR_PLUGIN_DEFINE(plugin)
