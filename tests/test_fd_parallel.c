/* SPDX-License-Identifier: MIT */
/* Finite differences on a pool of workers: the columns of a vjp or a
 * jacobian split across the pool's lanes, each its own apply call on its
 * own thread and worker, give results bit-identical to one worker's; one
 * failing evaluation fails the call with the sequential message and stops
 * the other lanes, leaving no thread behind; the options fd_method,
 * fd_step and fd_endpoints ask the host for these differences. */
#include <stdio.h>

#include "test_util.h"

#define N 7

static double xs[N] = {0.3, -1.2, 2.0, 0.7, 5.5, -0.01, 1.0};
static double a_val = 1.5;

static tsr_component *open_pool(const char *path, const char *mode, const char *workers,
                                const char *k2, const char *v2) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "mode", mode, &err), 0, "%s", err.message);
    if (workers) cr_assert_eq(tsr_options_set(o, "workers", workers, &err), 0, "%s", err.message);
    if (k2) cr_assert_eq(tsr_options_set(o, k2, v2, &err), 0, "%s", err.message);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* jacobian of fd_central at xs, wrt both inputs, both outputs; n of x's
 * elements used. The caller frees the call. */
static tsr_call *jacobian_at(tsr_component *c, int64_t n) {
    tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
    bind_ok(call, "x", f64_vec(xs, n));
    bind_ok(call, "a", f64_scalar(&a_val));
    const char *in[] = {"x", "a"}, *out[] = {"y", "s"};
    wrt_ok(call, in, 2, out, 2);
    run_ok(call);
    return call;
}

static tsr_call *vjp_at(tsr_component *c, int64_t n, const char *const *in, int32_t n_in) {
    static double cy[N] = {1.0, -0.5, 0.25, 2.0, 3.0, -1.0, 0.125}, cs = 0.75;
    tsr_call *call = new_call(c, TSR_EP_VJP);
    bind_ok(call, "x", f64_vec(xs, n));
    bind_ok(call, "a", f64_scalar(&a_val));
    const char *out[] = {"y", "s"};
    wrt_ok(call, in, n_in, out, 2);
    seed_ok(call, "y", f64_vec(cy, n));
    seed_ok(call, "s", f64_scalar(&cs));
    run_ok(call);
    return call;
}

static void same_results(tsr_call *a, tsr_call *b, const char *what) {
    cr_assert_eq(tsr_call_n_results(a), tsr_call_n_results(b));
    for (int32_t k = 0; k < tsr_call_n_results(a); k++) {
        const tsr_array *x = tsr_call_result(a, k), *y = tsr_call_result(b, k);
        size_t bytes = (size_t)tsr_array_count(x) * sizeof(double);
        cr_assert_eq(tsr_array_count(x), tsr_array_count(y), "%s: result %d", what, k);
        cr_assert_arr_eq(x->data, y->data, bytes, "%s: result %d differs in its bits", what, k);
    }
}

static void pool_matches_one_worker(const char *workers) {
    tsr_component *one = open_pool(TEST_PLUGIN("fd_central"), "worker", "1", NULL, NULL);
    tsr_component *pool = open_pool(TEST_PLUGIN("fd_central"), "worker", workers, NULL, NULL);
    tsr_component *here = open_pool(TEST_PLUGIN("fd_central"), "inproc", NULL, NULL, NULL);
    const char *both[] = {"x", "a"};
    for (int rep = 0; rep < 2; rep++) {   /* the second run reuses the lanes */
        tsr_call *j1 = jacobian_at(one, N), *jp = jacobian_at(pool, N), *jh = jacobian_at(here, N);
        same_results(j1, jp, "jacobian, pool vs one worker");
        same_results(jh, jp, "jacobian, pool vs in-process");
        tsr_call *v1 = vjp_at(one, N, both, 2), *vp = vjp_at(pool, N, both, 2);
        same_results(v1, vp, "vjp, pool vs one worker");
        tsr_call_free(j1);
        tsr_call_free(jp);
        tsr_call_free(jh);
        tsr_call_free(v1);
        tsr_call_free(vp);
    }
    tsr_close(one);
    tsr_close(pool);
    tsr_close(here);
}

Test(fd_parallel, two_workers_bit_identical_to_one) { pool_matches_one_worker("2"); }

Test(fd_parallel, three_workers_bit_identical_to_one) { pool_matches_one_worker("3"); }

/* Two columns (one x element and a) on four workers, and one column (a
 * alone): lanes are capped by the columns; the results stay exact. */
