/* SPDX-License-Identifier: MIT */
/* Declares ABI version 2, newer than this host. */
#include "minimal.h"

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    .abi_version = TSR_PLUGIN_ABI_VERSION + 1, .struct_size = sizeof(tsr_plugin),
    .field_size = sizeof(tsr_field),
    .name = "abi_new", .version = "1.0",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
