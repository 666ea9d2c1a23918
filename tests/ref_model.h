/* SPDX-License-Identifier: MIT */
/*
 * Checks a component's endpoints against a reference model written in the
 * test: a plain C function of float64 arrays. Derivatives of the reference
 * are taken by central finite differences, so no endpoint is compared with
 * a formula copied from the plugin.
 *
 *   apply          outputs equal the reference (to rounding)
 *   jacobian       every block equals the finite-difference block
 *   jvp / vjp      equal J t and c^T J with random seeds
 *   abstract_eval  dtype, rank and shape of every output, data NULL
 *
 * for every ordered selection of inputs and outputs (order matters: the
 * results follow the order given).
 */
#ifndef TESSERA_TEST_REF_MODEL_H
#define TESSERA_TEST_REF_MODEL_H

#include <math.h>

#include "test_util.h"

#define REF_MAX_FIELDS 4

typedef struct ref_field {
    const char *name;
    int32_t rank;
    int64_t shape[2];
    double *data;   /* inputs: the values to evaluate at */
} ref_field;

typedef struct ref_model ref_model;
/* out[k] has room for ref_count(&m->out[k]) values. */
typedef void (*ref_fn)(const ref_model *m, double *const *in, double **out);

struct ref_model {
    int n_in, n_out;
    ref_field in[REF_MAX_FIELDS];
    ref_field out[REF_MAX_FIELDS];
    ref_fn fn;
    const void *user;
};

static inline int64_t ref_count(const ref_field *f) {
    int64_t n = 1;
    for (int32_t d = 0; d < f->rank; d++) n *= f->shape[d];
    return n;
}

static inline tsr_array ref_array(const ref_field *f, double *data) {
    return make_array(data, TSR_FLOAT64, f->rank, f->shape);
}

/* Output values of the reference at the given inputs (out[k] allocated). */
static inline void ref_eval(const ref_model *m, double *const *in, double **out) {
    for (int k = 0; k < m->n_out; k++) memset(out[k], 0, (size_t)ref_count(&m->out[k]) * sizeof(double));
    m->fn(m, in, out);
}

static inline double *ref_alloc(int64_t n) {
    double *p = calloc((size_t)n + 1, sizeof(double));
    cr_assert_not_null(p);
    return p;
}

/* d out[o] / d in[i] at m's inputs, row-major (out elements, in elements). */
static inline double *ref_jacobian(const ref_model *m, int o, int i) {
    int64_t no = ref_count(&m->out[o]), ni = ref_count(&m->in[i]);
    double *jac = ref_alloc(no * ni);
    double *in[REF_MAX_FIELDS], *plus[REF_MAX_FIELDS], *minus[REF_MAX_FIELDS];
    for (int k = 0; k < m->n_in; k++) {
        in[k] = ref_alloc(ref_count(&m->in[k]));
        memcpy(in[k], m->in[k].data, (size_t)ref_count(&m->in[k]) * sizeof(double));
    }
    for (int k = 0; k < m->n_out; k++) {
        plus[k] = ref_alloc(ref_count(&m->out[k]));
        minus[k] = ref_alloc(ref_count(&m->out[k]));
    }
    for (int64_t q = 0; q < ni; q++) {
        double x0 = in[i][q];
        double h = 1e-5 * fmax(1.0, fabs(x0));
        in[i][q] = x0 + h;
        ref_eval(m, in, plus);
        in[i][q] = x0 - h;
        ref_eval(m, in, minus);
        in[i][q] = x0;
        for (int64_t p = 0; p < no; p++) jac[p * ni + q] = (plus[o][p] - minus[o][p]) / (2 * h);
    }
    for (int k = 0; k < m->n_in; k++) free(in[k]);
    for (int k = 0; k < m->n_out; k++) {
        free(plus[k]);
        free(minus[k]);
    }
    return jac;
}

