/* SPDX-License-Identifier: MIT */
/* rosenbrock without its hvp: apply only, with fd_method central (rosen_variant.h). */
#define ROSEN_NAME "rosen_apply"
#define ROSEN_FD_METHOD TSR_FD_CENTRAL

#include "rosen_variant.h"
