/* SPDX-License-Identifier: MIT */
/*
 * Validation of a call's inputs against the schema, with the schemacheck
 * test plugin: symbolic dims shared across fields, a fixed dim, a
 * wildcard, scalars, int32 and bool fields, outputs shaped from symbols
 * and one shaped by the plugin.
 */
#include "schemacheck.h"

/* Valid inputs: every output matches a computation done here; picked has
 * a value-dependent shape and is allocated through the plugin; wild may
 * differ in length from npts. */
Test(validate, valid_inputs_give_reference_outputs) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(6, 4, 17);
    sc_bind_except(call, &in, NULL);
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), 4);
    const tsr_array *combo = tsr_call_output(call, "combo");
    cr_assert_eq(combo->rank, 1);
    cr_assert_eq(combo->shape[0], 6);
    for (int64_t i = 0; i < 6; i++)
        cr_assert_float_eq(((double *)combo->data)[i], sc_combo(&in, i), 1e-14);
    const tsr_array *total = tsr_call_output(call, "total");
    cr_assert_eq(total->rank, 0);
    double sum = in.wild[0] + in.wild[1] + in.wild[2] + in.wild[3];
    cr_assert_float_eq(*(double *)total->data, sum, 1e-14);
    const tsr_array *sg = tsr_call_output(call, "scaled_grid");
    cr_assert_eq(sg->rank, 2);
    cr_assert_eq(sg->shape[0], 6);
    cr_assert_eq(sg->shape[1], 3);
    for (int64_t k = 0; k < 18; k++) cr_assert_eq(((double *)sg->data)[k], in.scale * in.grid[k]);
    const tsr_array *picked = tsr_call_output(call, "picked");
    cr_assert_not_null(picked);
    int64_t count = 0;
    for (int64_t i = 0; i < 6; i++) {
        if (in.left[i] > 0) {
            cr_assert_lt(count, picked->shape[0]);
            cr_assert_eq(((double *)picked->data)[count], in.left[i]);
            count++;
        }
    }
    cr_assert_eq(picked->rank, 1);
    cr_assert_eq(picked->shape[0], count);
    tsr_call_free(call);
    tsr_close(c);
}

/* The bool input reaches the plugin: with flag false every entry of left
 * is picked. */
Test(validate, bool_input_reaches_plugin) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(5, 1, 3);
    in.flag = false;
    sc_bind_except(call, &in, NULL);
    run_ok(call);
    const tsr_array *picked = tsr_call_output(call, "picked");
    cr_assert_eq(picked->shape[0], 5);
    cr_assert_eq(memcmp(picked->data, in.left, 5 * sizeof(double)), 0);
    tsr_call_free(call);
    tsr_close(c);
}

/* Zero-size arrays may have NULL data: npts = 0 and an empty wild. */
Test(validate, empty_arrays_with_null_data_accepted) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(0, 0, 5);
    sc_bind_except(call, &in, NULL);
    bind_ok(call, "left", f64_vec(NULL, 0));
    bind_ok(call, "right", f64_vec(NULL, 0));
    bind_ok(call, "grid", f64_mat(NULL, 0, 3));
    bind_ok(call, "wild", f64_vec(NULL, 0));
    run_ok(call);
    cr_assert_eq(tsr_call_output(call, "combo")->shape[0], 0);
    cr_assert_eq(*(double *)tsr_call_output(call, "total")->data, 0.0);
    cr_assert_eq(tsr_call_output(call, "scaled_grid")->shape[0], 0);
    cr_assert_eq(tsr_call_output(call, "scaled_grid")->shape[1], 3);
    cr_assert_eq(tsr_call_output(call, "picked")->shape[0], 0);
    tsr_call_free(call);
    tsr_close(c);
}

/* An input never bound: TSR_E_MISSING naming it. */
Test(validate, missing_input) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(3, 2, 1);
    sc_bind_except(call, &in, "right");
    const char *msg = run_fails(call, TSR_E_MISSING);
    sc_assert_context(msg, "apply");
    assert_contains(msg, "right");
    tsr_call_free(call);
    tsr_close(c);
}

