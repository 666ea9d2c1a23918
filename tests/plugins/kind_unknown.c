/* SPDX-License-Identifier: MIT */
/* An input of kind 7, which no tsr_kind is. */
#include "minimal.h"


static const tsr_field inputs[] = {MINIMAL_INPUT, {.name = "oddkind", .kind = 7}};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "kind_unknown", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
