/* SPDX-License-Identifier: MIT */
/* An input of rank 2 has no dims array. */
#include "minimal.h"

static const tsr_field inputs[] = {
    MINIMAL_INPUT,
    {.name = "dimless", .dtype = TSR_FLOAT64, .rank = 2, .dims = NULL},
};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "null_dims", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
