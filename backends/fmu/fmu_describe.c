/* SPDX-License-Identifier: MIT */
/* Reading modelDescription.xml (fmu.h). */
#include "fmu.h"
