/* SPDX-License-Identifier: MIT */
/* Finite-difference fallbacks: a plugin with apply only serves jvp, vjp and
 * jacobian through the host, with the accuracy and the number of apply
 * evaluations that plugin.h documents, in-process and in worker mode. */
#include <dlfcn.h>
#include <stdatomic.h>

#include "test_util.h"

#define N 4

static double xs[N] = {0.3, -1.2, 2.0, 0.7};
static double a_val = 1.5;

/* d y_i / d x_j, d y_i / d a, d s / d x_j, d s / d a of fd_common.h's f. */
static double dy_dx(int i, int j) { return i == j ? a_val * cos(xs[i]) : 0.0; }
static double dy_da(int i) { return sin(xs[i]); }
static double ds_dx(int j) { return 2 * xs[j] * a_val; }
static double ds_da(void) {
    double s = 0;
    for (int i = 0; i < N; i++) s += xs[i] * xs[i];
    return s;
}

static const char *plugin_path(const char *name) {
    static char path[512];
    snprintf(path, sizeof path, TSR_TEST_PLUGIN_DIR "/%s.so", name);
    return path;
}

static tsr_component *open_mode(const char *name, const char *mode) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "mode", mode, &err), 0, "%s", err.message);
    tsr_component *c = open_ok(plugin_path(name), o);
    tsr_options_free(o);
    return c;
}

static void bind_point(tsr_call *call) {
    bind_ok(call, "x", f64_vec(xs, N));
    bind_ok(call, "a", f64_scalar(&a_val));
}

/* The plugin's own count of apply calls (in-process only). */
static long apply_count(const char *name) {
    void *h = dlopen(plugin_path(name), RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h, "plugin %s is not loaded", name);
    atomic_long *count = dlsym(h, "fd_apply_count");
    cr_assert_not_null(count);
    long n = atomic_load(count);
    dlclose(h);
    return n;
}

static void check_jacobian(tsr_component *c, double tol) {
    tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
    bind_point(call);
    const char *in[] = {"x", "a"}, *out[] = {"y", "s"};
    wrt_ok(call, in, 2, out, 2);
    run_ok(call);
    const double *jyx = tsr_call_jacobian(call, "y", "x")->data;
    const double *jya = tsr_call_jacobian(call, "y", "a")->data;
    const double *jsx = tsr_call_jacobian(call, "s", "x")->data;
    const double *jsa = tsr_call_jacobian(call, "s", "a")->data;
    cr_assert_eq(tsr_call_jacobian(call, "y", "x")->rank, 2);
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            cr_assert(fabs(jyx[i * N + j] - dy_dx(i, j)) <= tol, "dy%d/dx%d: %g vs %g", i, j,
                      jyx[i * N + j], dy_dx(i, j));
        cr_assert(fabs(jya[i] - dy_da(i)) <= tol, "dy%d/da: %g vs %g", i, jya[i], dy_da(i));
        cr_assert(fabs(jsx[i] - ds_dx(i)) <= tol * 10, "ds/dx%d: %g vs %g", i, jsx[i], ds_dx(i));
    }
    cr_assert(fabs(*jsa - ds_da()) <= tol * 10, "ds/da: %g vs %g", *jsa, ds_da());
    tsr_call_free(call);
}

static void check_vjp_jvp(tsr_component *c, double tol) {
    double cy[N] = {1.0, -0.5, 0.25, 2.0}, cs = 0.75, tx[N] = {0.2, 0.1, -0.3, 1.0}, ta = -0.4;
    tsr_call *v = new_call(c, TSR_EP_VJP);
    bind_point(v);
    const char *in[] = {"x", "a"}, *out[] = {"y", "s"};
    wrt_ok(v, in, 2, out, 2);
    seed_ok(v, "y", f64_vec(cy, N));
    seed_ok(v, "s", f64_scalar(&cs));
    run_ok(v);
    const double *gx = tsr_call_output(v, "x")->data, *ga = tsr_call_output(v, "a")->data;
    double want_a = cs * ds_da();
    for (int j = 0; j < N; j++) {
        double want = cy[j] * dy_dx(j, j) + cs * ds_dx(j);
        cr_assert(fabs(gx[j] - want) <= tol * 10, "vjp x[%d]: %g vs %g", j, gx[j], want);
        want_a += cy[j] * dy_da(j);
    }
    cr_assert(fabs(*ga - want_a) <= tol * 10, "vjp a: %g vs %g", *ga, want_a);
    tsr_call *t = new_call(c, TSR_EP_JVP);
    bind_point(t);
    wrt_ok(t, in, 2, out, 2);
    seed_ok(t, "x", f64_vec(tx, N));
    seed_ok(t, "a", f64_scalar(&ta));
    run_ok(t);
    const double *dy = tsr_call_output(t, "y")->data, *ds = tsr_call_output(t, "s")->data;
    double want_s = ta * ds_da();
    for (int i = 0; i < N; i++) {
        double want = dy_dx(i, i) * tx[i] + dy_da(i) * ta;
        cr_assert(fabs(dy[i] - want) <= 1e-6, "jvp y[%d]: %g vs %g", i, dy[i], want);
        want_s += ds_dx(i) * tx[i];
    }
    cr_assert(fabs(*ds - want_s) <= 1e-5, "jvp s: %g vs %g", *ds, want_s);
    tsr_call_free(v);
    tsr_call_free(t);
}

