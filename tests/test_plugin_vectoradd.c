/* SPDX-License-Identifier: MIT */
/* The bundled vectoradd plugin (result = a*s + b) against a reference
 * written here. */
#include "ref_model.h"

static void vectoradd_ref(const ref_model *m, double *const *in, double **out) {
    for (int64_t i = 0; i < m->in[0].shape[0]; i++) out[0][i] = in[0][i] * in[2][0] + in[1][i];
}

static ref_model vectoradd_model(double *a, double *b, double *s, int64_t n) {
    ref_model m = {.n_in = 3, .n_out = 1, .fn = vectoradd_ref};
    m.in[0] = (ref_field){.name = "a", .rank = 1, .shape = {n}, .data = a};
    m.in[1] = (ref_field){.name = "b", .rank = 1, .shape = {n}, .data = b};
    m.in[2] = (ref_field){.name = "s", .rank = 0, .data = s};
    m.out[0] = (ref_field){.name = "result", .rank = 1, .shape = {n}};
    return m;
}

/* The schema is a (n,), b (n,), s () -> result (n,), in that order. */
Test(vectoradd, schema) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    cr_assert_str_eq(tsr_component_name(c), "vectoradd");
    cr_assert_eq(tsr_component_n_inputs(c), 3);
    cr_assert_eq(tsr_component_find_input(c, "a"), 0);
    cr_assert_eq(tsr_component_find_input(c, "b"), 1);
    cr_assert_eq(tsr_component_find_input(c, "s"), 2);
    cr_assert_eq(tsr_component_find_output(c, "result"), 0);
    cr_assert_eq(tsr_component_input(c, 2)->rank, 0);
    tsr_close(c);
}

/* apply computes a*s + b for n = 6, 1 and 0. */
Test(vectoradd, apply_matches_reference) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    int64_t sizes[] = {6, 1, 0};
    for (int k = 0; k < 3; k++) {
        double a[6], b[6], s;
        fill_random(a, 6, 1 + (uint64_t)k);
        fill_random(b, 6, 7 + (uint64_t)k);
        fill_random(&s, 1, 13 + (uint64_t)k);
        ref_model m = vectoradd_model(a, b, &s, sizes[k]);
        ref_check_apply(c, &m);
    }
    tsr_close(c);
}

/* jacobian, jvp and vjp agree with finite differences for all 15 ordered
 * selections of (a, b, s), for n = 5 and 1. */
Test(vectoradd, derivatives_every_selection) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    int64_t sizes[] = {5, 1};
    for (int k = 0; k < 2; k++) {
        double a[5], b[5], s = -1.75;
        fill_random(a, 5, 31 + (uint64_t)k);
        fill_random(b, 5, 37 + (uint64_t)k);
        ref_model m = vectoradd_model(a, b, &s, sizes[k]);
        cr_assert_eq(ref_check_all_derivatives(c, &m), 15);
    }
    tsr_close(c);
}

/* With n = 0 the derivative blocks are empty but well shaped. */
Test(vectoradd, derivatives_empty_vectors) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    double a[1], b[1], s = 2.0;
    ref_model m = vectoradd_model(a, b, &s, 0);
    cr_assert_eq(ref_check_all_derivatives(c, &m), 15);
    tsr_close(c);
}

/* abstract_eval gives result the common length of a and b. */
Test(vectoradd, abstract_eval_shapes) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    ref_model m = vectoradd_model(NULL, NULL, NULL, 9);
    ref_check_abstract_eval(c, &m);
    tsr_close(c);
}

/* a and b of different lengths are refused: n is shared. */
Test(vectoradd, mismatched_lengths_refused) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double a[3] = {0}, b[4] = {0}, s = 1;
    bind_ok(call, "a", f64_vec(a, 3));
    bind_ok(call, "s", f64_scalar(&s));
    tsr_array bb = f64_vec(b, 4);
    int rc = tsr_call_set_input(call, "b", &bb);
    if (rc == 0) rc = tsr_call_run(call);
    assert_code(rc, TSR_E_SHAPE, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "vectoradd");
    tsr_call_free(call);
    tsr_close(c);
}
