/* SPDX-License-Identifier: MIT */
/*
 * Manifests that are safe by default: the caller's arrays are never
 * written by a routine unless the manifest declares the argument read-only
 * (inputs, tangents and cotangents, in every mode); a routine that ends
 * the process never leaves the command line with status 0; a gradient
 * check catches an adjoint that adds to a dirty result and says plainly
 * when it compared nothing; and load errors say what to do.
 */
#include <tessera/gradcheck.h>

#include "cli_run.h"
#include "worker_util.h"

#define MANIFEST(name) TSR_TEST_MANIFEST_DIR "/" name ".json"

TestSuite(manifest_safety, .fini = expect_no_own_segments);

/* ---- the caller's arrays ------------------------------------------------- */

Test(manifest_safety, inputs_tangents_and_cotangents_are_copied_unless_declared_readonly) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_clobber_seeds"), (tsr_mode)mode);
        double x[3] = {1, -2, 0.5}, t[3] = {3, 4, 5}, ct[3] = {-1, 2, 7};
        static const char *const xs[] = {"x"}, *const ys[] = {"y"};
        tsr_call *apply = new_call(c, TSR_EP_APPLY);
        bind_ok(apply, "x", f64_vec(x, 3));
        run_ok(apply);
        run_ok(apply);   /* a second run sees the same input */
        tsr_call *jvp = new_call(c, TSR_EP_JVP);
        bind_ok(jvp, "x", f64_vec(x, 3));
        wrt_ok(jvp, xs, 1, ys, 1);
        seed_ok(jvp, "x", f64_vec(t, 3));
        run_ok(jvp);
        tsr_call *vjp = new_call(c, TSR_EP_VJP);
        bind_ok(vjp, "x", f64_vec(x, 3));
        wrt_ok(vjp, xs, 1, ys, 1);
        seed_ok(vjp, "y", f64_vec(ct, 3));
        run_ok(vjp);
        const double *y = tsr_call_output(apply, "y")->data;
        const double *yd = tsr_call_output(jvp, "y")->data;
        const double *xb = tsr_call_output(vjp, "x")->data;
        double x0[3] = {1, -2, 0.5}, t0[3] = {3, 4, 5}, ct0[3] = {-1, 2, 7};
        for (int i = 0; i < 3; i++) {
            cr_expect_eq(x[i], x0[i], "%s: the input x[%d] was written", mode_names[mode], i);
            cr_expect_eq(t[i], t0[i], "%s: the tangent [%d] was written", mode_names[mode], i);
            cr_expect_eq(ct[i], ct0[i], "%s: the cotangent [%d] was written", mode_names[mode], i);
            cr_expect_eq(y[i], 2 * x0[i]);
            cr_expect_eq(yd[i], 2 * t0[i]);
            cr_expect_eq(xb[i], 2 * ct0[i]);
        }
        tsr_call_free(apply);
        tsr_call_free(jvp);
        tsr_call_free(vjp);
        tsr_close(c);
    }
}

Test(manifest_safety, an_input_in_the_workers_shared_memory_is_copied_too) {
    /* zero-copy: the worker sees the caller's own pages */
    tsr_component *c = open_mode(MANIFEST("fx_clobber_seeds"), TSR_MODE_WORKER);
    double *x = tsr_component_alloc(c, 4 * sizeof *x);
    cr_assert_not_null(x);
    for (int i = 0; i < 4; i++) x[i] = i + 1;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 4));
    run_ok(call);
    for (int i = 0; i < 4; i++) cr_expect_eq(x[i], i + 1.0, "x[%d] was written in place", i);
    tsr_call_free(call);
    tsr_component_free_buffer(c, x);
    tsr_close(c);
}

Test(manifest_safety, copy_false_is_refused_with_the_way_to_say_it) {
    tsr_error err = open_fails(MANIFEST("bad_copy_false"), NULL);
    assert_code(err.code, TSR_E_DESCRIPTOR, err.message);
    assert_contains(err.message, "endpoints.apply.args[1].copy: inputs are copied unless the "
                                 "routine is declared not to write them: say \"readonly\": true");
}

/* ---- a routine that ends the process ------------------------------------- */

Test(manifest_safety, the_command_never_exits_0_when_a_routine_ends_the_process) {
    /* --mode inproc: the host insists, so the routine runs in the CLI itself */
    cli_run r = run_cli(NULL, "apply", "--mode", "inproc", MANIFEST("fx_stop"),
                        "{\"inputs\": {\"x\": [1, 2]}}");
    assert_ok(&r);
    run_free(&r);
    r = run_cli(NULL, "apply", "--mode", "inproc", MANIFEST("fx_stop"),
                "{\"inputs\": {\"x\": [-1, 2]}}");
    cr_assert_eq(r.status, EXIT_CALL, "status %d after the routine's exit(0): %s", r.status, r.err);
    assert_contains(r.err, "the component 'fx_stop' ended the process during apply");
    assert_contains(r.err, "--mode worker");
    cr_expect_str_empty(r.out);
    run_free(&r);
}