/* Binding NULL unbinds: the input is then missing. */
Test(validate, unbound_input_is_missing) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(3, 2, 1);
    sc_bind_except(call, &in, NULL);
    cr_assert_eq(tsr_call_set_input(call, "flag", NULL), 0);
    const char *msg = run_fails(call, TSR_E_MISSING);
    assert_contains(msg, "flag");
    tsr_call_free(call);
    tsr_close(c);
}

/* A name that is no input: TSR_E_UNKNOWN_FIELD at once, naming it (an
 * output name is not an input either). */
Test(validate, unknown_input_name) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double v = 0;
    tsr_array a = f64_scalar(&v);
    assert_code(tsr_call_set_input(call, "nonesuch", &a), TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "nonesuch");
    cr_assert_eq(tsr_call_errcode(call), TSR_E_UNKNOWN_FIELD);
    assert_code(tsr_call_set_input(call, "combo", &a), TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    /* A NULL name is refused (as a bad argument or as no such field). */
    int rc = tsr_call_set_input(call, NULL, &a);
    cr_assert(rc == TSR_E_ARGUMENT || rc == TSR_E_UNKNOWN_FIELD, "NULL name: %d", rc);
    tsr_call_free(call);
    tsr_close(c);
}

/* Binding by index works in schema order and refuses indices out of range. */
Test(validate, bind_by_index) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(2, 2, 9);
    for (int k = 0; k < SC_N_INPUTS; k++) {
        tsr_array a = sc_array(&in, sc_input_names[k]);
        cr_assert_eq(tsr_call_set_input_at(call, tsr_component_find_input(c, sc_input_names[k]), &a), 0);
    }
    run_ok(call);
    cr_assert_float_eq(((double *)tsr_call_output(call, "combo")->data)[1], sc_combo(&in, 1), 1e-14);
    double v = 0;
    tsr_array a = f64_scalar(&v);
    cr_assert_neq(tsr_call_set_input_at(call, -1, &a), 0);
    cr_assert_neq(tsr_call_set_input_at(call, SC_N_INPUTS, &a), 0);
    tsr_call_free(call);
    tsr_close(c);
}

/* A float32 array for a float64 field: TSR_E_DTYPE naming the field and
 * a dtype. */
Test(validate, wrong_dtype_float) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(3, 2, 1);
    sc_bind_except(call, &in, "left");
    float f[3] = {0};
    int64_t n = 3;
    const char *msg = bind_or_run_fails(call, "left", make_array(f, TSR_FLOAT32, 1, &n), TSR_E_DTYPE);
    sc_assert_context(msg, "apply");
    assert_contains(msg, "left");
    cr_assert(strstr(msg, "float32") || strstr(msg, "float64"), "no dtype named: %s", msg);
    tsr_call_free(call);
    tsr_close(c);
}

/* The int32 and bool fields are typed too. */
Test(validate, wrong_dtype_int_and_bool) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    double d = 1;
    int8_t b = 1;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_bind_except(call, &in, "shift");
    assert_contains(bind_or_run_fails(call, "shift", f64_scalar(&d), TSR_E_DTYPE), "shift");
    tsr_call_free(call);
    call = new_call(c, TSR_EP_APPLY);
    sc_bind_except(call, &in, "flag");
    assert_contains(bind_or_run_fails(call, "flag", make_array(&b, TSR_INT8, 0, NULL), TSR_E_DTYPE),
                    "flag");
    tsr_call_free(call);
    tsr_close(c);
}

/* A dtype outside the enum is refused. */
Test(validate, invalid_dtype_value) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(3, 2, 1);
    sc_bind_except(call, &in, "scale");
    tsr_array a = f64_scalar(&in.scale);
    a.dtype = (tsr_dtype)77;
    int rc = tsr_call_set_input(call, "scale", &a);
    if (rc == 0) rc = tsr_call_run(call);
    cr_assert(rc == TSR_E_DTYPE || rc == TSR_E_ARGUMENT, "got %d: %s", rc, tsr_call_errmsg(call));
    tsr_call_free(call);
    tsr_close(c);
}

/* A matrix where a vector is declared, and a vector where a scalar is:
 * TSR_E_SHAPE naming the field. */
