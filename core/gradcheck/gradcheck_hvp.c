/* SPDX-License-Identifier: MIT */
/* Gradient checks: hvp. One hvp call over every selected input and output
 * with a random dense cotangent w and tangent v, compared with
 *   a native vjp (unless this check found it wrong):
 *                  (vjp_w(x + h v) - vjp_w(x - h v)) / 2h, every element of
 *                  every selected input (2 vjp calls; reference VS_VJP_FD);
 *   else apply:    second differences of g = w . f at each sampled input
 *                  element i, (g(+h_i e_i + s v) - g(+h_i e_i - s v)
 *                  - g(-h_i e_i + s v) + g(-h_i e_i - s v)) / (4 h_i s)
 *                  (4 applies per sampled element; reference VS_FD).
 * Steps: eps relative to max(|x|, 1) for the vjp's, eps^(3/4) for
 * second differences (u^(1/4), u the unit roundoff, when eps is the
 * default); along v the largest step that moves no element by more than
 * its own (hvp_fallback.c's rule). A comparison passes when
 * |got - want| <= atol + rtol |want| + noise, noise the rounding of the
 * differenced values divided by the step. Runs last, after the repeat
 * checks: it reuses the seed and working buffers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck_internal.h"

enum { PURPOSE_HVP_TANGENT = 11, PURPOSE_HVP_COTANGENT = 12 };

static tsr_array field_array(void *data, tsr_dtype dt, int32_t rank, const int64_t *shape) {
    tsr_array a;
    memset(&a, 0, sizeof a);
    a.data = data;
    a.dtype = dt;
    a.rank = rank;
    for (int32_t d = 0; d < rank; d++) a.shape[d] = shape[d];
    return a;
}

/* Random seeds into the fields' seed buffers; the step's reach along v. */
static double draw_seeds(gc_session *s) {
    double reach = INFINITY;
    for (int32_t k = 0; k < s->n_in; k++) {
        gc_in *in = &s->in[k];
        uint64_t rng = gc_rng_init(s->seed, PURPOSE_HVP_TANGENT, in->field);
        for (int64_t i = 0; i < in->n; i++) {
            double v = gc_set(in->seed, in->dtype, i, gc_rng_direction(&rng));
            double x = fabs(gc_get(in->orig, in->dtype, i));
            reach = fmin(reach, (s->absolute_step ? 1.0 : fmax(x, 1.0)) / fabs(v));
        }
    }
    for (int32_t o = 0; o < s->n_out; o++) {
        gc_out *out = &s->out[o];
        uint64_t rng = gc_rng_init(s->seed, PURPOSE_HVP_COTANGENT, out->field);
        for (int64_t j = 0; j < out->n; j++) gc_set(out->seed, out->dtype, j, gc_rng_sym(&rng));
    }
    return isfinite(reach) ? reach : 1.0;
}

static int run_hvp(gc_session *s, tsr_call *call) {
    if (tsr_call_set_wrt(call, s->in_names, s->n_in, s->out_names, s->n_out) != 0)
        return gc_call_failed(s, call, "setting hvp_inputs");
    for (int32_t o = 0; o < s->n_out; o++) {
        const gc_out *out = &s->out[o];
        tsr_array a = field_array(out->seed, out->dtype, out->rank, out->shape);
        if (tsr_call_set_seed(call, out->name, &a) != 0)
            return gc_call_failed(s, call, "setting an hvp cotangent");
    }
    for (int32_t k = 0; k < s->n_in; k++) {
        const gc_in *in = &s->in[k];
        tsr_array a = field_array(in->seed, in->dtype, in->rank, in->shape);
        if (tsr_call_set_tangent(call, in->name, &a) != 0)
            return gc_call_failed(s, call, "setting an hvp tangent");
    }
    int rc = tsr_call_run(call);
    gc_summary(s->rep, TSR_EP_HVP)->calls++;
    gc_progress(s, 0, 1);
    if (rc) return gc_call_failed(s, call, "hvp");
    for (int32_t k = 0; k < s->n_in; k++)
        if (!tsr_call_output(call, s->in[k].name))
            return gc_fail(s, TSR_E_PLUGIN_RESULT, "hvp gave no result for input '%s'",
                           s->in[k].name);
    return 0;
}

