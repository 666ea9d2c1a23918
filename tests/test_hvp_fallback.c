/* SPDX-License-Identifier: MIT */
/* hvp for components without a native one (core/gradcheck/hvp_fallback.c):
 * central differences of the vjp (rosen_vjp, and rosen_jacobian whose vjp
 * comes from its jacobian) and second differences of apply (rosen_apply,
 * fd_central) agree with rosenbrock's exact hvp; a component with neither
 * has no hvp; hvp_fallback=off turns the fallbacks off.
 *
 * Tolerances, relative to the largest entry of the exact product (at
 * least 1): 1e-7 for differences of the vjp (step cbrt(eps); truncation
 * ~h^2 |d3 vjp| and rounding ~eps |vjp| / h; below 1e-9 measured here)
 * and 1e-6 for second differences of apply (step eps^(1/4); ~1e-8
 * measured).
 */
#include <dlfcn.h>
#include <stdatomic.h>

#include "worker_util.h"

#define ROSEN_VJP TEST_PLUGIN("rosen_vjp")
#define ROSEN_JAC TEST_PLUGIN("rosen_jacobian")
#define ROSEN_APPLY TEST_PLUGIN("rosen_apply")

static void tangent_ok(tsr_call *call, const char *name, tsr_array t) {
    int rc = tsr_call_set_tangent(call, name, &t);
    cr_assert_eq(rc, 0, "tangent %s: %d %s", name, rc, tsr_call_errmsg(call));
}

/* hvp of rosenbrock over x, a, b at (x, a, b) along (tx, ta, tb), weight
 * w; out gets n + 2 values (x's, then a's, b's). */
static void rosen_hvp(tsr_component *c, const double *x, int64_t n, double a, double b,
                      const double *t, double w, double *out) {
    tsr_call *call = new_call(c, TSR_EP_HVP);
    bind_ok(call, "x", f64_vec((double *)(uintptr_t)x, n));
    bind_ok(call, "a", f64_scalar(&a));
    bind_ok(call, "b", f64_scalar(&b));
    const char *in[] = {"x", "a", "b"}, *outs[] = {"value"};
    wrt_ok(call, in, 3, outs, 1);
    seed_ok(call, "value", f64_scalar(&w));
    double ta = t[n], tb = t[n + 1];
    tangent_ok(call, "x", f64_vec((double *)(uintptr_t)t, n));
    tangent_ok(call, "a", f64_scalar(&ta));
    tangent_ok(call, "b", f64_scalar(&tb));
    run_ok(call);
    memcpy(out, tsr_call_output(call, "x")->data, (size_t)n * sizeof *out);
    out[n] = *(const double *)tsr_call_output(call, "a")->data;
    out[n + 1] = *(const double *)tsr_call_output(call, "b")->data;
    tsr_call_free(call);
}

/* The fallback of c agrees with the exact hvp within tol (relative to the
 * largest exact entry) at three points and two weights. */
static void agrees_with_exact(tsr_component *c, double tol) {
    tsr_component *exact = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    int64_t sizes[] = {2, 4, 6};
    double ab[][2] = {{1, 100}, {0.5, 10}, {1, 300}};
    for (int s = 0; s < 3; s++) {
        int64_t n = sizes[s];
        double x[8], t[8], got[8], want[8];
        fill_random(x, n, 7 + (uint64_t)s);
        fill_random(t, n + 2, 70 + (uint64_t)s);
        for (int k = 0; k < 2; k++) {
            double w = k ? -0.75 : 1.0;
            rosen_hvp(exact, x, n, ab[s][0], ab[s][1], t, w, want);
            rosen_hvp(c, x, n, ab[s][0], ab[s][1], t, w, got);
            double scale = 1;
            for (int64_t i = 0; i < n + 2; i++) scale = fmax(scale, fabs(want[i]));
            for (int64_t i = 0; i < n + 2; i++)
                cr_assert(fabs(got[i] - want[i]) <= tol * scale,
                          "%s, n %lld, entry %lld: %.12g, exact %.12g (scale %g)",
                          tsr_component_name(c), (long long)n, (long long)i, got[i], want[i],
                          scale);
        }
    }
    tsr_close(exact);
}

