/* SPDX-License-Identifier: MIT */
/* An input declares rank TSR_MAX_FIELD_RANK + 1. */
#include "minimal.h"

static const tsr_dim many[TSR_MAX_FIELD_RANK + 1] = {
    TSR_ANY, TSR_ANY, TSR_ANY, TSR_ANY, TSR_ANY, TSR_ANY, TSR_ANY, TSR_ANY, TSR_ANY};
static const tsr_field inputs[] = {
    MINIMAL_INPUT,
    {.name = "deep", .dtype = TSR_FLOAT64, .rank = TSR_MAX_FIELD_RANK + 1, .dims = many},
};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "big_rank", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
