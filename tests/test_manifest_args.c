/* SPDX-License-Identifier: MIT */
/*
 * The kinds of argument a manifest maps, each on a small routine of
 * tests/manifests/fixture.c, in every mode: scalars by value and by
 * reference, integer dimensions (int32, int64), size expressions,
 * constants, workspaces, column-major arrays, private copies of inputs the
 * routine overwrites, character constants with hidden lengths, statuses
 * and their messages, and derivative endpoints whose seeds and results are
 * asked for or not. Values are checked against what the test computes.
 */
#include <tessera/gradcheck.h>

#include "worker_util.h"

#define MANIFEST(name) TSR_TEST_MANIFEST_DIR "/" name ".json"

TestSuite(manifest_args, .fini = expect_no_own_segments);

/* ---- scalars, dimensions, statuses -------------------------------------- */

Test(manifest_args, float32_scalar_by_value_and_int64_dimension) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_axpy64"), (tsr_mode)mode);
        float x[5] = {1, 2, 3, 4, 5}, y[5] = {10, 20, 30, 40, 50}, a = 0.5f;
        int64_t n = 5;
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", make_array(x, TSR_FLOAT32, 1, &n));
        bind_ok(call, "y", make_array(y, TSR_FLOAT32, 1, &n));
        bind_ok(call, "a", make_array(&a, TSR_FLOAT32, 0, NULL));
        run_ok(call);
        const float *z = tsr_call_output(call, "z")->data;
        for (int i = 0; i < 5; i++)
            cr_expect_eq(z[i], a * x[i] + y[i], "%s: z[%d] = %g", mode_names[mode], i, z[i]);
        /* the routine's int64 status: 40 + the index of a NaN */
        x[2] = NAN;
        const char *msg = run_fails(call, TSR_E_PLUGIN);
        assert_contains(msg, "component 'fx_axpy64', endpoint 'apply': the plugin failed: "
                             "fx_axpy64 returned 42: x holds a NaN");
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_args, constants_by_value_and_by_reference) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_consts"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        run_ok(call);
        const double *y = tsr_call_output(call, "y")->data;
        cr_expect_eq(y[0], 7.0, "%s", mode_names[mode]);
        cr_expect_eq(y[1], 1234567890123.0);
        cr_expect_eq(y[2], 2.5);
        cr_expect_eq(y[3], 0.25);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_args, a_character_constant_gets_its_hidden_length_after_all_arguments) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_chars"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        run_ok(call);
        const double *y = tsr_call_output(call, "y")->data;
        cr_expect_eq(y[0], 3.0, "%s: hidden length %g, 3 expected", mode_names[mode], y[0]);
        cr_expect_eq(y[1], 'A');
        cr_expect_eq(y[2], 'B');
        cr_expect_eq(y[3], 'C');
        cr_expect_eq(y[4], -1.0, "only the length's characters are read");
        tsr_call_free(call);
        tsr_close(c);
    }
}

static const char *status_run(tsr_call *call, double first) {
    double x[3] = {first, 1, 2};
    bind_ok(call, "x", f64_vec(x, 3));
    return tsr_call_run(call) == 0 ? NULL : tsr_call_errmsg(call);
}

Test(manifest_args, a_returned_status_is_an_error_with_its_message) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_status"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        cr_expect_null(status_run(call, 0), "status 0 is success");
        cr_expect_eq(((const double *)tsr_call_output(call, "y")->data)[2], 2.0);
        const char *msg = status_run(call, 3);
        cr_assert_not_null(msg);
        cr_expect_eq(tsr_call_errcode(call), TSR_E_PLUGIN);
        assert_contains(msg, "fx_status returned 3: three is not allowed");
        assert_contains(status_run(call, -2), "fx_status returned -2: x[0] is negative");
        msg = status_run(call, 5);
        cr_assert_not_null(msg);
        cr_expect(strlen(msg) > 0 && strstr(msg, "fx_status returned 5") &&
                      msg[strlen(msg) - 1] == '5',
                  "a status without a message is reported as is: %s", msg);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_args, an_info_argument_is_an_error_with_its_message) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_info"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        cr_expect_null(status_run(call, 0));
        assert_contains(status_run(call, 4), "fx_info_ reported info = 4: x[0] is positive");
        assert_contains(status_run(call, -1), "fx_info_ reported info = -1");
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* ---- column-major arrays, workspaces, private copies -------------------- */

