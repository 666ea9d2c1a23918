/* SPDX-License-Identifier: MIT */
/* Gradient checks: the finite-difference strategy (see gradcheck.h,
 * "Strategy"). One central difference per sampled input element gives a
 * column of every selected output; the jacobian is compared with whole
 * columns, jvp and vjp either with the verified jacobian (gradcheck_dense.c)
 * or element by element with the columns. */
#include <math.h>
#include <stdlib.h>

#include "gradcheck_internal.h"

/* FD values at (sampled input element, sampled output element), kept for
 * the checks that come after the FD loop, so that no apply is repeated. */
typedef struct fd_store {
    double *value, *noise;
    int64_t *base;           /* per selected input: offset of its first row */
} fd_store;

/* One FD column and the buffers it is computed in. */
typedef struct fd_column {
    int32_t k;               /* selected input */
    int64_t t, i;            /* sample number, flat index */
    double *plus, *col, *noise;
    double *delta;           /* apply's noise per output element as input k moves */
    double *table;           /* the noise probe's values */
    const tsr_array **res;
} fd_column;

/* A central difference errs by (e+ - e-) / step for noise e of standard
 * deviation delta: allow many deviations, since a check makes thousands of
 * comparisons and delta is itself an estimate. */
#define NOISE_DEVIATIONS 16.0

static int step_failed(gc_session *s, const gc_in *in, int64_t i, double x, double h) {
    return gc_fail(s, TSR_E_ARGUMENT,
                   "the step %g does not move input '%s' element %lld (value %g) in %s; "
                   "use a larger eps",
                   h, in->name, (long long)i, x, tsr_dtype_name(in->dtype));
}

static void read_outputs(const gc_session *s, const tsr_array **res, double *dst) {
    for (int32_t o = 0; o < s->n_out; o++)
        for (int64_t j = 0; j < s->out[o].n; j++)
            dst[s->out[o].offset + j] = gc_get(res[o]->data, res[o]->dtype, j);
}

/* Central difference of every selected output w.r.t. input element i. */
static int fd_compute(gc_session *s, fd_column *fc) {
    gc_in *in = &s->in[fc->k];
    int64_t i = fc->i;
    double x = gc_get(in->orig, in->dtype, i);
    double h = in->eps * (s->absolute_step ? 1.0 : fmax(fabs(x), 1.0));
    /* The step as the input's dtype represents it. */
    double xp = gc_set(in->work, in->dtype, i, x + h);
    double xm = gc_set(in->work, in->dtype, i, x - h);
    double denom = xp - xm;
    gc_set(in->work, in->dtype, i, x);
    if (!(denom > 0)) return step_failed(s, in, i, x, h);
    gc_set(in->work, in->dtype, i, xp);
    int rc = gc_apply(s, fc->res);
    if (!rc) read_outputs(s, fc->res, fc->plus);
    gc_set(in->work, in->dtype, i, xm);
    if (!rc) rc = gc_apply(s, fc->res);
    gc_set(in->work, in->dtype, i, x);
    if (rc) return rc;
    for (int32_t o = 0; o < s->n_out; o++) {
        const gc_out *out = &s->out[o];
        double u = gc_unit_roundoff(out->dtype);
        for (int64_t j = 0; j < out->n; j++) {
            double p = fc->plus[out->offset + j], m = gc_get(fc->res[o]->data, out->dtype, j);
            fc->col[out->offset + j] = (p - m) / denom;
            double rounding = 8.0 * u * fmax(fabs(p), fabs(m));
            fc->noise[out->offset + j] =
                fmax(rounding, NOISE_DEVIATIONS * fc->delta[out->offset + j]) / denom;
        }
    }
    return 0;
}

static int compare_fd(gc_session *s, tsr_endpoint ep, int32_t k, int64_t i, int32_t o, int64_t j,
                      double got, double want, double noise) {
    const gc_in *in = &s->in[k];
    const gc_out *out = &s->out[o];
    double atol = gc_atol(s, in, out);
    gc_cmp c = {.ep = ep, .ref = TSR_GRADCHECK_VS_FD, .in = in, .out = out, .in_index = i,
                .out_index = j, .got = got, .want = want,
                .tol = atol + gc_rtol(s, in, out) * fabs(want) + noise,
                .scale = fmax(fabs(want), atol)};
    return gc_compare(s->rep, &c) ? gc_fail(s, TSR_E_NOMEM, "out of memory") : 0;
}

