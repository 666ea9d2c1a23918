/* SPDX-License-Identifier: MIT */
/*
 * A one-field schema (x: float64 (n,) -> y: float64 (n,), y = x) shared by
 * the deliberately broken plugins, so that each of them differs from a
 * valid plugin in exactly one respect.
 */
#ifndef TESSERA_TEST_MINIMAL_H
#define TESSERA_TEST_MINIMAL_H

#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim minimal_dims[] = {TSR_SYM("n")};

#define MINIMAL_INPUT                                                           \
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = minimal_dims,        \
     .flags = TSR_FIELD_DIFFERENTIABLE}
#define MINIMAL_OUTPUT                                                          \
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = minimal_dims,        \
     .flags = TSR_FIELD_DIFFERENTIABLE}

static inline int minimal_apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const tsr_array *x = &args->inputs[0];
    memcpy(args->results[0].data, x->data, (size_t)tsr_array_count(x) * sizeof(double));
    return 0;
}

#endif