/* out = a diag(s) on row-major (m, n) arrays, through a column-major
 * routine that also checks its zeroed workspace of m*n elements. */
static void scale_cols_case(tsr_call *call, int64_t m, int64_t n, const char *mode) {
    double *a = malloc((size_t)(m * n + 1) * sizeof *a);
    double *a0 = malloc((size_t)(m * n + 1) * sizeof *a0);
    double *s = malloc((size_t)(n + 1) * sizeof *s);
    cr_assert(a && a0 && s);
    fill_random(a, m * n, (uint64_t)(m * 31 + n));
    fill_random(s, n, 99);
    memcpy(a0, a, (size_t)(m * n) * sizeof *a);
    bind_ok(call, "a", f64_mat(a, m, n));
    bind_ok(call, "s", f64_vec(s, n));
    run_ok(call);
    const tsr_array *out = tsr_call_output(call, "out");
    cr_assert_eq(out->rank, 2);
    cr_assert(out->shape[0] == m && out->shape[1] == n);
    const double *o = out->data;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            cr_expect_eq(o[i * n + j], a[i * n + j] * s[j], "%s (%lld x %lld): out[%lld][%lld]",
                         mode, (long long)m, (long long)n, (long long)i, (long long)j);
    cr_expect_eq(memcmp(a, a0, (size_t)(m * n) * sizeof *a), 0, "the input is unchanged");
    free(a);
    free(a0);
    free(s);
}

