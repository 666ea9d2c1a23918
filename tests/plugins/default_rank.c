/* SPDX-License-Identifier: MIT */
/* A scalar input whose default has rank 1. */
#include <tessera/plugin.h>

static double one[1] = {1.0};
static const tsr_array one_default = {.data = one, .dtype = TSR_FLOAT64, .rank = 1, .shape = {1}};
#define BAD_NAME "default_rank"
#define BAD_FIELD {.name = "s", .dtype = TSR_FLOAT64, .default_value = &one_default}
#include "default_bad.h"
