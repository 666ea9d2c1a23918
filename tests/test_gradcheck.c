/* SPDX-License-Identifier: MIT */
/*
 * Gradient checks through the C API (tessera/gradcheck.h): every bundled
 * plugin passes in process and in a worker; a plugin with one wrong
 * endpoint fails in that endpoint only, with the field, index and values
 * reported; Taylor mode agrees; options restrict what is checked and
 * bad options are refused with a clear message.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include <jansson.h>

#include <tessera/gradcheck.h>
#include <tessera/payload.h>

#include "test_util.h"

/* ---- points at which the plugins are checked ------------------------------ */

#define N 6
#define HEAT_N 12
/* applies of the noise probe per input field (gradcheck.h) */
#define GC_PROBE TSR_GRADCHECK_NOISE_PROBE_EVALS

/* Inputs of one plugin in schema order, with their storage. */
typedef struct point {
    tsr_array in[8];
    double x[N], a[N], b[N], s, c;
    double k[HEAT_N], src[HEAT_N], t0[HEAT_N], obs[HEAT_N], dt;
    int64_t steps;
} point;

static void rosenbrock_point(point *p) {
    fill_random(p->x, N, 1);
    p->a[0] = 1.0;
    p->b[0] = 100.0;
    p->in[0] = f64_vec(p->x, N);
    p->in[1] = f64_scalar(&p->a[0]);
    p->in[2] = f64_scalar(&p->b[0]);
}

static void vectoradd_point(point *p) {
    fill_random(p->a, N, 2);
    fill_random(p->b, N, 3);
    p->s = -1.5;
    p->in[0] = f64_vec(p->a, N);
    p->in[1] = f64_vec(p->b, N);
    p->in[2] = f64_scalar(&p->s);
}

static void noop_point(point *p) {
    fill_random(p->x, N, 4);
    p->in[0] = f64_vec(p->x, N);
}

static void linear_point(point *p) {
    fill_random(p->x, 4, 5);
    p->in[0] = f64_vec(p->x, 4);
}

static void heat_point(point *p) {
    for (int i = 0; i < HEAT_N; i++) {
        p->k[i] = 1.0 + 0.5 * sin(i);
        p->src[i] = cos(i / 3.0);
        p->t0[i] = 0.1 * i;
        p->obs[i] = 0.05 * i;
    }
    p->dt = 0.01;
    p->steps = 20;
    p->in[0] = f64_vec(p->k, HEAT_N);
    p->in[1] = f64_vec(p->src, HEAT_N);
    p->in[2] = f64_vec(p->t0, HEAT_N);
    p->in[3] = f64_vec(p->obs, HEAT_N);
    p->in[4] = f64_scalar(&p->dt);
    p->in[5] = make_array(&p->steps, TSR_INT64, 0, NULL);
}

/* wrong_grad: y = sin(x + c), s = sum(x^2). */
static void wrong_point(point *p, int64_t n) {
    fill_random(p->x, n, 6);
    for (int64_t i = 0; i < n; i++) p->x[i] *= 2.0;
    p->c = 0.3;
    p->in[0] = f64_vec(p->x, n);
    p->in[1] = f64_scalar(&p->c);
}

typedef struct bundled {
    const char *name;
    const char *config_key, *config_value;
    void (*make)(point *);
} bundled;

static const bundled bundled_plugins[] = {
    {"rosenbrock", NULL, NULL, rosenbrock_point},
    {"vectoradd", NULL, NULL, vectoradd_point},
    {"noop", NULL, NULL, noop_point},
    {"linear", "matrix", LINEAR_MATRIX_FILE, linear_point},
    {"heat", NULL, NULL, heat_point},
};

static tsr_component *open_in(const char *path, const char *mode, const char *key, const char *value) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    cr_assert_eq(tsr_options_set(o, "mode", mode, NULL), 0);
    if (key) cr_assert_eq(tsr_options_set_config(o, key, value), 0);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

static tsr_component *open_wrong(const char *which) {
    return open_in(TEST_PLUGIN("wrong_grad"), "inproc", "wrong", which);
}

static tsr_gradcheck_report *check_ok(tsr_component *c, const tsr_array *in,
                                      const tsr_gradcheck_options *o) {
    tsr_gradcheck_report *r = NULL;
    tsr_error err = {0};
    int rc = tsr_gradcheck_run(c, in, o, &r, &err);
    cr_assert_eq(rc, 0, "tsr_gradcheck_run failed: %d %s", rc, err.message);
    cr_assert_not_null(r);
    return r;
}

static const tsr_gradcheck_summary *summary(const tsr_gradcheck_report *r, tsr_endpoint ep) {
    const tsr_gradcheck_summary *s = tsr_gradcheck_summary_of(r, ep);
    cr_assert_not_null(s);
    return s;
}

