/* SPDX-License-Identifier: MIT */
/* A TEXT input with n_choices 2 and a NULL choices array. */
#include "minimal.h"


static const tsr_field inputs[] = {MINIMAL_INPUT, {.name = "nochoices", .kind = TSR_KIND_TEXT, .n_choices = 2}};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "choices_null", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
