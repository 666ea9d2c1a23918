/* SPDX-License-Identifier: MIT */
/* Claims a descriptor of 16 bytes: too short to hold even the name. */
#include "minimal.h"

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    .abi_version = TSR_PLUGIN_ABI_VERSION, .struct_size = 16, .field_size = sizeof(tsr_field),
    .name = "short_struct", .version = "1.0",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
