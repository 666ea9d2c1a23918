/* SPDX-License-Identifier: MIT */
/*
 * abstract_eval: served by the plugin when it has one, answered from the
 * schema when it has none but every output shape follows from the
 * inputs, and validated like any other endpoint.
 */
#include "test_util.h"

/* The stateful plugin has no abstract_eval, but y (n,) follows from
 * x (n,): the host answers without entering the plugin (its fini reports
 * that apply never ran). */
Test(abstract_eval, answered_from_schema) {
    char marker[256];
    temp_path(marker, sizeof marker);
    tsr_component *c = open_with_config(TEST_PLUGIN("stateful"), "marker", marker);
    cr_assert_eq(tsr_component_has_endpoint(c, TSR_EP_ABSTRACT_EVAL), 1);
    tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    bind_ok(call, "x", f64_vec(NULL, 7));
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), 1);
    const tsr_array *y = tsr_call_output(call, "y");
    cr_assert_not_null(y);
    cr_assert_eq(y->dtype, TSR_FLOAT64);
    cr_assert_eq(y->rank, 1);
    cr_assert_eq(y->shape[0], 7);
    cr_assert_null(y->data);
    tsr_call_free(call);
    tsr_close(c);
    cr_assert_str_eq(read_file_text(marker), "init\nfini calls=0\n");
    unlink(marker);
}

/* Shapes are checked before abstract_eval: a and b of different lengths
 * are refused with TSR_E_SHAPE. */
Test(abstract_eval, shapes_validated) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    bind_ok(call, "a", f64_vec(NULL, 3));
    bind_ok(call, "b", f64_vec(NULL, 4));
    bind_ok(call, "s", f64_scalar(NULL));
    const char *msg = run_fails(call, TSR_E_SHAPE);
    assert_contains(msg, "vectoradd");
    assert_contains(msg, "abstract_eval");
    tsr_call_free(call);
    tsr_close(c);
}

/* dtypes are checked too, and inputs must still be bound. */
Test(abstract_eval, dtypes_and_presence_validated) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    int64_t n = 3;
    bind_ok(call, "a", f64_vec(NULL, 3));
    bind_ok(call, "s", f64_scalar(NULL));
    assert_contains(run_fails(call, TSR_E_MISSING), "b");
    const char *msg = bind_or_run_fails(call, "b", make_array(NULL, TSR_INT64, 1, &n), TSR_E_DTYPE);
    assert_contains(msg, "int64");
    tsr_call_free(call);
    tsr_close(c);
}

/* abstract_eval accepts inputs that do carry data, and still returns
 * results without data. */
Test(abstract_eval, inputs_with_data_accepted) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    double x[2] = {1, 2};
    bind_ok(call, "x", f64_vec(x, 2));
    run_ok(call);
    cr_assert_eq(tsr_call_output(call, "y")->shape[0], 2);
    cr_assert_null(tsr_call_output(call, "y")->data);
    tsr_call_free(call);
    tsr_close(c);
}

/* A plugin without abstract_eval whose outputs ragged (*,) and rows3
 * (*, 3) follow from no input: abstract_eval is refused with the outputs
 * named (not dense, whose (n,) x gives), saying that their shapes cannot
 * be known before the call and that the plugin needs an abstract_eval
 * endpoint; in worker mode alike. */
Test(abstract_eval, unknown_shapes_name_the_outputs_and_what_to_add) {
    const char *modes[] = {"inproc", "worker"};
    for (size_t m = 0; m < 2; m++) {
        tsr_options *o = tsr_options_new();
        cr_assert_eq(tsr_options_set(o, "mode", modes[m], NULL), 0);
        tsr_component *c = open_ok(TEST_PLUGIN("misbehave"), o);
        tsr_options_free(o);
        cr_assert_eq(tsr_component_has_endpoint(c, TSR_EP_ABSTRACT_EVAL), 0);
        tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
        bind_ok(call, "xin", f64_vec(NULL, 4));
        const char *msg = run_fails(call, TSR_E_UNSUPPORTED);
        cr_assert(strstr(msg, "the shapes of outputs 'ragged' and 'rows3' cannot be known before "
                              "the call") != NULL, "%s: %s", modes[m], msg);
        cr_assert(strstr(msg, "add an abstract_eval endpoint in the plugin") != NULL, "%s", msg);
        cr_assert(strstr(msg, "'dense'") == NULL, "dense's shape is known: %s", msg);
        cr_assert(strstr(msg, "depend on values") == NULL, "%s", msg);
        tsr_call_free(call);
        tsr_close(c);
    }
}
