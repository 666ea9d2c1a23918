/* SPDX-License-Identifier: MIT */
/* Gradient checks: once the jacobian agrees with finite differences, jvp
 * and vjp are checked against it with one call each, on random dense
 * tangents and cotangents, which covers every element instead of samples. */
#include <math.h>

#include "gradcheck_internal.h"

enum { PURPOSE_TANGENT = 3, PURPOSE_COTANGENT = 4 };

static double loosest_rtol(const gc_session *s, const gc_in *in, const gc_out *out) {
    double r = 0.0;
    for (int32_t k = 0; k < (in ? 1 : s->n_in); k++)
        for (int32_t o = 0; o < (out ? 1 : s->n_out); o++)
            r = fmax(r, gc_rtol(s, in ? in : &s->in[k], out ? out : &s->out[o]));
    return r;
}

static double loosest_atol(const gc_session *s, const gc_in *in, const gc_out *out) {
    double a = 0.0;
    for (int32_t k = 0; k < (in ? 1 : s->n_in); k++)
        for (int32_t o = 0; o < (out ? 1 : s->n_out); o++)
            a = fmax(a, gc_atol(s, in ? in : &s->in[k], out ? out : &s->out[o]));
    return a;
}

static int compare_dense(gc_session *s, tsr_endpoint ep, const gc_in *in, int64_t i,
                         const gc_out *out, int64_t j, double got, double want, double scale) {
    double atol = loosest_atol(s, in, out);
    gc_cmp c = {.ep = ep, .ref = TSR_GRADCHECK_VS_JACOBIAN, .in = in, .out = out,
                .in_index = i, .out_index = j, .got = got, .want = want,
                .tol = atol + loosest_rtol(s, in, out) * scale, .scale = fmax(scale, atol)};
    return gc_compare(s->rep, &c) ? gc_fail(s, TSR_E_NOMEM, "out of memory") : 0;
}

/* One jvp on a dense random tangent; each output element against J t. */
static int dense_jvp(gc_session *s) {
    for (int32_t k = 0; k < s->n_in; k++) {
        uint64_t rng = gc_rng_init(s->seed, PURPOSE_TANGENT, s->in[k].field);
        for (int64_t i = 0; i < s->in[k].n; i++)
            gc_set(s->in[k].seed, s->in[k].dtype, i, gc_rng_direction(&rng));
    }
    int rc = gc_run_jvp(s, -1);
    for (int32_t o = 0; !rc && o < s->n_out; o++) {
        const gc_out *out = &s->out[o];
        const tsr_array *r = gc_jvp_result(s, o);
        for (int64_t j = 0; !rc && j < out->n; j++) {
            double want = 0.0, scale = 0.0;
            for (int32_t k = 0; k < s->n_in; k++) {
                const gc_in *in = &s->in[k];
                const tsr_array *b = gc_jac_block(s, o, k);
                for (int64_t i = 0; i < in->n; i++) {
                    double term = gc_get(b->data, b->dtype, j * in->n + i) *
                                  gc_get(in->seed, in->dtype, i);
                    want += term;
                    scale += fabs(term);
                }
            }
            rc = compare_dense(s, TSR_EP_JVP, NULL, -1, out, j, gc_get(r->data, r->dtype, j), want,
                               scale);
        }
    }
    return rc;
}

/* One vjp on a dense random cotangent; each input element against c^T J. */
static int dense_vjp(gc_session *s) {
    for (int32_t o = 0; o < s->n_out; o++) {
        uint64_t rng = gc_rng_init(s->seed, PURPOSE_COTANGENT, s->out[o].field);
        for (int64_t j = 0; j < s->out[o].n; j++)
            gc_set(s->out[o].seed, s->out[o].dtype, j, gc_rng_direction(&rng));
    }
    int rc = gc_run_vjp(s, -1);
    for (int32_t k = 0; !rc && k < s->n_in; k++) {
        const gc_in *in = &s->in[k];
        const tsr_array *r = gc_vjp_result(s, k);
        for (int64_t i = 0; !rc && i < in->n; i++) {
            double want = 0.0, scale = 0.0;
            for (int32_t o = 0; o < s->n_out; o++) {
                const gc_out *out = &s->out[o];
                const tsr_array *b = gc_jac_block(s, o, k);
                for (int64_t j = 0; j < out->n; j++) {
                    double term = gc_get(out->seed, out->dtype, j) *
                                  gc_get(b->data, b->dtype, j * in->n + i);
                    want += term;
                    scale += fabs(term);
                }
            }
            rc = compare_dense(s, TSR_EP_VJP, in, i, NULL, -1, gc_get(r->data, r->dtype, i), want,
                               scale);
        }
    }
    return rc;
}

static void clear_seeds(gc_session *s) {
    for (int32_t k = 0; k < s->n_in; k++)
        for (int64_t i = 0; i < s->in[k].n; i++) gc_set(s->in[k].seed, s->in[k].dtype, i, 0.0);
    for (int32_t o = 0; o < s->n_out; o++)
        for (int64_t j = 0; j < s->out[o].n; j++) gc_set(s->out[o].seed, s->out[o].dtype, j, 0.0);
}

int gc_check_dense(gc_session *s) {
    int rc = 0;
    if (s->endpoints & TSR_CHECK_JVP) {
        gc_summary(s->rep, TSR_EP_JVP)->reference = TSR_GRADCHECK_VS_JACOBIAN;
        rc = dense_jvp(s);
    }
    if (!rc && (s->endpoints & TSR_CHECK_VJP)) {
        gc_summary(s->rep, TSR_EP_VJP)->reference = TSR_GRADCHECK_VS_JACOBIAN;
        rc = dense_vjp(s);
    }
    clear_seeds(s);
    return rc;
}
