/* SPDX-License-Identifier: MIT */
/*
 * Trying a new manifest before trusting it in-process: `tessera
 * check-manifest` runs each endpoint in a worker and tells a routine that
 * runs cleanly from one that crashes on a wrong argument list, ends the
 * process, hangs, writes an input it was trusted with, gives non-finite
 * or unrepeatable results, or fails; its exit status is 0 only for the
 * first. And the load-time warnings about argument lists that look wrong
 * (a gfortran-style symbol under "convention": "c", a dropped hidden
 * length, a size negative for empty inputs), which never refuse a manifest.
 */
#include <time.h>

#include "cli_run.h"
#include "worker_util.h"

#define MANIFEST(name) TSR_TEST_MANIFEST_DIR "/" name ".json"

TestSuite(manifest_check, .fini = expect_no_own_segments);

/* In a sanitizer build the worker is sanitized too, and AddressSanitizer
 * would turn the routine's fault into its own report and exit status 1;
 * the command must see the signal, as in a plain build. */
static void plain_signals(void) {
#if defined(__SANITIZE_ADDRESS__)
    setenv("ASAN_OPTIONS", "handle_segv=0", 1);
#endif
}

/* `tessera check-manifest ARGS...` */
#define run_check(...) \
    run_cli_with(NULL, plain_signals, (const char *const[]){"check-manifest", __VA_ARGS__, NULL})

#define CLEAN "ran; results finite; inputs unchanged; the same answer twice"
#define SAFE "verdict: safe to run in-process: every endpoint ran cleanly in a worker\n"

static void assert_clean(const cli_run *r, const char *const *endpoints) {
    assert_ok(r);
    for (const char *const *ep = endpoints; *ep; ep++) {
        char line[128];
        snprintf(line, sizeof line, "\n%s: " CLEAN "\n", *ep);
        assert_contains(r->out, line);
    }
    assert_contains(r->out, SAFE);
}

/* Status 1, the endpoint's line and the one-line verdict. */
static void assert_verdict(const cli_run *r, const char *line, const char *last) {
    cr_assert_eq(r->status, EXIT_CALL, "exit %d; stdout: %s; stderr: %s", r->status, r->out,
                 r->err);
    assert_contains(r->out, line);
    assert_contains(r->out, last);
    cr_expect_null(strstr(r->out, SAFE), "%s", r->out);
}

/* ---- good manifests ---------------------------------------------------------- */

Test(manifest_check, ddot_and_dsyev_run_cleanly_with_generated_inputs) {
    static const char *const apply[] = {"apply", NULL};
    cli_run r = run_check(MANIFEST("lapack_ddot"));
    assert_clean(&r, apply);
    assert_contains(r.out, "inputs (generated): x float64(3), y float64(3)\n");
    assert_contains(r.out, "in a worker, timeout 5000 ms\n");
    run_free(&r);
    /* a symmetric positive definite matrix, and a workspace query */
    r = run_check(MANIFEST("lapack_dsyev"));
    assert_clean(&r, apply);
    assert_contains(r.out, "inputs (generated): a float64(3, 3)\n");
    run_free(&r);
}

Test(manifest_check, every_endpoint_of_a_manifest_is_run) {
    static const char *const all[] = {"apply", "jvp", "vjp", "jacobian", NULL};
    cli_run r = run_check(MANIFEST("fx_model"));
    assert_clean(&r, all);
    run_free(&r);
    static const char *const dposv[] = {"apply", "vjp", NULL};
    r = run_check(MANIFEST("lapack_dposv_vjp"));
    assert_clean(&r, dposv);
    run_free(&r);
}

Test(manifest_check, inputs_come_from_the_payload_when_given) {
    static const char *const apply[] = {"apply", NULL};
    cli_run r = run_check(MANIFEST("fx_stop"),
                        "{\"inputs\": {\"x\": [1, 2, 3, 4, 5]}}");
    assert_clean(&r, apply);
    assert_contains(r.out, "inputs (from the payload): x float64(5)\n");
    run_free(&r);
}

Test(manifest_check, a_routine_that_overwrites_a_copied_input_is_fine) {
    static const char *const apply[] = {"apply", NULL};
    cli_run r = run_check(MANIFEST("fx_clobber"));
    assert_clean(&r, apply);
    run_free(&r);
}

/* ---- wrong manifests --------------------------------------------------------- */

Test(manifest_check, a_short_argument_list_crashes_the_worker_not_the_command) {
    cli_run r = run_check(MANIFEST("fx_short_args"));
    assert_verdict(&r, "\napply: CRASHED the worker: component 'fx_short_args', endpoint 'apply'",
                   "\nverdict: NOT safe to run in-process: apply crashed the worker (killed by "
                   "signal 11 (Segmentation fault)); run it in --mode worker");
    run_free(&r);
}

