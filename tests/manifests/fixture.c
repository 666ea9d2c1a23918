/* SPDX-License-Identifier: MIT */
/*
 * Routines with plain C and Fortran-style signatures that the manifests in
 * this folder describe: one per kind of argument the manifest loader maps.
 * Built as build/tests/manifests/libmanifest_fixture.so; no Tessera header.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* Declared first, as exported functions are (-Wmissing-prototypes); the
 * manifests reach them by name, so no header declares them. */
EXPORT int64_t fx_axpy64(int64_t n, float a, const float *x, const float *y, float *z);
EXPORT void fx_scale_cols_(const int32_t *m, const int32_t *n, const double *a, const double *s,
                           double *out, double *work, const int32_t *lwork, int32_t *info);
EXPORT void fx_clobber(int32_t n, double *x, double *y);
EXPORT void fx_chars_(const char *s, const int32_t *n, double *y, size_t len);
EXPORT void fx_consts(int32_t c1, const int64_t *c2, double c3, const float *c4, double *y);
EXPORT int32_t fx_status(const double *x, double *y, int32_t n);
EXPORT void fx_info_(const int32_t *n, const double *x, double *y, int32_t *info);
EXPORT void fx_model(int32_t n, const double *x, const double *w, double *y, double *s);
EXPORT void fx_model_jvp(int32_t n, const double *x, const double *w, const double *xd,
                         const double *wd, double *yd, double *sd);
EXPORT void fx_model_vjp(int32_t n, const double *x, const double *w, const double *yb,
                         const double *sb, double *xb, double *wb);
EXPORT void fx_model_vjp_drift(int32_t n, const double *x, const double *w, const double *yb,
                               const double *sb, double *xb, double *wb);
EXPORT void fx_stop_(const int32_t *n, const double *x, double *y);
EXPORT void fx_ws_square_(const int32_t *n, const double *x, double *y, double *work,
                          int32_t *info);
EXPORT double fx_sum(int32_t n, const double *x);
EXPORT void fx_model_jac(int32_t n, const double *x, const double *w, double *jyx, double *jyw,
                         double *jsx, double *jsw);
EXPORT void fx_cumsum(int32_t n, const double *x, double *y);
EXPORT void fx_cumsum_vjp(int32_t n, const double *yb, double *xb);
EXPORT void fx_diag(int32_t m, int32_t n, const double *a, double *d);
EXPORT void fx_pairs(int32_t n, const double *x, double *y);
EXPORT void fx_range(int32_t lo, int32_t hi, double *y);
EXPORT int32_t fx_setup(int32_t scale);
EXPORT void fx_scaled(int32_t n, const double *x, double *y);
EXPORT void fx_wsq_(const int32_t *n, const double *x, double *y, int32_t *queries, double *work,
                    const int32_t *lwork, int32_t *info);
EXPORT void fx_from_first(int32_t n, const double *x, int32_t incx, double *y);
EXPORT void fx_wait(int32_t n, const double *x, double *y);

/* C convention: an int64 count, a float32 scalar by value, an int64 status
 * (nonzero when x holds a NaN, to show the status path). */
EXPORT int64_t fx_axpy64(int64_t n, float a, const float *x, const float *y, float *z) {
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i])) return 40 + i;
        z[i] = a * x[i] + y[i];
    }
    return 0;
}

/* Fortran style (everything by address): out(i, j) = a(i, j) * s(j) on
 * column-major m x n matrices. work must hold lwork = m * n zeroed
 * elements; info = -6 if it is not zeroed, -7 if lwork is wrong. */
EXPORT void fx_scale_cols_(const int32_t *m, const int32_t *n, const double *a, const double *s,
                           double *out, double *work, const int32_t *lwork, int32_t *info) {
    *info = 0;
    if (*lwork != *m * *n) {
        *info = -7;
        return;
    }
    for (int32_t k = 0; k < *lwork; k++)
        if (work[k] != 0.0) {
            *info = -6;
            return;
        }
    for (int32_t j = 0; j < *n; j++)
        for (int32_t i = 0; i < *m; i++) {
            work[i + j * *m] = a[i + j * *m] * s[j];
            out[i + j * *m] = work[i + j * *m];
        }
}

/* Overwrites its input, as many legacy routines do: y = 2 x, then x = NaN. */
EXPORT void fx_clobber(int32_t n, double *x, double *y) {
    for (int32_t i = 0; i < n; i++) {
        y[i] = 2 * x[i];
        x[i] = NAN;
    }
}

