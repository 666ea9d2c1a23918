/* SPDX-License-Identifier: MIT */
#include "invert_core.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Non-monotone Armijo test: accept J(m - a g) <= max of the last
 * MEMORY values of J - ARMIJO * a * |g|^2. */
enum { MEMORY = 10, MAX_HALVINGS = 60 };
#define ARMIJO 1e-4
/* No cell's log k moves by more than this in one iteration, so that a
 * long Barzilai-Borwein step cannot overflow exp(). */
#define MAX_LOG_STEP 1.0

heat_inverse_settings heat_inverse_defaults(void) {
    heat_inverse_settings s = {
        .max_iterations = 2000,
        .reduction = 1e6,
        .smoothness = 0.0,
        .report_every = 0,
        .report = NULL,
        .user = NULL,
    };
    return s;
}

/* The inputs, in arena buffers bound once to both calls (zero-copy in
 * worker mode); the conductivity buffer is rewritten before each run. */
enum { B_CONDUCTIVITY, B_SOURCE, B_INITIAL, B_OBSERVATIONS, B_DT, B_STEPS, N_BUFFERS };
static const char *const input_names[N_BUFFERS] = {
    "conductivity", "source", "initial_temperature", "observations", "dt", "steps"};

typedef struct heat_session {
    tsr_component *c;
    int64_t n;
    tsr_call *apply;
    tsr_call *vjp;
    void *buffers[N_BUFFERS];
    double *k;
    int64_t apply_calls;
    int64_t vjp_calls;
    double misfit_seed;  /* the cotangent 1 of misfit, borrowed by the vjp call */
    char *err;
    size_t err_cap;
} heat_session;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(heat_session *s, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (s->err_cap > 0) vsnprintf(s->err, s->err_cap, fmt, ap);
    va_end(ap);
    return code;
}

/* Copy input b's values from src (NULL: zeros) into a new arena buffer
 * and bind it to both calls. */
static int bind_input(heat_session *s, int b, const void *src, tsr_dtype dtype, int32_t rank) {
    size_t bytes = (rank == 0 ? 1 : (size_t)s->n) * tsr_dtype_size(dtype);
    s->buffers[b] = tsr_component_alloc(s->c, bytes);
    if (s->buffers[b] == NULL)
        return fail(s, TSR_E_NOMEM, "no memory for input %s", input_names[b]);
    if (src != NULL) memcpy(s->buffers[b], src, bytes);
    else memset(s->buffers[b], 0, bytes);
    tsr_array a = {.data = s->buffers[b], .dtype = dtype, .rank = rank, .shape = {s->n}};
    tsr_call *calls[2] = {s->apply, s->vjp};
    for (int k = 0; k < 2; k++) {
        if (calls[k] == NULL) continue;
        int rc = tsr_call_set_input(calls[k], input_names[b], &a);
        if (rc != 0) return fail(s, rc, "%s", tsr_call_errmsg(calls[k]));
    }
    return 0;
}

static void session_close(heat_session *s) {
    tsr_call_free(s->apply);
    tsr_call_free(s->vjp);
    for (int b = 0; b < N_BUFFERS; b++) tsr_component_free_buffer(s->c, s->buffers[b]);
}

/* Calls for apply and (when with_gradient) for the gradient of misfit
 * with respect to conductivity, with every input bound. */
static int session_open(heat_session *s, tsr_component *c, const heat_experiment *e,
                        int with_gradient, char *err, size_t err_cap) {
    memset(s, 0, sizeof *s);
    s->c = c;
    s->n = e->n;
    s->err = err;
    s->err_cap = err_cap;
    if (e->n < 1) return fail(s, TSR_E_ARGUMENT, "the rod needs at least 1 cell, got %lld",
                              (long long)e->n);
    s->apply = tsr_call_new(c, TSR_EP_APPLY);
    if (with_gradient) s->vjp = tsr_call_new(c, TSR_EP_VJP);
    if (s->apply == NULL || (with_gradient && s->vjp == NULL))
        return fail(s, TSR_E_NOMEM, "no memory for the calls");
    int rc = 0;
    if (with_gradient) {
        const char *in[] = {"conductivity"}, *out[] = {"misfit"};
        rc = tsr_call_set_wrt(s->vjp, in, 1, out, 1);
        s->misfit_seed = 1.0;
        tsr_array seed = {.data = &s->misfit_seed, .dtype = TSR_FLOAT64, .rank = 0};
        if (rc == 0) rc = tsr_call_set_seed(s->vjp, "misfit", &seed);
        if (rc != 0) return fail(s, rc, "%s", tsr_call_errmsg(s->vjp));
    }
    if (rc == 0) rc = bind_input(s, B_CONDUCTIVITY, NULL, TSR_FLOAT64, 1);
    if (rc == 0) rc = bind_input(s, B_SOURCE, e->source, TSR_FLOAT64, 1);
    if (rc == 0) rc = bind_input(s, B_INITIAL, e->initial_temperature, TSR_FLOAT64, 1);
    if (rc == 0) rc = bind_input(s, B_OBSERVATIONS, e->observations, TSR_FLOAT64, 1);
    if (rc == 0) rc = bind_input(s, B_DT, &e->dt, TSR_FLOAT64, 0);
    if (rc == 0) rc = bind_input(s, B_STEPS, &e->steps, TSR_INT64, 0);
    s->k = s->buffers[B_CONDUCTIVITY];
    return rc;
}

