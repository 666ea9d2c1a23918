/* SPDX-License-Identifier: MIT */
/* Echoes one vector per dtype a cast may target (bool, int8, int32, int64,
 * uint8, uint64, float16, float32, float64, complex64), so that a test can
 * read back what the host converted an array of another dtype into. */
#include "echo.h"

static const tsr_field fields[] = {
    {.name = "bool", .dtype = TSR_BOOL, .rank = 1, .dims = echo_any},
    {.name = "int8", .dtype = TSR_INT8, .rank = 1, .dims = echo_any},
    {.name = "int32", .dtype = TSR_INT32, .rank = 1, .dims = echo_any},
    {.name = "int64", .dtype = TSR_INT64, .rank = 1, .dims = echo_any},
    {.name = "uint8", .dtype = TSR_UINT8, .rank = 1, .dims = echo_any},
    {.name = "uint64", .dtype = TSR_UINT64, .rank = 1, .dims = echo_any},
    {.name = "float16", .dtype = TSR_FLOAT16, .rank = 1, .dims = echo_any},
    {.name = "float32", .dtype = TSR_FLOAT32, .rank = 1, .dims = echo_any},
    {.name = "float64", .dtype = TSR_FLOAT64, .rank = 1, .dims = echo_any},
    {.name = "complex64", .dtype = TSR_COMPLEX64, .rank = 1, .dims = echo_any},
};

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "cast_targets",
    .version = "1.0",
    .description = "every input back unchanged: one vector per dtype a cast may target",
    .inputs = fields, .n_inputs = sizeof fields / sizeof fields[0],
    .outputs = fields, .n_outputs = sizeof fields / sizeof fields[0],
    .apply = echo_apply,
};
TSR_PLUGIN_DEFINE(plugin)
