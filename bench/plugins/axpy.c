/* SPDX-License-Identifier: MIT */
/*
 * The routine the manifest benchmark calls, z = a x + y, with two
 * signatures: C's (count and scalar by value) and Fortran's (everything by
 * address, plus an INFO argument). libbench_axpy.so; no Tessera header.
 */
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* Declared first, as exported functions are (-Wmissing-prototypes); the
 * manifest reaches them by name, so no header declares them. */
EXPORT void bench_axpy(int32_t n, double a, const double *x, const double *y, double *z);
EXPORT void bench_axpy_ref_(const int32_t *n, const double *a, const double *x, const double *y,
                            double *z, int32_t *info);

EXPORT void bench_axpy(int32_t n, double a, const double *x, const double *y, double *z) {
    for (int32_t i = 0; i < n; i++) z[i] = a * x[i] + y[i];
}

EXPORT void bench_axpy_ref_(const int32_t *n, const double *a, const double *x, const double *y,
                            double *z, int32_t *info) {
    *info = *n < 0 ? -1 : 0;
    for (int32_t i = 0; i < *n; i++) z[i] = *a * x[i] + y[i];
}