/* Every endpoint the plugin implements was checked, with no failure. */
static void assert_all_pass(const tsr_gradcheck_report *r, const char *what) {
    const tsr_endpoint eps[] = {TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN};
    for (int k = 0; k < 3; k++) {
        const tsr_gradcheck_summary *s = summary(r, eps[k]);
        cr_assert(s->checked, "%s: %s not checked", what, tsr_endpoint_name(eps[k]));
        cr_assert_gt(s->checks, 0, "%s: %s made no comparison", what, tsr_endpoint_name(eps[k]));
        cr_assert_eq(s->failures, 0, "%s: %s failed %lld of %lld (max rel %g)", what,
                     tsr_endpoint_name(eps[k]), (long long)s->failures, (long long)s->checks,
                     s->max_rel_err);
        cr_assert_geq(s->calls, 1);
    }
    /* hvp, where it was checked (a native one, or named) */
    const tsr_gradcheck_summary *h = summary(r, TSR_EP_HVP);
    if (h->checked) {
        cr_assert_gt(h->checks, 0, "%s: hvp made no comparison", what);
        cr_assert_eq(h->failures, 0, "%s: hvp failed %lld of %lld (max rel %g)", what,
                     (long long)h->failures, (long long)h->checks, h->max_rel_err);
        cr_assert_eq(h->calls, 1);
    }
    cr_assert(tsr_gradcheck_passed(r), "%s: report says failed", what);
}

/* ---- bundled plugins pass ----------------------------------------------------- */

static void check_bundled(const char *mode, int taylor) {
    for (size_t k = 0; k < sizeof bundled_plugins / sizeof bundled_plugins[0]; k++) {
        const bundled *b = &bundled_plugins[k];
        char path[512];
        snprintf(path, sizeof path, "%s/%s.so", TSR_PLUGIN_DIR, b->name);
        tsr_component *c = open_in(path, mode, b->config_key, b->config_value);
        point p;
        memset(&p, 0, sizeof p);
        b->make(&p);
        tsr_gradcheck_options o = {.struct_size = sizeof o, .taylor = taylor, .seed = 11};
        tsr_gradcheck_report *r = check_ok(c, p.in, &o);
        char what[128];
        snprintf(what, sizeof what, "%s in %s%s", b->name, mode, taylor ? " (Taylor)" : "");
        assert_all_pass(r, what);
        cr_assert_eq(tsr_gradcheck_is_taylor(r), taylor);
        tsr_gradcheck_report_free(r);
        tsr_close(c);
    }
}

Test(gradcheck_bundled, every_bundled_plugin_passes_in_process) { check_bundled("inproc", 0); }

Test(gradcheck_bundled, every_bundled_plugin_passes_in_a_worker) { check_bundled("worker", 0); }

Test(gradcheck_bundled, every_bundled_plugin_passes_the_taylor_test) { check_bundled("inproc", 1); }

Test(gradcheck_bundled, taylor_in_a_worker) { check_bundled("worker", 1); }

Test(gradcheck_bundled, null_options_mean_the_defaults) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    point p;
    rosenbrock_point(&p);
    tsr_gradcheck_report *r = check_ok(c, p.in, NULL);
    assert_all_pass(r, "rosenbrock");
    /* With the jacobian verified, jvp and vjp need one call each. */
    cr_assert_eq(summary(r, TSR_EP_JVP)->reference, TSR_GRADCHECK_VS_JACOBIAN);
    cr_assert_eq(summary(r, TSR_EP_VJP)->reference, TSR_GRADCHECK_VS_JACOBIAN);
    cr_assert_eq(summary(r, TSR_EP_JACOBIAN)->reference, TSR_GRADCHECK_VS_FD);
    cr_assert_eq(summary(r, TSR_EP_JVP)->calls, 1);
    cr_assert_eq(summary(r, TSR_EP_VJP)->calls, 1);
    cr_assert_eq(summary(r, TSR_EP_JACOBIAN)->calls, 1);
    /* One base apply, a noise probe per input field, two per input
     * element: x (6), a, b. */
    cr_assert_eq(tsr_gradcheck_apply_evals(r), 1 + 3 * (GC_PROBE) + 2 * (N + 2));
    cr_assert_eq(tsr_gradcheck_n_failures(r), 0);
    cr_assert_eq(tsr_gradcheck_n_skipped(r), 0);
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

/* ---- a wrong endpoint fails, and only it ------------------------------------------ */

