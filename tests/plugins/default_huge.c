/* SPDX-License-Identifier: MIT */
/* A default of one element more than TSR_MAX_DEFAULT_BYTES holds. */
#include <tessera/plugin.h>

#define HUGE_COUNT (TSR_MAX_DEFAULT_BYTES / sizeof(double) + 1)
static const tsr_dim any[] = {TSR_ANY};
static double zeros[HUGE_COUNT];
static const tsr_array huge_default = {
    .data = zeros, .dtype = TSR_FLOAT64, .rank = 1, .shape = {(int64_t)HUGE_COUNT}};
#define BAD_NAME "default_huge"
#define BAD_FIELD \
    {.name = "w", .dtype = TSR_FLOAT64, .rank = 1, .dims = any, .default_value = &huge_default}
#include "default_bad.h"
