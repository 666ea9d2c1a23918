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

/* ---- refusals: a table of cases, one runner ------------------------------------ */

/* How the refused input is given: left out; bound, then unbound with
 * NULL; bound and refused at once or by the run (the API allows both);
 * bound (which must succeed) and refused by the run. */
enum how { LEFT_OUT, UNBOUND, BIND_OR_RUN, AT_RUN };

typedef struct refusal {
    const char *test, *name; /* the test it belongs to, and what it gives */
    int64_t npts;            /* the inputs are sc_make(npts, 2, 1) */
    const char *field;
    enum how how;
    tsr_array (*given)(sc_inputs *in); /* for BIND_OR_RUN and AT_RUN */
    int code;          /* the one code the API documents for it */
    bool context;      /* the message names the component and the endpoint */
    const char *needles[3];
    const char *either[2]; /* the message holds one of the two */
} refusal;

static tsr_array left_as_a_column(sc_inputs *in) { return f64_mat(in->left, 3, 1); }
static tsr_array scale_as_a_vector(sc_inputs *in) { return f64_vec(&in->scale, 1); }
static tsr_array grid_3_by_2(sc_inputs *in) { return f64_mat(in->grid, 3, 2); }
static tsr_array right_of_5(sc_inputs *in) { return f64_vec(in->right, 5); }
static tsr_array grid_2_by_3(sc_inputs *in) { return f64_mat(in->grid, 2, 3); }

static tsr_array no_data_for_3(sc_inputs *in) {
    (void)in;
    return f64_vec(NULL, 3);
}

static tsr_array no_data_for_a_scalar(sc_inputs *in) {
    (void)in;
    return f64_scalar(NULL);
}

static tsr_array float32_of_3(sc_inputs *in) {
    static float f[3];
    int64_t n = 3;
    (void)in;
    return make_array(f, TSR_FLOAT32, 1, &n);
}

static tsr_array float64_scalar(sc_inputs *in) {
    static double d = 1;
    (void)in;
    return f64_scalar(&d);
}

static tsr_array int8_scalar(sc_inputs *in) {
    static int8_t b = 1;
    (void)in;
    return make_array(&b, TSR_INT8, 0, NULL);
}

static tsr_array dtype_77(sc_inputs *in) {
    tsr_array a = f64_scalar(&in->scale);
    a.dtype = (tsr_dtype)77;
    return a;
}

static tsr_array negative_dim(sc_inputs *in) { return f64_vec(in->wild, -2); }

static tsr_array rank_above_the_most(sc_inputs *in) {
    tsr_array a = f64_vec(in->wild, 1);
    a.rank = TSR_MAX_RANK + 1;
    return a;
}

static tsr_array negative_rank(sc_inputs *in) {
    tsr_array a = f64_vec(in->wild, 1);
    a.rank = -1;
    return a;
}

static const refusal refusals[] = {
    /* An input never bound: TSR_E_MISSING naming it. */
    {"missing_input", "right left out", 3, "right", LEFT_OUT, NULL, TSR_E_MISSING, true,
     {"right"}, {NULL}},
    /* Binding NULL unbinds: the input is then missing. */
    {"unbound_input_is_missing", "flag unbound", 3, "flag", UNBOUND, NULL, TSR_E_MISSING, false,
     {"flag"}, {NULL}},
    /* A float32 array for a float64 field: TSR_E_DTYPE naming the field
     * and a dtype. */
    {"wrong_dtype_float", "float32 for left", 3, "left", BIND_OR_RUN, float32_of_3, TSR_E_DTYPE,
     true, {"left"}, {"float32", "float64"}},
    /* The int32 and bool fields are typed too. */
    {"wrong_dtype_int_and_bool", "float64 for int32 shift", 3, "shift", BIND_OR_RUN,
     float64_scalar, TSR_E_DTYPE, false, {"shift"}, {NULL}},
    {"wrong_dtype_int_and_bool", "int8 for bool flag", 3, "flag", BIND_OR_RUN, int8_scalar,
     TSR_E_DTYPE, false, {"flag"}, {NULL}},
    /* A dtype outside the enum is refused. */
    {"invalid_dtype_value", "dtype 77 for scale", 3, "scale", BIND_OR_RUN, dtype_77,
     TSR_E_DTYPE, false, {NULL}, {NULL}},
    /* A matrix where a vector is declared, and a vector where a scalar
     * is: TSR_E_SHAPE naming the field. */
    {"wrong_rank", "a (3, 1) matrix for vector left", 3, "left", BIND_OR_RUN, left_as_a_column,
     TSR_E_SHAPE, true, {"left"}, {NULL}},
    {"wrong_rank", "a vector for scalar scale", 3, "scale", BIND_OR_RUN, scale_as_a_vector,
     TSR_E_SHAPE, false, {"scale"}, {NULL}},
    /* grid must be (npts, 3): (npts, 2) is TSR_E_SHAPE naming grid. */
    {"wrong_fixed_dim", "grid (3, 2)", 3, "grid", BIND_OR_RUN, grid_3_by_2, TSR_E_SHAPE, true,
     {"grid", "3"}, {NULL}},
    /* left (4,) and right (5,) disagree on npts: TSR_E_SHAPE naming both
     * fields and the symbol. */
    {"symbolic_dim_disagreement", "right (5,) beside left (4,)", 4, "right", AT_RUN, right_of_5,
     TSR_E_SHAPE, true, {"left", "right", "npts"}, {NULL}},
    /* The symbol is shared with the first dim of a matrix too. */
    {"symbolic_dim_disagreement_with_matrix", "grid (2, 3) beside left (4,)", 4, "grid", AT_RUN,
     grid_2_by_3, TSR_E_SHAPE, false, {"grid", "npts"}, {NULL}},
    /* NULL data for an array with elements is refused, naming the field. */
    {"null_data_with_elements", "no data for 3 of right", 3, "right", BIND_OR_RUN,
     no_data_for_3, TSR_E_ARGUMENT, false, {"right"}, {NULL}},
    {"null_data_with_elements", "no data for scalar scale", 3, "scale", BIND_OR_RUN,
     no_data_for_a_scalar, TSR_E_ARGUMENT, false, {"scale"}, {NULL}},
    /* Arrays whose description is itself invalid (a negative dim, a rank
     * above TSR_MAX_RANK or below 0) are refused. */
    {"malformed_arrays", "a negative dim", 3, "wild", BIND_OR_RUN, negative_dim, TSR_E_SHAPE,
     false, {"wild"}, {NULL}},
    {"malformed_arrays", "a rank above TSR_MAX_RANK", 3, "wild", BIND_OR_RUN,
     rank_above_the_most, TSR_E_SHAPE, false, {"wild"}, {NULL}},
    {"malformed_arrays", "a negative rank", 3, "wild", BIND_OR_RUN, negative_rank, TSR_E_SHAPE,
     false, {"wild"}, {NULL}},
};

