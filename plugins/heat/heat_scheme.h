/* SPDX-License-Identifier: MIT */
/*
 * The discrete heat equation behind the heat plugin, with its tangent-linear
 * and adjoint models. Independent of the plugin ABI.
 *
 * A rod 0 <= x <= 1 is cut into n cells of width h = 1/n; the volumetric
 * heat capacity is 1. Cell i has conductivity k[i] > 0 and a heat source
 * s[i] (heat per unit volume and time, constant in time). The face
 * between cells i-1 and i conducts with the harmonic mean of k[i-1] and k[i]
 * (two half-cells in series, exact for layered media). The wall x = 0 is held
 * at temperature 0, reached through half a cell of k[0]; the end x = 1 is
 * insulated. Implicit Euler with K steps of dt:
 *
 *     A(k) T^{m+1} = T^m + dt s,   A = I + (dt/h) G(k),   m = 0 .. K-1
 *
 * G is the conductance matrix. Face 0 is the wall, with conductance
 * g_0 = 2 k[0] / h; face f >= 1 lies between cells f-1 and f, with
 * g_f = 2 k[f-1] k[f] / (h (k[f-1] + k[f])). With the coupling c_f =
 * (dt/h) g_f and the jump J_f(T) = T[f] - T[f-1] (T[-1] = 0, the wall),
 * A T = T + sum_f c_f J_f(T) (e_f - e_{f-1}), where e_{-1} = 0.
 * A is symmetric and strictly diagonally dominant,
 * so it is factored once (Thomas, no pivoting) and each step, forwards or
 * adjoint, costs one O(n) solve.
 *
 * Derivatives:
 *   tangent  A dT^{m+1} = dT^m + dt ds - dA(dk) T^{m+1},  dT^0 = dT0
 *   adjoint  mu = A^{-T} lambda;  kbar_j -= mu^T (dA/dk_j) T^{m+1};
 *            sbar += dt mu;  lambda <- mu;  for m = K-1 .. 0, from
 *            lambda = Tbar^K; at the end T0bar = lambda.
 * The adjoint needs T^1 .. T^K: the forward run stores them (K x n values).
 */
#ifndef HEAT_SCHEME_H
#define HEAT_SCHEME_H

#include <stdint.h>

#include "tridiagonal.h"

typedef struct heat_problem {
    int64_t n;                          /* cells, >= 1 */
    double dt;                          /* time step, > 0 */
    int64_t steps;                      /* K, >= 1 */
    const double *conductivity;         /* (n,), every entry > 0 */
    const double *source;               /* (n,) */
    const double *initial_temperature;  /* (n,) */
} heat_problem;

/* The factored system of one problem and the vectors its sweeps use. */
typedef struct heat_scheme {
    const heat_problem *problem;
    double *coupling;        /* c_f, f = 0 .. n-1 */
    double *dcoupling_left;  /* d c_f / d k[f-1] (0 for the wall face) */
    double *dcoupling_right; /* d c_f / d k[f] */
    double *diagonal;        /* A's diagonal */
    double *offdiagonal;     /* A's off-diagonal: A[i][i+1] = -c_{i+1} */
    tridiagonal_factors factors;
    double *work;            /* n scratch values for the sweeps */
    double *block;           /* everything above, in one allocation */
} heat_scheme;

typedef enum heat_status {
    HEAT_OK = 0,
    HEAT_NO_MEMORY = 1,
    HEAT_NOT_DOMINANT = 2   /* a pivot was not positive and finite (overflow) */
} heat_status;

/* Build and factor A for `problem` (which must outlive the scheme). On
 * HEAT_NOT_DOMINANT, *bad_row is the row whose pivot failed. */
heat_status heat_scheme_init(heat_scheme *s, const heat_problem *problem, int64_t *bad_row);
void heat_scheme_free(heat_scheme *s);

/* Run the K steps from the initial temperature; T_final gets T^K. When
 * trajectory is not NULL it receives T^1 .. T^K, row m-1 holding T^m. */
void heat_forward(const heat_scheme *s, double *T_final, double *trajectory);

/* The forward run together with the tangent-linear model: T_final = T^K
 * and dT_final = dT^K for the tangents dk, ds, dT0 (NULL: zero). */
void heat_tangent(const heat_scheme *s, const double *dk, const double *ds, const double *dT0,
                  double *T_final, double *dT_final);

/* The discrete adjoint: from the cotangent Tbar of T^K, sweep back over
 * the trajectory stored by heat_forward and write kbar, sbar and T0bar, the
 * cotangents of conductivity, source and initial temperature (each NULL
 * when not wanted). */
void heat_adjoint(const heat_scheme *s, const double *trajectory, const double *Tbar,
                  double *kbar, double *sbar, double *T0bar);

#endif /* HEAT_SCHEME_H */
