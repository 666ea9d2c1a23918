/* SPDX-License-Identifier: MIT */
/*
 * Derivative arguments: which fields may be named in jvp/vjp/jacobian,
 * tangents and cotangents, endpoints a plugin lacks, and the order of
 * results. Uses the schemacheck test plugin (jvp and vjp, no jacobian,
 * no abstract_eval).
 */
#include "schemacheck.h"

static tsr_call *sc_call(tsr_component *c, tsr_endpoint ep, sc_inputs *in) {
    tsr_call *call = new_call(c, ep);
    sc_bind_except(call, in, NULL);
    return call;
}

/* A field without the differentiable flag cannot be named, input or
 * output: TSR_E_NOT_DIFFERENTIABLE naming it. */
Test(wrt, non_differentiable_fields_refused) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    const char *bad_in[] = {"left", "shift"}, *outs[] = {"combo"};
    assert_code(tsr_call_set_wrt(call, bad_in, 2, outs, 1), TSR_E_NOT_DIFFERENTIABLE,
                tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "shift");
    const char *flag_in[] = {"flag"};
    assert_code(tsr_call_set_wrt(call, flag_in, 1, outs, 1), TSR_E_NOT_DIFFERENTIABLE,
                tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "flag");
    const char *ins[] = {"left"}, *bad_out[] = {"picked"};
    assert_code(tsr_call_set_wrt(call, ins, 1, bad_out, 1), TSR_E_NOT_DIFFERENTIABLE,
                tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "picked");
    tsr_call_free(call);
    tsr_close(c);
}

/* An unknown name among the inputs or outputs: TSR_E_UNKNOWN_FIELD naming
 * it; an output name on the input side is unknown too. */
Test(wrt, unknown_fields_refused) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_VJP, &in);
    const char *ins[] = {"left", "nonesuch"}, *outs[] = {"combo"};
    assert_code(tsr_call_set_wrt(call, ins, 2, outs, 1), TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "nonesuch");
    const char *ins2[] = {"left"}, *outs2[] = {"ghost_out"};
    assert_code(tsr_call_set_wrt(call, ins2, 1, outs2, 1), TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "ghost_out");
    const char *ins3[] = {"combo"};
    assert_code(tsr_call_set_wrt(call, ins3, 1, outs, 1), TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    tsr_call_free(call);
    tsr_close(c);
}

/* A field named twice is refused, naming it. */
Test(wrt, duplicates_refused) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    const char *ins[] = {"left", "scale", "left"}, *outs[] = {"combo"};
    assert_code(tsr_call_set_wrt(call, ins, 3, outs, 1), TSR_E_ARGUMENT, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "left");
    const char *ins2[] = {"left"}, *outs2[] = {"total", "total"};
    assert_code(tsr_call_set_wrt(call, ins2, 1, outs2, 2), TSR_E_ARGUMENT, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "total");
    tsr_call_free(call);
    tsr_close(c);
}

/* apply and abstract_eval take no wrt and no seeds; NULL name arrays and
 * negative counts are refused. */
Test(wrt, wrong_use_refused) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_APPLY, &in);
    const char *ins[] = {"left"}, *outs[] = {"combo"};
    cr_assert_eq(tsr_call_set_wrt(call, ins, 1, outs, 1), TSR_E_ARGUMENT);
    tsr_array t = f64_vec(in.left, 3);
    cr_assert_eq(tsr_call_set_seed(call, "left", &t), TSR_E_ARGUMENT);
    tsr_call_free(call);
    call = sc_call(c, TSR_EP_JVP, &in);
    cr_assert_eq(tsr_call_set_wrt(call, NULL, 1, outs, 1), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_call_set_wrt(call, ins, -1, outs, 1), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_call_set_wrt(call, ins, 1, outs, -3), TSR_E_ARGUMENT);
    /* A NULL name is a bad argument (not a name the schema lacks), and
     * the message says which entry. */
    const char *with_null[] = {"left", NULL};
    assert_code(tsr_call_set_wrt(call, with_null, 2, outs, 1), TSR_E_ARGUMENT,
                tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "jvp_inputs");
    assert_contains(tsr_call_errmsg(call), "NULL");
    assert_code(tsr_call_set_wrt(call, ins, 1, with_null + 1, 1), TSR_E_ARGUMENT,
                tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "jvp_outputs");
    wrt_ok(call, ins, 1, outs, 1);
    assert_code(tsr_call_set_seed(call, NULL, &t), TSR_E_ARGUMENT, tsr_call_errmsg(call));
    tsr_call_free(call);
    tsr_close(c);
}

/* A jvp run before any wrt was given is refused. */
Test(wrt, run_without_wrt_refused) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    assert_code(tsr_call_run(call), TSR_E_MISSING, tsr_call_errmsg(call));
    sc_assert_context(tsr_call_errmsg(call), "jvp");
    tsr_call_free(call);
    tsr_close(c);
}