Test(fd_parallel, more_workers_than_columns) {
    tsr_component *one = open_pool(TEST_PLUGIN("fd_central"), "worker", "1", NULL, NULL);
    tsr_component *pool = open_pool(TEST_PLUGIN("fd_central"), "worker", "4", NULL, NULL);
    tsr_call *j1 = jacobian_at(one, 1), *jp = jacobian_at(pool, 1);
    same_results(j1, jp, "jacobian of 2 columns on 4 workers");
    const char *only_a[] = {"a"};
    tsr_call *v1 = vjp_at(one, 1, only_a, 1), *vp = vjp_at(pool, 1, only_a, 1);
    same_results(v1, vp, "vjp of 1 column on 4 workers");
    tsr_call_free(j1);
    tsr_call_free(jp);
    tsr_call_free(v1);
    tsr_call_free(vp);
    tsr_close(one);
    tsr_close(pool);
}

static int thread_count(void) {
    FILE *f = fopen("/proc/self/status", "r");
    cr_assert_not_null(f);
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    fclose(f);
    return n;
}

/* vjp of sqrt at x = {4, 1, 9, 0, 16, 25}: the step below 0 at element 3
 * (the second lane's on two workers) fails. */
static const char *domain_failure(tsr_component *c, char *msg, size_t cap) {
    static double x[6] = {4, 1, 9, 0, 16, 25}, cy[6] = {1, 1, 1, 1, 1, 1};
    tsr_call *call = new_call(c, TSR_EP_VJP);
    bind_ok(call, "x", f64_vec(x, 6));
    const char *in[] = {"x"}, *out[] = {"y"};
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "y", f64_vec(cy, 6));
    snprintf(msg, cap, "%s", run_fails(call, TSR_E_PLUGIN));
    tsr_call_free(call);
    return msg;
}

/* One evaluation fails: the call fails with the message one worker gives
 * (naming apply, the element and the cause), the other lane stops, every
 * lane thread is joined, and the pool serves the next call. */
Test(fd_parallel, failing_evaluation_fails_the_call_like_sequential) {
    tsr_component *one = open_pool(TEST_PLUGIN("fd_domain"), "worker", "1", NULL, NULL);
    tsr_component *pool = open_pool(TEST_PLUGIN("fd_domain"), "worker", "2", NULL, NULL);
    char m1[TSR_ERRMSG_MAX], mp[TSR_ERRMSG_MAX];
    domain_failure(one, m1, sizeof m1);
    int threads = thread_count();
    domain_failure(pool, mp, sizeof mp);
    cr_assert_str_eq(mp, m1);
    assert_contains(mp, "apply failed during finite differences");
    assert_contains(mp, "outside the domain");
    cr_assert_eq(thread_count(), threads, "no lane thread is left after the failure");
    double x[2] = {4, 9}, cy[2] = {1, 1};
    tsr_call *call = new_call(pool, TSR_EP_VJP);
    bind_ok(call, "x", f64_vec(x, 2));
    const char *in[] = {"x"}, *out[] = {"y"};
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "y", f64_vec(cy, 2));
    run_ok(call);
    const double *g = tsr_call_result(call, 0)->data;
    cr_assert(fabs(g[0] - 0.25) < 1e-8 && fabs(g[1] - 1.0 / 6) < 1e-8, "%g %g", g[0], g[1]);
    tsr_call_free(call);
    tsr_close(one);
    tsr_close(pool);
}

/* fd_endpoints=all with fd_method=central: rosenbrock's own vjp is left
 * unused, the host's differences serve it (close to the exact one), and
 * fd_step sets their step. */