/* Where hvp comes from: native, the vjp (also one from the jacobian),
 * apply; has_endpoint says it can be called, has_native_endpoint not. */
Test(hvp_fallback, sources_follow_the_endpoints_a_component_has) {
    struct {
        const char *path;
        tsr_hvp_source want;
    } cases[] = {{BUNDLED_PLUGIN("rosenbrock"), TSR_HVP_NATIVE}, {ROSEN_VJP, TSR_HVP_FD_VJP},
                 {ROSEN_JAC, TSR_HVP_FD_VJP},  {ROSEN_APPLY, TSR_HVP_FD_APPLY},
                 {BUNDLED_PLUGIN("heat"), TSR_HVP_FD_VJP},
                 {BUNDLED_PLUGIN("compliance"), TSR_HVP_NATIVE},
                 {TEST_PLUGIN("crash"), TSR_HVP_NONE}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tsr_component *c = open_ok(cases[k].path, NULL);
        cr_assert_eq(tsr_component_hvp_source(c), cases[k].want, "%s", cases[k].path);
        cr_assert_eq(tsr_component_has_endpoint(c, TSR_EP_HVP), cases[k].want != TSR_HVP_NONE);
        cr_assert_eq(tsr_component_has_native_endpoint(c, TSR_EP_HVP),
                     cases[k].want == TSR_HVP_NATIVE);
        tsr_close(c);
    }
    cr_assert_eq(tsr_component_hvp_source(NULL), TSR_HVP_NONE);
}

/* Differences of the vjp agree with the exact hvp to 1e-7, in-process and
 * in worker mode; each product costs two vjp calls. */
Test(hvp_fallback, differences_of_the_vjp_agree_with_the_exact_hvp) {
    tsr_component *c = open_ok(ROSEN_VJP, NULL);
    agrees_with_exact(c, 1e-7);
    tsr_stats before = {.struct_size = sizeof before}, after = {.struct_size = sizeof after};
    cr_assert_eq(tsr_component_stats(c, &before), 0);
    double x[3] = {0.5, -1, 1.5}, t[5] = {1, 0, 0, 0, 0}, out[5];
    rosen_hvp(c, x, 3, 1, 100, t, 1, out);
    cr_assert_eq(tsr_component_stats(c, &after), 0);
    cr_assert_eq(after.calls - before.calls, 2, "%llu plugin calls for one hvp",
                 (unsigned long long)(after.calls - before.calls));
    cr_assert_eq(after.endpoint_calls[TSR_EP_HVP] - before.endpoint_calls[TSR_EP_HVP], 1);
    tsr_close(c);
    c = open_mode(ROSEN_VJP, TSR_MODE_WORKER);
    agrees_with_exact(c, 1e-7);
    tsr_close(c);
}

/* A component with a jacobian and no vjp: the vjp the fallback differences
 * is the cotangent times the jacobian. */
Test(hvp_fallback, differences_of_a_vjp_from_the_jacobian_agree_with_the_exact_hvp) {
    tsr_component *c = open_ok(ROSEN_JAC, NULL);
    agrees_with_exact(c, 1e-7);
    tsr_close(c);
}

/* Second differences of apply agree with the exact hvp to 1e-6, in-process
 * and in worker mode. */
Test(hvp_fallback, second_differences_of_apply_agree_with_the_exact_hvp) {
    tsr_component *c = open_ok(ROSEN_APPLY, NULL);
    agrees_with_exact(c, 1e-6);
    tsr_close(c);
    c = open_mode(ROSEN_APPLY, TSR_MODE_WORKER);
    agrees_with_exact(c, 1e-6);
    tsr_close(c);
}

