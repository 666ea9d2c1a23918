/* SPDX-License-Identifier: MIT */
/* The bundled rosenbrock plugin against a reference written here:
 * value = sum_{i<n-1} b (x[i+1] - x[i]^2)^2 + (a - x[i])^2. */
#include "ref_model.h"

static void rosenbrock_ref(const ref_model *m, double *const *in, double **out) {
    const double *x = in[0];
    double a = in[1][0], b = in[2][0], sum = 0;
    for (int64_t i = 0; i + 1 < m->in[0].shape[0]; i++) {
        double valley = x[i + 1] - x[i] * x[i];
        sum += b * valley * valley + (a - x[i]) * (a - x[i]);
    }
    out[0][0] = sum;
}

static ref_model rosenbrock_model(double *x, int64_t n, double *a, double *b) {
    ref_model m = {.n_in = 3, .n_out = 1, .fn = rosenbrock_ref};
    m.in[0] = (ref_field){.name = "x", .rank = 1, .shape = {n}, .data = x};
    m.in[1] = (ref_field){.name = "a", .rank = 0, .data = a};
    m.in[2] = (ref_field){.name = "b", .rank = 0, .data = b};
    m.out[0] = (ref_field){.name = "value", .rank = 0};
    return m;
}

/* The schema is x (n,), a (), b () -> value (). */
Test(rosenbrock, schema) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    cr_assert_str_eq(tsr_component_name(c), "rosenbrock");
    cr_assert_eq(tsr_component_find_input(c, "x"), 0);
    cr_assert_eq(tsr_component_find_input(c, "a"), 1);
    cr_assert_eq(tsr_component_find_input(c, "b"), 2);
    cr_assert_eq(tsr_component_find_output(c, "value"), 0);
    cr_assert_eq(tsr_component_output(c, 0)->rank, 0);
    tsr_close(c);
}

/* apply matches the reference for n = 2 (one term), 3 and 10. */
Test(rosenbrock, apply_matches_reference) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    int64_t sizes[] = {2, 3, 10};
    for (int k = 0; k < 3; k++) {
        double x[10], a = 1.0, b = 100.0;
        fill_random(x, 10, 3 + (uint64_t)k);
        ref_model m = rosenbrock_model(x, sizes[k], &a, &b);
        ref_check_apply(c, &m);
    }
    tsr_close(c);
}

/* At its known minimum x = (1, ..., 1) with a = 1 the value is 0 and so
 * is the gradient with respect to x. */
Test(rosenbrock, minimum_has_zero_value_and_gradient) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    double x[6] = {1, 1, 1, 1, 1, 1}, a = 1, b = 100, one = 1;
    tsr_call *call = new_call(c, TSR_EP_VJP);
    bind_ok(call, "x", f64_vec(x, 6));
    bind_ok(call, "a", f64_scalar(&a));
    bind_ok(call, "b", f64_scalar(&b));
    const char *in[] = {"x"}, *out[] = {"value"};
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "value", f64_scalar(&one));
    run_ok(call);
    const double *g = tsr_call_output(call, "x")->data;
    for (int i = 0; i < 6; i++) cr_assert_float_eq(g[i], 0.0, 1e-15);
    tsr_call_free(call);

    call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 6));
    bind_ok(call, "a", f64_scalar(&a));
    bind_ok(call, "b", f64_scalar(&b));
    run_ok(call);
    cr_assert_float_eq(*(const double *)tsr_call_output(call, "value")->data, 0.0, 1e-15);
    tsr_call_free(call);
    tsr_close(c);
}

/* jacobian, jvp and vjp agree with finite differences for all 15 ordered
 * selections of (x, a, b), for n = 2 and 5. */
Test(rosenbrock, derivatives_every_selection) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    int64_t sizes[] = {2, 5};
    for (int k = 0; k < 2; k++) {
        double x[5], a = 0.7, b = 3.5;
        fill_random(x, 5, 41 + (uint64_t)k);
        ref_model m = rosenbrock_model(x, sizes[k], &a, &b);
        cr_assert_eq(ref_check_all_derivatives(c, &m), 15);
    }
    tsr_close(c);
}

/* abstract_eval gives a scalar value. */
Test(rosenbrock, abstract_eval_shapes) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    ref_model m = rosenbrock_model(NULL, 4, NULL, NULL);
    ref_check_abstract_eval(c, &m);
    tsr_close(c);
}

/* With fewer than 2 coordinates every endpoint fails as a plugin error
 * whose message names the component and the endpoint. */
Test(rosenbrock, fewer_than_two_coordinates_refused) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    for (int64_t n = 0; n < 2; n++) {
        for (int ep = 0; ep < TSR_EP_COUNT; ep++) {
            double x[1] = {0.5}, a = 1, b = 100, seed[1] = {1};
            tsr_call *call = new_call(c, (tsr_endpoint)ep);
            bool shapes_only = ep == TSR_EP_ABSTRACT_EVAL;
            bind_ok(call, "x", f64_vec(shapes_only ? NULL : x, n));
            bind_ok(call, "a", f64_scalar(shapes_only ? NULL : &a));
            bind_ok(call, "b", f64_scalar(shapes_only ? NULL : &b));
            const char *in[] = {"x"}, *out[] = {"value"};
            if (ep != TSR_EP_APPLY && ep != TSR_EP_ABSTRACT_EVAL) wrt_ok(call, in, 1, out, 1);
            if (ep == TSR_EP_JVP) seed_ok(call, "x", f64_vec(seed, n));
            if (ep == TSR_EP_VJP || ep == TSR_EP_HVP) seed_ok(call, "value", f64_scalar(seed));
            if (ep == TSR_EP_HVP) {
                tsr_array t = f64_vec(seed, n);
                cr_assert_eq(tsr_call_set_tangent(call, "x", &t), 0, "%s", tsr_call_errmsg(call));
            }
            const char *msg = run_fails(call, TSR_E_PLUGIN);
            assert_contains(msg, "rosenbrock");
            assert_contains(msg, tsr_endpoint_name((tsr_endpoint)ep));
            tsr_call_free(call);
        }
    }
    tsr_close(c);
}