Test(fd_parallel, fd_endpoints_all_replaces_native_vjp) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "fd_method", "central", &err), 0, "%s", err.message);
    cr_assert_eq(tsr_options_set(o, "fd_endpoints", "all", &err), 0, "%s", err.message);
    cr_assert_eq(tsr_options_set(o, "fd_step", "1e-6", &err), 0, "%s", err.message);
    tsr_component *fd = open_ok(BUNDLED_PLUGIN("rosenbrock"), o);
    tsr_options_free(o);
    tsr_component *exact = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    cr_assert_eq(tsr_component_has_native_endpoint(fd, TSR_EP_VJP), 0);
    cr_assert_eq(tsr_component_has_endpoint(fd, TSR_EP_VJP), 1);
    cr_assert_eq(tsr_component_fd_method(fd), TSR_FD_CENTRAL);
    double x[3] = {0.5, -0.3, 1.2}, a = 1, b = 100, cv = 1;
    tsr_call *calls[2];
    tsr_component *cs[2] = {fd, exact};
    for (int t = 0; t < 2; t++) {
        calls[t] = new_call(cs[t], TSR_EP_VJP);
        bind_ok(calls[t], "x", f64_vec(x, 3));
        bind_ok(calls[t], "a", f64_scalar(&a));
        bind_ok(calls[t], "b", f64_scalar(&b));
        const char *in[] = {"x"}, *out[] = {"value"};
        wrt_ok(calls[t], in, 1, out, 1);
        seed_ok(calls[t], "value", f64_scalar(&cv));
        run_ok(calls[t]);
    }
    const double *g = tsr_call_result(calls[0], 0)->data, *e = tsr_call_result(calls[1], 0)->data;
    for (int i = 0; i < 3; i++)
        cr_assert(fabs(g[i] - e[i]) <= 1e-6 * fmax(fabs(e[i]), 1), "x[%d]: %g vs %g", i, g[i], e[i]);
    tsr_call_free(calls[0]);
    tsr_call_free(calls[1]);
    tsr_close(fd);
    tsr_close(exact);
}

/* fd_endpoints=all without any fd_method is refused at open, naming both
 * options; bad values are refused by tsr_options_set. */
Test(fd_parallel, fd_options_refused) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "fd_endpoints", "all", &err), 0, "%s", err.message);
    tsr_error e = open_fails(BUNDLED_PLUGIN("rosenbrock"), o);
    assert_code(e.code, TSR_E_ARGUMENT, e.message);
    assert_contains(e.message, "fd_endpoints=all");
    assert_contains(e.message, "fd_method");
    assert_code(tsr_options_set(o, "fd_method", "spsa", &err), TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "fd_method");
    assert_code(tsr_options_set(o, "fd_step", "1", &err), TSR_E_ARGUMENT, err.message);
    assert_code(tsr_options_set(o, "fd_step", "-1e-3", &err), TSR_E_ARGUMENT, err.message);
    assert_code(tsr_options_set(o, "fd_step", "1e-3x", &err), TSR_E_ARGUMENT, err.message);
    assert_code(tsr_options_set(o, "fd_endpoints", "some", &err), TSR_E_ARGUMENT, err.message);
    assert_code(tsr_options_set(o, "fd_step_rule", "scaled", &err), TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "relative or absolute");
    tsr_options_free(o);
}

/* fd_step_rule=absolute: h = fd_step at every element, whatever its size
 * (x = 5.5 here), the very difference (f(x + h) - f(x - h)) / 2h; the
 * default relative rule steps 5.5 times further there. */
Test(fd_parallel, fd_step_rule_absolute_takes_the_step_as_given) {
    tsr_component *abs_c = NULL, *rel_c = NULL;
    for (int t = 0; t < 2; t++) {
        tsr_options *o = tsr_options_new();
        tsr_error err = TSR_ERROR_INIT;
        cr_assert_eq(tsr_options_set(o, "mode", "worker", &err), 0, "%s", err.message);
        cr_assert_eq(tsr_options_set(o, "workers", "2", &err), 0, "%s", err.message);
        cr_assert_eq(tsr_options_set(o, "fd_step", "1e-3", &err), 0, "%s", err.message);
        if (t == 0)
            cr_assert_eq(tsr_options_set(o, "fd_step_rule", "absolute", &err), 0, "%s", err.message);
        *(t == 0 ? &abs_c : &rel_c) = open_ok(TEST_PLUGIN("fd_central"), o);
        tsr_options_free(o);
    }
    tsr_call *ja = jacobian_at(abs_c, N), *jr = jacobian_at(rel_c, N);
    const double *ya = tsr_call_jacobian(ja, "y", "x")->data, *yr = tsr_call_jacobian(jr, "y", "x")->data;
    double h = 1e-3, x = xs[4];
    double want = (a_val * sin(x + h) - a_val * sin(x - h)) / (2 * h);
    cr_assert_eq(ya[4 * N + 4], want, "absolute: %.17g vs %.17g", ya[4 * N + 4], want);
    double hr = 1e-3 * x, want_r = (a_val * sin(x + hr) - a_val * sin(x - hr)) / (2 * hr);
    cr_assert_eq(yr[4 * N + 4], want_r, "relative: %.17g vs %.17g", yr[4 * N + 4], want_r);
    cr_assert_neq(ya[4 * N + 4], yr[4 * N + 4]);
    tsr_call_free(ja);
    tsr_call_free(jr);
    tsr_close(abs_c);
    tsr_close(rel_c);
}
