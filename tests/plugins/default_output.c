/* SPDX-License-Identifier: MIT */
/* An output with a default. */
#include <tessera/plugin.h>

static double one = 1.0;
static const tsr_array one_default = {.data = &one, .dtype = TSR_FLOAT64, .rank = 0};
#define BAD_NAME "default_output"
#define BAD_ON_OUTPUT
#define BAD_FIELD {.name = "z", .dtype = TSR_FLOAT64, .default_value = &one_default}
#include "default_bad.h"