/* A character argument with gfortran's hidden length (after all others):
 * y = [len, s(1), s(2), ...] (character codes), y of size n. */
EXPORT void fx_chars_(const char *s, const int32_t *n, double *y, size_t len) {
    y[0] = (double)len;
    for (int32_t i = 1; i < *n; i++) y[i] = i - 1 < (int32_t)len ? (double)s[i - 1] : -1.0;
}

/* Constants by value and by address: y = [c1, c2, c3, c4]. */
EXPORT void fx_consts(int32_t c1, const int64_t *c2, double c3, const float *c4, double *y) {
    y[0] = c1;
    y[1] = (double)*c2;
    y[2] = c3;
    y[3] = *c4;
}

/* Statuses: returns (int) x[0], and copies x into y. */
EXPORT int32_t fx_status(const double *x, double *y, int32_t n) {
    for (int32_t i = 0; i < n; i++) y[i] = x[i];
    return (int32_t)x[0];
}

/* The same through an info argument. */
EXPORT void fx_info_(const int32_t *n, const double *x, double *y, int32_t *info) {
    for (int32_t i = 0; i < *n; i++) y[i] = x[i];
    *info = (int32_t)x[0];
}

/* A small model with every derivative endpoint, for seeds and results that
 * are asked for or not:
 *   y(i) = w(i) x(i) + x(i+1)   (the last without the second term)
 *   s    = sum x(i)^2                                                */
EXPORT void fx_model(int32_t n, const double *x, const double *w, double *y, double *s) {
    *s = 0;
    for (int32_t i = 0; i < n; i++) {
        y[i] = w[i] * x[i] + (i + 1 < n ? x[i + 1] : 0.0);
        *s += x[i] * x[i];
    }
}

EXPORT void fx_model_jvp(int32_t n, const double *x, const double *w, const double *xd,
                         const double *wd, double *yd, double *sd) {
    *sd = 0;
    for (int32_t i = 0; i < n; i++) {
        yd[i] = wd[i] * x[i] + w[i] * xd[i] + (i + 1 < n ? xd[i + 1] : 0.0);
        *sd += 2 * x[i] * xd[i];
    }
}

/* Adds to xb and wb, as adjoint routines often do. */
EXPORT void fx_model_vjp(int32_t n, const double *x, const double *w, const double *yb,
                         const double *sb, double *xb, double *wb) {
    for (int32_t i = 0; i < n; i++) {
        xb[i] += yb[i] * w[i] + 2 * *sb * x[i];
        if (i + 1 < n) xb[i + 1] += yb[i];
        wb[i] += yb[i] * x[i];
    }
}

/* fx_model_vjp with state kept between calls, as a cache gone wrong: asked
 * for the gradient of the cotangent it was last asked for, it moves the
 * first element. */
static double drift_last_yb0 = -1e300;
EXPORT void fx_model_vjp_drift(int32_t n, const double *x, const double *w, const double *yb,
                               const double *sb, double *xb, double *wb) {
    for (int32_t i = 0; i < n; i++) xb[i] = wb[i] = 0;
    fx_model_vjp(n, x, w, yb, sb, xb, wb);
    if (n > 0 && yb[0] == drift_last_yb0) xb[0] += 1e-3;
    if (n > 0) drift_last_yb0 = yb[0];
}

/* Column-major blocks, Fortran style: jyx(i, j) = d y(i) / d x(j) at
 * jyx[i + j n]; jyw likewise; jsx(j), jsw(j). */
EXPORT void fx_model_jac(int32_t n, const double *x, const double *w, double *jyx, double *jyw,
                         double *jsx, double *jsw) {
    for (int32_t j = 0; j < n; j++) {
        for (int32_t i = 0; i < n; i++) {
            jyx[i + j * n] = (i == j ? w[i] : 0.0) + (j == i + 1 ? 1.0 : 0.0);
            jyw[i + j * n] = i == j ? x[i] : 0.0;
        }
        jsx[j] = 2 * x[j];
        jsw[j] = 0.0;
    }
}

/* A routine that ends the process on a bad argument, as reference
 * LAPACK's XERBLA does (a Fortran STOP is exit(0)): y = x unless x(1) < 0. */
EXPORT void fx_stop_(const int32_t *n, const double *x, double *y) {
    if (*n > 0 && x[0] < 0) exit(0);
    for (int32_t i = 0; i < *n; i++) y[i] = x[i];
}

