/* SPDX-License-Identifier: MIT */
/* A float64 input whose default is an int32. */
#include <tessera/plugin.h>

static int32_t one = 1;
static const tsr_array one_default = {.data = &one, .dtype = TSR_INT32, .rank = 0};
#define BAD_NAME "default_dtype"
#define BAD_FIELD {.name = "s", .dtype = TSR_FLOAT64, .default_value = &one_default}
#include "default_bad.h"