/* A jvp_input without a tangent: TSR_E_MISSING naming it. */
Test(wrt, missing_tangent) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    const char *ins[] = {"left", "scale"}, *outs[] = {"combo"};
    wrt_ok(call, ins, 2, outs, 1);
    seed_ok(call, "left", f64_vec(in.right, 3));
    const char *msg = run_fails(call, TSR_E_MISSING);
    sc_assert_context(msg, "jvp");
    assert_contains(msg, "scale");
    tsr_call_free(call);
    tsr_close(c);
}

/* A vjp_output without a cotangent: TSR_E_MISSING naming it. */
Test(wrt, missing_cotangent) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_VJP, &in);
    const char *ins[] = {"left"}, *outs[] = {"combo", "total"};
    wrt_ok(call, ins, 1, outs, 2);
    seed_ok(call, "combo", f64_vec(in.right, 3));
    const char *msg = run_fails(call, TSR_E_MISSING);
    sc_assert_context(msg, "vjp");
    assert_contains(msg, "total");
    tsr_call_free(call);
    tsr_close(c);
}

/* Setting wrt again forgets the seeds given before. */
Test(wrt, set_wrt_clears_seeds) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    const char *ins[] = {"left"}, *outs[] = {"combo"};
    wrt_ok(call, ins, 1, outs, 1);
    seed_ok(call, "left", f64_vec(in.right, 3));
    run_ok(call);
    wrt_ok(call, ins, 1, outs, 1);
    assert_contains(run_fails(call, TSR_E_MISSING), "left");
    tsr_call_free(call);
    tsr_close(c);
}

/* A tangent shaped unlike its input: TSR_E_SHAPE naming the field; a
 * cotangent shaped unlike its output likewise. */
Test(wrt, seed_of_wrong_shape) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    const char *ins[] = {"grid"}, *outs[] = {"combo"};
    wrt_ok(call, ins, 1, outs, 1);
    const char *msg = seed_or_run_fails(call, "grid", f64_mat(in.grid, 3, 2), TSR_E_SHAPE);
    assert_contains(msg, "grid");
    tsr_call_free(call);

    call = sc_call(c, TSR_EP_VJP, &in);
    const char *ins2[] = {"left"}, *outs2[] = {"combo"};
    wrt_ok(call, ins2, 1, outs2, 1);
    msg = seed_or_run_fails(call, "combo", f64_vec(in.right, 4), TSR_E_SHAPE);
    sc_assert_context(msg, "vjp");
    assert_contains(msg, "combo");
    tsr_call_free(call);
    tsr_close(c);
}

/* A tangent of the wrong dtype: TSR_E_DTYPE naming the field. */
Test(wrt, seed_of_wrong_dtype) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    const char *ins[] = {"scale"}, *outs[] = {"total"};
    wrt_ok(call, ins, 1, outs, 1);
    float f = 1;
    const char *msg = seed_or_run_fails(call, "scale", make_array(&f, TSR_FLOAT32, 0, NULL), TSR_E_DTYPE);
    assert_contains(msg, "scale");
    tsr_call_free(call);
    tsr_close(c);
}

/* A tangent with NULL data and elements is refused. */
Test(wrt, seed_with_null_data) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    const char *ins[] = {"left"}, *outs[] = {"combo"};
    wrt_ok(call, ins, 1, outs, 1);
    assert_contains(seed_or_run_fails(call, "left", f64_vec(NULL, 3), TSR_E_ARGUMENT), "left");
    tsr_call_free(call);
    tsr_close(c);
}

/* A seed for a field that is not among the jvp_inputs (or vjp_outputs)
 * is refused at once, naming it. */
Test(wrt, seed_for_field_not_in_wrt) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    const char *ins[] = {"left"}, *outs[] = {"combo"};
    wrt_ok(call, ins, 1, outs, 1);
    tsr_array t = f64_vec(in.right, 3);
    assert_code(tsr_call_set_seed(call, "right", &t), TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "right");
    /* a vjp takes cotangents of outputs, so an input name is wrong there */
    tsr_call_free(call);
    call = sc_call(c, TSR_EP_VJP, &in);
    wrt_ok(call, ins, 1, outs, 1);
    assert_code(tsr_call_set_seed(call, "left", &t), TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "left");
    tsr_call_free(call);
    tsr_close(c);
}

/* jacobian and abstract_eval, which schemacheck lacks, are reported by
 * tsr_component_has_endpoint and refused at run with TSR_E_UNSUPPORTED naming the
 * endpoint and the component. */
