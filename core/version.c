/* SPDX-License-Identifier: MIT */
/* The version of the library that is running, which a host compiled
 * against other headers (TSR_VERSION_STRING) may need to know. */
#include "internal.h"

TSR_API const char *tsr_version(void) { return TSR_VERSION_STRING; }

TSR_API int tsr_version_number(void) { return TSR_VERSION_NUMBER; }
