/* SPDX-License-Identifier: MIT */
/* Gradient checks: Taylor remainder convergence (see gradcheck.h, "Taylor
 * mode"). No FD step and no tolerance to choose: a correct derivative
 * leaves a remainder of order h^2 along a random direction, a wrong one of
 * order h. The same applies along one direction serve every endpoint. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck_internal.h"

enum { PURPOSE_DIRECTION = 5, PURPOSE_TAYLOR_COTANGENT = 6 };
enum { E_JVP = 0, E_VJP = 1, E_JAC = 2, N_E = 3 };

/* Rounding in the plugin's own arithmetic is usually far above the unit
 * roundoff; a residual counts only well above it. */
#define FLOOR_FACTOR 1024.0
/* And well above apply's own noise, as measured (standard deviations). */
#define NOISE_DEVIATIONS 16.0

typedef struct taylor_state {
    int32_t S;
    double *dir;              /* v of every selected input, at in_off[k] */
    int64_t *in_off;
    double *xnorm, *vnorm;    /* per input: ||x||, ||v|| */
    double *slope, *gx, *gv;  /* vjp, [o * n_in + k]: g.v, sum |g||x|, sum |g||v| */
    double *lin_jvp, *lin_jac;    /* m_total: jvp(v) and J v */
    double *f1;               /* m_total: f(x + h v) */
    double *delta, *table;    /* apply's noise per output element (gradcheck_noise.c) */
    double *step;             /* S */
    double *res, *flo;        /* [(e * n_out + o) * S + q] */
    const tsr_array **outs;
} taylor_state;

static double *dalloc(int64_t n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(double)); }

static int state_alloc(gc_session *s, taylor_state *t) {
    int64_t n_dir = 0, pairs = (int64_t)s->n_out * s->n_in, curves = (int64_t)N_E * s->n_out * t->S;
    t->in_off = calloc((size_t)s->n_in + 1, sizeof *t->in_off);
    for (int32_t k = 0; t->in_off && k < s->n_in; k++) {
        t->in_off[k] = n_dir;
        n_dir += s->in[k].n;
    }
    t->dir = dalloc(n_dir);
    t->xnorm = dalloc(s->n_in);
    t->vnorm = dalloc(s->n_in);
    t->slope = dalloc(pairs);
    t->gx = dalloc(pairs);
    t->gv = dalloc(pairs);
    t->lin_jvp = dalloc(s->m_total);
    t->lin_jac = dalloc(s->m_total);
    t->f1 = dalloc(s->m_total);
    t->delta = dalloc(s->m_total);
    t->table = dalloc(s->m_total * GC_NOISE_POINTS);
    t->step = dalloc(t->S);
    t->res = dalloc(curves);
    t->flo = dalloc(curves);
    t->outs = calloc((size_t)s->n_out + 1, sizeof *t->outs);
    if (!t->in_off || !t->dir || !t->xnorm || !t->vnorm || !t->slope || !t->gx || !t->gv ||
        !t->lin_jvp || !t->lin_jac || !t->f1 || !t->delta || !t->table || !t->step || !t->res ||
        !t->flo || !t->outs)
        return gc_fail(s, TSR_E_NOMEM, "out of memory");
    return 0;
}

static void state_free(taylor_state *t) {
    free(t->in_off);
    free(t->dir);
    free(t->xnorm);
    free(t->vnorm);
    free(t->slope);
    free(t->gx);
    free(t->gv);
    free(t->lin_jvp);
    free(t->lin_jac);
    free(t->f1);
    free(t->delta);
    free(t->table);
    free(t->step);
    free(t->res);
    free(t->flo);
    free(t->outs);
}

/* v_k, scaled like the input unless steps are absolute; kept in the
 * input's seed buffer (the jvp tangent) as its dtype rounds it. */
static void make_directions(gc_session *s, taylor_state *t) {
    for (int32_t k = 0; k < s->n_in; k++) {
        gc_in *in = &s->in[k];
        uint64_t rng = gc_rng_init(s->seed, PURPOSE_DIRECTION, in->field);
        double xx = 0.0, vv = 0.0;
        for (int64_t i = 0; i < in->n; i++) {
            double x = gc_get(in->orig, in->dtype, i);
            double scale = s->absolute_step ? 1.0 : fmax(fabs(x), 1.0);
            double v = gc_set(in->seed, in->dtype, i, gc_rng_direction(&rng) * scale);
            t->dir[t->in_off[k] + i] = v;
            xx += x * x;
            vv += v * v;
        }
        t->xnorm[k] = sqrt(xx);
        t->vnorm[k] = sqrt(vv);
    }
}

