/* SPDX-License-Identifier: MIT */
#include "heat_scheme.h"

#include <stdlib.h>
#include <string.h>

/* Face f's coupling c_f = (dt/h) g_f and its derivatives with respect to
 * the conductivities of the cells on its left (f-1) and right (f). */
static void face_couplings(heat_scheme *s) {
    const heat_problem *p = s->problem;
    const double *k = p->conductivity;
    double h = 1.0 / (double)p->n;
    double scale = p->dt / h;
    /* Wall face: half a cell of k[0], g = k[0] / (h/2). */
    s->coupling[0] = scale * 2.0 * k[0] / h;
    s->dcoupling_left[0] = 0.0;
    s->dcoupling_right[0] = scale * 2.0 / h;
    for (int64_t f = 1; f < p->n; f++) {
        /* Two half-cells in series: g = 2 k_l k_r / (h (k_l + k_r)). */
        double kl = k[f - 1], kr = k[f], sum = kl + kr;
        s->coupling[f] = scale * 2.0 * kl * kr / (h * sum);
        s->dcoupling_left[f] = scale * 2.0 * kr * kr / (h * sum * sum);
        s->dcoupling_right[f] = scale * 2.0 * kl * kl / (h * sum * sum);
    }
}

/* A = I + sum_f c_f (e_f - e_{f-1}) (e_f - e_{f-1})^T, the wall face
 * touching cell 0 only; the insulated end adds nothing. */
static void assemble(heat_scheme *s) {
    int64_t n = s->problem->n;
    for (int64_t i = 0; i < n; i++) {
        double right = i + 1 < n ? s->coupling[i + 1] : 0.0;
        s->diagonal[i] = 1.0 + s->coupling[i] + right;
        if (i + 1 < n) s->offdiagonal[i] = -right;
    }
}

heat_status heat_scheme_init(heat_scheme *s, const heat_problem *problem, int64_t *bad_row) {
    memset(s, 0, sizeof *s);
    s->problem = problem;
    int64_t n = problem->n;
    enum { VECTORS = 8 };
    s->block = malloc((size_t)n * VECTORS * sizeof(double));
    if (s->block == NULL) return HEAT_NO_MEMORY;
    double *next = s->block;
    double **vectors[VECTORS] = {
        &s->coupling, &s->dcoupling_left,        &s->dcoupling_right, &s->diagonal,
        &s->offdiagonal, &s->factors.inverse_pivot, &s->factors.ratio,   &s->work,
    };
    for (int v = 0; v < VECTORS; v++, next += n) *vectors[v] = next;
    s->factors.n = n;
    face_couplings(s);
    assemble(s);
    int64_t failed = tridiagonal_factor(s->diagonal, s->offdiagonal, &s->factors);
    if (failed != 0) {
        *bad_row = failed - 1;
        heat_scheme_free(s);
        return HEAT_NOT_DOMINANT;
    }
    return HEAT_OK;
}

void heat_scheme_free(heat_scheme *s) {
    if (s == NULL) return;
    free(s->block);
    s->block = NULL;
}

/* J_f(T) = T[f] - T[f-1], the wall counting as temperature 0. */
static double jump(const double *T, int64_t f) {
    return f == 0 ? T[0] : T[f] - T[f - 1];
}

void heat_forward(const heat_scheme *s, double *T_final, double *trajectory) {
    const heat_problem *p = s->problem;
    int64_t n = p->n;
    double *T = T_final; /* advanced in place */
    memcpy(T, p->initial_temperature, (size_t)n * sizeof(double));
    for (int64_t m = 0; m < p->steps; m++) {
        for (int64_t i = 0; i < n; i++) T[i] += p->dt * p->source[i];
        tridiagonal_solve(&s->factors, s->offdiagonal, T);
        if (trajectory != NULL) memcpy(trajectory + m * n, T, (size_t)n * sizeof(double));
    }
}

/* rhs -= dA(dk) T: face f changes A by dc_f (e_f - e_{f-1})(e_f - e_{f-1})^T. */
static void subtract_dA_times(const heat_scheme *s, const double *dk, const double *T,
                              double *rhs) {
    for (int64_t f = 0; f < s->problem->n; f++) {
        double dc = s->dcoupling_right[f] * dk[f];
        if (f > 0) dc += s->dcoupling_left[f] * dk[f - 1];
        double flux = dc * jump(T, f);
        rhs[f] -= flux;
        if (f > 0) rhs[f - 1] += flux;
    }
}

void heat_tangent(const heat_scheme *s, const double *dk, const double *ds, const double *dT0,
                  double *T_final, double *dT_final) {
    const heat_problem *p = s->problem;
    int64_t n = p->n;
    double *T = T_final, *dT = dT_final; /* both advanced in place */
    memcpy(T, p->initial_temperature, (size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) dT[i] = dT0 != NULL ? dT0[i] : 0.0;
    for (int64_t m = 0; m < p->steps; m++) {
        for (int64_t i = 0; i < n; i++) T[i] += p->dt * p->source[i];
        tridiagonal_solve(&s->factors, s->offdiagonal, T);
        if (ds != NULL) {
            for (int64_t i = 0; i < n; i++) dT[i] += p->dt * ds[i];
        }
        if (dk != NULL) subtract_dA_times(s, dk, T, dT);
        tridiagonal_solve(&s->factors, s->offdiagonal, dT);
    }
}

/* kbar_j -= mu^T (dA/dk_j) T, where mu^T (dA/dc_f) T = J_f(mu) J_f(T). */
static void accumulate_kbar(const heat_scheme *s, const double *mu, const double *T,
                            double *kbar) {
    for (int64_t f = 0; f < s->problem->n; f++) {
        double product = jump(mu, f) * jump(T, f);
        kbar[f] -= s->dcoupling_right[f] * product;
        if (f > 0) kbar[f - 1] -= s->dcoupling_left[f] * product;
    }
}

void heat_adjoint(const heat_scheme *s, const double *trajectory, const double *Tbar,
                  double *kbar, double *sbar, double *T0bar) {
    const heat_problem *p = s->problem;
    int64_t n = p->n;
    double *lambda = s->work;
    memcpy(lambda, Tbar, (size_t)n * sizeof(double));
    if (kbar != NULL) memset(kbar, 0, (size_t)n * sizeof(double));
    if (sbar != NULL) memset(sbar, 0, (size_t)n * sizeof(double));
    for (int64_t m = p->steps - 1; m >= 0; m--) {
        /* Step m solved A T^{m+1} = T^m + dt s; mu = A^{-T} lambda is the
         * cotangent of its right-hand side (A is symmetric). */
        tridiagonal_solve(&s->factors, s->offdiagonal, lambda);
        if (kbar != NULL) accumulate_kbar(s, lambda, trajectory + m * n, kbar);
        if (sbar != NULL) {
            for (int64_t i = 0; i < n; i++) sbar[i] += p->dt * lambda[i];
        }
    }
    if (T0bar != NULL) memcpy(T0bar, lambda, (size_t)n * sizeof(double));
}
