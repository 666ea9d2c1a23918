/* SPDX-License-Identifier: MIT */
/* A descriptor without a component name. */
#include "minimal.h"

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = NULL, .version = "1.0",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