Test(gradcheck_wrong, a_wrong_vjp_fails_against_the_verified_jacobian) {
    tsr_component *c = open_wrong("vjp");
    point p;
    wrong_point(&p, N);
    tsr_gradcheck_report *r = check_ok(c, p.in, NULL);
    cr_assert_not(tsr_gradcheck_passed(r));
    cr_assert_eq(summary(r, TSR_EP_JACOBIAN)->failures, 0);
    cr_assert_eq(summary(r, TSR_EP_JVP)->failures, 0);
    const tsr_gradcheck_summary *v = summary(r, TSR_EP_VJP);
    cr_assert_eq(v->reference, TSR_GRADCHECK_VS_JACOBIAN);
    cr_assert_eq(v->failures, N, "every element of dense c^T J is off by 0.01 x c_y");
    cr_assert_eq(tsr_gradcheck_n_failures(r), N);
    for (int64_t k = 0; k < N; k++) {
        const tsr_gradcheck_failure *f = tsr_gradcheck_failure_at(r, k);
        cr_assert_eq(f->endpoint, TSR_EP_VJP);
        cr_assert_str_eq(f->input, "x");
        cr_assert_null(f->output, "a dense cotangent spans every output");
        cr_assert_eq(f->in_index, k);
        cr_assert_eq(f->in_rank, 1);
        cr_assert_eq(f->in_multi[0], k);
        cr_assert_eq(f->out_index, -1);
        cr_assert_float_eq(f->abs_err, fabs(f->got - f->want), 1e-15);
        cr_assert_gt(f->abs_err, f->tolerance);
    }
    cr_assert_null(tsr_gradcheck_failure_at(r, N));
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

Test(gradcheck_wrong, a_wrong_jacobian_fails_against_fd_and_jvp_vjp_fall_back_to_fd) {
    tsr_component *c = open_wrong("jacobian");
    point p;
    wrong_point(&p, N);
    tsr_gradcheck_report *r = check_ok(c, p.in, NULL);
    const tsr_gradcheck_summary *j = summary(r, TSR_EP_JACOBIAN);
    cr_assert_eq(j->failures, N, "only the diagonal of d y / d x is wrong");
    cr_assert_eq(j->checks, N * (N + 1), "every element of every sampled column");
    for (int64_t k = 0; k < tsr_gradcheck_n_failures(r); k++) {
        const tsr_gradcheck_failure *f = tsr_gradcheck_failure_at(r, k);
        cr_assert_eq(f->endpoint, TSR_EP_JACOBIAN);
        cr_assert_eq(f->reference, TSR_GRADCHECK_VS_FD);
        cr_assert_str_eq(f->output, "y");
        cr_assert_str_eq(f->input, "x");
        cr_assert_eq(f->in_index, f->out_index);
        /* got = cos(x + c) + 0.01 x, want = cos(x + c) */
        cr_assert_float_eq(f->got - f->want, 0.01 * p.x[f->in_index], 1e-7);
    }
    cr_assert_eq(summary(r, TSR_EP_JVP)->reference, TSR_GRADCHECK_VS_FD);
    cr_assert_eq(summary(r, TSR_EP_JVP)->failures, 0);
    cr_assert_eq(summary(r, TSR_EP_JVP)->calls, N);
    cr_assert_eq(summary(r, TSR_EP_VJP)->failures, 0);
    cr_assert_eq(summary(r, TSR_EP_VJP)->calls, N + 1, "one per output element");
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

Test(gradcheck_wrong, without_jacobian_a_wrong_jvp_fails_against_fd) {
    tsr_component *c = open_wrong("jvp");
    point p;
    wrong_point(&p, N);
    tsr_gradcheck_options o = {.struct_size = sizeof o, .endpoints = TSR_CHECK_JVP | TSR_CHECK_VJP};
    tsr_gradcheck_report *r = check_ok(c, p.in, &o);
    cr_assert_not(summary(r, TSR_EP_JACOBIAN)->checked);
    cr_assert_eq(summary(r, TSR_EP_JACOBIAN)->calls, 0);
    cr_assert_eq(summary(r, TSR_EP_JVP)->failures, N);
    cr_assert_eq(summary(r, TSR_EP_VJP)->failures, 0);
    const tsr_gradcheck_failure *f = tsr_gradcheck_failure_at(r, 0);
    cr_assert_eq(f->endpoint, TSR_EP_JVP);
    cr_assert_str_eq(f->output, "y");
    cr_assert_eq(f->in_index, 0);
    cr_assert_eq(f->out_index, 0);
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

Test(gradcheck_wrong, no_wrong_endpoint_passes) {
    tsr_component *c = open_wrong("none");
    point p;
    wrong_point(&p, N);
    tsr_gradcheck_report *r = check_ok(c, p.in, NULL);
    assert_all_pass(r, "wrong_grad with wrong=none");
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

Test(gradcheck_wrong, failures_are_counted_beyond_max_failures) {
    tsr_component *c = open_wrong("jacobian");
    point p;
    wrong_point(&p, N);
    tsr_gradcheck_options o = {.struct_size = sizeof o, .max_failures = 2};
    tsr_gradcheck_report *r = check_ok(c, p.in, &o);
    cr_assert_eq(tsr_gradcheck_n_failures(r), 2);
    cr_assert_eq(summary(r, TSR_EP_JACOBIAN)->failures, N);
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

Test(gradcheck_wrong, a_noisy_apply_is_measured_not_blamed) {
    /* Noise 1e-9 in y gives central differences errors near 1e-4, ten times
     * rtol: the noise probe must account for it, and a wrong slope must
     * still show through. */
    double x[8] = {0.5, 2, -1, 1.5, 3, -2.5, 0.1, 4};
    tsr_array in = f64_vec(x, 8);
    const char *bias[] = {"0", "1e-2"};
    for (int b = 0; b < 2; b++) {
        for (int taylor = 0; taylor < 2; taylor++) {
            tsr_options *opts = tsr_options_new();
            cr_assert_eq(tsr_options_set_config(opts, "amplitude", "1e-9"), 0);
            cr_assert_eq(tsr_options_set_config(opts, "bias", bias[b]), 0);
            tsr_component *c = open_ok(TEST_PLUGIN("noisy"), opts);
            tsr_options_free(opts);
            tsr_gradcheck_options o = {.struct_size = sizeof o, .taylor = taylor};
            tsr_gradcheck_report *r = check_ok(c, &in, &o);
            cr_assert_eq(tsr_gradcheck_passed(r), b == 0, "bias %s, taylor %d", bias[b], taylor);
            if (b == 0) assert_all_pass(r, "noisy");
            tsr_gradcheck_report_free(r);
            tsr_close(c);
        }
    }
}

/* ---- Taylor ----------------------------------------------------------------------- */

static const tsr_gradcheck_taylor *taylor_test(const tsr_gradcheck_report *r, tsr_endpoint ep,
                                               const char *in, const char *out) {
    for (int32_t k = 0; k < tsr_gradcheck_n_taylor(r); k++) {
        const tsr_gradcheck_taylor *t = tsr_gradcheck_taylor_at(r, k);
        if (t->endpoint == ep && strcmp(t->input, in) == 0 && strcmp(t->output, out) == 0) return t;
    }
    cr_assert_fail("no Taylor test %s d %s / d %s", tsr_endpoint_name(ep), out, in);
    return NULL;
}

Test(gradcheck_taylor, flags_the_wrong_endpoint_and_pair_only) {
    const char *which[] = {"jvp", "vjp", "jacobian"};
    const tsr_endpoint eps[] = {TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN};
    for (int w = 0; w < 3; w++) {
        tsr_component *c = open_wrong(which[w]);
        point p;
        wrong_point(&p, N);
        tsr_gradcheck_options o = {.struct_size = sizeof o, .taylor = 1};
        tsr_gradcheck_report *r = check_ok(c, p.in, &o);
        cr_assert_not(tsr_gradcheck_passed(r));
        cr_assert_eq(tsr_gradcheck_n_taylor(r), 6, "3 endpoints x (y, s) / x");
        /* 1 base, the noise probe, 8 steps along one direction of x; with
         * the vjp wrong, hvp's check takes 4 applies per element of x. */
        cr_assert_eq(tsr_gradcheck_apply_evals(r),
                     1 + GC_PROBE + TSR_GRADCHECK_DEFAULT_TAYLOR_STEPS + (w == 1 ? 4 * N : 0));
        for (int e = 0; e < 3; e++) {
            const tsr_gradcheck_summary *s = summary(r, eps[e]);
            cr_assert_eq(s->reference, TSR_GRADCHECK_VS_TAYLOR);
            cr_assert_eq(s->checks, 2);
            cr_assert_eq(s->failures, e == w ? 1 : 0, "wrong=%s, endpoint %s", which[w],
                         tsr_endpoint_name(eps[e]));
            const tsr_gradcheck_taylor *ty = taylor_test(r, eps[e], "x", "y");
            const tsr_gradcheck_taylor *ts = taylor_test(r, eps[e], "x", "s");
            cr_assert_eq(ty->passed, e != w);
            cr_assert(ts->passed, "ds/dx is right in every endpoint");
            cr_assert_eq(ty->n_steps, TSR_GRADCHECK_DEFAULT_TAYLOR_STEPS);
            cr_assert_gt(ty->n_counted, 2);
            /* The last counted order: 1 for the wrong derivative, 2 for the right one. */
            double last = NAN;
            for (int32_t q = 0; q + 1 < ty->n_steps; q++)
                if (!isnan(ty->order[q])) last = ty->order[q];
            cr_assert_float_eq(last, e == w ? 1.0 : 2.0, 0.1, "order %g", last);
            cr_assert_float_eq(ty->step[1], ty->step[0] / 2, 1e-20);
        }
        tsr_gradcheck_report_free(r);
        tsr_close(c);
    }
}

Test(gradcheck_taylor, a_linear_map_is_at_rounding_level_and_passes) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    point p;
    noop_point(&p);
    tsr_gradcheck_options o = {.struct_size = sizeof o, .taylor = 1, .taylor_steps = 5};
    tsr_gradcheck_report *r = check_ok(c, p.in, &o);
    cr_assert(tsr_gradcheck_passed(r));
    const tsr_gradcheck_taylor *t = taylor_test(r, TSR_EP_JVP, "x", "y");
    cr_assert_eq(t->n_steps, 5);
    cr_assert_eq(t->n_counted, 0);
    for (int32_t q = 0; q < t->n_steps; q++) cr_assert_leq(t->residual[q], t->floor[q]);
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

/* ---- what is checked ----------------------------------------------------------------- */

Test(gradcheck_select, input_and_output_paths_restrict_the_pairs) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    point p;
    vectoradd_point(&p);
    const char *ins[] = {"s"};
    const char *outs[] = {"result"};
    tsr_gradcheck_options o = {.struct_size = sizeof o, .input_paths = ins, .n_input_paths = 1,
                               .output_paths = outs, .n_output_paths = 1,
                               .endpoints = TSR_CHECK_JACOBIAN};
    tsr_gradcheck_report *r = check_ok(c, p.in, &o);
    cr_assert(tsr_gradcheck_passed(r));
    cr_assert_eq(summary(r, TSR_EP_JACOBIAN)->checks, N, "one column of d result / d s");
    cr_assert_not(summary(r, TSR_EP_JVP)->checked);
    cr_assert_not(summary(r, TSR_EP_VJP)->checked);
    cr_assert_eq(summary(r, TSR_EP_VJP)->calls, 0);
    cr_assert_eq(tsr_gradcheck_apply_evals(r), 1 + GC_PROBE + 2, "base, probe, one difference");
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

Test(gradcheck_select, max_evals_samples_and_the_seed_repeats_the_draw) {
    tsr_component *c = open_wrong("jacobian");
    point p;
    wrong_point(&p, N);
    int64_t first[2][3];
    for (int run = 0; run < 2; run++) {
        tsr_gradcheck_options o = {.struct_size = sizeof o, .max_evals = 3, .seed = 42,
                                   .endpoints = TSR_CHECK_JACOBIAN};
        tsr_gradcheck_report *r = check_ok(c, p.in, &o);
        cr_assert_eq(tsr_gradcheck_apply_evals(r), 1 + GC_PROBE + 2 * 3);
        cr_assert_eq(tsr_gradcheck_n_failures(r), 3, "each sampled column has one wrong element");
        for (int k = 0; k < 3; k++) first[run][k] = tsr_gradcheck_failure_at(r, k)->in_index;
        tsr_gradcheck_report_free(r);
    }
    cr_assert(first[0][0] < first[0][1] && first[0][1] < first[0][2], "sorted, distinct");
    cr_assert_arr_eq(first[0], first[1], sizeof first[0], "same seed, same samples");
    tsr_close(c);
}

Test(gradcheck_select, endpoints_served_by_finite_differences_are_checked_only_when_named) {
    tsr_component *c = open_ok(TEST_PLUGIN("fd_central"), NULL);
    double x[3] = {0.5, -1.0, 2.0}, a = 1.5;
    tsr_array in[2] = {f64_vec(x, 3), f64_scalar(&a)};
    tsr_gradcheck_report *r = check_ok(c, in, NULL);
    cr_assert(tsr_gradcheck_passed(r));
    cr_assert_not(summary(r, TSR_EP_JVP)->checked);
    cr_assert_not(summary(r, TSR_EP_JACOBIAN)->checked);
    cr_assert_eq(tsr_gradcheck_apply_evals(r), 1);
    tsr_gradcheck_report_free(r);
    tsr_gradcheck_options o = {.struct_size = sizeof o, .endpoints = TSR_CHECK_ALL};
    r = check_ok(c, in, &o);
    assert_all_pass(r, "fd_central, all named");
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

Test(gradcheck_select, float16_and_complex_fields_are_skipped_float32_is_checked) {
    tsr_component *c = open_ok(TEST_PLUGIN("mixed_dtypes"), NULL);
    float x[4] = {0.5f, -1.25f, 2.0f, 0.75f};
    double w[6] = {1.0, -0.5, 2.0, 0.25, 1.5, -1.0};
    double z[8] = {0};
    uint16_t h = 0;
    int64_t k = 3;
    int64_t n = 4, wshape[2] = {2, 3};
    tsr_array in[5] = {make_array(x, TSR_FLOAT32, 1, &n), make_array(w, TSR_FLOAT64, 2, wshape),
                       make_array(z, TSR_COMPLEX128, 1, &n), make_array(&h, TSR_FLOAT16, 0, NULL),
                       make_array(&k, TSR_INT64, 0, NULL)};
    for (int taylor = 0; taylor < 2; taylor++) {
        tsr_gradcheck_options o = {.struct_size = sizeof o, .taylor = taylor};
        tsr_gradcheck_report *r = check_ok(c, in, &o);
        assert_all_pass(r, taylor ? "mixed_dtypes (Taylor)" : "mixed_dtypes");
        cr_assert_eq(tsr_gradcheck_n_skipped(r), 3);
        const char *names[] = {"z", "h", "c"};
        const char *why[] = {"complex128", "float16", "complex128"};
        for (int32_t s = 0; s < 3; s++) {
            const tsr_gradcheck_skip *sk = tsr_gradcheck_skipped_at(r, s);
            cr_assert_str_eq(sk->field, names[s]);
            cr_assert_eq(sk->is_input, s < 2);
            assert_contains(sk->reason, why[s]);
        }
        tsr_gradcheck_report_free(r);
    }
    tsr_close(c);
}

Test(gradcheck_select, an_empty_input_has_nothing_to_compare) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    tsr_array in = f64_vec(NULL, 0);
    tsr_gradcheck_report *r = check_ok(c, &in, NULL);
    cr_assert(tsr_gradcheck_passed(r));
    cr_assert_eq(summary(r, TSR_EP_JACOBIAN)->checks, 0);
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

/* ---- progress and JSON ------------------------------------------------------------------ */

typedef struct progress_log {
    int64_t calls, last_done, last_total;
    int monotonic;
} progress_log;

static void on_progress(void *user, int64_t done, int64_t total) {
    progress_log *log = user;
    if (done < log->last_done || done > total) log->monotonic = 0;
    log->calls++;
    log->last_done = done;
    log->last_total = total;
}

Test(gradcheck_report, progress_counts_every_call_up_to_the_total) {
    const char *which[] = {"none", "jacobian"}; /* the second changes the plan midway */
    for (int w = 0; w < 2; w++) {
        tsr_component *c = open_wrong(which[w]);
        point p;
        wrong_point(&p, N);
        progress_log log = {.monotonic = 1};
        tsr_gradcheck_options o = {.struct_size = sizeof o, .progress = on_progress,
                                   .progress_user = &log};
        tsr_gradcheck_report *r = check_ok(c, p.in, &o);
        /* hvp's check adds its call and, against the vjp, two vjp calls
         * that no summary counts */
        const tsr_gradcheck_summary *h = summary(r, TSR_EP_HVP);
        int64_t calls = tsr_gradcheck_apply_evals(r) + summary(r, TSR_EP_JVP)->calls +
                        summary(r, TSR_EP_VJP)->calls + summary(r, TSR_EP_JACOBIAN)->calls +
                        h->calls + (h->reference == TSR_GRADCHECK_VS_VJP_FD ? 2 : 0);
        cr_assert(log.monotonic);
        cr_assert_eq(log.last_done, calls);
        cr_assert_eq(log.last_total, calls, "wrong=%s: total %lld, calls %lld", which[w],
                     (long long)log.last_total, (long long)calls);
        tsr_gradcheck_report_free(r);
        tsr_close(c);
    }
}

Test(gradcheck_report, json_carries_the_summaries_and_failures) {
    tsr_component *c = open_wrong("vjp");
    point p;
    wrong_point(&p, N);
    tsr_gradcheck_report *r = check_ok(c, p.in, NULL);
    char *text = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_gradcheck_report_json(r, &text, &err), 0, "%s", err.message);
    json_t *root = json_loads(text, 0, NULL);
    cr_assert_not_null(root, "not JSON: %s", text);
    cr_assert(json_is_false(json_object_get(root, "passed")));
    json_t *eps = json_object_get(root, "endpoints");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(eps, "vjp"), "failures")), N);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(eps, "vjp"), "reference")),
                     "jacobian");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(eps, "jvp"), "failures")), 0);
    json_t *f = json_array_get(json_object_get(root, "failures"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(f, "endpoint")), "vjp");
    cr_assert_str_eq(json_string_value(json_object_get(f, "input")), "x");
    cr_assert(json_is_null(json_object_get(f, "output")));
    cr_assert(json_is_null(json_object_get(f, "out_index")));
    cr_assert_eq(json_integer_value(json_object_get(f, "in_index")), 0);
    cr_assert(json_is_real(json_object_get(f, "got")));
    json_decref(root);
    tsr_json_free(text);
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