/* Values close to the reference: rounding for exact values, a looser
 * bound where the reference is a finite difference. */
static inline void ref_assert_close(const double *got, const double *want, int64_t n,
                                    double tol, const char *what) {
    for (int64_t k = 0; k < n; k++)
        cr_assert(fabs(got[k] - want[k]) <= tol * (1.0 + fabs(want[k])),
                  "%s[%ld]: got %.17g, expected %.17g", what, (long)k, got[k], want[k]);
}

#define REF_TOL_EXACT 1e-12
#define REF_TOL_FD 1e-6

static inline void ref_assert_shape(const tsr_array *a, const ref_field *f1, const ref_field *f2,
                                    const char *what) {
    cr_assert_not_null(a, "%s: no result", what);
    cr_assert_eq(a->dtype, TSR_FLOAT64, "%s: dtype %d", what, a->dtype);
    int32_t rank = f1->rank + (f2 ? f2->rank : 0);
    cr_assert_eq(a->rank, rank, "%s: rank %d, expected %d", what, a->rank, rank);
    for (int32_t d = 0; d < f1->rank; d++)
        cr_assert_eq(a->shape[d], f1->shape[d], "%s: dim %d is %ld, expected %ld", what, d,
                     (long)a->shape[d], (long)f1->shape[d]);
    for (int32_t d = 0; f2 && d < f2->rank; d++)
        cr_assert_eq(a->shape[f1->rank + d], f2->shape[d], "%s: dim %d is %ld, expected %ld",
                     what, f1->rank + d, (long)a->shape[f1->rank + d], (long)f2->shape[d]);
    if (ref_count(f1) * (f2 ? ref_count(f2) : 1) > 0)
        cr_assert_not_null(a->data, "%s: result without data", what);
}

static inline void ref_bind_inputs(tsr_call *call, const ref_model *m) {
    for (int k = 0; k < m->n_in; k++) bind_ok(call, m->in[k].name, ref_array(&m->in[k], m->in[k].data));
}

/* apply: every output, by position and by name. */
static inline void ref_check_apply(tsr_component *c, const ref_model *m) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    ref_bind_inputs(call, m);
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), m->n_out);
    double *in[REF_MAX_FIELDS], *want[REF_MAX_FIELDS];
    for (int k = 0; k < m->n_in; k++) in[k] = m->in[k].data;
    for (int k = 0; k < m->n_out; k++) want[k] = ref_alloc(ref_count(&m->out[k]));
    ref_eval(m, in, want);
    for (int k = 0; k < m->n_out; k++) {
        const tsr_array *a = tsr_call_output(call, m->out[k].name);
        ref_assert_shape(a, &m->out[k], NULL, m->out[k].name);
        cr_assert_eq(a, tsr_call_result(call, tsr_component_find_output(c, m->out[k].name)),
                     "output %s by name and by index differ", m->out[k].name);
        ref_assert_close(a->data, want[k], ref_count(&m->out[k]), REF_TOL_EXACT, m->out[k].name);
        free(want[k]);
    }
    tsr_call_free(call);
}

/* abstract_eval: shapes only, from inputs that carry no data. */
static inline void ref_check_abstract_eval(tsr_component *c, const ref_model *m) {
    tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    for (int k = 0; k < m->n_in; k++) bind_ok(call, m->in[k].name, ref_array(&m->in[k], NULL));
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), m->n_out);
    for (int k = 0; k < m->n_out; k++) {
        const tsr_array *a = tsr_call_output(call, m->out[k].name);
        cr_assert_not_null(a, "abstract_eval gave no %s", m->out[k].name);
        cr_assert_eq(a->dtype, TSR_FLOAT64);
        cr_assert_eq(a->rank, m->out[k].rank, "%s: rank %d", m->out[k].name, a->rank);
        for (int32_t d = 0; d < a->rank; d++) cr_assert_eq(a->shape[d], m->out[k].shape[d]);
        cr_assert_null(a->data, "abstract_eval result %s has data", m->out[k].name);
    }
    tsr_call_free(call);
}

