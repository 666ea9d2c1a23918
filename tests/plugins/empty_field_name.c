/* SPDX-License-Identifier: MIT */
/* An output field has the empty name. */
#include "minimal.h"

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {
    MINIMAL_OUTPUT,
    {.name = "", .dtype = TSR_FLOAT64, .rank = 0},
};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "empty_field_name", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
