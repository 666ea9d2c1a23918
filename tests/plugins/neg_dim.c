/* SPDX-License-Identifier: MIT */
/* An input declares a fixed dimension of -5 (neither a size nor TSR_DIM_ANY). */
#include "minimal.h"

static const tsr_dim bad[] = {{NULL, -5}};
static const tsr_field inputs[] = {
    MINIMAL_INPUT,
    {.name = "minus", .dtype = TSR_FLOAT64, .rank = 1, .dims = bad},
};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "neg_dim", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
