/* SPDX-License-Identifier: MIT */
/* An input of fixed shape (3,) whose default has shape (2,). */
#include <tessera/plugin.h>

static const tsr_dim three[] = {TSR_FIXED(3)};
static double two[2] = {1.0, 2.0};
static const tsr_array two_default = {.data = two, .dtype = TSR_FLOAT64, .rank = 1, .shape = {2}};
#define BAD_NAME "default_dims"
#define BAD_FIELD \
    {.name = "w", .dtype = TSR_FLOAT64, .rank = 1, .dims = three, .default_value = &two_default}
#include "default_bad.h"