Test(manifest_check, the_c_convention_for_a_fortran_routine_is_warned_and_crashes) {
    cli_run r = run_check(MANIFEST("fx_info_c"));
    assert_verdict(&r, "killed by signal 11",
                   "verdict: NOT safe to run in-process: apply crashed the worker");
    assert_contains(r.out, "load: warning: " MANIFEST("fx_info_c") ": endpoints.apply.args[0]: "
                           "'dim' is passed by value (\"convention\": \"c\"), but the symbol "
                           "'fx_info_' is named as gfortran names routines");
    run_free(&r);
}

Test(manifest_check, after_a_crash_the_next_endpoint_runs_in_a_new_worker) {
    cli_run r = run_check(MANIFEST("fx_short_apply"));
    assert_verdict(&r, "\napply: CRASHED the worker", "apply crashed the worker");
    assert_contains(r.out, "\njvp: " CLEAN "\n");
    run_free(&r);
}

Test(manifest_check, a_routine_that_stops_ends_the_worker_and_says_what_it_printed) {
    cli_run r = run_check(MANIFEST("fx_stop"),
                        "{\"inputs\": {\"x\": [-1, 2]}}");
    assert_verdict(&r, "\napply: ENDED the worker process: ",
                   "\nverdict: NOT safe to run in-process: apply ended the worker (exited with "
                   "status 0)");
    run_free(&r);
    /* XERBLA's message, from the worker's stderr, under the endpoint */
    r = run_check(MANIFEST("lapack_dposv_bad_uplo"));
    assert_verdict(&r, "exited with status 0", "apply ended the worker (exited with status 0)");
    assert_contains(r.out, "  | ");
    assert_contains(r.out, "On entry to DPOSV parameter number  1 had an illegal value");
    run_free(&r);
}

Test(manifest_check, a_routine_that_never_returns_is_reported_hung_after_the_timeout) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cli_run r = run_check("--timeout-ms", "300", MANIFEST("fx_wait"));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_verdict(&r, "\napply: HUNG: no answer within 300 ms (--timeout-ms), the worker was "
                       "killed\n",
                   "\nverdict: NOT safe to run in-process: apply hung (no answer within 300 ms)");
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    cr_expect(s < 20, "the check took %.1f s", s);
    run_free(&r);
}

Test(manifest_check, a_routine_that_writes_an_input_declared_readonly_is_caught) {
    cli_run r = run_check(MANIFEST("fx_clobber_nocopy"));
    assert_verdict(&r, "\napply: WROTE its input 'x' (element 0 was 0.25, is nan)",
                   "\nverdict: NOT safe to run in-process: apply wrote its input 'x', declared "
                   "\"readonly\"; run it in --mode worker");
    run_free(&r);
}

Test(manifest_check, an_adjoint_that_adds_to_its_results_runs_cleanly_as_they_are_cleared) {
    static const char *const all[] = {"apply", "jvp", "vjp", NULL};
    cli_run r = run_check(MANIFEST("fx_model_nozero"));
    assert_clean(&r, all);
    run_free(&r);
}

Test(manifest_check, an_adjoint_that_keeps_state_between_calls_is_not_repeatable) {
    cli_run r = run_check(MANIFEST("fx_model_drift"));
    assert_verdict(&r, "\nvjp: gave NOT the same answer twice (the gradient of 'x', element 0",
                   "\nverdict: NOT shown safe to run in-process: vjp gave another answer when "
                   "run again; fix the manifest");
    assert_contains(r.out, "keeps state between calls");
    assert_contains(r.out, "\napply: " CLEAN "\n");
    run_free(&r);
}

Test(manifest_check, non_finite_results_and_failures_are_not_clean) {
    cli_run r = run_check(MANIFEST("fx_clobber"),
                        "{\"inputs\": {\"x\": [1e308, 1]}}");
    assert_verdict(&r, "\napply: gave results that are NOT finite (output 'y', element 0, is inf)",
                   "verdict: NOT shown safe to run in-process: apply gave results that are not "
                   "finite");
    run_free(&r);
    r = run_check(MANIFEST("fx_info"), "{\"inputs\": {\"x\": [2, 2]}}");
    assert_verdict(&r, "\napply: FAILED: component 'fx_info', endpoint 'apply': the plugin "
                       "failed: fx_info_ reported info = 2: x[0] is positive\n",
                   "verdict: NOT shown safe to run in-process: apply failed with these inputs; "
                   "fix the manifest, or give a PAYLOAD the routine accepts");
    run_free(&r);
}