static int run(heat_session *s, tsr_call *call, int64_t *counter) {
    (*counter)++;
    int rc = tsr_call_run(call);
    return rc == 0 ? 0 : fail(s, rc, "%s", tsr_call_errmsg(call));
}

int heat_simulate(tsr_component *c, const heat_experiment *e, const double *k,
                  double *temperature, char *err, size_t err_cap) {
    heat_session s;
    int rc = session_open(&s, c, e, 0, err, err_cap);
    if (rc == 0) {
        memcpy(s.k, k, (size_t)e->n * sizeof(double));
        rc = run(&s, s.apply, &s.apply_calls);
    }
    if (rc == 0) {
        const tsr_array *t = tsr_call_output(s.apply, "temperature");
        memcpy(temperature, t->data, (size_t)e->n * sizeof(double));
    }
    session_close(&s);
    return rc;
}

/* ---- the objective in m = log k ------------------------------------------ */

static double smoothness_term(const double *m, int64_t n, double weight) {
    double sum = 0.0;
    for (int64_t i = 0; i + 1 < n; i++) sum += (m[i + 1] - m[i]) * (m[i + 1] - m[i]);
    return 0.5 * weight * sum;
}

/* J(m) and its misfit part. */
static int objective(heat_session *s, const double *m, double weight, double *misfit,
                     double *J) {
    for (int64_t i = 0; i < s->n; i++) s->k[i] = exp(m[i]);
    int rc = run(s, s->apply, &s->apply_calls);
    if (rc != 0) return rc;
    *misfit = *(const double *)tsr_call_output(s->apply, "misfit")->data;
    *J = *misfit + smoothness_term(m, s->n, weight);
    return 0;
}

/* dJ/dm = k * dmisfit/dk (chain rule through k = exp m) + weight D^T D m. */
static int gradient(heat_session *s, const double *m, double weight, double *g) {
    for (int64_t i = 0; i < s->n; i++) s->k[i] = exp(m[i]);
    int rc = run(s, s->vjp, &s->vjp_calls);
    if (rc != 0) return rc;
    const double *dk = tsr_call_output(s->vjp, "conductivity")->data;
    for (int64_t i = 0; i < s->n; i++) g[i] = s->k[i] * dk[i];
    for (int64_t i = 0; i + 1 < s->n; i++) {
        double d = weight * (m[i + 1] - m[i]);
        g[i] -= d;
        g[i + 1] += d;
    }
    return 0;
}

static double dot(const double *a, const double *b, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += a[i] * b[i];
    return sum;
}

static double max_abs(const double *a, int64_t n) {
    double most = 0.0;
    for (int64_t i = 0; i < n; i++) most = fmax(most, fabs(a[i]));
    return most;
}

/* ---- the descent ----------------------------------------------------------- */

/* The state of the descent: point, gradient, recent objective values. */
typedef struct descent {
    double *m, *g, *m_trial, *g_trial;
    double misfit, J, step;
    double recent[MEMORY];
    int n_recent;
} descent;

static void remember(descent *d, double J) {
    d->recent[d->n_recent % MEMORY] = J;
    d->n_recent++;
}

static double reference_value(const descent *d) {
    int count = d->n_recent < MEMORY ? d->n_recent : MEMORY;
    double most = -INFINITY;
    for (int k = 0; k < count; k++) most = fmax(most, d->recent[k]);
    return most;
}

static void report(const heat_inverse_settings *st, const heat_session *s, const descent *d,
                   int iteration) {
    if (st->report == NULL) return;
    heat_inverse_progress p = {
        .iteration = iteration,
        .misfit = d->misfit,
        .objective = d->J,
        .gradient_norm = sqrt(dot(d->g, d->g, s->n)),
        .conductivity = s->k,
    };
    st->report(st->user, &p);
}

