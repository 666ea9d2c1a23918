/* SPDX-License-Identifier: MIT */
/*
 * An independent reference for the tests of solvers (the heat plugin,
 * LAPACK's dgesv through a manifest): a dense system solved by Gaussian
 * elimination with partial pivoting. Header-only, like the other helpers.
 */
#ifndef TESSERA_TEST_DENSE_SOLVE_H
#define TESSERA_TEST_DENSE_SOLVE_H

#include <math.h>
#include <stdint.h>

/* Solve a x = b (a is n x n, row-major, destroyed); x overwrites b. */
static inline void dense_solve(double *a, double *b, int64_t n) {
    for (int64_t col = 0; col < n; col++) {
        int64_t best = col;
        for (int64_t r = col + 1; r < n; r++)
            if (fabs(a[r * n + col]) > fabs(a[best * n + col])) best = r;
        for (int64_t j = 0; j < n; j++) {
            double t = a[col * n + j];
            a[col * n + j] = a[best * n + j];
            a[best * n + j] = t;
        }
        double t = b[col];
        b[col] = b[best];
        b[best] = t;
        for (int64_t r = col + 1; r < n; r++) {
            double f = a[r * n + col] / a[col * n + col];
            for (int64_t j = col; j < n; j++) a[r * n + j] -= f * a[col * n + j];
            b[r] -= f * b[col];
        }
    }
    for (int64_t r = n - 1; r >= 0; r--) {
        double sum = b[r];
        for (int64_t j = r + 1; j < n; j++) sum -= a[r * n + j] * b[j];
        b[r] = sum / a[r * n + r];
    }
}

#endif /* TESSERA_TEST_DENSE_SOLVE_H */
