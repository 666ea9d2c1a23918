/* SPDX-License-Identifier: MIT */
/*
 * The manifest language beyond one plain call, on routines of
 * tests/manifests/fixture.c, in every mode: workspace queries (LWORK = -1)
 * asked once per shape, and a workspace and its length that cannot
 * disagree; outputs sized by expressions of sizes and of inputs' values.
 */
#include <tessera/gradcheck.h>

#include "worker_util.h"

#define MANIFEST(name) TSR_TEST_MANIFEST_DIR "/" name ".json"
#define MANIFEST_PATH(name) (snprintf(path_buf, sizeof path_buf, "%s/%s.json", TSR_TEST_MANIFEST_DIR, name), path_buf)
static char path_buf[512];

TestSuite(manifest_lang, .fini = expect_no_own_segments);

static void refused(const char *name, const char *needle) {
    tsr_options *o = mode_options(TSR_MODE_INPROC);
    tsr_error err = open_fails(MANIFEST_PATH(name), o);
    tsr_options_free(o);
    assert_code(err.code, TSR_E_DESCRIPTOR, err.message);
    assert_contains(err.message, needle);
}

/* ---- workspace queries ---------------------------------------------------- */

/* y = 2 x through fx_wsq_, which wants 2n+1 elements of workspace and
 * reports how many queries it has answered so far. */
static int32_t wsq_run(tsr_call *call, int64_t n, const char *mode) {
    double x[16];
    fill_random(x, n, (uint64_t)n);
    bind_ok(call, "x", f64_vec(x, n));
    run_ok(call);
    const double *y = tsr_call_output(call, "y")->data;
    for (int64_t i = 0; i < n; i++) cr_expect_eq(y[i], 2 * x[i], "%s: y[%d]", mode, (int)i);
    return *(const int32_t *)tsr_call_output(call, "queries")->data;
}

Test(manifest_lang, a_workspace_query_is_asked_once_per_shape) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_wsq"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        int32_t first = wsq_run(call, 5, mode_names[mode]);
        cr_expect_eq(wsq_run(call, 5, mode_names[mode]), first, "%s: asked again", mode_names[mode]);
        cr_expect_eq(wsq_run(call, 9, mode_names[mode]), first + 1, "%s: a new shape",
                     mode_names[mode]);
        cr_expect_eq(wsq_run(call, 5, mode_names[mode]), first + 1, "%s: the first shape again",
                     mode_names[mode]);
        cr_expect_eq(wsq_run(call, 0, mode_names[mode]), first + 2, "%s: n = 0", mode_names[mode]);
        tsr_call_free(call);
        /* another call object of the same component shares the answers */
        call = new_call(c, TSR_EP_APPLY);
        cr_expect_eq(wsq_run(call, 9, mode_names[mode]), first + 2, "%s", mode_names[mode]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_lang, a_length_larger_than_its_workspace_is_refused_before_the_call) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_wsq_short"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double x[4] = {1, 2, 3, 4};
        bind_ok(call, "x", f64_vec(x, 4));
        const char *msg = run_fails(call, TSR_E_PLUGIN);
        assert_contains(msg, "fx_wsq_ args[5] (int): 9 follows a workspace of 4 elements "
                             "(args[4])");
        assert_contains(msg, "the routine would write past it, so it was not called");
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_lang, workspace_and_length_mistakes_are_refused_at_load) {
    refused("bad_length_unknown",
            "endpoints.apply.args[5]: 'length' names no workspace of this routine: 'wrk' "
            "(workspaces: work)");
    refused("bad_query_no_length",
            "endpoints.apply.args[4]: workspace 'work' is queried, but no argument is its "
            "length");
    refused("bad_workspace_length",
            "endpoints.apply.args[5]: 8 follows a workspace of 4 elements");
}

/* ---- size expressions --------------------------------------------------- */

Test(manifest_lang, an_output_of_n_plus_1_elements_and_its_adjoint) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_sized"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        for (int64_t n = 0; n < 6; n += 5) {
            double x[5] = {1, 2, 3, 4, 5};
            bind_ok(call, "x", f64_vec(x, n));
            run_ok(call);
            const tsr_array *y = tsr_call_output(call, "c");
            cr_assert_eq(y->rank, 1);
            cr_assert_eq(y->shape[0], n + 1, "%s: %lld elements", mode_names[mode],
                         (long long)y->shape[0]);
            for (int64_t i = 0; i <= n; i++)
                cr_expect_eq(((const double *)y->data)[i], (double)(i * (i + 1) / 2));
        }
        tsr_call_free(call);
        /* the vjp reads a cotangent of n+1 elements, checked before the call */
        call = new_call(c, TSR_EP_VJP);
        double x[3] = {1, 2, 3}, cb[4] = {1, 1, 1, 1};
        bind_ok(call, "x", f64_vec(x, 3));
        const char *in[] = {"x"}, *out[] = {"c"};
        wrt_ok(call, in, 1, out, 1);
        seed_ok(call, "c", f64_vec(cb, 4));
        run_ok(call);
        const double *xb = tsr_call_output(call, "x")->data;
        cr_expect(xb[0] == 3 && xb[1] == 2 && xb[2] == 1, "%s: %g %g %g", mode_names[mode],
                  xb[0], xb[1], xb[2]);
        const char *msg = seed_or_run_fails(call, "c", f64_vec(cb, 3), TSR_E_PLUGIN);
        assert_contains(msg, "the cotangent of output 'c' has 3 elements on axis 0, where the "
                             "output has 4 ('n+1' at this call)");
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_lang, check_gradients_of_an_output_sized_by_an_expression) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_sized"), (tsr_mode)mode);
        double x[4] = {0.5, -1, 2, 0.25};
        tsr_array in = f64_vec(x, 4);
        tsr_gradcheck_options o = {.struct_size = sizeof o, .seed = 3};
        tsr_gradcheck_report *r = NULL;
        tsr_error err = TSR_ERROR_INIT;
        int rc = tsr_gradcheck_run(c, &in, &o, &r, &err);
        cr_assert_eq(rc, 0, "%s: %s", mode_names[mode], err.message);
        cr_expect(tsr_gradcheck_passed(r), "%s: check-gradients failed", mode_names[mode]);
        cr_expect(tsr_gradcheck_summary_of(r, TSR_EP_VJP)->checked, "%s: vjp", mode_names[mode]);
        tsr_gradcheck_report_free(r);
        tsr_close(c);
    }
}