Test(manifest_safety, in_a_worker_the_exit_is_a_failed_call) {
    cli_run r = run_cli(NULL, "apply", "--mode", "worker", MANIFEST("fx_stop"),
                        "{\"inputs\": {\"x\": [-1, 2]}}");
    cr_assert_eq(r.status, EXIT_CALL, "%s", r.err);
    assert_contains(r.err, "fx_stop");
    run_free(&r);
    tsr_component *c = open_mode(MANIFEST("fx_stop"), TSR_MODE_WORKER);
    double x[2] = {-1, 2};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    run_fails(call, TSR_E_WORKER);
    x[0] = 3;   /* the host lives on: the next call gets a new worker or fails cleanly */
    tsr_call_free(call);
    tsr_close(c);
}

typedef struct log_capture {
    char text[2048];
} log_capture;

static void capture(void *user, tsr_log_level level, const char *component, const char *message) {
    log_capture *l = user;
    (void)component;
    if (level == TSR_LOG_INFO)
        snprintf(l->text + strlen(l->text), sizeof l->text - strlen(l->text), "%s\n", message);
}

Test(manifest_safety, may_exit_runs_in_a_worker_unless_the_host_chose_the_mode) {
    log_capture l = {{0}};
    tsr_options *o = tsr_options_new();
    set_option(o, "log_level", "info");
    tsr_options_set_log(o, capture, &l);
    tsr_component *c = open_ok(MANIFEST("fx_stop"), o);
    tsr_options_free(o);
    cr_assert_eq(tsr_component_mode(c), TSR_MODE_WORKER);
    assert_contains(l.text, "runs in worker mode: its routines may end the process that runs "
                            "them (fx_stop_ STOPs on a negative x(1))");
    double x[2] = {-1, 2};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    run_fails(call, TSR_E_WORKER); /* the host lives on */
    tsr_call_free(call);
    tsr_close(c);
    /* the CLI without --mode: a failed call, never a silent exit */
    cli_run r = run_cli(NULL, "apply", MANIFEST("fx_stop"), "{\"inputs\": {\"x\": [-1, 2]}}");
    cr_assert_eq(r.status, EXIT_CALL, "%s", r.err);
    run_free(&r);
}

Test(manifest_safety, may_exit_is_logged_with_its_reason) {
    log_capture l = {{0}};
    tsr_options *o = mode_options(TSR_MODE_INPROC);
    set_option(o, "log_level", "info");
    tsr_options_set_log(o, capture, &l);
    tsr_component *c = open_ok(MANIFEST("fx_stop"), o);
    assert_contains(l.text, "may end the process that runs them (fx_stop_ STOPs on a negative "
                            "x(1)): in-process that is the host; worker mode confines it");
    tsr_close(c);
    tsr_options_free(o);
    tsr_error err = open_fails(MANIFEST("bad_may_exit"), NULL);
    assert_code(err.code, TSR_E_DESCRIPTOR, err.message);
    assert_contains(err.message, "may_exit: expected true, false or a string");
}

/* ---- gradient checks ----------------------------------------------------- */

static tsr_gradcheck_report *check_model(const char *name, tsr_mode mode, tsr_error *err,
                                         int *rc) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.json", TSR_TEST_MANIFEST_DIR, name);
    tsr_component *c = open_mode(path, mode);
    double x[4] = {0.3, -1.2, 0.7, 2.0}, w[4] = {1.5, 0.25, -0.5, 1.0};
    int64_t n = 4;
    tsr_array in[2] = {make_array(x, TSR_FLOAT64, 1, &n), make_array(w, TSR_FLOAT64, 1, &n)};
    tsr_gradcheck_options o = {.struct_size = sizeof o, .seed = 3};
    tsr_gradcheck_report *r = NULL;
    *rc = tsr_gradcheck_run(c, in, &o, &r, err);
    tsr_close(c);
    return r;
}

Test(manifest_safety, an_adjoint_that_adds_to_its_results_passes_as_they_are_cleared_first) {
    for (int mode = 0; mode < 3; mode++) {
        const char *const manifests[] = {"fx_model_nozero", "fx_model"};   /* without, with "zero" */
        for (int k = 0; k < 2; k++) {
            tsr_error err = TSR_ERROR_INIT;
            int rc;
            tsr_gradcheck_report *r = check_model(manifests[k], (tsr_mode)mode, &err, &rc);
            cr_assert_eq(rc, 0, "%s %s: %s", manifests[k], mode_names[mode], err.message);
            cr_expect(tsr_gradcheck_passed(r));
            tsr_gradcheck_report_free(r);
        }
    }
}

