/* SPDX-License-Identifier: MIT */
/*
 * Symmetric tridiagonal systems by the Thomas algorithm.
 *
 * The matrix is given by its diagonal d[0..n-1] and its off-diagonal
 * e[0..n-2] (e[i] couples unknowns i and i+1). The factorisation is done
 * once and reused for every right-hand side: the heat scheme solves with
 * the same matrix at every time step, forwards and in the adjoint.
 */
#ifndef HEAT_TRIDIAGONAL_H
#define HEAT_TRIDIAGONAL_H

#include <stdint.h>

/* LU factors without pivoting: U has diagonal u[i] and superdiagonal e[i],
 * L is unit lower bidiagonal with subdiagonal ratio[i] = e[i] / u[i].
 * inverse_pivot[i] = 1 / u[i], so that a solve multiplies instead of
 * dividing. Both arrays are owned by the caller and hold n entries. */
typedef struct tridiagonal_factors {
    int64_t n;
    double *inverse_pivot;
    double *ratio;
} tridiagonal_factors;

/* Factor the matrix into f (whose arrays the caller provides). Without
 * pivoting this is stable for the diagonally dominant matrices used here.
 * Returns 0, or the index + 1 of the first pivot that is not a positive
 * finite number (the matrix is then not positive definite, or overflowed). */
int64_t tridiagonal_factor(const double *d, const double *e, tridiagonal_factors *f);

/* Overwrite x (the right-hand side) with the solution of A x = b. Since A
 * is symmetric, this also solves A^T x = b. */
void tridiagonal_solve(const tridiagonal_factors *f, const double *e, double *x);

#endif /* HEAT_TRIDIAGONAL_H */
