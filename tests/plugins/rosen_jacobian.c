/* SPDX-License-Identifier: MIT */
/* rosenbrock without its hvp: its jacobian only (rosen_variant.h). */
#define ROSEN_NAME "rosen_jacobian"
#define ROSEN_KEEP_JACOBIAN

#include "rosen_variant.h"
