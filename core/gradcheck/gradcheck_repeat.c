/* SPDX-License-Identifier: MIT */
/* Gradient checks: is each derivative endpoint a function of its
 * arguments? After the comparisons, each checked endpoint is called twice
 * more with the same random seeds (dense, on every selected field), and
 * both calls must give the same results. An adjoint routine that adds to
 * its result without zeroing it first (a manifest's "zero": true
 * forgotten) returns the sum of its earlier calls, or whatever the buffer
 * held: it may still match finite differences once (a single call on a
 * fresh, zeroed buffer), and is caught here. These two calls are not
 * counted in the summaries' calls, which count the calls whose results
 * were compared with a reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gradcheck_internal.h"

enum { PURPOSE_REPEAT_IN = 7, PURPOSE_REPEAT_OUT = 8 };

typedef struct endpoint_results {
    tsr_endpoint ep;
    tsr_call *call;
} endpoint_results;

/* Result r of the endpoint's call: jvp: output r; vjp: input r; jacobian:
 * block (r / n_in, r % n_in). */
static int32_t n_results(const gc_session *s, tsr_endpoint ep) {
    return ep == TSR_EP_JVP ? s->n_out : ep == TSR_EP_VJP ? s->n_in : s->n_out * s->n_in;
}

static const tsr_array *result(gc_session *s, tsr_endpoint ep, int32_t r) {
    if (ep == TSR_EP_JVP) return gc_jvp_result(s, r);
    if (ep == TSR_EP_VJP) return gc_vjp_result(s, r);
    return gc_jac_block(s, r / s->n_in, r % s->n_in);
}

static int64_t count_of(const tsr_array *a) { return a ? tsr_array_count(a) : 0; }

/* Every value of every result, in order, into vals (NULL: only count). */
static int64_t gather(gc_session *s, tsr_endpoint ep, double *vals) {
    int64_t n = 0;
    for (int32_t r = 0; r < n_results(s, ep); r++) {
        const tsr_array *a = result(s, ep, r);
        int64_t m = count_of(a);
        for (int64_t i = 0; vals && i < m; i++) vals[n + i] = gc_get(a->data, a->dtype, i);
        n += m;
    }
    return n;
}

static double tolerance(const gc_session *s, tsr_dtype dt, double a, double b) {
    int f32 = dt == TSR_FLOAT32;
    double rtol = s->rtol > 0 ? s->rtol : f32 ? TSR_GRADCHECK_F32_RTOL : TSR_GRADCHECK_F64_RTOL;
    double atol = s->atol > 0 ? s->atol : f32 ? TSR_GRADCHECK_F32_ATOL : TSR_GRADCHECK_F64_ATOL;
    return atol + rtol * fmax(fabs(a), fabs(b));
}

/* The first disagreement: result r (an output, an input or a block), element at. */
static int not_repeatable(gc_session *s, tsr_endpoint ep, int32_t r, int64_t at, double first,
                          double again) {
    char where[160];
    if (ep == TSR_EP_JVP)
        snprintf(where, sizeof where, "output '%s'", s->out[r].name);
    else if (ep == TSR_EP_VJP)
        snprintf(where, sizeof where, "input '%s'", s->in[r].name);
    else
        snprintf(where, sizeof where, "block d %s / d %s", s->out[r / s->n_in].name,
                 s->in[r % s->n_in].name);
    return gc_fail(s, TSR_E_PLUGIN_RESULT,
                   "%s is not repeatable: the same call run again gave %.17g instead of %.17g "
                   "(%s, element %lld): it keeps state between calls that changes its results "
                   "(results are cleared before every call)",
                   tsr_endpoint_name(ep), again, first, where, (long long)at);
}

static int compare(gc_session *s, tsr_endpoint ep, const double *first, const double *again) {
    int64_t i = 0;
    for (int32_t r = 0; r < n_results(s, ep); r++) {
        const tsr_array *a = result(s, ep, r);
        for (int64_t j = 0; j < count_of(a); j++, i++) {
            int same = (isnan(first[i]) && isnan(again[i])) ||
                       fabs(first[i] - again[i]) <= tolerance(s, a->dtype, first[i], again[i]);
            if (!same) return not_repeatable(s, ep, r, j, first[i], again[i]);
        }
    }
    return 0;
}

/* Dense random seeds on every selected field (on = 0: zeros again, as the
 * strategies leave them). */
static void set_seeds(gc_session *s, int on) {
    for (int32_t k = 0; k < s->n_in; k++) {
        uint64_t rng = gc_rng_init(s->seed, PURPOSE_REPEAT_IN, s->in[k].field);
        for (int64_t i = 0; i < s->in[k].n; i++)
            gc_set(s->in[k].seed, s->in[k].dtype, i, on ? gc_rng_direction(&rng) : 0.0);
    }
    for (int32_t o = 0; o < s->n_out; o++) {
        uint64_t rng = gc_rng_init(s->seed, PURPOSE_REPEAT_OUT, s->out[o].field);
        for (int64_t j = 0; j < s->out[o].n; j++)
            gc_set(s->out[o].seed, s->out[o].dtype, j, on ? gc_rng_direction(&rng) : 0.0);
    }
}

static int run(gc_session *s, tsr_endpoint ep) {
    return ep == TSR_EP_JVP ? gc_run_jvp(s, -1) : ep == TSR_EP_VJP ? gc_run_vjp(s, -1)
                                                                   : gc_run_jacobian(s);
}

static int repeat_one(gc_session *s, tsr_endpoint ep) {
    set_seeds(s, 1);
    s->uncounted = 1;
    double *first = NULL;
    int rc = run(s, ep);
    int64_t n = rc ? 0 : gather(s, ep, NULL);
    if (!rc && !(first = malloc((size_t)(2 * n + 1) * sizeof *first)))
        rc = gc_fail(s, TSR_E_NOMEM, "out of memory");
    if (!rc) {
        gather(s, ep, first);
        rc = run(s, ep);
    }
    if (!rc && gather(s, ep, NULL) != n)
        rc = gc_fail(s, TSR_E_PLUGIN_RESULT, "%s changed its results' sizes when run again",
                     tsr_endpoint_name(ep));
    if (!rc) {
        gather(s, ep, first + n);
        rc = compare(s, ep, first, first + n);
    }
    s->uncounted = 0;
    set_seeds(s, 0);
    free(first);
    return rc;
}

int gc_check_repeatable(gc_session *s) {
    const endpoint_results eps[] = {
        {TSR_EP_JACOBIAN, s->jac}, {TSR_EP_JVP, s->jvp}, {TSR_EP_VJP, s->vjp}};
    for (size_t k = 0; k < sizeof eps / sizeof eps[0]; k++) {
        if (!eps[k].call || gc_summary(s->rep, eps[k].ep)->calls == 0) continue;
        int rc = repeat_one(s, eps[k].ep);
        if (rc) return rc;
    }
    return 0;
}