Test(manifest_args, column_major_arrays_a_workspace_and_a_size_expression) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_scale_cols"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        /* sizes change between runs: the scratch memory grows and is reused */
        scale_cols_case(call, 3, 4, mode_names[mode]);
        scale_cols_case(call, 7, 2, mode_names[mode]);
        scale_cols_case(call, 1, 1, mode_names[mode]);
        scale_cols_case(call, 0, 3, mode_names[mode]);
        scale_cols_case(call, 5, 6, mode_names[mode]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_args, a_private_copy_keeps_an_input_the_routine_overwrites_unchanged) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_clobber"), (tsr_mode)mode);
        double x[4] = {1, -2, 3, 0.5};
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 4));
        run_ok(call);
        run_ok(call);   /* the second run sees the same input */
        const double *y = tsr_call_output(call, "y")->data;
        for (int i = 0; i < 4; i++) {
            cr_expect_eq(y[i], 2 * x[i], "%s: y[%d]", mode_names[mode], i);
            cr_expect(!isnan(x[i]), "%s: x[%d] was overwritten", mode_names[mode], i);
        }
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_args, declared_readonly_the_routine_is_trusted_not_to_write) {
    /* what the default copy prevents: in-process, a routine wrongly declared
     * "readonly" writes to the host's x */
    tsr_component *c = open_ok(MANIFEST("fx_clobber_nocopy"), NULL);
    double x[2] = {1, 2};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    run_ok(call);
    cr_expect(isnan(x[0]) && isnan(x[1]), "the fixture must overwrite its input");
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- derivative endpoints ------------------------------------------------ */

/* y(i) = w(i) x(i) + x(i+1), s = sum x^2, computed here independently. */
static void model(int n, const double *x, const double *w, double *y, double *s) {
    *s = 0;
    for (int i = 0; i < n; i++) {
        y[i] = w[i] * x[i] + (i + 1 < n ? x[i + 1] : 0);
        *s += x[i] * x[i];
    }
}

#define N 5

typedef struct point {
    double x[N], w[N];
} point;

static point model_point(void) {
    point p;
    fill_random(p.x, N, 1);
    fill_random(p.w, N, 2);
    return p;
}

static void bind_point(tsr_call *call, point *p) {
    bind_ok(call, "x", f64_vec(p->x, N));
    bind_ok(call, "w", f64_vec(p->w, N));
}

Test(manifest_args, model_apply) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_model"), (tsr_mode)mode);
        point p = model_point();
        double y[N], s;
        model(N, p.x, p.w, y, &s);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_point(call, &p);
        run_ok(call);
        /* Equal up to rounding: a compiler that evaluates the reference at
         * compile time may fuse w * x + x' into one fma (clang does). */
        const double *got = tsr_call_output(call, "y")->data;
        for (int i = 0; i < N; i++)
            cr_expect(fabs(got[i] - y[i]) <= 1e-15 * fmax(1.0, fabs(y[i])),
                      "%s: y[%d] = %.17g, want %.17g", mode_names[mode], i, got[i], y[i]);
        double got_s = *(const double *)tsr_call_output(call, "s")->data;
        cr_expect(fabs(got_s - s) <= 1e-15 * fmax(1.0, fabs(s)), "%s: s = %.17g, want %.17g",
                  mode_names[mode], got_s, s);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* jvp with a tangent for x only (w's is zero) and only y asked for (s's
 * result goes to scratch memory). */
Test(manifest_args, jvp_with_some_tangents_and_some_results) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_model"), (tsr_mode)mode);
        point p = model_point();
        double xd[N];
        fill_random(xd, N, 3);
        tsr_call *call = new_call(c, TSR_EP_JVP);
        bind_point(call, &p);
        const char *in[] = {"x"}, *out[] = {"y"};
        wrt_ok(call, in, 1, out, 1);
        seed_ok(call, "x", f64_vec(xd, N));
        run_ok(call);
        cr_assert_eq(tsr_call_n_results(call), 1);
        const double *yd = tsr_call_output(call, "y")->data;
        for (int i = 0; i < N; i++) {
            double want = p.w[i] * xd[i] + (i + 1 < N ? xd[i + 1] : 0);
            cr_expect(fabs(yd[i] - want) < 1e-15, "%s: yd[%d] = %g, want %g", mode_names[mode], i,
                      yd[i], want);
        }
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* vjp with a cotangent for s only (y's is zero), the gradient of w only:
 * d s / d w = 0, and the routine adds to its results, which "zero" clears. */
Test(manifest_args, vjp_with_some_cotangents_and_some_results) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_model"), (tsr_mode)mode);
        point p = model_point();
        double sb = 2.0;
        tsr_call *call = new_call(c, TSR_EP_VJP);
        bind_point(call, &p);
        const char *in[] = {"x", "w"}, *out[] = {"s"};
        wrt_ok(call, in, 2, out, 1);
        seed_ok(call, "s", f64_scalar(&sb));
        for (int rep = 0; rep < 2; rep++) {   /* no accumulation across runs */
            run_ok(call);
            const double *xb = tsr_call_output(call, "x")->data;
            const double *wb = tsr_call_output(call, "w")->data;
            for (int i = 0; i < N; i++) {
                cr_expect(fabs(xb[i] - 2 * sb * p.x[i]) < 1e-15, "%s: xb[%d]", mode_names[mode], i);
                cr_expect_eq(wb[i], 0.0, "%s: wb[%d]", mode_names[mode], i);
            }
        }
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* Blocks written column-major by the routine come back row-major. */
Test(manifest_args, jacobian_blocks_from_a_column_major_routine) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_model"), (tsr_mode)mode);
        point p = model_point();
        tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
        bind_point(call, &p);
        const char *in[] = {"x"}, *out[] = {"y", "s"};
        wrt_ok(call, in, 1, out, 2);
        run_ok(call);
        const tsr_array *jyx = tsr_call_jacobian(call, "y", "x");
        const tsr_array *jsx = tsr_call_jacobian(call, "s", "x");
        cr_assert(jyx && jsx && jyx->rank == 2 && jsx->rank == 1);
        const double *j = jyx->data;
        for (int r = 0; r < N; r++)
            for (int k = 0; k < N; k++) {
                double want = (r == k ? p.w[r] : 0) + (k == r + 1 ? 1 : 0);
                cr_expect_eq(j[r * N + k], want, "%s: dy[%d]/dx[%d]", mode_names[mode], r, k);
            }
        for (int k = 0; k < N; k++)
            cr_expect_eq(((const double *)jsx->data)[k], 2 * p.x[k]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_args, every_derivative_endpoint_agrees_with_finite_differences) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_model"), (tsr_mode)mode);
        point p = model_point();
        tsr_array inputs[2] = {f64_vec(p.x, N), f64_vec(p.w, N)};
        tsr_gradcheck_options o = {.struct_size = sizeof o, .endpoints = TSR_CHECK_ALL, .seed = 5};
        tsr_gradcheck_report *r = NULL;
        tsr_error err = TSR_ERROR_INIT;
        int rc = tsr_gradcheck_run(c, inputs, &o, &r, &err);
        cr_assert_eq(rc, 0, "%s: %s", mode_names[mode], err.message);
        cr_expect(tsr_gradcheck_passed(r), "%s: gradient check failed", mode_names[mode]);
        for (int ep = TSR_EP_JVP; ep <= TSR_EP_JACOBIAN; ep++)
            cr_expect(tsr_gradcheck_summary_of(r, (tsr_endpoint)ep)->checked, "endpoint %d", ep);
        tsr_gradcheck_report_free(r);
        tsr_close(c);
    }
}