/* The jacobian's column i, every output element. */
static int check_jacobian_column(gc_session *s, const fd_column *fc) {
    for (int32_t o = 0; o < s->n_out; o++) {
        const gc_out *out = &s->out[o];
        const tsr_array *b = gc_jac_block(s, o, fc->k);
        int64_t n_in = s->in[fc->k].n;
        for (int64_t j = 0; j < out->n; j++) {
            int64_t at = out->offset + j;
            int rc = compare_fd(s, TSR_EP_JACOBIAN, fc->k, fc->i, o, j,
                                gc_get(b->data, b->dtype, j * n_in + fc->i), fc->col[at],
                                fc->noise[at]);
            if (rc) return rc;
        }
    }
    return 0;
}

/* jvp with tangent e_i against the column, at every output element or,
 * given a stored row instead (row, row_noise), at the sampled ones. */
static int check_jvp_column(gc_session *s, int32_t k, int64_t i, const double *col,
                            const double *noise, const double *row, const double *row_noise) {
    gc_in *in = &s->in[k];
    gc_set(in->seed, in->dtype, i, 1.0);
    int rc = gc_run_jvp(s, k);
    gc_set(in->seed, in->dtype, i, 0.0);
    for (int32_t o = 0; !rc && o < s->n_out; o++) {
        const gc_out *out = &s->out[o];
        const tsr_array *r = gc_jvp_result(s, o);
        int64_t n = row ? out->n_sample : out->n;
        for (int64_t u = 0; !rc && u < n; u++) {
            int64_t j = row ? out->sample[u] : u;
            double want = row ? row[out->sample_offset + u] : col[out->offset + j];
            double nz = row ? row_noise[out->sample_offset + u] : noise[out->offset + j];
            rc = compare_fd(s, TSR_EP_JVP, k, i, o, j, gc_get(r->data, r->dtype, j), want, nz);
        }
    }
    return rc;
}

static void keep_column(const gc_session *s, fd_store *st, const fd_column *fc) {
    double *v = st->value + st->base[fc->k] + fc->t * s->m_sampled;
    double *nz = st->noise + st->base[fc->k] + fc->t * s->m_sampled;
    for (int32_t o = 0; o < s->n_out; o++) {
        const gc_out *out = &s->out[o];
        for (int64_t u = 0; u < out->n_sample; u++) {
            v[out->sample_offset + u] = fc->col[out->offset + out->sample[u]];
            nz[out->sample_offset + u] = fc->noise[out->offset + out->sample[u]];
        }
    }
}

/* vjp with cotangent e_j for each sampled output element, compared at
 * each sampled input element. */
static int check_vjp_rows(gc_session *s, const fd_store *st) {
    for (int32_t o = 0; o < s->n_out; o++) {
        gc_out *out = &s->out[o];
        for (int64_t u = 0; u < out->n_sample; u++) {
            int64_t j = out->sample[u];
            gc_set(out->seed, out->dtype, j, 1.0);
            int rc = gc_run_vjp(s, o);
            gc_set(out->seed, out->dtype, j, 0.0);
            for (int32_t k = 0; !rc && k < s->n_in; k++) {
                const gc_in *in = &s->in[k];
                const tsr_array *r = gc_vjp_result(s, k);
                for (int64_t t = 0; !rc && t < in->n_sample; t++) {
                    int64_t at = st->base[k] + t * s->m_sampled + out->sample_offset + u;
                    rc = compare_fd(s, TSR_EP_VJP, k, in->sample[t], o, j,
                                    gc_get(r->data, r->dtype, in->sample[t]), st->value[at],
                                    st->noise[at]);
                }
            }
            if (rc) return rc;
        }
    }
    return 0;
}

/* After a failed jacobian: jvp at the sampled elements from the store. */
static int check_jvp_sampled(gc_session *s, const fd_store *st) {
    for (int32_t k = 0; k < s->n_in; k++)
        for (int64_t t = 0; t < s->in[k].n_sample; t++) {
            const double *row = st->value + st->base[k] + t * s->m_sampled;
            const double *nz = st->noise + st->base[k] + t * s->m_sampled;
            int rc = check_jvp_column(s, k, s->in[k].sample[t], NULL, NULL, row, nz);
            if (rc) return rc;
        }
    return 0;
}

