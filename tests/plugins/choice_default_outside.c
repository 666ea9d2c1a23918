/* SPDX-License-Identifier: MIT */
/* A TEXT input whose default is not one of its choices. */
#include "minimal.h"

static const char *const opts[] = {"fast", "accurate"};
static const tsr_array def = {.data = (void *)"slow", .dtype = TSR_UINT8, .rank = 1, .shape = {4}};
static const tsr_field inputs[] = {MINIMAL_INPUT, {.name = "offchoice", .kind = TSR_KIND_TEXT, .choices = opts, .n_choices = 2, .default_value = &def}};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "choice_default_outside", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