/* fd_central (y = a sin x, s = a sum x^2, apply only): the product over x
 * and a with both outputs weighted matches its analytic Hessian, and
 * costs 1 + 4n apply calls for n = 5 differentiated elements. */
Test(hvp_fallback, second_differences_cost_one_plus_four_n_apply_calls) {
    tsr_component *c = open_ok(TEST_PLUGIN("fd_central"), NULL);
    void *h = dlopen(TEST_PLUGIN("fd_central"), RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h);
    atomic_long *count = dlsym(h, "fd_apply_count");
    cr_assert_not_null(count);
    double x[4] = {0.3, -1.2, 2.0, 0.7}, a = 1.5, tx[4] = {1, -0.5, 0.25, 2}, ta = -1;
    double wy[4] = {1, 2, -1, 0.5}, ws = 0.75;
    tsr_call *call = new_call(c, TSR_EP_HVP);
    bind_ok(call, "x", f64_vec(x, 4));
    bind_ok(call, "a", f64_scalar(&a));
    const char *in[] = {"x", "a"}, *out[] = {"y", "s"};
    wrt_ok(call, in, 2, out, 2);
    seed_ok(call, "y", f64_vec(wy, 4));
    seed_ok(call, "s", f64_scalar(&ws));
    tangent_ok(call, "x", f64_vec(tx, 4));
    tangent_ok(call, "a", f64_scalar(&ta));
    long before = atomic_load(count);
    run_ok(call);
    cr_assert_eq(atomic_load(count) - before, 1 + 4 * 5);
    const double *hx = tsr_call_output(call, "x")->data;
    double ha = *(const double *)tsr_call_output(call, "a")->data, want_a = 0;
    for (int i = 0; i < 4; i++) {
        double want = wy[i] * (-a * sin(x[i]) * tx[i] + cos(x[i]) * ta) +
                      ws * (2 * a * tx[i] + 2 * x[i] * ta);
        cr_assert_float_eq(hx[i], want, 1e-4 * fmax(1, fabs(want)), "x[%d]: %g, want %g", i,
                           hx[i], want);
        want_a += wy[i] * cos(x[i]) * tx[i] + ws * 2 * x[i] * tx[i];
    }
    cr_assert_float_eq(ha, want_a, 1e-4 * fmax(1, fabs(want_a)), "a: %g, want %g", ha, want_a);
    tsr_call_free(call);
    dlclose(h);
    tsr_close(c);
}

/* A tangent of zeros: the product is zero and nothing is evaluated. */
Test(hvp_fallback, zero_tangent_costs_nothing) {
    tsr_component *c = open_ok(ROSEN_VJP, NULL);
    double x[3] = {0.5, -1, 1.5}, t[5] = {0}, out[5];
    rosen_hvp(c, x, 3, 1, 100, t, 1, out);
    tsr_stats st = {.struct_size = sizeof st};
    cr_assert_eq(tsr_component_stats(c, &st), 0);
    cr_assert_eq(st.calls, 0);
    for (int i = 0; i < 5; i++) cr_assert_eq(out[i], 0.0);
    tsr_close(c);
}

/* Without a vjp, a jacobian or an fd_method there is no hvp: the run fails
 * with TSR_E_UNSUPPORTED naming the component, the endpoint and what it
 * would need. */
Test(hvp_fallback, component_with_neither_has_no_hvp) {
    tsr_component *c = open_ok(TEST_PLUGIN("crash"), NULL);
    tsr_call *call = new_call(c, TSR_EP_HVP);
    const char *msg = run_fails(call, TSR_E_UNSUPPORTED);
    assert_contains(msg, "component 'crash'");
    assert_contains(msg, "endpoint 'hvp'");
    assert_contains(msg, "needs a native hvp, or a vjp");
    tsr_call_free(call);
    tsr_close(c);
}

