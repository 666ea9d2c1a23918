/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the bundled plugins.
 *
 * Header-only (static inline), so that a plugin still builds against
 * <tessera/plugin.h> alone and nothing here becomes part of any ABI.
 * All bundled plugins use float64 fields, hence the double-typed helpers.
 */
#ifndef TESSERA_PLUGIN_UTIL_H
#define TESSERA_PLUGIN_UTIL_H

#include <stdint.h>
#include <string.h>

#include <tessera/plugin.h>

/* Position of schema field `field` in a wrt list (jvp_inputs, vjp_outputs,
 * jac_inputs, ...), or -1 when the caller did not name it. The lists may
 * name any subset of the differentiable fields in any order, so a plugin
 * looks fields up instead of assuming positions. */
static inline int32_t wrt_position(const int32_t *wrt, int32_t n_wrt, int32_t field) {
    for (int32_t k = 0; k < n_wrt; k++) {
        if (wrt[k] == field) return k;
    }
    return -1;
}

/* jvp: the tangent of input field `input`, or NULL when that input is not
 * among jvp_inputs, which means its tangent is zero. */
static inline const double *jvp_tangent(const tsr_args *args, int32_t input) {
    int32_t k = wrt_position(args->wrt_in, args->n_wrt_in, input);
    return k < 0 ? NULL : (const double *)args->seeds[k].data;
}

/* vjp: the cotangent of output field `output`, or NULL when that output is
 * not among vjp_outputs, which means its cotangent is zero. */
static inline const double *vjp_cotangent(const tsr_args *args, int32_t output) {
    int32_t k = wrt_position(args->wrt_out, args->n_wrt_out, output);
    return k < 0 ? NULL : (const double *)args->seeds[k].data;
}

/* hvp: the tangent of input field `input` (seeds after the hvp_outputs'
 * cotangents), or NULL when that input is not among hvp_inputs, which
 * means its tangent is zero. The cotangents: vjp_cotangent. */
static inline const double *hvp_tangent(const tsr_args *args, int32_t input) {
    int32_t k = wrt_position(args->wrt_in, args->n_wrt_in, input);
    return k < 0 ? NULL : (const double *)args->seeds[args->n_wrt_out + k].data;
}

/* The float64 buffer of result k. When the result's shape follows from the
 * schema the host has already allocated it; otherwise (data == NULL) the
 * plugin states the shape and asks the host for the buffer. Returns NULL,
 * with the error already recorded by the host, when allocation fails. */
static inline double *result_f64(tsr_ctx *ctx, const tsr_args *args, int32_t k, int32_t rank,
                                 const int64_t *shape) {
    tsr_array *r = &args->results[k];
    if (r->data != NULL) return (double *)r->data;
    r->rank = rank;
    for (int32_t d = 0; d < rank; d++) r->shape[d] = shape[d];
    return (double *)tsr_ctx_alloc(ctx, k);
}

/* Copy n doubles; safe for n == 0, where either pointer may be NULL. */
static inline void copy_f64(double *dst, const double *src, int64_t n) {
    if (n > 0) memcpy(dst, src, (size_t)n * sizeof(double));
}

/* Set n doubles to zero; safe for n == 0. */
static inline void zero_f64(double *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = 0.0;
}

/* Write scale * I into an n-by-n row-major block. */
static inline void scaled_identity_f64(double *dst, int64_t n, double scale) {
    zero_f64(dst, n * n);
    for (int64_t i = 0; i < n; i++) dst[i * n + i] = scale;
}

#endif /* TESSERA_PLUGIN_UTIL_H */