/* vjp with a random cotangent w_o on each output: g . v_k per input. */
static int vjp_slopes(gc_session *s, taylor_state *t) {
    for (int32_t o = 0; o < s->n_out; o++) {
        gc_out *out = &s->out[o];
        uint64_t rng = gc_rng_init(s->seed, PURPOSE_TAYLOR_COTANGENT, out->field);
        for (int64_t j = 0; j < out->n; j++)
            gc_set(out->seed, out->dtype, j, gc_rng_direction(&rng));
        int rc = gc_run_vjp(s, o);
        if (rc) return rc;
        for (int32_t k = 0; k < s->n_in; k++) {
            const gc_in *in = &s->in[k];
            const tsr_array *g = gc_vjp_result(s, k);
            double dot = 0.0, gx = 0.0, gv = 0.0;
            for (int64_t i = 0; i < in->n; i++) {
                double gi = gc_get(g->data, g->dtype, i), v = t->dir[t->in_off[k] + i];
                dot += gi * v;
                gx += fabs(gi) * fabs(gc_get(in->orig, in->dtype, i));
                gv += fabs(gi) * fabs(v);
            }
            t->slope[o * s->n_in + k] = dot;
            t->gx[o * s->n_in + k] = gx;
            t->gv[o * s->n_in + k] = gv;
        }
    }
    return 0;
}

/* The linear terms of input k: jvp(v_k) and J v_k. */
static int linear_terms(gc_session *s, taylor_state *t, int32_t k) {
    const gc_in *in = &s->in[k];
    if (s->endpoints & TSR_CHECK_JVP) {
        int rc = gc_run_jvp(s, k);
        if (rc) return rc;
        for (int32_t o = 0; o < s->n_out; o++) {
            const tsr_array *r = gc_jvp_result(s, o);
            for (int64_t j = 0; j < s->out[o].n; j++)
                t->lin_jvp[s->out[o].offset + j] = gc_get(r->data, r->dtype, j);
        }
    }
    if (s->endpoints & TSR_CHECK_JACOBIAN) {
        for (int32_t o = 0; o < s->n_out; o++) {
            const tsr_array *b = gc_jac_block(s, o, k);
            for (int64_t j = 0; j < s->out[o].n; j++) {
                double sum = 0.0;
                for (int64_t i = 0; i < in->n; i++)
                    sum += gc_get(b->data, b->dtype, j * in->n + i) * t->dir[t->in_off[k] + i];
                t->lin_jac[s->out[o].offset + j] = sum;
            }
        }
    }
    return 0;
}

/* || delta - h lin || and its floor, for jvp and jacobian. */
static void vector_residual(const gc_session *s, const taylor_state *t, int32_t k, int32_t o,
                            const double *lin, double h, double *res, double *flo) {
    const gc_out *out = &s->out[o];
    const gc_in *in = &s->in[k];
    double rr = 0.0, n0 = 0.0, n1 = 0.0, nl = 0.0, noise = 0.0;
    for (int64_t j = 0; j < out->n; j++) {
        double f0 = s->base[out->offset + j], f1 = t->f1[out->offset + j];
        double d = lin[out->offset + j], dj = t->delta[out->offset + j];
        double r = (f1 - f0) - h * d;
        rr += r * r;
        n0 += f0 * f0;
        n1 += f1 * f1;
        nl += d * d;
        noise += dj * dj;
    }
    /* The step taken differs from h v by the input's rounding of x + h v. */
    double rho = t->vnorm[k] > 0 ? (t->xnorm[k] + h * t->vnorm[k]) / t->vnorm[k] : 0.0;
    *res = sqrt(rr);
    *flo = FLOOR_FACTOR * (gc_unit_roundoff(out->dtype) * (sqrt(n0) + sqrt(n1)) +
                           gc_unit_roundoff(in->dtype) * rho * sqrt(nl)) +
           NOISE_DEVIATIONS * sqrt(2.0 * noise);
}

