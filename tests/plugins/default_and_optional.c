/* SPDX-License-Identifier: MIT */
/* An input that is optional and has a default as well. */
#include <tessera/plugin.h>

static double one = 1.0;
static const tsr_array one_default = {.data = &one, .dtype = TSR_FLOAT64, .rank = 0};
#define BAD_NAME "default_and_optional"
#define BAD_FIELD \
    {.name = "s", .dtype = TSR_FLOAT64, .flags = TSR_FIELD_OPTIONAL, .default_value = &one_default}
#include "default_bad.h"
