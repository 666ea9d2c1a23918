/* SPDX-License-Identifier: MIT */
/* A TEXT input with a choice that is not UTF-8 (a lone continuation byte). */
#include "minimal.h"

static const char *const opts[] = {"a", "b\x80"};
static const tsr_field inputs[] = {MINIMAL_INPUT, {.name = "badchoice", .kind = TSR_KIND_TEXT, .choices = opts, .n_choices = 2}};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "choice_not_utf8", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
