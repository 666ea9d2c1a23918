/* SPDX-License-Identifier: MIT */
/* The bundled noop plugin (y = x) against a reference written here. */
#include "ref_model.h"

static void noop_ref(const ref_model *m, double *const *in, double **out) {
    for (int64_t i = 0; i < ref_count(&m->in[0]); i++) out[0][i] = in[0][i];
}

static ref_model noop_model(double *x, int64_t n) {
    ref_model m = {.n_in = 1, .n_out = 1, .fn = noop_ref};
    m.in[0] = (ref_field){.name = "x", .rank = 1, .shape = {n}, .data = x};
    m.out[0] = (ref_field){.name = "y", .rank = 1, .shape = {n}};
    return m;
}

/* The schema is x: float64 (n,) -> y: float64 (n,), both differentiable,
 * and every endpoint is implemented. */
Test(noop, schema_and_endpoints) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    cr_assert_str_eq(tsr_component_name(c), "noop");
    cr_assert_eq(tsr_component_n_inputs(c), 1);
    cr_assert_eq(tsr_component_n_outputs(c), 1);
    const tsr_field *x = tsr_component_input(c, 0), *y = tsr_component_output(c, 0);
    cr_assert_str_eq(x->name, "x");
    cr_assert_str_eq(y->name, "y");
    cr_assert_eq(x->dtype, TSR_FLOAT64);
    cr_assert_eq(y->rank, 1);
    cr_assert_str_eq(x->dims[0].symbol, y->dims[0].symbol);
    cr_assert(x->flags & TSR_FIELD_DIFFERENTIABLE);
    for (int ep = 0; ep < TSR_EP_COUNT; ep++)
        cr_assert_eq(tsr_component_has_endpoint(c, (tsr_endpoint)ep), 1, "endpoint %d missing", ep);
    tsr_close(c);
}

/* apply copies x for n = 5, 1 and 0. */
Test(noop, apply_copies_x) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    int64_t sizes[] = {5, 1, 0};
    for (int k = 0; k < 3; k++) {
        double x[5];
        fill_random(x, 5, 11 + (uint64_t)k);
        ref_model m = noop_model(x, sizes[k]);
        ref_check_apply(c, &m);
    }
    tsr_close(c);
}

/* jacobian (the identity), jvp and vjp agree with finite differences,
 * for n = 4, 1 and 0. */
Test(noop, derivatives_match_finite_differences) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    int64_t sizes[] = {4, 1, 0};
    for (int k = 0; k < 3; k++) {
        double x[4];
        fill_random(x, 4, 21 + (uint64_t)k);
        ref_model m = noop_model(x, sizes[k]);
        cr_assert_eq(ref_check_all_derivatives(c, &m), 1);
    }
    tsr_close(c);
}

/* abstract_eval gives y the shape of x, for n = 7 and 0. */
Test(noop, abstract_eval_shapes) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    ref_model m = noop_model(NULL, 7);
    ref_check_abstract_eval(c, &m);
    m = noop_model(NULL, 0);
    ref_check_abstract_eval(c, &m);
    tsr_close(c);
}

/* A float32 x is refused before the plugin runs, naming the field. */
Test(noop, float32_input_refused) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    float xs[3] = {1, 2, 3};
    int64_t n = 3;
    tsr_array x = make_array(xs, TSR_FLOAT32, 1, &n);
    int rc = tsr_call_set_input(call, "x", &x);
    if (rc == 0) rc = tsr_call_run(call);
    assert_code(rc, TSR_E_DTYPE, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "noop");
    tsr_call_free(call);
    tsr_close(c);
}
