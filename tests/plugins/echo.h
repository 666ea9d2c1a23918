/* SPDX-License-Identifier: MIT */
/*
 * Echo plugins for payload interoperability tests (tests/python): every
 * input comes back unchanged as the output of the same name, so that what
 * a payload decoded to can be read back from the result. Fields come in
 * ranks 0 to 3 per dtype, every dim free (the plugin sizes its results
 * after the inputs, through tsr_ctx_alloc).
 */
#ifndef TESSERA_TEST_ECHO_H
#define TESSERA_TEST_ECHO_H

#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim echo_any[] = {TSR_ANY, TSR_ANY, TSR_ANY};

/* "<prefix>_0" to "<prefix>_3": ranks 0 to 3 of one dtype. */
#define ECHO_FIELDS(dt, prefix)                                                 \
    {.name = prefix "_0", .dtype = (dt), .rank = 0},                            \
    {.name = prefix "_1", .dtype = (dt), .rank = 1, .dims = echo_any},          \
    {.name = prefix "_2", .dtype = (dt), .rank = 2, .dims = echo_any},          \
    {.name = prefix "_3", .dtype = (dt), .rank = 3, .dims = echo_any}

/* Bytes of one element (plugins cannot call the host's tsr_dtype_size). */
static inline size_t echo_elem_size(tsr_dtype d) {
    switch (d) {
    case TSR_BOOL: case TSR_INT8: case TSR_UINT8: return 1;
    case TSR_INT16: case TSR_UINT16: case TSR_FLOAT16: return 2;
    case TSR_INT32: case TSR_UINT32: case TSR_FLOAT32: return 4;
    case TSR_COMPLEX128: return 16;
    default: return 8;
    }
}

static inline int echo_apply(tsr_ctx *ctx, const tsr_args *args) {
    for (int32_t k = 0; k < args->n_results; k++) {
        const tsr_array *in = &args->inputs[k];
        tsr_array *r = &args->results[k];
        r->rank = in->rank;
        for (int32_t d = 0; d < in->rank; d++) r->shape[d] = in->shape[d];
        void *out = tsr_ctx_alloc(ctx, k);
        if (!out) return tsr_ctx_errorf(ctx, "no buffer for result %d", (int)k);
        memcpy(out, in->data, (size_t)tsr_array_count(in) * echo_elem_size(in->dtype));
    }
    return 0;
}

#endif
