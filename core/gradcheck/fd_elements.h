/* SPDX-License-Identifier: MIT */
/* Elements of the float32 or float64 arrays that the finite-difference
 * fallbacks (fd_fallback.c, hvp_fallback.c) perturb and read, as doubles. */
#ifndef TESSERA_CORE_GRADCHECK_FD_ELEMENTS_H
#define TESSERA_CORE_GRADCHECK_FD_ELEMENTS_H

#include <stdint.h>

#include "core/internal.h"

static inline double fd_get_el(const tsr_array *a, int64_t i) {
    return a->dtype == TSR_FLOAT64 ? ((const double *)a->data)[i] : ((const float *)a->data)[i];
}

static inline void fd_set_el(tsr_array *a, int64_t i, double v) {
    if (a->dtype == TSR_FLOAT64) ((double *)a->data)[i] = v;
    else ((float *)a->data)[i] = (float)v;
}

static inline int64_t fd_count_of(const tsr_array *a) { return shape_count(a->shape, a->rank); }

#endif
