/* SPDX-License-Identifier: MIT */
/* A TEXT input marked differentiable. */
#include "minimal.h"


static const tsr_field inputs[] = {MINIMAL_INPUT, {.name = "difftext", .kind = TSR_KIND_TEXT, .flags = TSR_FIELD_DIFFERENTIABLE}};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "text_differentiable", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