Test(manifest_safety, an_adjoint_that_keeps_state_between_calls_is_not_repeatable) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_error err = TSR_ERROR_INIT;
        int rc;
        tsr_gradcheck_report *r = check_model("fx_model_drift", (tsr_mode)mode, &err, &rc);
        cr_expect_null(r);
        cr_assert_eq(rc, TSR_E_PLUGIN_RESULT, "%s: %d %s", mode_names[mode], rc, err.message);
        assert_contains(err.message, "component 'fx_model_drift': gradient check: vjp is not "
                                     "repeatable: the same call run again gave ");
        assert_contains(err.message, "it keeps state between calls");
    }
}

Test(manifest_safety, check_gradients_fails_loudly_on_both) {
    const char *payload = "{\"inputs\": {\"x\": [0.3, -1.2, 0.7], \"w\": [1.5, 0.25, -0.5]}}";
    cli_run r = run_cli(NULL, "check-gradients", MANIFEST("fx_model_drift"), payload);
    cr_assert_eq(r.status, EXIT_CALL, "%s%s", r.out, r.err);
    assert_contains(r.err, "vjp is not repeatable");
    run_free(&r);
    /* derivatives only from finite differences: nothing is compared */
    r = run_cli(NULL, "check-gradients", MANIFEST("fx_clobber"), "{\"inputs\": {\"x\": [1, 2]}}");
    cr_assert_eq(r.status, EXIT_CALL, "%s%s", r.out, r.err);
    assert_contains(r.out, "nothing checked");
    assert_contains(r.out, "result: NOTHING CHECKED");
    cr_expect_null(strstr(r.out, "passed"), "%s", r.out);
    run_free(&r);
    r = run_cli(NULL, "check-gradients", "-f", "json", MANIFEST("fx_clobber"),
                "{\"inputs\": {\"x\": [1, 2]}}");
    cr_assert_eq(r.status, EXIT_CALL, "%s%s", r.out, r.err);
    assert_contains(r.err, "nothing checked");
    run_free(&r);
}

/* ---- messages ------------------------------------------------------------ */

Test(manifest_safety, a_missing_absolute_library_is_called_absolute) {
    tsr_error err = open_fails(MANIFEST("bad_library_absolute"), NULL);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, "library: cannot load '/nonexistent/libnothing.so' (an absolute "
                                 "path, used as is)");
}

Test(manifest_safety, a_type_as_returns_points_to_function_results) {
    tsr_error err = open_fails(MANIFEST("bad_returns_type"), NULL);
    assert_code(err.code, TSR_E_DESCRIPTOR, err.message);
    assert_contains(err.message, "endpoints.apply.returns: \"float64\" names a type, but "
                                 "\"returns\" takes \"int32\" / \"int64\" only for a status");
    assert_contains(err.message, "\"returns\": {\"out\": NAME} with NAME an output of shape [] "
                                 "and dtype float64");
}

/* ---- a function's value --------------------------------------------------- */

Test(manifest_safety, a_c_functions_value_fills_a_rank0_output) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("fx_sum"), (tsr_mode)mode);
        double x[5] = {1, 2, 3.5, -4, 0.25};
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 5));
        run_ok(call);
        const tsr_array *s = tsr_call_output(call, "s");
        cr_assert_eq(s->rank, 0);
        cr_expect_eq(*(const double *)s->data, 2.75, "%s", mode_names[mode]);
        /* in a jvp, the value is the tangent of s */
        static const char *const xs[] = {"x"}, *const ss[] = {"s"};
        double t[5] = {1, 1, 1, 1, 10};
        tsr_call *jvp = new_call(c, TSR_EP_JVP);
        bind_ok(jvp, "x", f64_vec(x, 5));
        wrt_ok(jvp, xs, 1, ss, 1);
        seed_ok(jvp, "x", f64_vec(t, 5));
        run_ok(jvp);
        cr_expect_eq(*(const double *)tsr_call_output(jvp, "s")->data, 14.0);
        int64_t n = 5;
        tsr_array in = make_array(x, TSR_FLOAT64, 1, &n);
        tsr_gradcheck_report *r = NULL;
        tsr_error err = TSR_ERROR_INIT;
        cr_assert_eq(tsr_gradcheck_run(c, &in, NULL, &r, &err), 0, "%s", err.message);
        cr_expect(tsr_gradcheck_passed(r) && tsr_gradcheck_summary_of(r, TSR_EP_JVP)->checks > 0);
        tsr_gradcheck_report_free(r);
        tsr_call_free(jvp);
        tsr_call_free(call);
        tsr_close(c);
    }
}
