/* SPDX-License-Identifier: MIT */
/* A TEXT input with n_choices -1. */
#include "minimal.h"

static const char *const opts[] = {"a"};
static const tsr_field inputs[] = {MINIMAL_INPUT, {.name = "minuschoices", .kind = TSR_KIND_TEXT, .choices = opts, .n_choices = -1}};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "choices_negative", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
