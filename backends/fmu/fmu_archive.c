/* SPDX-License-Identifier: MIT */
/* Unpacking an FMU archive (fmu.h). */
#include "fmu.h"
