/* SPDX-License-Identifier: MIT */
/*
 * Plugins whose default or optional field is refused at load: the minimal
 * schema (minimal.h) plus the one field each defines before including
 * this, as BAD_FIELD, with BAD_NAME its plugin name and BAD_ON_OUTPUT set
 * when the field is an output.
 */
#ifndef TESSERA_TEST_DEFAULT_BAD_H
#define TESSERA_TEST_DEFAULT_BAD_H

#include "minimal.h"

#ifdef BAD_ON_OUTPUT
static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT, BAD_FIELD};
#else
static const tsr_field inputs[] = {MINIMAL_INPUT, BAD_FIELD};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
#endif

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = BAD_NAME,
    .version = "1.0",
    .inputs = inputs,
    .n_inputs = (int32_t)(sizeof inputs / sizeof inputs[0]),
    .outputs = outputs,
    .n_outputs = (int32_t)(sizeof outputs / sizeof outputs[0]),
    .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)

#endif