/* ---- refused options and inputs ----------------------------------------------------------- */

static const char *check_fails(tsr_component *c, const tsr_array *in, const tsr_gradcheck_options *o,
                               int code) {
    static tsr_error err;
    tsr_gradcheck_report *r = (tsr_gradcheck_report *)(uintptr_t)1;
    memset(&err, 0, sizeof err);
    int rc = tsr_gradcheck_run(c, in, o, &r, &err);
    assert_code(rc, code, err.message);
    cr_assert_eq(err.code, rc);
    cr_assert_null(r, "a failed check leaves no report");
    cr_assert(err.message[0] != '\0');
    return err.message;
}

Test(gradcheck_errors, unknown_and_non_differentiable_fields) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("heat"), NULL);
    point p;
    heat_point(&p);
    const char *unknown[] = {"conductivty"};
    tsr_gradcheck_options o = {.struct_size = sizeof o, .input_paths = unknown, .n_input_paths = 1};
    const char *msg = check_fails(c, p.in, &o, TSR_E_UNKNOWN_FIELD);
    assert_contains(msg, "component 'heat': gradient check: no input field 'conductivty'");
    assert_contains(msg, "(differentiable inputs: conductivity, source, initial_temperature)");
    const char *fixed[] = {"dt"};
    o.input_paths = fixed;
    msg = check_fails(c, p.in, &o, TSR_E_NOT_DIFFERENTIABLE);
    assert_contains(msg, "input 'dt' is not differentiable");
    const char *twice[] = {"misfit", "misfit"};
    tsr_gradcheck_options o2 = {.struct_size = sizeof o2, .output_paths = twice, .n_output_paths = 2};
    msg = check_fails(c, p.in, &o2, TSR_E_ARGUMENT);
    assert_contains(msg, "output 'misfit' is named twice");
    const char *outs[] = {"temperatur"};
    o2.output_paths = outs;
    o2.n_output_paths = 1;
    msg = check_fails(c, p.in, &o2, TSR_E_UNKNOWN_FIELD);
    assert_contains(msg, "no output field 'temperatur' (differentiable outputs: temperature, misfit)");
    tsr_close(c);
}