/* hvp_fallback=off: only a native hvp is served, in every mode; the
 * message says why. A value other than auto or off is refused. */
Test(hvp_fallback, option_off_serves_only_native_hvp) {
    for (int m = 0; m < 3; m++) {
        tsr_options *o = mode_options((tsr_mode)m);
        set_option(o, "hvp_fallback", "off");
        tsr_component *c = open_ok(ROSEN_VJP, o);
        tsr_component *native = open_ok(BUNDLED_PLUGIN("rosenbrock"), o);
        tsr_options_free(o);
        cr_assert_eq(tsr_component_hvp_source(c), TSR_HVP_NONE);
        cr_assert_eq(tsr_component_has_endpoint(c, TSR_EP_HVP), 0);
        cr_assert_eq(tsr_component_hvp_source(native), TSR_HVP_NATIVE);
        double x[3] = {1, 2, 3}, a = 1, b = 100, w = 1;
        tsr_call *call = new_call(c, TSR_EP_HVP);
        bind_ok(call, "x", f64_vec(x, 3));
        bind_ok(call, "a", f64_scalar(&a));
        bind_ok(call, "b", f64_scalar(&b));
        const char *in[] = {"x"}, *out[] = {"value"};
        wrt_ok(call, in, 1, out, 1);
        seed_ok(call, "value", f64_scalar(&w));
        tangent_ok(call, "x", f64_vec(x, 3));
        const char *msg = run_fails(call, TSR_E_UNSUPPORTED);
        assert_contains(msg, "component 'rosen_vjp'");
        assert_contains(msg, "hvp_fallback=off");
        tsr_call_free(call);
        tsr_close(c);
        tsr_close(native);
    }
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "hvp_fallback", "sometimes", &err), TSR_E_ARGUMENT);
    assert_contains(err.message, "auto or off");
    tsr_options_free(o);
}

/* A failure of an evaluation ends the fallback with its code and cause; a
 * cancel asked before the run stops it before any evaluation. */
Test(hvp_fallback, evaluation_failures_and_cancels_end_it) {
    tsr_component *c = open_ok(ROSEN_VJP, NULL);
    double x[1] = {1}, a = 1, b = 100, w = 1, t[1] = {1};
    tsr_call *call = new_call(c, TSR_EP_HVP);
    bind_ok(call, "x", f64_vec(x, 1));
    bind_ok(call, "a", f64_scalar(&a));
    bind_ok(call, "b", f64_scalar(&b));
    const char *in[] = {"x"}, *out[] = {"value"};
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "value", f64_scalar(&w));
    tangent_ok(call, "x", f64_vec(t, 1));
    const char *msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "endpoint 'hvp': vjp failed during finite differences of hvp");
    assert_contains(msg, "at least 2 coordinates");
    tsr_call_free(call);

    double x3[3] = {1, 2, 3}, t3[3] = {1, 1, 1};
    call = new_call(c, TSR_EP_HVP);
    bind_ok(call, "x", f64_vec(x3, 3));
    bind_ok(call, "a", f64_scalar(&a));
    bind_ok(call, "b", f64_scalar(&b));
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "value", f64_scalar(&w));
    tangent_ok(call, "x", f64_vec(t3, 3));
    tsr_stats st0 = {.struct_size = sizeof st0}, st = {.struct_size = sizeof st};
    cr_assert_eq(tsr_component_stats(c, &st0), 0);
    cr_assert_eq(tsr_call_cancel(call), 0);
    run_fails(call, TSR_E_CANCELLED);
    cr_assert_eq(tsr_component_stats(c, &st), 0);
    cr_assert_eq(st.calls, st0.calls, "%llu evaluations after a cancel",
                 (unsigned long long)(st.calls - st0.calls));
    run_ok(call);   /* the cancel was consumed */
    tsr_call_free(call);
    tsr_close(c);
}

