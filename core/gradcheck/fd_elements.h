/* SPDX-License-Identifier: MIT */
/* Elements of the float32 or float64 arrays that the finite-difference
 * fallbacks (fd_fallback.c, hvp_fallback.c) perturb and read, as doubles,
 * and the copy of a wrt input that their steps perturb. */
#ifndef TESSERA_CORE_GRADCHECK_FD_ELEMENTS_H
#define TESSERA_CORE_GRADCHECK_FD_ELEMENTS_H

#include <stdint.h>
#include <string.h>

#include "core/internal.h"

static inline double fd_get_el(const tsr_array *a, int64_t i) {
    return a->dtype == TSR_FLOAT64 ? ((const double *)a->data)[i] : ((const float *)a->data)[i];
}

static inline void fd_set_el(tsr_array *a, int64_t i, double v) {
    if (a->dtype == TSR_FLOAT64) ((double *)a->data)[i] = v;
    else ((float *)a->data)[i] = (float)v;
}

static inline int64_t fd_count_of(const tsr_array *a) { return shape_count(a->shape, a->rank); }

/* Copy wrt input k of call into *work (a buffer the call keeps in bufs,
 * n_in of them: fd_work, or a lane's, reused from run to run) and bind
 * the copy to inner, which evaluates at the perturbed points. 0, or the
 * call's failure. */
static inline int fd_stage_input(tsr_call *call, int32_t k, tsr_call *inner, tsr_array *work,
                                 result_buf *bufs) {
    tsr_component *c = call->comp;
    const tsr_array *x = &call->inputs[call->wrt_in[k]];
    size_t bytes = 0;
    shape_bytes(x, &bytes);
    char why[300];
    *work = *x;
    work->data = result_reserve(c, &bufs[call->wrt_in[k]], bytes, why, sizeof why);
    if (!work->data)
        return call_fail(call, buffer_fail_code(c),
                         "cannot allocate a finite-difference copy of input '%s': %s",
                         c->in[call->wrt_in[k]].field.name, why);
    if (bytes) memcpy(work->data, x->data, bytes);
    tsr_call_set_input_at(inner, call->wrt_in[k], work);
    return 0;
}

/* Bind every input of call to inner: the differentiated ones to their
 * working copies work[0..n_wrt_in) (staged into bufs), the others as given
 * (an absent optional input stays left out). 0, or the call's failure. */
static inline int fd_bind_inputs(tsr_call *call, tsr_call *inner, tsr_array *work,
                                 result_buf *bufs) {
    for (int32_t f = 0; f < call->comp->n_in; f++)
        tsr_call_set_input_at(inner, f,
                              tsr_input_absent(&call->inputs[f]) ? NULL : &call->inputs[f]);
    for (int32_t k = 0; k < call->n_wrt_in; k++) {
        int rc = fd_stage_input(call, k, inner, &work[k], bufs);
        if (rc) return rc;
    }
    return 0;
}

#endif