/* ---- the command's own errors ------------------------------------------------ */

Test(manifest_check, usage_load_and_payload_errors_have_their_statuses) {
    cli_run r = run_cli(NULL, "check-manifest");
    assert_fails(&r, EXIT_USAGE, "missing MANIFEST");
    run_free(&r);
    r = run_check("--option", "mode=inproc", MANIFEST("fx_clobber"));
    assert_fails(&r, EXIT_USAGE, "always runs the component in a worker");
    run_free(&r);
    r = run_check("--timeout-ms", "soon", MANIFEST("fx_clobber"));
    assert_fails(&r, EXIT_USAGE, "--timeout-ms takes a positive number of milliseconds");
    run_free(&r);
    r = run_check(MANIFEST("fx_clobber"), "{}", "extra");
    assert_fails(&r, EXIT_USAGE, "too many arguments");
    run_free(&r);
    r = run_check(MANIFEST("bad_symbol"));
    assert_fails(&r, EXIT_LOAD, "endpoints.apply.symbol");
    run_free(&r);
    r = run_check(MANIFEST("fx_clobber"), "{\"inputs\": {}}");
    assert_fails(&r, EXIT_PAYLOAD, "field 'inputs.x': required input is missing");
    run_free(&r);
}

Test(manifest_check, the_help_describes_the_command) {
    cli_run r = run_check("--help");
    assert_ok(&r);
    assert_contains(r.out, "Usage: tessera check-manifest [OPTIONS] MANIFEST [PAYLOAD]");
    assert_contains(r.out, "Give a PAYLOAD when the");
    run_free(&r);
    r = run_cli(NULL, "--help");
    assert_contains(r.out, "  check-manifest MANIFEST [PAYLOAD]\n");
    run_free(&r);
}

/* ---- warnings at load ------------------------------------------------------- */

typedef struct warnings {
    int n;
    char text[4][TSR_ERRMSG_MAX];
} warnings;

static void collect(void *user, tsr_log_level level, const char *component, const char *msg) {
    (void)component;
    warnings *w = user;
    if (level >= TSR_LOG_WARN && w->n < 4) snprintf(w->text[w->n++], TSR_ERRMSG_MAX, "%s", msg);
}

/* The warnings of an in-process open (the manifest still loads). */
static warnings open_warnings(const char *path) {
    warnings w = {0};
    tsr_options *o = mode_options(TSR_MODE_INPROC);
    tsr_options_set_log(o, collect, &w);
    tsr_component *c = open_ok(path, o);
    tsr_close(c);
    tsr_options_free(o);
    return w;
}

Test(manifest_check, argument_lists_that_look_wrong_are_warned_at_load_not_refused) {
    warnings w = open_warnings(MANIFEST("fx_info_c"));
    cr_assert_eq(w.n, 1);
    assert_contains(w.text[0], MANIFEST("fx_info_c") ": endpoints.apply.args[0]: 'dim' is "
                               "passed by value (\"convention\": \"c\")");
    assert_contains(w.text[0], "say \"convention\": \"fortran\"");
    w = open_warnings(MANIFEST("fx_chars_c"));
    cr_assert_eq(w.n, 1);
    assert_contains(w.text[0], "endpoints.apply.args[0]: 'char' gets no hidden length under "
                               "\"convention\": \"c\", but the symbol 'fx_chars_'");
    w = open_warnings(MANIFEST("fx_chars_nolen"));
    cr_assert_eq(w.n, 1);
    assert_contains(w.text[0], "endpoints.apply.args[0]: \"hidden_length\": false for "
                               "'fx_chars_', a Fortran routine");
    w = open_warnings(MANIFEST("fx_lint_sizes"));
    cr_assert_eq(w.n, 1);
    assert_contains(w.text[0], "endpoints.apply.args[4]: '2*n-1' is -1 when the dimensions are "
                               "0 (an empty input)");
}

Test(manifest_check, correct_manifests_load_without_warnings) {
    static const char *const good[] = {
        "fx_info", "fx_chars", "fx_wsq", "fx_consts", "fx_status", "fx_axpy64", "fx_model",
        "fx_from_first", "fx_scale_cols", "fx_range", "lapack_ddot", "lapack_dsyev",
        "lapack_dposv_vjp", "gsl_bessel_jn_array", NULL};
    for (const char *const *m = good; *m; m++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.json", TSR_TEST_MANIFEST_DIR, *m);
        warnings w = open_warnings(path);
        cr_expect_eq(w.n, 0, "%s: %s", *m, w.text[0]);
    }
}