/* A C function with a value: the sum of x. */
EXPORT double fx_sum(int32_t n, const double *x) {
    double s = 0;
    for (int32_t i = 0; i < n; i++) s += x[i];
    return s;
}

/* A workspace query as LAPACK answers one: with lwork = -1 only the size
 * wanted, 2n + 1, is written into work(1) (as 2n + 0.5, a real that the
 * host rounds up) and counted; otherwise every one of the lwork elements
 * is written (so a length larger than the workspace would write past it),
 * y = 2 x, and queries = how many queries this library has answered. */
static int32_t fx_wsq_count;

EXPORT void fx_wsq_(const int32_t *n, const double *x, double *y, int32_t *queries, double *work,
                    const int32_t *lwork, int32_t *info) {
    *info = 0;
    if (*lwork == -1) {
        work[0] = 2.0 * *n + 0.5;
        fx_wsq_count++;
        return;
    }
    if (*lwork < 2 * *n + 1) {
        *info = -6;
        return;
    }
    for (int32_t k = 0; k < *lwork; k++) work[k] = k < *n ? x[k] : 0.0;
    for (int32_t i = 0; i < *n; i++) y[i] = 2 * work[i];
    *queries = fx_wsq_count;
}

/* Outputs whose sizes are expressions of the inputs' sizes:
 * cumsum (n+1): y(0) = 0, y(i+1) = y(i) + x(i), and its adjoint;
 * diag (min(m, n)) of a row-major m x n matrix; pairs (n/2): sums of
 * neighbours, a trailing odd element ignored. */
EXPORT void fx_cumsum(int32_t n, const double *x, double *y) {
    y[0] = 0;
    for (int32_t i = 0; i < n; i++) y[i + 1] = y[i] + x[i];
}

EXPORT void fx_cumsum_vjp(int32_t n, const double *yb, double *xb) {
    double acc = 0;
    for (int32_t i = n - 1; i >= 0; i--) {
        acc += yb[i + 1];
        xb[i] = acc;
    }
}

EXPORT void fx_diag(int32_t m, int32_t n, const double *a, double *d) {
    for (int32_t i = 0; i < m && i < n; i++) d[i] = a[i * n + i];
}

EXPORT void fx_pairs(int32_t n, const double *x, double *y) {
    for (int32_t i = 0; i + 1 < n; i += 2) y[i / 2] = x[i] + x[i + 1];
}

/* A size from values, as GSL's nmin and nmax: y = lo, lo+1, ..., hi. */
EXPORT void fx_range(int32_t lo, int32_t hi, double *y) {
    for (int32_t i = lo; i <= hi; i++) y[i - lo] = i;
}

/* A library with state set up once (a "setup" routine): y = scale x.
 * fx_setup counts its calls, so that y tells how often it ran. */
static int32_t fx_scale, fx_setups;

EXPORT int32_t fx_setup(int32_t scale) {
    if (scale <= 0) return 1;
    fx_scale = scale;
    fx_setups++;
    return 0;
}

EXPORT void fx_scaled(int32_t n, const double *x, double *y) {
    for (int32_t i = 0; i < n; i++) y[i] = fx_scale * fx_setups * x[i];
}

/* For `tessera check-manifest`. fx_from_first: y(i) = x(i incx) - x(0),
 * reading x(0) first; a manifest that forgets n shifts the list, so that
 * the constant 1 meant for incx arrives as x's address and the routine
 * faults at once, as a too short argument list does. */
EXPORT void fx_from_first(int32_t n, const double *x, int32_t incx, double *y) {
    double x0 = x[0];
    for (int32_t i = 0; i < n; i++) y[i] = x[(int64_t)i * incx] - x0;
}

/* Never returns, as a routine waiting for input that never comes. */
EXPORT void fx_wait(int32_t n, const double *x, double *y) {
    (void)n;
    (void)x;
    (void)y;
    for (;;) sleep(60);
}

/* A zeroed workspace of n*n elements: info = 1 when any element is not
 * zero (every page is read, so a workspace that was allocated shows in
 * the process's memory), else the diagonal is written and y = x + the
 * diagonal's zeros read back. */
EXPORT void fx_ws_square_(const int32_t *n, const double *x, double *y, double *work,
                          int32_t *info) {
    int64_t m = *n;
    *info = 0;
    for (int64_t k = 0; k < m * m; k++)
        if (work[k] != 0.0) {
            *info = 1;
            return;
        }
    for (int64_t i = 0; i < m; i++) {
        work[i * m + i] = 1.0;
        y[i] = x[i] + work[i * m + i] - 1.0;
    }
}
