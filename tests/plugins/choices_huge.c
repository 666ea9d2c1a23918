/* SPDX-License-Identifier: MIT */
/* A TEXT input with n_choices far above any real enum. */
#include "minimal.h"

static const char *const opts[] = {"a"};
static const tsr_field inputs[] = {MINIMAL_INPUT, {.name = "manychoices", .kind = TSR_KIND_TEXT, .choices = opts, .n_choices = 2000000000}};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "choices_huge", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
