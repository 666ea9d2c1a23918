/* SPDX-License-Identifier: MIT */
/* An output declares rank -2 (-1 is TSR_RANK_ANY). */
#include "minimal.h"

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {
    MINIMAL_OUTPUT,
    {.name = "negative", .dtype = TSR_FLOAT64, .rank = -2},
};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "neg_rank", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