/* The host reports the served endpoints as available, not as native. */
Test(fd_fallback, endpoints_served_not_native) {
    tsr_component *c = open_mode("fd_central", "inproc");
    for (int ep = TSR_EP_JVP; ep <= TSR_EP_JACOBIAN; ep++) {
        cr_assert_eq(tsr_component_has_endpoint(c, (tsr_endpoint)ep), 1);
        cr_assert_eq(tsr_component_has_native_endpoint(c, (tsr_endpoint)ep), 0);
    }
    cr_assert_eq(tsr_component_fd_method(c), TSR_FD_CENTRAL);
    tsr_close(c);
}

/* Central differences: O(h^2) accurate, 2n apply calls for a jacobian or
 * a vjp and 2 for a jvp: no base point, since the schema fixes the output
 * shapes. */
Test(fd_fallback, central_accuracy_and_cost) {
    tsr_component *c = open_mode("fd_central", "inproc");
    long before = apply_count("fd_central");
    check_jacobian(c, 1e-8);
    cr_assert_eq(apply_count("fd_central") - before, 2 * (N + 1));
    before = apply_count("fd_central");
    check_vjp_jvp(c, 1e-8);
    cr_assert_eq(apply_count("fd_central") - before, 2 * (N + 1) + 2);
    tsr_close(c);
}

/* Forward differences: O(h) accurate, 1 + n apply calls for a jacobian. */
Test(fd_fallback, forward_accuracy_and_cost) {
    tsr_component *c = open_mode("fd_forward", "inproc");
    long before = apply_count("fd_forward");
    check_jacobian(c, 1e-6);
    cr_assert_eq(apply_count("fd_forward") - before, 1 + (N + 1));
    tsr_close(c);
}

/* SPSA: a stochastic estimate whose cost does not grow with n (2S calls),
 * repeatable for the same inputs. */
Test(fd_fallback, spsa_estimate_and_cost) {
    tsr_component *c = open_mode("fd_spsa", "inproc");
    long before = apply_count("fd_spsa");
    check_jacobian(c, 0.2);
    cr_assert_eq(apply_count("fd_spsa") - before, 2 * 4000);
    tsr_call *j1 = new_call(c, TSR_EP_JACOBIAN), *j2 = new_call(c, TSR_EP_JACOBIAN);
    const char *in[] = {"x"}, *out[] = {"y"};
    bind_point(j1);
    bind_point(j2);
    wrt_ok(j1, in, 1, out, 1);
    wrt_ok(j2, in, 1, out, 1);
    run_ok(j1);
    run_ok(j2);
    cr_assert_arr_eq(tsr_call_result(j1, 0)->data, tsr_call_result(j2, 0)->data,
                     N * N * sizeof(double), "SPSA is seeded: two runs agree");
    tsr_call_free(j1);
    tsr_call_free(j2);
    tsr_close(c);
}

/* In worker mode the host computes the differences, calling apply in the
 * worker; the numbers agree with in-process to the last bit. */
Test(fd_fallback, worker_mode_matches_inproc) {
    tsr_component *w = open_mode("fd_central", "worker");
    tsr_component *l = open_mode("fd_central", "inproc");
    cr_assert_eq(tsr_component_has_endpoint(w, TSR_EP_VJP), 1);
    cr_assert_eq(tsr_component_has_native_endpoint(w, TSR_EP_VJP), 0);
    check_jacobian(w, 1e-8);
    tsr_call *cw = new_call(w, TSR_EP_JACOBIAN), *cl = new_call(l, TSR_EP_JACOBIAN);
    const char *in[] = {"x", "a"}, *out[] = {"y"};
    bind_point(cw);
    bind_point(cl);
    wrt_ok(cw, in, 2, out, 1);
    wrt_ok(cl, in, 2, out, 1);
    run_ok(cw);
    run_ok(cl);
    cr_assert_arr_eq(tsr_call_result(cw, 0)->data, tsr_call_result(cl, 0)->data, N * N * sizeof(double));
    tsr_call_free(cw);
    tsr_call_free(cl);
    tsr_close(w);
    tsr_close(l);
}

/* A plugin without fd_method keeps its missing derivatives missing. */
Test(fd_fallback, absent_without_method) {
    tsr_component *c = open_mode("fd_central", "inproc");
    /* crash.c has apply only and no fd_method; with no fault configured it
     * behaves. */
    tsr_component *plain = open_ok(TEST_PLUGIN("crash"), NULL);
    cr_assert_eq(tsr_component_has_endpoint(plain, TSR_EP_JVP), 0);
    tsr_call *call = new_call(plain, TSR_EP_JVP);
    run_fails(call, TSR_E_UNSUPPORTED);
    tsr_call_free(call);
    tsr_close(plain);
    tsr_close(c);
}
