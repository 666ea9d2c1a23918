/* SPDX-License-Identifier: MIT */
/* Claims a field struct that ends before its flags member. */
#include <stddef.h>

#include "minimal.h"

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    .abi_version = TSR_PLUGIN_ABI_VERSION, .struct_size = sizeof(tsr_plugin),
    .field_size = offsetof(tsr_field, flags),
    .name = "short_field", .version = "1.0",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
