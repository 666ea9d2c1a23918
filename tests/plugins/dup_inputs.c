/* SPDX-License-Identifier: MIT */
/* Two inputs share the name "twin". */
#include "minimal.h"

static const tsr_field inputs[] = {
    MINIMAL_INPUT,
    {.name = "twin", .dtype = TSR_FLOAT64, .rank = 0},
    {.name = "twin", .dtype = TSR_FLOAT64, .rank = 0},
};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "dup_inputs", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