Test(gradcheck_errors, bad_numbers_and_struct_size) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    point p;
    noop_point(&p);
    struct {
        tsr_gradcheck_options o;
        const char *needle;
    } cases[] = {
        {{.struct_size = sizeof(tsr_gradcheck_options), .rtol = -1}, "rtol must be a finite number >= 0"},
        {{.struct_size = sizeof(tsr_gradcheck_options), .atol = NAN}, "atol must be"},
        {{.struct_size = sizeof(tsr_gradcheck_options), .eps = INFINITY}, "eps must be"},
        {{.struct_size = sizeof(tsr_gradcheck_options), .max_evals = -5}, "max_evals must be >= 0"},
        {{.struct_size = sizeof(tsr_gradcheck_options), .taylor_steps = 2}, "taylor_steps must be"},
        {{.struct_size = sizeof(tsr_gradcheck_options), .endpoints = 1u << TSR_EP_APPLY},
         "endpoints 0x1 has bits other than TSR_CHECK_*"},
        {{.struct_size = sizeof(tsr_gradcheck_options), .n_input_paths = 2}, "input_paths"},
        {{.struct_size = 0}, "options.struct_size is 0"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        assert_contains(check_fails(c, p.in, &cases[k].o, TSR_E_ARGUMENT), cases[k].needle);
    /* A step too small to move the input in its dtype. */
    double big[1] = {1e20};
    tsr_array in = f64_vec(big, 1);
    tsr_gradcheck_options o = {.struct_size = sizeof o, .eps = 1e-30, .absolute_step = 1};
    assert_contains(check_fails(c, &in, &o, TSR_E_ARGUMENT), "does not move input 'x' element 0");
    tsr_close(c);
}

Test(gradcheck_errors, an_endpoint_the_plugin_lacks) {
    tsr_component *c = open_ok(TEST_PLUGIN("stateful"), NULL);
    double x[2] = {1, 2};
    tsr_array in = f64_vec(x, 2);
    tsr_gradcheck_options o = {.struct_size = sizeof o, .endpoints = TSR_CHECK_JVP};
    assert_contains(check_fails(c, &in, &o, TSR_E_UNSUPPORTED), "has no jvp endpoint to check");
    tsr_close(c);
}

Test(gradcheck_errors, inputs_apply_refuses_and_null_arguments) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    point p;
    vectoradd_point(&p);
    p.in[1].shape[0] = N - 1;
    const char *msg = check_fails(c, p.in, NULL, TSR_E_SHAPE);
    assert_contains(msg, "gradient check, apply at the given inputs: component 'vectoradd'");
    tsr_gradcheck_report *r = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_gradcheck_run(NULL, p.in, NULL, &r, &err), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_gradcheck_run(c, NULL, NULL, &r, &err), TSR_E_ARGUMENT);
    assert_contains(err.message, "inputs is NULL");
    cr_assert_eq(tsr_gradcheck_run(c, p.in, NULL, NULL, &err), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_gradcheck_report_json(NULL, NULL, NULL), TSR_E_ARGUMENT);
    tsr_gradcheck_report_free(NULL);
    cr_assert_null(tsr_gradcheck_summary_of(NULL, TSR_EP_JVP));
    tsr_close(c);
}

