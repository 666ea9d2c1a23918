/* SPDX-License-Identifier: MIT */
/* An int32 input is marked differentiable. */
#include "minimal.h"

static const tsr_field inputs[] = {
    MINIMAL_INPUT,
    {.name = "counter", .dtype = TSR_INT32, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE},
};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "int_differentiable", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
