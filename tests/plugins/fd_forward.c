/* SPDX-License-Identifier: MIT */
/* apply only; jvp, vjp and jacobian by forward differences (see fd_common.h). */
#define FD_NAME "fd_forward"
#define FD_METHOD TSR_FD_FORWARD
#define FD_SAMPLES 0
#include "fd_common.h"
