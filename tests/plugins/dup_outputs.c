/* SPDX-License-Identifier: MIT */
/* Two outputs share the name "twin". */
#include "minimal.h"

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {
    MINIMAL_OUTPUT,
    {.name = "twin", .dtype = TSR_FLOAT64, .rank = 1, .dims = minimal_dims},
    {.name = "twin", .dtype = TSR_FLOAT64, .rank = 1, .dims = minimal_dims},
};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "dup_outputs", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