/* Halve the step from d->step until the non-monotone Armijo test holds;
 * leaves the accepted point in m_trial. Returns 1 if accepted, 0 if no
 * step was, or a negative code. */
static int line_search(heat_session *s, descent *d, double weight, double *misfit, double *J,
                       double *step) {
    int64_t n = s->n;
    double gg = dot(d->g, d->g, n), reference = reference_value(d);
    double a = fmin(d->step, MAX_LOG_STEP / max_abs(d->g, n));
    for (int k = 0; k < MAX_HALVINGS; k++, a *= 0.5) {
        for (int64_t i = 0; i < n; i++) d->m_trial[i] = d->m[i] - a * d->g[i];
        int rc = objective(s, d->m_trial, weight, misfit, J);
        if (rc != 0) return rc;
        if (*J <= reference - ARMIJO * a * gg) {
            *step = a;
            return 1;
        }
    }
    return 0;
}

static int descend(heat_session *s, const heat_inverse_settings *st, descent *d,
                   heat_inverse_result *r) {
    int64_t n = s->n;
    double target = r->initial_misfit / st->reduction;
    int every = st->report_every > 0 ? st->report_every : 0;
    report(st, s, d, 0);
    int it = 0;
    while (it < st->max_iterations && d->misfit > target && max_abs(d->g, n) > 0.0) {
        double misfit = 0.0, J = 0.0, step = 0.0;
        int rc = line_search(s, d, st->smoothness, &misfit, &J, &step);
        if (rc < 0) return rc;
        if (rc == 0) break; /* no descent left at double precision */
        rc = gradient(s, d->m_trial, st->smoothness, d->g_trial);
        if (rc != 0) return rc;
        /* Barzilai-Borwein: step = s.s / s.y, from the change in m and g. */
        double ss = 0.0, sy = 0.0;
        for (int64_t i = 0; i < n; i++) {
            double dm = d->m_trial[i] - d->m[i], dg = d->g_trial[i] - d->g[i];
            ss += dm * dm;
            sy += dm * dg;
        }
        d->step = sy > 0.0 ? ss / sy : 2.0 * step;
        double *swap = d->m;
        d->m = d->m_trial;
        d->m_trial = swap;
        swap = d->g;
        d->g = d->g_trial;
        d->g_trial = swap;
        d->misfit = misfit;
        d->J = J;
        remember(d, J);
        it++;
        if (every > 0 && it % every == 0) report(st, s, d, it);
    }
    /* s->k holds the last trial point; restore the accepted one. */
    for (int64_t i = 0; i < n; i++) s->k[i] = exp(d->m[i]);
    if (every == 0 || it % every != 0) report(st, s, d, it);
    r->iterations = it;
    r->converged = d->misfit <= target;
    r->final_misfit = d->misfit;
    r->final_gradient_norm = sqrt(dot(d->g, d->g, n));
    return 0;
}

int heat_invert(tsr_component *c, const heat_experiment *e, const heat_inverse_settings *st,
                double *conductivity, heat_inverse_result *result, char *err, size_t err_cap) {
    memset(result, 0, sizeof *result);
    heat_session s;
    int rc = session_open(&s, c, e, 1, err, err_cap);
    int64_t n = e->n;
    double *vectors = rc == 0 ? malloc((size_t)(4 * n) * sizeof(double)) : NULL;
    if (rc == 0 && vectors == NULL) rc = fail(&s, TSR_E_NOMEM, "no memory for the descent");
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        if (!(conductivity[i] > 0.0))
            rc = fail(&s, TSR_E_ARGUMENT, "the initial guess of conductivity[%lld] is not > 0",
                      (long long)i);
    }
    if (rc == 0) {
        descent d = {.m = vectors, .g = vectors + n, .m_trial = vectors + 2 * n,
                     .g_trial = vectors + 3 * n};
        for (int64_t i = 0; i < n; i++) d.m[i] = log(conductivity[i]);
        rc = objective(&s, d.m, st->smoothness, &d.misfit, &d.J);
        if (rc == 0) rc = gradient(&s, d.m, st->smoothness, d.g);
        if (rc == 0) {
            result->initial_misfit = d.misfit;
            remember(&d, d.J);
            d.step = 1.0 / fmax(max_abs(d.g, n), 1e-300);
            rc = descend(&s, st, &d, result);
        }
        if (rc == 0) memcpy(conductivity, s.k, (size_t)n * sizeof(double));
    }
    result->apply_calls = s.apply_calls;
    result->vjp_calls = s.vjp_calls;
    free(vectors);
    session_close(&s);
    return rc;
}