/* ---- hvp ------------------------------------------------------------------------ */

/* rosenbrock's native hvp is checked by default, against differences of
 * its vjp: one hvp call, every element of x, a and b compared. */
Test(gradcheck_hvp, a_native_hvp_is_checked_by_default_against_the_vjp) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    point p;
    rosenbrock_point(&p);
    tsr_gradcheck_report *r = check_ok(c, p.in, NULL);
    const tsr_gradcheck_summary *h = summary(r, TSR_EP_HVP);
    cr_assert(h->checked);
    cr_assert_eq(h->reference, TSR_GRADCHECK_VS_VJP_FD);
    cr_assert_eq(h->checks, N + 2);
    cr_assert_eq(h->failures, 0, "max rel %g", h->max_rel_err);
    cr_assert_eq(h->calls, 1);
    cr_assert_lt(h->max_rel_err, 1e-6);
    char *json = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_gradcheck_report_json(r, &json, &err), 0, "%s", err.message);
    assert_contains(json, "\"hvp\":{\"checked\":true,\"reference\":\"vjp_fd\"");
    tsr_json_free(json);
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

/* A wrong hvp is caught against the vjp: each element of x fails, as a
 * dense cotangent (no output, out_index -1); the other endpoints pass. */
Test(gradcheck_hvp, a_wrong_hvp_fails_against_the_vjp) {
    tsr_component *c = open_wrong("hvp");
    point p;
    wrong_point(&p, N);
    tsr_gradcheck_report *r = check_ok(c, p.in, NULL);
    cr_assert_not(tsr_gradcheck_passed(r));
    const tsr_gradcheck_summary *h = summary(r, TSR_EP_HVP);
    cr_assert_eq(h->reference, TSR_GRADCHECK_VS_VJP_FD);
    cr_assert_eq(h->failures, N, "%lld of %lld failed", (long long)h->failures,
                 (long long)h->checks);
    cr_assert_eq(summary(r, TSR_EP_VJP)->failures + summary(r, TSR_EP_JVP)->failures +
                     summary(r, TSR_EP_JACOBIAN)->failures, 0);
    const tsr_gradcheck_failure *f = tsr_gradcheck_failure_at(r, 0);
    cr_assert_eq(f->endpoint, TSR_EP_HVP);
    cr_assert_eq(f->reference, TSR_GRADCHECK_VS_VJP_FD);
    cr_assert_str_eq(f->input, "x");
    cr_assert_null(f->output);
    cr_assert_eq(f->out_index, -1);
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

/* A vjp the check found wrong is no reference: the right hvp is compared
 * with second differences of apply instead, and passes. */
Test(gradcheck_hvp, with_a_wrong_vjp_hvp_is_checked_against_apply) {
    tsr_component *c = open_wrong("vjp");
    point p;
    wrong_point(&p, N);
    tsr_gradcheck_report *r = check_ok(c, p.in, NULL);
    const tsr_gradcheck_summary *h = summary(r, TSR_EP_HVP);
    cr_assert_gt(summary(r, TSR_EP_VJP)->failures, 0);
    cr_assert_eq(h->reference, TSR_GRADCHECK_VS_FD);
    cr_assert_eq(h->checks, N);
    cr_assert_eq(h->failures, 0, "max rel %g", h->max_rel_err);
    tsr_gradcheck_report_free(r);
    tsr_close(c);
}

/* An hvp the host serves is checked only when named: from apply's second
 * differences (rosen_apply) against apply, from the vjp against it. */
Test(gradcheck_hvp, a_served_hvp_is_checked_when_named) {
    const char *plugins[] = {TEST_PLUGIN("rosen_apply"), TEST_PLUGIN("rosen_vjp")};
    tsr_gradcheck_reference want[] = {TSR_GRADCHECK_VS_FD, TSR_GRADCHECK_VS_VJP_FD};
    for (int k = 0; k < 2; k++) {
        tsr_component *c = open_ok(plugins[k], NULL);
        point p;
        rosenbrock_point(&p);
        tsr_gradcheck_report *r = check_ok(c, p.in, NULL);
        cr_assert_not(summary(r, TSR_EP_HVP)->checked, "%s", plugins[k]);
        tsr_gradcheck_report_free(r);
        tsr_gradcheck_options o = {.struct_size = sizeof o, .endpoints = TSR_CHECK_HVP};
        r = check_ok(c, p.in, &o);
        const tsr_gradcheck_summary *h = summary(r, TSR_EP_HVP);
        cr_assert(h->checked);
        cr_assert_eq(h->reference, want[k], "%s", plugins[k]);
        cr_assert_eq(h->failures, 0, "%s: max rel %g", plugins[k], h->max_rel_err);
        cr_assert(tsr_gradcheck_passed(r));
        tsr_gradcheck_report_free(r);
        tsr_close(c);
    }
}

/* A component with no hvp at all: naming it is TSR_E_UNSUPPORTED. */
Test(gradcheck_hvp, naming_an_hvp_the_component_lacks_fails) {
    tsr_component *c = open_ok(TEST_PLUGIN("stateful"), NULL);
    double x[2] = {1, 2};
    tsr_array in = f64_vec(x, 2);
    tsr_gradcheck_options o = {.struct_size = sizeof o, .endpoints = TSR_CHECK_HVP};
    assert_contains(check_fails(c, &in, &o, TSR_E_UNSUPPORTED), "has no hvp endpoint to check");
    tsr_close(c);
}
