/* SPDX-License-Identifier: MIT */
/* An input declares dtype 99, which is not a tsr_dtype. */
#include "minimal.h"

static const tsr_field inputs[] = {
    MINIMAL_INPUT,
    {.name = "oddtype", .dtype = (tsr_dtype)99, .rank = 0},
};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "bad_dtype", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