Test(manifest_lang, min_and_integer_division_in_output_sizes) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_diag"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double a[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
        bind_ok(call, "a", f64_mat(a, 3, 4));
        run_ok(call);
        const tsr_array *d = tsr_call_output(call, "d");
        cr_assert_eq(d->shape[0], 3, "%s", mode_names[mode]);
        cr_expect(((const double *)d->data)[2] == 10);
        bind_ok(call, "a", f64_mat(a, 4, 2));
        run_ok(call);
        d = tsr_call_output(call, "d");
        cr_assert_eq(d->shape[0], 2);
        cr_expect(((const double *)d->data)[1] == 3);
        tsr_call_free(call);
        tsr_close(c);

        c = open_mode(MANIFEST("fx_pairs"), (tsr_mode)mode);
        call = new_call(c, TSR_EP_APPLY);
        double x[5] = {1, 2, 3, 4, 5};
        bind_ok(call, "x", f64_vec(x, 5));
        run_ok(call);
        const tsr_array *y = tsr_call_output(call, "y");
        cr_assert_eq(y->shape[0], 2, "%s: 5/2", mode_names[mode]);
        cr_expect(((const double *)y->data)[0] == 3 && ((const double *)y->data)[1] == 7);
        tsr_call_free(call);
        tsr_close(c);
    }
}

static tsr_array i32_scalar(int32_t *v) { return make_array(v, TSR_INT32, 0, NULL); }

Test(manifest_lang, an_output_sized_by_inputs_values_checked_before_the_call) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_range"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        int32_t lo = 3, hi = 7;
        bind_ok(call, "lo", i32_scalar(&lo));
        bind_ok(call, "hi", i32_scalar(&hi));
        run_ok(call);
        const tsr_array *y = tsr_call_output(call, "y");
        cr_assert_eq(y->shape[0], 5, "%s", mode_names[mode]);
        for (int i = 0; i < 5; i++) cr_expect_eq(((const double *)y->data)[i], 3.0 + i);
        hi = 2;   /* an empty range is fine */
        run_ok(call);
        cr_expect_eq(tsr_call_output(call, "y")->shape[0], 0);
        hi = 0;
        const char *msg = run_fails(call, TSR_E_PLUGIN);
        assert_contains(msg, "output 'y', dimension 0 ('hi - lo + 1') is -2 at this call: a "
                             "size cannot be negative, so the routine was not called");
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_lang, sizes_from_values_must_be_declared) {
    refused("bad_size_input",
            "outputs[0].shape[0]: size expression 'hi - lo + 1': 'lo' is an input, not a "
            "dimension; a rank-0 integer input whose value is a size must be declared so: "
            "\"size\": true");
    refused("bad_size_float", "inputs[0].size: an input whose value is a size is a rank-0 "
                              "integer that is not differentiable; 'lo' is float64");
}

/* ---- setup at load -------------------------------------------------------- */

Test(manifest_lang, a_setup_routine_runs_once_when_the_component_opens) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_setup"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double x[3] = {1, 2, -4};
        bind_ok(call, "x", f64_vec(x, 3));
        run_ok(call);
        run_ok(call);
        const double *y = tsr_call_output(call, "y")->data;
        for (int i = 0; i < 3; i++)
            cr_expect_eq(y[i], 3 * x[i], "%s: y[%d] = %g (the scale, once set)", mode_names[mode],
                         i, y[i]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_lang, a_failing_setup_routine_fails_the_open) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_options *o = mode_options((tsr_mode)mode);
        tsr_error err = open_fails(MANIFEST("fx_setup_fails"), o);
        tsr_options_free(o);
        cr_expect_neq(err.code, 0);
        assert_contains(err.message, "setup[0]: fx_setup returned 1: the scale must be positive");
    }
    refused("bad_setup_kind",
            "setup[1]: args[0]: a 'dim' argument needs a call's arrays, which do not exist when "
            "the component opens");
}

/* ---- endpoints of several routines --------------------------------------- */

Test(manifest_lang, a_later_step_cannot_prepare_a_shared_buffer) {
    refused("bad_steps_init",
            "endpoints.vjp[1].args[2]: this 'result' argument shares its buffer with "
            "endpoints.vjp[0].args[2], its first use; \"init\" and \"zero\" prepare the buffer "
            "before the first step, so they belong there");
}