typedef struct ref_selection {
    int in[REF_MAX_FIELDS], n_in;
    int out[REF_MAX_FIELDS], n_out;
    const char *in_names[REF_MAX_FIELDS], *out_names[REF_MAX_FIELDS];
} ref_selection;

static inline void ref_select_names(const ref_model *m, ref_selection *s) {
    for (int k = 0; k < s->n_in; k++) s->in_names[k] = m->in[s->in[k]].name;
    for (int k = 0; k < s->n_out; k++) s->out_names[k] = m->out[s->out[k]].name;
}

static inline void ref_check_jacobian(tsr_component *c, const ref_model *m, ref_selection *s) {
    ref_select_names(m, s);
    tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
    ref_bind_inputs(call, m);
    wrt_ok(call, s->in_names, s->n_in, s->out_names, s->n_out);
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), s->n_out * s->n_in);
    for (int o = 0; o < s->n_out; o++) {
        for (int i = 0; i < s->n_in; i++) {
            const ref_field *fo = &m->out[s->out[o]], *fi = &m->in[s->in[i]];
            char what[128];
            snprintf(what, sizeof what, "d %s / d %s", fo->name, fi->name);
            const tsr_array *a = tsr_call_result(call, o * s->n_in + i);
            ref_assert_shape(a, fo, fi, what);
            cr_assert_eq(a, tsr_call_jacobian(call, fo->name, fi->name),
                         "%s: by index and by name differ", what);
            double *want = ref_jacobian(m, s->out[o], s->in[i]);
            ref_assert_close(a->data, want, ref_count(fo) * ref_count(fi), REF_TOL_FD, what);
            free(want);
        }
    }
    tsr_call_free(call);
}

static inline void ref_check_jvp(tsr_component *c, const ref_model *m, ref_selection *s,
                                 uint64_t seed) {
    ref_select_names(m, s);
    tsr_call *call = new_call(c, TSR_EP_JVP);
    ref_bind_inputs(call, m);
    wrt_ok(call, s->in_names, s->n_in, s->out_names, s->n_out);
    double *tangent[REF_MAX_FIELDS];
    for (int i = 0; i < s->n_in; i++) {
        const ref_field *f = &m->in[s->in[i]];
        tangent[i] = ref_alloc(ref_count(f));
        fill_random(tangent[i], ref_count(f), seed + (uint64_t)i);
        seed_ok(call, f->name, ref_array(f, tangent[i]));
    }
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), s->n_out);
    for (int o = 0; o < s->n_out; o++) {
        const ref_field *fo = &m->out[s->out[o]];
        int64_t no = ref_count(fo);
        double *want = ref_alloc(no);
        for (int i = 0; i < s->n_in; i++) {
            int64_t ni = ref_count(&m->in[s->in[i]]);
            double *jac = ref_jacobian(m, s->out[o], s->in[i]);
            for (int64_t p = 0; p < no; p++)
                for (int64_t q = 0; q < ni; q++) want[p] += jac[p * ni + q] * tangent[i][q];
            free(jac);
        }
        char what[128];
        snprintf(what, sizeof what, "jvp %s", fo->name);
        const tsr_array *a = tsr_call_result(call, o);
        ref_assert_shape(a, fo, NULL, what);
        cr_assert_eq(a, tsr_call_output(call, fo->name), "%s: by index and by name differ", what);
        ref_assert_close(a->data, want, no, REF_TOL_FD, what);
        free(want);
    }
    for (int i = 0; i < s->n_in; i++) free(tangent[i]);
    tsr_call_free(call);
}