/* The working copies at x + t v (+ e at element `at` of input `only`). */
static void shift(gc_session *s, double t, int32_t only, int64_t at, double e) {
    for (int32_t k = 0; k < s->n_in; k++) {
        gc_in *in = &s->in[k];
        for (int64_t i = 0; i < in->n; i++)
            gc_set(in->work, in->dtype, i,
                   gc_get(in->orig, in->dtype, i) + t * gc_get(in->seed, in->dtype, i) +
                       (k == only && i == at ? e : 0.0));
    }
}

static void restore(gc_session *s) { shift(s, 0, -1, 0, 0); }

static double in_rtol(const gc_session *s, const gc_in *in) {
    return s->rtol > 0 ? s->rtol
           : in->dtype == TSR_FLOAT32 ? TSR_GRADCHECK_F32_RTOL : TSR_GRADCHECK_F64_RTOL;
}
static double in_atol(const gc_session *s, const gc_in *in) {
    return s->atol > 0 ? s->atol
           : in->dtype == TSR_FLOAT32 ? TSR_GRADCHECK_F32_ATOL : TSR_GRADCHECK_F64_ATOL;
}

static int compare(gc_session *s, tsr_gradcheck_reference ref, const gc_in *in, int64_t i,
                   double got, double want, double noise) {
    double atol = in_atol(s, in);
    gc_cmp c = {.ep = TSR_EP_HVP, .ref = ref, .in = in, .out = NULL, .in_index = i,
                .out_index = -1, .got = got, .want = want,
                .tol = atol + in_rtol(s, in) * fabs(want) + noise,
                .scale = fmax(fabs(want), atol)};
    return gc_compare(s->rep, &c);
}

/* vjp_w at the working copies into v[k] (every element of input k). */
static int vjp_at(gc_session *s, tsr_call *vjp, double **v) {
    int rc = tsr_call_run(vjp);
    gc_progress(s, 0, 1);   /* a reference, not a call vjp's summary counts */
    if (rc) return gc_call_failed(s, vjp, "vjp, differenced for hvp");
    for (int32_t k = 0; k < s->n_in; k++) {
        const tsr_array *g = tsr_call_output(vjp, s->in[k].name);
        if (!g) return gc_fail(s, TSR_E_PLUGIN_RESULT, "vjp gave no result for '%s'", s->in[k].name);
        for (int64_t i = 0; i < s->in[k].n; i++) v[k][i] = gc_get(g->data, g->dtype, i);
    }
    return 0;
}

static int vs_vjp(gc_session *s, tsr_call *hvp, double reach) {
    tsr_call *vjp = tsr_call_new(s->c, TSR_EP_VJP);
    double **p = calloc((size_t)s->n_in, sizeof *p), **m = calloc((size_t)s->n_in, sizeof *m);
    int rc = vjp && p && m ? gc_bind_point(s, vjp) : gc_fail(s, TSR_E_NOMEM, "out of memory");
    for (int32_t k = 0; !rc && k < s->n_in; k++) {
        gc_in *in = &s->in[k];
        p[k] = malloc((size_t)(in->n > 0 ? in->n : 1) * sizeof **p);
        m[k] = malloc((size_t)(in->n > 0 ? in->n : 1) * sizeof **m);
        tsr_array a = field_array(in->work, in->dtype, in->rank, in->shape);
        if (!p[k] || !m[k]) rc = gc_fail(s, TSR_E_NOMEM, "out of memory");
        else if (tsr_call_set_input_at(vjp, in->field, &a) != 0)
            rc = gc_call_failed(s, vjp, "binding a perturbed input");
    }
    if (!rc && tsr_call_set_wrt(vjp, s->in_names, s->n_in, s->out_names, s->n_out) != 0)
        rc = gc_call_failed(s, vjp, "setting vjp_outputs");
    for (int32_t o = 0; !rc && o < s->n_out; o++) {
        const gc_out *out = &s->out[o];
        tsr_array a = field_array(out->seed, out->dtype, out->rank, out->shape);
        if (tsr_call_set_seed(vjp, out->name, &a) != 0)
            rc = gc_call_failed(s, vjp, "setting a cotangent");
    }
    double eps = 0;   /* the coarsest input's (float32 beside float64) */
    for (int32_t k = 0; k < s->n_in; k++) eps = fmax(eps, s->in[k].eps);
    double h = eps * reach;
    if (!rc) {
        shift(s, h, -1, 0, 0);
        rc = vjp_at(s, vjp, p);
    }
    if (!rc) {
        shift(s, -h, -1, 0, 0);
        rc = vjp_at(s, vjp, m);
    }
    restore(s);
    for (int32_t k = 0; !rc && k < s->n_in; k++) {
        const gc_in *in = &s->in[k];
        const tsr_array *r = tsr_call_output(hvp, in->name);
        double u = gc_unit_roundoff(in->dtype);
        for (int64_t i = 0; !rc && i < in->n; i++) {
            double want = (p[k][i] - m[k][i]) / (2 * h);
            double noise = 8 * u * fmax(fabs(p[k][i]), fabs(m[k][i])) / (2 * h);
            rc = compare(s, TSR_GRADCHECK_VS_VJP_FD, in, i, gc_get(r->data, r->dtype, i), want,
                         noise);
        }
    }
    for (int32_t k = 0; k < s->n_in; k++) {
        if (p) free(p[k]);
        if (m) free(m[k]);
    }
    free(p);
    free(m);
    tsr_call_free(vjp);
    return rc;
}