Test(validate, wrong_rank) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_bind_except(call, &in, "left");
    const char *msg = bind_or_run_fails(call, "left", f64_mat(in.left, 3, 1), TSR_E_SHAPE);
    sc_assert_context(msg, "apply");
    assert_contains(msg, "left");
    tsr_call_free(call);
    call = new_call(c, TSR_EP_APPLY);
    sc_bind_except(call, &in, "scale");
    assert_contains(bind_or_run_fails(call, "scale", f64_vec(&in.scale, 1), TSR_E_SHAPE), "scale");
    tsr_call_free(call);
    tsr_close(c);
}

/* grid must be (npts, 3): (npts, 2) is TSR_E_SHAPE naming grid. */
Test(validate, wrong_fixed_dim) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(3, 2, 1);
    sc_bind_except(call, &in, "grid");
    const char *msg = bind_or_run_fails(call, "grid", f64_mat(in.grid, 3, 2), TSR_E_SHAPE);
    sc_assert_context(msg, "apply");
    assert_contains(msg, "grid");
    assert_contains(msg, "3");
    tsr_call_free(call);
    tsr_close(c);
}

/* left (4,) and right (5,) disagree on npts: TSR_E_SHAPE naming both
 * fields and the symbol. */
Test(validate, symbolic_dim_disagreement) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(4, 2, 1);
    sc_bind_except(call, &in, "right");
    bind_ok(call, "right", f64_vec(in.right, 5));
    const char *msg = run_fails(call, TSR_E_SHAPE);
    sc_assert_context(msg, "apply");
    assert_contains(msg, "left");
    assert_contains(msg, "right");
    assert_contains(msg, "npts");
    tsr_call_free(call);
    tsr_close(c);
}

/* The symbol is shared with the first dim of a matrix too. */
Test(validate, symbolic_dim_disagreement_with_matrix) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(4, 2, 1);
    sc_bind_except(call, &in, "grid");
    bind_ok(call, "grid", f64_mat(in.grid, 2, 3));
    const char *msg = run_fails(call, TSR_E_SHAPE);
    assert_contains(msg, "grid");
    assert_contains(msg, "npts");
    tsr_call_free(call);
    tsr_close(c);
}

/* NULL data for an array with elements is refused, naming the field. */
Test(validate, null_data_with_elements) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(3, 2, 1);
    sc_bind_except(call, &in, "right");
    const char *msg = bind_or_run_fails(call, "right", f64_vec(NULL, 3), TSR_E_ARGUMENT);
    assert_contains(msg, "right");
    tsr_call_free(call);
    call = new_call(c, TSR_EP_APPLY);
    sc_bind_except(call, &in, "scale");
    assert_contains(bind_or_run_fails(call, "scale", f64_scalar(NULL), TSR_E_ARGUMENT), "scale");
    tsr_call_free(call);
    tsr_close(c);
}

/* Arrays whose description is itself invalid (a negative dim, a rank
 * above TSR_MAX_RANK or below 0) are refused. */
Test(validate, malformed_arrays) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_array bad[3];
    bad[0] = f64_vec(in.wild, -2);
    bad[1] = f64_vec(in.wild, 1);
    bad[1].rank = TSR_MAX_RANK + 1;
    bad[2] = f64_vec(in.wild, 1);
    bad[2].rank = -1;
    for (int k = 0; k < 3; k++) {
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        sc_bind_except(call, &in, "wild");
        int rc = tsr_call_set_input(call, "wild", &bad[k]);
        if (rc == 0) rc = tsr_call_run(call);
        cr_assert(rc == TSR_E_SHAPE || rc == TSR_E_ARGUMENT, "case %d: got %d: %s", k, rc,
                  tsr_call_errmsg(call));
        assert_contains(tsr_call_errmsg(call), "wild");
        tsr_call_free(call);
    }
    tsr_close(c);
}

/* After a refused run, fixing the input makes the same call succeed. */
Test(validate, call_recovers_after_error) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(3, 2, 1);
    sc_bind_except(call, &in, NULL);
    bind_ok(call, "right", f64_vec(in.right, 2));
    run_fails(call, TSR_E_SHAPE);
    bind_ok(call, "right", f64_vec(in.right, 3));
    run_ok(call);
    cr_assert_float_eq(((double *)tsr_call_output(call, "combo")->data)[2], sc_combo(&in, 2), 1e-14);
    tsr_call_free(call);
    tsr_close(c);
}