/* | w . delta - h g . v | and its floor, for vjp. */
static void scalar_residual(const gc_session *s, const taylor_state *t, int32_t k, int32_t o,
                            double h, double *res, double *flo) {
    const gc_out *out = &s->out[o];
    double wd = 0.0, wf = 0.0, noise = 0.0;
    for (int64_t j = 0; j < out->n; j++) {
        double w = gc_get(out->seed, out->dtype, j);
        double f0 = s->base[out->offset + j], f1 = t->f1[out->offset + j];
        double wdj = w * t->delta[out->offset + j];
        wd += w * (f1 - f0);
        wf += fabs(w) * (fabs(f0) + fabs(f1));
        noise += wdj * wdj;
    }
    int64_t p = (int64_t)o * s->n_in + k;
    *res = fabs(wd - h * t->slope[p]);
    *flo = FLOOR_FACTOR * (gc_unit_roundoff(out->dtype) * wf +
                           gc_unit_roundoff(s->in[k].dtype) * (t->gx[p] + h * t->gv[p])) +
           NOISE_DEVIATIONS * sqrt(2.0 * noise);
}

/* Residuals of every endpoint and output at step q along v_k. */
static int one_step(gc_session *s, taylor_state *t, int32_t k, int32_t q) {
    gc_in *in = &s->in[k];
    double h = in->h0 / ldexp(1.0, q);
    t->step[q] = h;
    for (int64_t i = 0; i < in->n; i++)
        gc_set(in->work, in->dtype, i,
               gc_get(in->orig, in->dtype, i) + h * t->dir[t->in_off[k] + i]);
    int rc = gc_apply(s, t->outs);
    if (rc) return rc;
    for (int32_t o = 0; o < s->n_out; o++)
        for (int64_t j = 0; j < s->out[o].n; j++)
            t->f1[s->out[o].offset + j] = gc_get(t->outs[o]->data, t->outs[o]->dtype, j);
    for (int32_t o = 0; o < s->n_out; o++) {
        int64_t at[N_E];
        for (int e = 0; e < N_E; e++) at[e] = ((int64_t)e * s->n_out + o) * t->S + q;
        if (s->endpoints & TSR_CHECK_JVP)
            vector_residual(s, t, k, o, t->lin_jvp, h, &t->res[at[E_JVP]], &t->flo[at[E_JVP]]);
        if (s->endpoints & TSR_CHECK_JACOBIAN)
            vector_residual(s, t, k, o, t->lin_jac, h, &t->res[at[E_JAC]], &t->flo[at[E_JAC]]);
        if (s->endpoints & TSR_CHECK_VJP)
            scalar_residual(s, t, k, o, h, &t->res[at[E_VJP]], &t->flo[at[E_VJP]]);
    }
    return 0;
}

static int record(gc_session *s, taylor_state *t, int32_t k) {
    static const tsr_endpoint eps[N_E] = {TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN};
    for (int e = 0; e < N_E; e++) {
        if (!(s->endpoints & (1u << eps[e]))) continue;
        for (int32_t o = 0; o < s->n_out; o++) {
            int64_t at = ((int64_t)e * s->n_out + o) * t->S;
            if (gc_add_taylor(s->rep, eps[e], s->in[k].name, s->out[o].name, t->S, t->step,
                              t->res + at, t->flo + at, s->min_order))
                return gc_fail(s, TSR_E_NOMEM, "out of memory");
        }
    }
    return 0;
}

int gc_run_taylor(gc_session *s) {
    int jac_on = (s->endpoints & TSR_CHECK_JACOBIAN) != 0;
    int jvp_on = (s->endpoints & TSR_CHECK_JVP) != 0;
    int vjp_on = (s->endpoints & TSR_CHECK_VJP) != 0;
    taylor_state t = {.S = s->taylor_steps};
    gc_progress(s, (int64_t)s->n_in * (t.S + GC_NOISE_POINTS - 1) + (jvp_on ? s->n_in : 0) +
                       (vjp_on ? s->n_out : 0) + jac_on,
                0);
    int rc = state_alloc(s, &t);
    if (!rc) make_directions(s, &t);
    if (!rc && jac_on) rc = gc_run_jacobian(s);
    if (!rc && vjp_on) rc = vjp_slopes(s, &t);
    for (int32_t k = 0; !rc && k < s->n_in; k++) {
        rc = gc_noise_levels(s, k, t.delta, t.table, t.outs);
        if (!rc) rc = linear_terms(s, &t, k);
        for (int32_t q = 0; !rc && q < t.S; q++) rc = one_step(s, &t, k, q);
        gc_in *in = &s->in[k];
        if (in->n > 0) memcpy(in->work, in->orig, (size_t)in->n * tsr_dtype_size(in->dtype));
        if (!rc) rc = record(s, &t, k);
    }
    state_free(&t);
    return rc;
}
