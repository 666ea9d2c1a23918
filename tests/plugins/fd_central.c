/* SPDX-License-Identifier: MIT */
/* apply only; jvp, vjp and jacobian by central differences (see fd_common.h). */
#define FD_NAME "fd_central"
#define FD_METHOD TSR_FD_CENTRAL
#define FD_SAMPLES 0
#include "fd_common.h"
