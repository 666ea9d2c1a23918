/* SPDX-License-Identifier: MIT */
/* Echoes complex arrays (complex128 and complex64, ranks 0 to 3), which
 * have no JSON form: base64 and binref payloads only. */
#include "echo.h"

static const tsr_field fields[] = {
    ECHO_FIELDS(TSR_COMPLEX128, "complex128"),
    ECHO_FIELDS(TSR_COMPLEX64, "complex64"),
};

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "echo_complex",
    .version = "1.0",
    .description = "every input back unchanged: complex128 and complex64, ranks 0 to 3",
    .inputs = fields, .n_inputs = sizeof fields / sizeof fields[0],
    .outputs = fields, .n_outputs = sizeof fields / sizeof fields[0],
    .apply = echo_apply,
};
TSR_PLUGIN_DEFINE(plugin)
