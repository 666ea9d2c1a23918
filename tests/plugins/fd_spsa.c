/* SPDX-License-Identifier: MIT */
/* apply only; jvp, vjp and jacobian by spsa differences (see fd_common.h). */
#define FD_NAME "fd_spsa"
#define FD_METHOD TSR_FD_SPSA
#define FD_SAMPLES 4000
#include "fd_common.h"