/* ---- shared paths: batches, threads -------------------------------------- */

Test(manifest_args, a_batch_runs_the_routine_once_per_item) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_model"), (tsr_mode)mode);
        enum { B = 3 };
        double x[B * N], w[B * N];
        fill_random(x, B * N, 7);
        fill_random(w, B * N, 8);
        int64_t shape[2] = {B, N};
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", make_array(x, TSR_FLOAT64, 2, shape));
        bind_ok(call, "w", make_array(w, TSR_FLOAT64, 2, shape));
        int rc = tsr_call_run_batch(call, B);
        cr_assert_eq(rc, 0, "%s: %s", mode_names[mode], tsr_call_errmsg(call));
        const double *y = tsr_call_output(call, "y")->data, *s = tsr_call_output(call, "s")->data;
        for (int b = 0; b < B; b++) {
            double want[N], ws;
            model(N, x + b * N, w + b * N, want, &ws);
            for (int i = 0; i < N; i++) cr_expect_eq(y[b * N + i], want[i]);
            cr_expect_eq(s[b], ws);
        }
        tsr_call_free(call);
        tsr_close(c);
    }
}

typedef struct thread_job {
    tsr_component *c;
    int seed;
    int failures;
} thread_job;

/* Each thread runs its own vjp calls (which stage zeroed results) on a
 * thread-safe manifest component. */
static void *vjp_worker(void *arg) {
    thread_job *job = arg;
    tsr_call *call = tsr_call_new(job->c, TSR_EP_VJP);
    const char *in[] = {"x", "w"}, *out[] = {"y"};
    if (!call || tsr_call_set_wrt(call, in, 2, out, 1) != 0) {
        job->failures++;
        tsr_call_free(call);
        return NULL;
    }
    for (int it = 0; it < 200; it++) {
        double x[N], w[N], yb[N];
        fill_random(x, N, (uint64_t)(job->seed * 1000 + it));
        fill_random(w, N, (uint64_t)(job->seed * 1000 + it + 500));
        fill_random(yb, N, (uint64_t)it);
        tsr_array ax = f64_vec(x, N), aw = f64_vec(w, N), ay = f64_vec(yb, N);
        if (tsr_call_set_input(call, "x", &ax) || tsr_call_set_input(call, "w", &aw) ||
            tsr_call_set_seed(call, "y", &ay) || tsr_call_run(call)) {
            job->failures++;
            continue;
        }
        const double *wb = tsr_call_output(call, "w")->data;
        for (int i = 0; i < N; i++)
            if (wb[i] != yb[i] * x[i]) job->failures++;
    }
    tsr_call_free(call);
    return NULL;
}

Test(manifest_args, concurrent_calls_of_a_thread_safe_manifest) {
    tsr_component *c = open_ok(MANIFEST("fx_model"), NULL);
    enum { T = 4 };
    pthread_t t[T];
    thread_job jobs[T];
    for (int i = 0; i < T; i++) {
        jobs[i] = (thread_job){.c = c, .seed = i + 1};
        cr_assert_eq(pthread_create(&t[i], NULL, vjp_worker, &jobs[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(t[i], NULL);
        cr_expect_eq(jobs[i].failures, 0, "thread %d: %d wrong results", i, jobs[i].failures);
    }
    tsr_close(c);
}
