/* SPDX-License-Identifier: MIT */
/* An output marked optional. */
#include <tessera/plugin.h>

#define BAD_NAME "optional_output"
#define BAD_ON_OUTPUT
#define BAD_FIELD {.name = "z", .dtype = TSR_FLOAT64, .flags = TSR_FIELD_OPTIONAL}
#include "default_bad.h"
