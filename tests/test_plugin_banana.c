/* SPDX-License-Identifier: MIT */
/* The bundled banana plugin (a twisted Gaussian's log-density) against the
 * formulas written here: value, gradient and Hessian, its configuration,
 * and what it refuses. */
#include "test_util.h"

typedef struct banana_ref {
    double value, grad[2], hess[2][2];
} banana_ref;

static banana_ref reference(double sigma, double beta, const double *x) {
    double u = x[1] + beta * (x[0] * x[0] - sigma * sigma);
    banana_ref r;
    r.value = -x[0] * x[0] / (2 * sigma * sigma) - u * u / 2;
    r.grad[0] = -x[0] / (sigma * sigma) - u * 2 * beta * x[0];
    r.grad[1] = -u;
    r.hess[0][0] = -1 / (sigma * sigma) - 4 * beta * beta * x[0] * x[0] - 2 * beta * u;
    r.hess[0][1] = r.hess[1][0] = -2 * beta * x[0];
    r.hess[1][1] = -1;
    return r;
}

static tsr_component *open_banana(const char *sigma, const char *beta) {
    tsr_options *o = tsr_options_new();
    cr_assert_eq(tsr_options_set_config(o, "sigma", sigma), 0);
    cr_assert_eq(tsr_options_set_config(o, "beta", beta), 0);
    tsr_component *c = open_ok(BUNDLED_PLUGIN("banana"), o);
    tsr_options_free(o);
    return c;
}

static const double points[][2] = {{0.5, 1.0}, {-1.25, 0.3}, {0.0, 0.0}, {2.0, -3.5}};

/* apply and vjp equal the formulas at several points, with sigma 1.5,
 * beta 0.7 from the configuration. */
Test(banana, value_and_gradient_match_the_formulas) {
    tsr_component *c = open_banana("1.5", "0.7");
    for (size_t p = 0; p < sizeof points / sizeof points[0]; p++) {
        double x[2] = {points[p][0], points[p][1]}, one = 1;
        banana_ref r = reference(1.5, 0.7, x);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 2));
        run_ok(call);
        cr_assert_float_eq(*(const double *)tsr_call_output(call, "log_density")->data, r.value,
                           1e-14);
        tsr_call_free(call);

        call = new_call(c, TSR_EP_VJP);
        bind_ok(call, "x", f64_vec(x, 2));
        const char *in[] = {"x"}, *out[] = {"log_density"};
        wrt_ok(call, in, 1, out, 1);
        seed_ok(call, "log_density", f64_scalar(&one));
        run_ok(call);
        const double *g = tsr_call_output(call, "x")->data;
        cr_assert_float_eq(g[0], r.grad[0], 1e-14);
        cr_assert_float_eq(g[1], r.grad[1], 1e-14);
        tsr_call_free(call);
    }
    tsr_close(c);
}

/* hvp with cotangent w and tangent v is w * H v, H the formulas' Hessian. */
Test(banana, hvp_is_the_weighted_hessian_times_the_tangent) {
    tsr_component *c = open_banana("0.8", "1.3");
    cr_assert_eq(tsr_component_hvp_source(c), TSR_HVP_NATIVE);
    for (size_t p = 0; p < sizeof points / sizeof points[0]; p++) {
        double x[2] = {points[p][0], points[p][1]}, v[2] = {0.3, -1.7}, w = -2.5;
        banana_ref r = reference(0.8, 1.3, x);
        tsr_call *call = new_call(c, TSR_EP_HVP);
        bind_ok(call, "x", f64_vec(x, 2));
        const char *in[] = {"x"}, *out[] = {"log_density"};
        wrt_ok(call, in, 1, out, 1);
        seed_ok(call, "log_density", f64_scalar(&w));
        tsr_array tangent = f64_vec(v, 2);
        cr_assert_eq(tsr_call_set_tangent(call, "log_density", &tangent), TSR_E_UNKNOWN_FIELD);
        cr_assert_eq(tsr_call_set_tangent(call, "x", &tangent), 0);
        run_ok(call);
        const double *h = tsr_call_output(call, "x")->data;
        for (int i = 0; i < 2; i++) {
            cr_assert_float_eq(h[i], w * (r.hess[i][0] * v[0] + r.hess[i][1] * v[1]), 1e-13);
        }
        tsr_call_free(call);
    }
    tsr_close(c);
}

/* Configuration that is no number, or a sigma that is not positive, fails
 * the open naming the key. */
Test(banana, bad_configuration_is_refused_naming_the_key) {
    const char *cases[][3] = {{"abc", "1", "sigma"}, {"1", "2x", "beta"}, {"-1", "1", "sigma"},
                              {"0", "1", "sigma"}, {"1", "inf", "beta"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tsr_options *o = tsr_options_new();
        tsr_options_set_config(o, "sigma", cases[k][0]);
        tsr_options_set_config(o, "beta", cases[k][1]);
        tsr_error e = open_fails(BUNDLED_PLUGIN("banana"), o);
        assert_contains(e.message, cases[k][2]);
        tsr_options_free(o);
    }
}