static int store_alloc(gc_session *s, fd_store *st) {
    int64_t rows = 0;
    st->base = calloc((size_t)s->n_in + 1, sizeof *st->base);
    if (!st->base) return gc_fail(s, TSR_E_NOMEM, "out of memory");
    for (int32_t k = 0; k < s->n_in; k++) {
        st->base[k] = rows * s->m_sampled;
        rows += s->in[k].n_sample;
    }
    if (s->m_sampled > 0 && rows > INT64_MAX / 2 / s->m_sampled)
        return gc_fail(s, TSR_E_NOMEM, "too many samples: lower max_evals");
    size_t n = (size_t)(rows * s->m_sampled) + 1;
    st->value = malloc(n * sizeof *st->value);
    st->noise = malloc(n * sizeof *st->noise);
    if (!st->value || !st->noise)
        return gc_fail(s, TSR_E_NOMEM, "out of memory for %lld stored differences: lower max_evals",
                       (long long)(rows * s->m_sampled));
    return 0;
}

static int fd_loop(gc_session *s, fd_store *st, int jac_on, int jvp_inline) {
    fd_column fc = {0};
    size_t m = (size_t)s->m_total + 1;
    fc.plus = malloc(m * sizeof *fc.plus);
    fc.col = malloc(m * sizeof *fc.col);
    fc.noise = malloc(m * sizeof *fc.noise);
    fc.delta = malloc(m * sizeof *fc.delta);
    fc.table = malloc(m * GC_NOISE_POINTS * sizeof *fc.table);
    fc.res = calloc((size_t)s->n_out + 1, sizeof *fc.res);
    int rc = (!fc.plus || !fc.col || !fc.noise || !fc.delta || !fc.table || !fc.res)
                 ? gc_fail(s, TSR_E_NOMEM, "out of memory")
                 : 0;
    for (fc.k = 0; !rc && fc.k < s->n_in; fc.k++) {
        if (s->in[fc.k].n_sample > 0) rc = gc_noise_levels(s, fc.k, fc.delta, fc.table, fc.res);
        for (fc.t = 0; !rc && fc.t < s->in[fc.k].n_sample; fc.t++) {
            fc.i = s->in[fc.k].sample[fc.t];
            rc = fd_compute(s, &fc);
            if (!rc && jac_on) rc = check_jacobian_column(s, &fc);
            if (!rc && jvp_inline)
                rc = check_jvp_column(s, fc.k, fc.i, fc.col, fc.noise, NULL, NULL);
            if (!rc && st->value) keep_column(s, st, &fc);
        }
    }
    free(fc.plus);
    free(fc.col);
    free(fc.noise);
    free(fc.delta);
    free(fc.table);
    free(fc.res);
    return rc;
}

int gc_run_fd(gc_session *s) {
    int jac_on = (s->endpoints & TSR_CHECK_JACOBIAN) != 0;
    int jvp_on = (s->endpoints & TSR_CHECK_JVP) != 0;
    int vjp_on = (s->endpoints & TSR_CHECK_VJP) != 0;
    int64_t sum_in = 0, sum_out = 0, probes = 0;
    for (int32_t k = 0; k < s->n_in; k++) {
        sum_in += s->in[k].n_sample;
        probes += s->in[k].n_sample > 0 ? GC_NOISE_POINTS - 1 : 0;
    }
    for (int32_t o = 0; o < s->n_out; o++) sum_out += s->out[o].n_sample;
    int64_t plan = probes + 2 * sum_in + jac_on + (jvp_on && !jac_on ? sum_in : 0) +
                   (jac_on ? jvp_on + vjp_on : vjp_on ? sum_out : 0);
    gc_progress(s, plan, 0);

    fd_store st = {0};
    int rc = 0;
    if (jac_on) rc = gc_run_jacobian(s);
    if (!rc && (vjp_on || (jvp_on && jac_on))) rc = store_alloc(s, &st);
    if (!rc) rc = fd_loop(s, &st, jac_on, jvp_on && !jac_on);
    if (!rc && jac_on && gc_summary(s->rep, TSR_EP_JACOBIAN)->failures == 0) {
        rc = gc_check_dense(s);
    } else if (!rc) {
        /* Without a verified jacobian: one call per sampled element. */
        if (jac_on) gc_progress(s, (jvp_on ? sum_in - 1 : 0) + (vjp_on ? sum_out - 1 : 0), 0);
        if (jvp_on && jac_on) rc = check_jvp_sampled(s, &st);
        if (!rc && vjp_on) rc = check_vjp_rows(s, &st);
    }
    free(st.value);
    free(st.noise);
    free(st.base);
    return rc;
}