/* One case, on a call of its own; every failure names it. */
static void run_refusal(const refusal *r) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(r->npts, 2, 1);
    sc_bind_except(call, &in, r->how == UNBOUND ? NULL : r->field);
    tsr_array a;
    int rc = 0;
    switch (r->how) {
    case LEFT_OUT:
        break;
    case UNBOUND:
        rc = tsr_call_set_input(call, r->field, NULL);
        cr_assert_eq(rc, 0, "%s: unbinding %s failed: %s", r->name, r->field,
                     tsr_call_errmsg(call));
        break;
    case BIND_OR_RUN:
        a = r->given(&in);
        rc = tsr_call_set_input(call, r->field, &a);
        break;
    case AT_RUN:
        a = r->given(&in);
        rc = tsr_call_set_input(call, r->field, &a);
        cr_assert_eq(rc, 0, "%s: binding %s failed: %s", r->name, r->field, tsr_call_errmsg(call));
        break;
    }
    if (rc == 0) rc = tsr_call_run(call);
    const char *msg = tsr_call_errmsg(call);
    cr_assert_eq(rc, r->code, "%s: expected code %d (%s), got %d (%s): %s", r->name, r->code,
                 tsr_strerror(r->code), rc, tsr_strerror(rc), msg);
    cr_assert_eq(tsr_call_errcode(call), rc, "%s: tsr_call_errcode disagrees", r->name);
    cr_assert(msg != NULL && msg[0] != '\0', "%s: a failure with an empty message", r->name);
    const char *context[] = {"schemacheck", "apply"};
    for (int k = 0; r->context && k < 2; k++)
        cr_assert(strstr(msg, context[k]) != NULL, "%s: the message does not name %s: %s",
                  r->name, context[k], msg);
    for (int k = 0; k < 3 && r->needles[k]; k++)
        cr_assert(strstr(msg, r->needles[k]) != NULL,
                  "%s: expected the message to contain \"%s\", got \"%s\"", r->name,
                  r->needles[k], msg);
    if (r->either[0])
        cr_assert(strstr(msg, r->either[0]) || strstr(msg, r->either[1]),
                  "%s: neither %s nor %s named: %s", r->name, r->either[0], r->either[1], msg);
    tsr_call_free(call);
    tsr_close(c);
}

/* Every case of the table that belongs to test. */
static void run_refusals(const char *test) {
    int cases = 0;
    for (size_t k = 0; k < sizeof refusals / sizeof refusals[0]; k++) {
        if (strcmp(refusals[k].test, test) != 0) continue;
        run_refusal(&refusals[k]);
        cases++;
    }
    cr_assert_gt(cases, 0, "no case for %s", test);
}

#define REFUSALS(test) \
    Test(validate, test) { run_refusals(#test); }

REFUSALS(missing_input)

REFUSALS(unbound_input_is_missing)

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
    /* A NULL name is a bad argument, not a name the schema lacks. */
    assert_code(tsr_call_set_input(call, NULL, &a), TSR_E_ARGUMENT, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "NULL");
    assert_code(tsr_call_set_text(call, NULL, "x"), TSR_E_ARGUMENT, tsr_call_errmsg(call));
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

REFUSALS(wrong_dtype_float)

REFUSALS(wrong_dtype_int_and_bool)

REFUSALS(invalid_dtype_value)

REFUSALS(wrong_rank)

REFUSALS(wrong_fixed_dim)

REFUSALS(symbolic_dim_disagreement)

REFUSALS(symbolic_dim_disagreement_with_matrix)

REFUSALS(null_data_with_elements)

REFUSALS(malformed_arrays)

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
