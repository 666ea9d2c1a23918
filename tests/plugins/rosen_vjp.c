/* SPDX-License-Identifier: MIT */
/* rosenbrock without its hvp: its vjp only (rosen_variant.h). */
#define ROSEN_NAME "rosen_vjp"
#define ROSEN_KEEP_VJP
#include "rosen_variant.h"
