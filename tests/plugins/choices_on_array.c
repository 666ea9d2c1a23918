/* SPDX-License-Identifier: MIT */
/* An array input with choices (only TEXT fields may have them). */
#include "minimal.h"

static const char *const opts[] = {"a", "b"};
static const tsr_field inputs[] = {MINIMAL_INPUT, {.name = "arraychoice", .dtype = TSR_FLOAT64, .rank = 0, .choices = opts, .n_choices = 2}};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "choices_on_array", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