/* g = sum_o w_o . f_o at the working copies, and the scale of its terms. */
static int weighted(gc_session *s, const tsr_array **res, double *g, double *mag) {
    int rc = gc_apply(s, res);
    if (rc) return rc;
    double sum = 0, abs_sum = 0;
    for (int32_t o = 0; o < s->n_out; o++)
        for (int64_t j = 0; j < s->out[o].n; j++) {
            double t = gc_get(s->out[o].seed, s->out[o].dtype, j) *
                       gc_get(res[o]->data, res[o]->dtype, j);
            sum += t;
            abs_sum += fabs(t);
        }
    *g = sum;
    *mag = fmax(*mag, abs_sum);
    return 0;
}

static int vs_apply(gc_session *s, tsr_call *hvp, double reach) {
    const tsr_array **res = calloc((size_t)s->n_out, sizeof *res);
    int rc = res ? 0 : gc_fail(s, TSR_E_NOMEM, "out of memory");
    static const double sg[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    for (int32_t k = 0; !rc && k < s->n_in; k++) {
        const gc_in *in = &s->in[k];
        double u = gc_unit_roundoff(in->dtype);
        double rel = s->eps > 0 ? pow(s->eps, 0.75) : pow(u, 0.25);
        double t = rel * reach;
        const tsr_array *r = tsr_call_output(hvp, in->name);
        for (int64_t q = 0; !rc && q < in->n_sample; q++) {
            int64_t i = in->sample[q];
            double x = gc_get(in->orig, in->dtype, i);
            double h = rel * (s->absolute_step ? 1.0 : fmax(fabs(x), 1.0)), g[4], mag = 0;
            for (int c = 0; !rc && c < 4; c++) {
                shift(s, sg[c][1] * t, k, i, sg[c][0] * h);
                rc = weighted(s, res, &g[c], &mag);
            }
            if (rc) break;
            double want = (g[0] - g[1] - g[2] + g[3]) / (4 * h * t);
            rc = compare(s, TSR_GRADCHECK_VS_FD, in, i, gc_get(r->data, r->dtype, i), want,
                         16 * u * mag / (h * t));
        }
    }
    restore(s);
    free(res);
    return rc;
}

int gc_check_hvp(gc_session *s) {
    tsr_gradcheck_summary *sum = gc_summary(s->rep, TSR_EP_HVP);
    /* A vjp this check found wrong is no reference: apply is. */
    const tsr_gradcheck_summary *vjp = gc_summary(s->rep, TSR_EP_VJP);
    int by_vjp = tsr_component_has_native_endpoint(s->c, TSR_EP_VJP) &&
                 !(vjp->checked && vjp->failures > 0);
    sum->checked = 1;
    sum->reference = by_vjp ? TSR_GRADCHECK_VS_VJP_FD : TSR_GRADCHECK_VS_FD;
    int64_t sampled = 0;
    for (int32_t k = 0; k < s->n_in; k++) sampled += s->in[k].n_sample;
    gc_progress(s, 1 + (by_vjp ? 2 : 4 * sampled), 0);
    tsr_call *hvp = tsr_call_new(s->c, TSR_EP_HVP);
    if (!hvp) return gc_fail(s, TSR_E_NOMEM, "out of memory");
    double reach = draw_seeds(s);
    int rc = gc_bind_point(s, hvp);
    if (!rc) rc = run_hvp(s, hvp);
    if (!rc) rc = by_vjp ? vs_vjp(s, hvp, reach) : vs_apply(s, hvp, reach);
    tsr_call_free(hvp);
    return rc;
}
