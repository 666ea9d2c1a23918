/* SPDX-License-Identifier: MIT */
/* NumPy's C API table: defined here, in one file below every other, and
 * filled at module init; the other files use it through ext.h. */
#define TSR_PY_NUMPY_API_C
#include "ext.h"

int numpy_api_import(void) {
    import_array1(-1);
    return 0;
}
