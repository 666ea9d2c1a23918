/* SPDX-License-Identifier: MIT */
/* Echoes arrays of the real and integer dtypes that JSON can carry:
 * float64, float32, int32, int64, bool and uint8, ranks 0 to 3. */
#include "echo.h"

static const tsr_field fields[] = {
    ECHO_FIELDS(TSR_FLOAT64, "float64"), ECHO_FIELDS(TSR_FLOAT32, "float32"),
    ECHO_FIELDS(TSR_INT32, "int32"),     ECHO_FIELDS(TSR_INT64, "int64"),
    ECHO_FIELDS(TSR_BOOL, "bool"),       ECHO_FIELDS(TSR_UINT8, "uint8"),
};

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "echo_dtypes",
    .version = "1.0",
    .description = "every input back unchanged: six dtypes, ranks 0 to 3",
    .inputs = fields, .n_inputs = sizeof fields / sizeof fields[0],
    .outputs = fields, .n_outputs = sizeof fields / sizeof fields[0],
    .apply = echo_apply,
};
TSR_PLUGIN_DEFINE(plugin)