Test(wrt, endpoint_not_implemented) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    cr_assert_eq(tsr_component_has_endpoint(c, TSR_EP_APPLY), 1);
    cr_assert_eq(tsr_component_has_endpoint(c, TSR_EP_JVP), 1);
    cr_assert_eq(tsr_component_has_endpoint(c, TSR_EP_VJP), 1);
    cr_assert_eq(tsr_component_has_endpoint(c, TSR_EP_JACOBIAN), 0);
    cr_assert_eq(tsr_component_has_endpoint(c, TSR_EP_ABSTRACT_EVAL), 0);
    sc_inputs in = sc_make(3, 2, 1);
    tsr_call *call = sc_call(c, TSR_EP_JACOBIAN, &in);
    const char *ins[] = {"left"}, *outs[] = {"combo"};
    tsr_call_set_wrt(call, ins, 1, outs, 1);
    const char *msg = run_fails(call, TSR_E_UNSUPPORTED);
    sc_assert_context(msg, "jacobian");
    tsr_call_free(call);
    call = sc_call(c, TSR_EP_ABSTRACT_EVAL, &in);
    sc_assert_context(run_fails(call, TSR_E_UNSUPPORTED), "abstract_eval");
    tsr_call_free(call);
    tsr_close(c);
}

/* jvp results follow the order of jvp_outputs, and each is the tangent
 * of that output computed here from the tangents of jvp_inputs given in
 * a non-schema order. */
Test(wrt, jvp_results_in_given_order) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(4, 3, 2);
    tsr_call *call = sc_call(c, TSR_EP_JVP, &in);
    const char *ins[] = {"scale", "wild", "grid", "left"};
    const char *outs[] = {"scaled_grid", "total", "combo"};
    wrt_ok(call, ins, 4, outs, 3);
    double ds = 0.25, dwild[3], dgrid[12], dleft[4];
    fill_random(dwild, 3, 70);
    fill_random(dgrid, 12, 71);
    fill_random(dleft, 4, 72);
    seed_ok(call, "left", f64_vec(dleft, 4));
    seed_ok(call, "scale", f64_scalar(&ds));
    seed_ok(call, "grid", f64_mat(dgrid, 4, 3));
    seed_ok(call, "wild", f64_vec(dwild, 3));
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), 3);
    const tsr_array *r0 = tsr_call_result(call, 0), *r1 = tsr_call_result(call, 1),
                    *r2 = tsr_call_result(call, 2);
    cr_assert_eq(r0, tsr_call_output(call, "scaled_grid"));
    cr_assert_eq(r1, tsr_call_output(call, "total"));
    cr_assert_eq(r2, tsr_call_output(call, "combo"));
    cr_assert_null(tsr_call_output(call, "picked"));
    cr_assert_eq(r0->rank, 2);
    cr_assert_eq(r1->rank, 0);
    cr_assert_eq(r2->shape[0], 4);
    for (int i = 0; i < 4; i++) {
        double dc = ds * in.left[i] + in.scale * dleft[i];
        for (int j = 0; j < 3; j++) {
            dc += dgrid[i * 3 + j];
            double dsg = ds * in.grid[i * 3 + j] + in.scale * dgrid[i * 3 + j];
            cr_assert_float_eq(((double *)r0->data)[i * 3 + j], dsg, 1e-14);
        }
        cr_assert_float_eq(((double *)r2->data)[i], dc, 1e-14);
    }
    cr_assert_float_eq(*(double *)r1->data, dwild[0] + dwild[1] + dwild[2], 1e-14);
    tsr_call_free(call);
    tsr_close(c);
}

/* vjp results follow the order of vjp_inputs, each shaped like its input,
 * and equal the cotangent pulled back by hand. */
Test(wrt, vjp_results_in_given_order) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    sc_inputs in = sc_make(3, 2, 4);
    tsr_call *call = sc_call(c, TSR_EP_VJP, &in);
    const char *ins[] = {"wild", "scale", "right"};
    const char *outs[] = {"combo", "total"};
    wrt_ok(call, ins, 3, outs, 2);
    double ccombo[3], ctotal = -0.5;
    fill_random(ccombo, 3, 80);
    seed_ok(call, "total", f64_scalar(&ctotal));
    seed_ok(call, "combo", f64_vec(ccombo, 3));
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), 3);
    const tsr_array *w = tsr_call_result(call, 0), *s = tsr_call_result(call, 1),
                    *r = tsr_call_result(call, 2);
    cr_assert_eq(w, tsr_call_output(call, "wild"));
    cr_assert_eq(s, tsr_call_output(call, "scale"));
    cr_assert_eq(r, tsr_call_output(call, "right"));
    cr_assert_null(tsr_call_output(call, "combo"));
    cr_assert_eq(w->shape[0], 2);
    cr_assert_eq(s->rank, 0);
    double want_s = 0;
    for (int i = 0; i < 3; i++) {
        want_s += in.left[i] * ccombo[i];
        cr_assert_float_eq(((double *)r->data)[i], ccombo[i], 1e-14);
    }
    cr_assert_float_eq(*(double *)s->data, want_s, 1e-14);
    for (int k = 0; k < 2; k++) cr_assert_float_eq(((double *)w->data)[k], ctotal, 1e-14);
    tsr_call_free(call);
    tsr_close(c);
}