/* heat's misfit (a native vjp, no hvp): the fallback's u . H v matches a
 * second difference of apply along u and v, and v . H u (the Hessian's
 * symmetry, which differencing the vjp does not impose). */
static double heat_uhv(tsr_component *c, double *k, double *src, double *t0, double *obs,
                       double *dt, int64_t *steps, double *u, double *v) {
    tsr_call *call = new_call(c, TSR_EP_HVP);
    bind_ok(call, "conductivity", f64_vec(k, 4));
    bind_ok(call, "source", f64_vec(src, 4));
    bind_ok(call, "initial_temperature", f64_vec(t0, 4));
    bind_ok(call, "observations", f64_vec(obs, 4));
    bind_ok(call, "dt", f64_scalar(dt));
    tsr_array st = make_array(steps, TSR_INT64, 0, NULL);
    bind_ok(call, "steps", st);
    const char *in[] = {"conductivity"}, *out[] = {"misfit"};
    wrt_ok(call, in, 1, out, 1);
    double w = 1;
    seed_ok(call, "misfit", f64_scalar(&w));
    tangent_ok(call, "conductivity", f64_vec(v, 4));
    run_ok(call);
    const double *hv = tsr_call_output(call, "conductivity")->data;
    double s = 0;
    for (int i = 0; i < 4; i++) s += u[i] * hv[i];
    tsr_call_free(call);
    return s;
}

static double heat_misfit(tsr_component *c, double *k, double *src, double *t0, double *obs,
                          double *dt, int64_t *steps) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "conductivity", f64_vec(k, 4));
    bind_ok(call, "source", f64_vec(src, 4));
    bind_ok(call, "initial_temperature", f64_vec(t0, 4));
    bind_ok(call, "observations", f64_vec(obs, 4));
    bind_ok(call, "dt", f64_scalar(dt));
    bind_ok(call, "steps", make_array(steps, TSR_INT64, 0, NULL));
    run_ok(call);
    double m = *(const double *)tsr_call_output(call, "misfit")->data;
    tsr_call_free(call);
    return m;
}

Test(hvp_fallback, heat_misfit_served_from_its_vjp) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("heat"), NULL);
    cr_assert_eq(tsr_component_hvp_source(c), TSR_HVP_FD_VJP);
    double k[4] = {1.0, 0.6, 1.4, 0.9}, src[4] = {1, 0.5, -0.5, 2}, t0[4] = {0, 0.1, 0.2, 0};
    double obs[4] = {0.05, 0.2, 0.1, 0.3}, dt = 0.05, u[4] = {1, -0.5, 0.25, 0.5};
    double v[4] = {0.3, 0.7, -0.4, 1};
    int64_t steps = 20;
    double uhv = heat_uhv(c, k, src, t0, obs, &dt, &steps, u, v);
    double vhu = heat_uhv(c, k, src, t0, obs, &dt, &steps, v, u);
    /* (m(+u+v) - m(+u-v) - m(-u+v) + m(-u-v)) / 4h^2 */
    double h = 1e-3, sum = 0, sg[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    for (int q = 0; q < 4; q++) {
        double kk[4];
        for (int i = 0; i < 4; i++) kk[i] = k[i] + h * (sg[q][0] * u[i] + sg[q][1] * v[i]);
        double m = heat_misfit(c, kk, src, t0, obs, &dt, &steps);
        sum += (q == 0 || q == 3 ? 1 : -1) * m;
    }
    double want = sum / (4 * h * h), scale = fmax(fabs(want), 1e-12);
    cr_assert(fabs(uhv - want) <= 1e-4 * scale + 1e-10, "u.Hv %.12g, second difference %.12g",
              uhv, want);
    cr_assert(fabs(uhv - vhu) <= 1e-6 * scale + 1e-12, "u.Hv %.12g, v.Hu %.12g", uhv, vhu);
    tsr_close(c);
}
