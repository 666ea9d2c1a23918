/* SPDX-License-Identifier: MIT */
#include "tridiagonal.h"

#include <math.h>

int64_t tridiagonal_factor(const double *d, const double *e, tridiagonal_factors *f) {
    for (int64_t i = 0; i < f->n; i++) {
        double pivot = i == 0 ? d[0] : d[i] - e[i - 1] * f->ratio[i - 1];
        if (!(pivot > 0.0) || !isfinite(pivot)) return i + 1;
        f->inverse_pivot[i] = 1.0 / pivot;
        f->ratio[i] = i + 1 < f->n ? e[i] / pivot : 0.0;
    }
    return 0;
}

void tridiagonal_solve(const tridiagonal_factors *f, const double *e, double *x) {
    int64_t n = f->n;
    /* L y = b: L is unit lower bidiagonal with subdiagonal ratio. */
    for (int64_t i = 1; i < n; i++) x[i] -= f->ratio[i - 1] * x[i - 1];
    /* U x = y, from the last row up. */
    x[n - 1] *= f->inverse_pivot[n - 1];
    for (int64_t i = n - 2; i >= 0; i--) x[i] = (x[i] - e[i] * x[i + 1]) * f->inverse_pivot[i];
}
