/* SPDX-License-Identifier: MIT */
/*
 * peek: head = x[0] (0 for an empty x).
 *
 * Reads one element whatever the size, so that a worker-mode call costs
 * the transport alone: with x in the arena, a 10^7-element call should
 * cost what a 1-element call does. (noop's apply copies all of x, which
 * hides the transport behind a memcpy at large sizes.)
 */
#include <tessera/plugin.h>

static const tsr_dim vector_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n, .doc = "any vector"},
};

static const tsr_field outputs[] = {
    {.name = "head", .dtype = TSR_FLOAT64, .rank = 0, .doc = "x[0], or 0 when x is empty"},
};

static int peek_apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const tsr_array *x = &args->inputs[0];
    *(double *)args->results[0].data = x->shape[0] > 0 ? ((const double *)x->data)[0] : 0.0;
    return 0;
}

static const tsr_plugin peek_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "peek",
    .version = "0.1.0",
    .description = "head = x[0]: reads one element of x, for measuring transport alone.",
    .inputs = inputs,
    .n_inputs = 1,
    .outputs = outputs,
    .n_outputs = 1,
    .apply = peek_apply,
};

TSR_PLUGIN_DEFINE(peek_plugin)