static inline void ref_check_vjp(tsr_component *c, const ref_model *m, ref_selection *s,
                                 uint64_t seed) {
    ref_select_names(m, s);
    tsr_call *call = new_call(c, TSR_EP_VJP);
    ref_bind_inputs(call, m);
    wrt_ok(call, s->in_names, s->n_in, s->out_names, s->n_out);
    double *cotangent[REF_MAX_FIELDS];
    for (int o = 0; o < s->n_out; o++) {
        const ref_field *f = &m->out[s->out[o]];
        cotangent[o] = ref_alloc(ref_count(f));
        fill_random(cotangent[o], ref_count(f), seed + 100 + (uint64_t)o);
        seed_ok(call, f->name, ref_array(f, cotangent[o]));
    }
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), s->n_in);
    for (int i = 0; i < s->n_in; i++) {
        const ref_field *fi = &m->in[s->in[i]];
        int64_t ni = ref_count(fi);
        double *want = ref_alloc(ni);
        for (int o = 0; o < s->n_out; o++) {
            int64_t no = ref_count(&m->out[s->out[o]]);
            double *jac = ref_jacobian(m, s->out[o], s->in[i]);
            for (int64_t p = 0; p < no; p++)
                for (int64_t q = 0; q < ni; q++) want[q] += cotangent[o][p] * jac[p * ni + q];
            free(jac);
        }
        char what[128];
        snprintf(what, sizeof what, "vjp %s", fi->name);
        const tsr_array *a = tsr_call_result(call, i);
        ref_assert_shape(a, fi, NULL, what);
        cr_assert_eq(a, tsr_call_output(call, fi->name), "%s: by index and by name differ", what);
        ref_assert_close(a->data, want, ni, REF_TOL_FD, what);
        free(want);
    }
    for (int o = 0; o < s->n_out; o++) free(cotangent[o]);
    tsr_call_free(call);
}

/* Every ordered selection of k distinct indices out of n, k = 1..n:
 * calls visit(list, k, ctx) for each. */
static inline void ref_each_ordering(int n, int *list, int depth, unsigned used,
                                     void (*visit)(const int *, int, void *), void *ctx) {
    if (depth > 0) visit(list, depth, ctx);
    if (depth >= REF_MAX_FIELDS) return; /* list holds REF_MAX_FIELDS indices */
    for (int k = 0; k < n; k++) {
        if (used & (1u << k)) continue;
        list[depth] = k;
        ref_each_ordering(n, list, depth + 1, used | (1u << k), visit, ctx);
    }
}

typedef struct ref_sweep {
    tsr_component *c;
    const ref_model *m;
    ref_selection sel;
    int checked;
} ref_sweep;

static inline void ref_visit_outputs(const int *list, int k, void *p) {
    ref_sweep *sw = p;
    memcpy(sw->sel.out, list, (size_t)k * sizeof(int));
    sw->sel.n_out = k;
    uint64_t seed = (uint64_t)(sw->checked + 1);
    ref_check_jacobian(sw->c, sw->m, &sw->sel);
    ref_check_jvp(sw->c, sw->m, &sw->sel, seed);
    ref_check_vjp(sw->c, sw->m, &sw->sel, seed);
    sw->checked++;
}

static inline void ref_visit_inputs(const int *list, int k, void *p) {
    ref_sweep *sw = p;
    memcpy(sw->sel.in, list, (size_t)k * sizeof(int));
    sw->sel.n_in = k;
    int outs[REF_MAX_FIELDS];
    ref_each_ordering(sw->m->n_out, outs, 0, 0, ref_visit_outputs, sw);
}

/* jacobian, jvp and vjp for every ordered selection of inputs and
 * outputs; returns how many selections were checked. */
static inline int ref_check_all_derivatives(tsr_component *c, const ref_model *m) {
    ref_sweep sw = {.c = c, .m = m};
    int ins[REF_MAX_FIELDS];
    ref_each_ordering(m->n_in, ins, 0, 0, ref_visit_inputs, &sw);
    return sw.checked;
}

#endif /* TESSERA_TEST_REF_MODEL_H */
