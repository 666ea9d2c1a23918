/* SPDX-License-Identifier: MIT */
/* A component with no outputs (an OutputSchema without fields): apply
 * runs only to succeed or fail, here failing when x[0] is negative. */
#include <tessera/plugin.h>

static const tsr_dim dims[] = {TSR_ANY};
static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = dims},
};

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    if (args->n_results != 0) return tsr_ctx_errorf(ctx, "%d results given", (int)args->n_results);
    const double *x = args->inputs[0].data;
    if (args->inputs[0].shape[0] > 0 && x[0] < 0) return tsr_ctx_errorf(ctx, "x[0] is negative");
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "no_outputs", .version = "1.0",
    .inputs = inputs, .n_inputs = 1,
    .outputs = NULL, .n_outputs = 0,
    .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
