/*
 * {{name}}: a legacy-style library, as a Fortran 77 routine would be seen
 * from C: every argument by reference, the length last but one, a status
 * last. {{name}}.json describes it to Tessera; nothing here knows Tessera.
 *
 *   {{name}}_(x, alpha, y, n, info)             y(i) = alpha * sin(x(i))
 *   {{name}}_b_(x, alpha, ybar, xbar, alphabar, n, info)
 *                                               its adjoint (the vjp)
 */
#include <math.h>

#if defined(__GNUC__)
#define EXPORT __attribute__((visibility("default")))
#else
#define EXPORT
#endif

EXPORT void {{name}}_(const double *x, const double *alpha, double *y, const int *n, int *info);
EXPORT void {{name}}_b_(const double *x, const double *alpha, const double *ybar, double *xbar,
                        double *alphabar, const int *n, int *info);

/* info = 1: alpha is not finite (the manifest's "errors" says so). */
EXPORT void {{name}}_(const double *x, const double *alpha, double *y, const int *n, int *info) {
    *info = isfinite(*alpha) ? 0 : 1;
    if (*info != 0) return;
    for (int i = 0; i < *n; i++) y[i] = *alpha * sin(x[i]);
}

/* xbar(i) = alpha * cos(x(i)) * ybar(i), alphabar = sum(sin(x(i)) * ybar(i)).
 * The results arrive zeroed (the manifest's "zero": true). */
EXPORT void {{name}}_b_(const double *x, const double *alpha, const double *ybar, double *xbar,
                        double *alphabar, const int *n, int *info) {
    *info = 0;
    for (int i = 0; i < *n; i++) {
        xbar[i] += *alpha * cos(x[i]) * ybar[i];
        *alphabar += sin(x[i]) * ybar[i];
    }
}
