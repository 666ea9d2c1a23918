/* SPDX-License-Identifier: MIT */
/*
 * Options: keys and values accepted or refused, the modes, configuration
 * handed to the plugin's init, init/fini of persistent state, and where
 * diagnostics go.
 */
#include <fcntl.h>

#include "test_util.h"

/* An unknown key is refused, naming the key. */
Test(options, unknown_key_refused) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    tsr_error err = {0};
    assert_code(tsr_options_set(o, "colour", "blue", &err), TSR_E_ARGUMENT, err.message);
    assert_code(err.code, TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "colour");
    tsr_options_free(o);
}

/* A bad mode value is refused, naming the value. */
Test(options, bad_mode_value_refused) {
    tsr_options *o = tsr_options_new();
    tsr_error err = {0};
    assert_code(tsr_options_set(o, "mode", "remote", &err), TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "remote");
    assert_code(tsr_options_set(o, "mode", "", &err), TSR_E_ARGUMENT, err.message);
    assert_code(tsr_options_set(o, "mode", "INPROC", &err), TSR_E_ARGUMENT, err.message);
    tsr_options_free(o);
}

/* A bad log_level value is refused, naming the value. */
Test(options, bad_log_level_refused) {
    tsr_options *o = tsr_options_new();
    tsr_error err = {0};
    assert_code(tsr_options_set(o, "log_level", "verbose", &err), TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "verbose");
    tsr_options_free(o);
}

/* Every documented key and value is accepted; err may be NULL. */
Test(options, documented_values_accepted) {
    tsr_options *o = tsr_options_new();
    const char *modes[] = {"inproc", "isolated", "worker"};
    const char *levels[] = {"debug", "info", "warn", "error", "off"};
    for (int k = 0; k < 3; k++) cr_assert_eq(tsr_options_set(o, "mode", modes[k], NULL), 0, "%s", modes[k]);
    for (int k = 0; k < 5; k++)
        cr_assert_eq(tsr_options_set(o, "log_level", levels[k], NULL), 0, "%s", levels[k]);
    cr_assert_eq(tsr_options_set(o, "bogus", "x", NULL), TSR_E_ARGUMENT);
    tsr_options_free(o);
}

/* NULL options, key or value are argument errors, not crashes. */
Test(options, null_arguments_refused) {
    tsr_options *o = tsr_options_new();
    cr_assert_eq(tsr_options_set(NULL, "mode", "inproc", NULL), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_options_set(o, NULL, "inproc", NULL), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_options_set(o, "mode", NULL, NULL), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_options_set_config(NULL, "k", "v"), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_options_set_config(o, NULL, "v"), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_options_set_config(o, "k", NULL), TSR_E_ARGUMENT);
    tsr_options_free(o);
    tsr_options_free(NULL);
}

/* The isolated and worker modes either work (reporting their mode and
 * computing the right result) or are refused with TSR_E_UNSUPPORTED and a
 * message naming the mode; nothing else. */
Test(options, isolated_and_worker_modes) {
    const char *modes[] = {"isolated", "worker"};
    tsr_mode want[] = {TSR_MODE_ISOLATED, TSR_MODE_WORKER};
    for (int k = 0; k < 2; k++) {
        tsr_options *o = tsr_options_new();
        cr_assert_eq(tsr_options_set(o, "mode", modes[k], NULL), 0);
        tsr_component *c = NULL;
        tsr_error err = {0};
        int rc = tsr_open(BUNDLED_PLUGIN("noop"), o, &c, &err);
        tsr_options_free(o);
        if (rc != 0) {
            assert_code(rc, TSR_E_UNSUPPORTED, err.message);
            cr_assert_null(c);
            assert_contains(err.message, modes[k]);
            continue;
        }
        cr_assert_eq(tsr_component_mode(c), want[k]);
        double x[3] = {1, 2, 3};
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 3));
        run_ok(call);
        cr_assert_eq(memcmp(tsr_call_output(call, "y")->data, x, sizeof x), 0);
        tsr_call_free(call);
        tsr_close(c);
    }
}

static void apply_stateful(tsr_component *c, double *x, int64_t n, double *y) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, n));
    run_ok(call);
    memcpy(y, tsr_call_output(call, "y")->data, (size_t)n * sizeof(double));
    tsr_call_free(call);
}

/* Configuration reaches init: with scale = 2.5 apply gives 2.5 x. */
Test(options, config_reaches_init) {
    tsr_component *c = open_with_config(TEST_PLUGIN("stateful"), "scale", "2.5");
    double x[3] = {1, -2, 0.25}, y[3];
    apply_stateful(c, x, 3, y);
    for (int i = 0; i < 3; i++) cr_assert_eq(y[i], 2.5 * x[i]);
    tsr_close(c);
}

/* A key set twice keeps the last value, and the strings are copied. */
Test(options, config_last_value_wins_and_is_copied) {
    tsr_options *o = tsr_options_new();
    char value[8] = "7";
    cr_assert_eq(tsr_options_set_config(o, "scale", "2"), 0);
    cr_assert_eq(tsr_options_set_config(o, "scale", value), 0);
    strcpy(value, "9");
    tsr_component *c = open_ok(TEST_PLUGIN("stateful"), o);
    tsr_options_free(o);
    double x[1] = {3}, y[1];
    apply_stateful(c, x, 1, y);
    cr_assert_eq(y[0], 7.0 * x[0]);
    tsr_close(c);
}

/* A key that was not configured reads as NULL: the plugin's default. */
Test(options, absent_config_key_reads_null) {
    tsr_component *c = open_ok(TEST_PLUGIN("stateful"), NULL);
    double x[2] = {4, 5}, y[2];
    apply_stateful(c, x, 2, y);
    cr_assert_eq(y[0], 4.0);
    cr_assert_eq(y[1], 5.0);
    tsr_close(c);
}

/* A configuration value init rejects gives TSR_E_INIT with its message. */
Test(options, rejected_config_fails_init) {
    tsr_options *o = tsr_options_new();
    cr_assert_eq(tsr_options_set_config(o, "scale", "twelve"), 0);
    tsr_error err = open_fails(TEST_PLUGIN("stateful"), o);
    tsr_options_free(o);
    assert_code(err.code, TSR_E_INIT, err.message);
    assert_contains(err.message, "scale is not a number: 'twelve'");
}

/* init runs once at open and fini once at close, with the state init
 * made (fini reports the number of apply calls that state saw). */
Test(options, init_and_fini_bracket_the_state) {
    char marker[256];
    temp_path(marker, sizeof marker);
    tsr_component *c = open_with_config(TEST_PLUGIN("stateful"), "marker", marker);
    cr_assert_str_eq(read_file_text(marker), "init\n");
    double x[1] = {1}, y[1];
    apply_stateful(c, x, 1, y);
    apply_stateful(c, x, 1, y);
    cr_assert_str_eq(read_file_text(marker), "init\n");
    tsr_close(c);
    cr_assert_str_eq(read_file_text(marker), "init\nfini calls=2\n");
    unlink(marker);
}

/* The same options can open several components. */
Test(options, options_reusable) {
    tsr_options *o = tsr_options_new();
    cr_assert_eq(tsr_options_set_config(o, "scale", "-1"), 0);
    tsr_component *a = open_ok(TEST_PLUGIN("stateful"), o);
    tsr_component *b = open_ok(TEST_PLUGIN("stateful"), o);
    tsr_options_free(o);
    double x[1] = {6}, y[1];
    apply_stateful(a, x, 1, y);
    cr_assert_eq(y[0], -x[0]);
    apply_stateful(b, x, 1, y);
    cr_assert_eq(y[0], -x[0]);
    tsr_close(a);
    tsr_close(b);
}

typedef struct log_record {
    int debug_notes, warn_notes;
    int wrong_component;
} log_record;

static void record_log(void *user, tsr_log_level level, const char *component, const char *message) {
    log_record *r = user;
    if (strstr(message, "stateful debug note")) {
        r->debug_notes++;
        cr_assert_eq(level, TSR_LOG_DEBUG);
    }
    if (strstr(message, "stateful warning note")) {
        r->warn_notes++;
        cr_assert_eq(level, TSR_LOG_WARN);
    }
    if ((strstr(message, "stateful ") != NULL) && (!component || strcmp(component, "stateful") != 0))
        r->wrong_component++;
}

static log_record log_with_level(const char *level) {
    log_record r = {0};
    tsr_options *o = tsr_options_new();
    if (level) cr_assert_eq(tsr_options_set(o, "log_level", level, NULL), 0);
    tsr_options_set_log(o, record_log, &r);
    tsr_component *c = open_ok(TEST_PLUGIN("stateful"), o);
    tsr_options_free(o);
    double x[1] = {1}, y[1];
    apply_stateful(c, x, 1, y);
    tsr_close(c);
    cr_assert_eq(r.wrong_component, 0, "log callback got the wrong component name");
    return r;
}

/* The log function receives the plugin's messages with its name, filtered
 * by log_level (default warn). */
Test(options, log_level_filters_plugin_messages) {
    log_record r = log_with_level(NULL);
    cr_assert_eq(r.debug_notes, 0);
    cr_assert_eq(r.warn_notes, 1);
    r = log_with_level("debug");
    cr_assert_eq(r.debug_notes, 1);
    cr_assert_eq(r.warn_notes, 1);
    r = log_with_level("error");
    cr_assert_eq(r.warn_notes, 0);
    r = log_with_level("off");
    cr_assert_eq(r.debug_notes + r.warn_notes, 0);
}

/* Run fn with stdout and stderr captured into files; returns via paths. */
static void capture_output(void (*fn)(void), char *out_path, char *err_path) {
    temp_path(out_path, 256);
    temp_path(err_path, 256);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int fo = open(out_path, O_WRONLY | O_TRUNC), fe = open(err_path, O_WRONLY | O_TRUNC);
    cr_assert(saved_out >= 0 && saved_err >= 0 && fo >= 0 && fe >= 0);
    dup2(fo, 1);
    dup2(fe, 2);
    fn();
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(fo);
    close(fe);
    close(saved_out);
    close(saved_err);
}

static void run_stateful_default_log(void) {
    tsr_component *c = open_ok(TEST_PLUGIN("stateful"), NULL);
    double x[1] = {1}, y[1];
    apply_stateful(c, x, 1, y);
    tsr_close(c);
}

/* By default a warning goes to stderr as "tessera[component] ..." and
 * nothing at all is written to stdout. */
Test(options, default_log_goes_to_stderr_never_stdout) {
    char out_path[256], err_path[256];
    capture_output(run_stateful_default_log, out_path, err_path);
    cr_assert_str_eq(read_file_text(out_path), "", "the library wrote to stdout");
    const char *err = read_file_text(err_path);
    assert_contains(err, "tessera[stateful]");
    assert_contains(err, "stateful warning note");
    cr_assert_null(strstr(err, "stateful debug note"), "debug message shown at level warn");
    unlink(out_path);
    unlink(err_path);
}

static log_record restored;

static void run_stateful_restored_log(void) {
    tsr_options *o = tsr_options_new();
    tsr_options_set_log(o, record_log, &restored);
    tsr_options_set_log(o, NULL, NULL);
    tsr_component *c = open_ok(TEST_PLUGIN("stateful"), o);
    tsr_options_free(o);
    double x[1] = {1}, y[1];
    apply_stateful(c, x, 1, y);
    tsr_close(c);
}

/* Setting the log function back to NULL restores the stderr default. */
Test(options, null_log_function_restores_default) {
    char out_path[256], err_path[256];
    capture_output(run_stateful_restored_log, out_path, err_path);
    cr_assert_eq(restored.warn_notes, 0, "the replaced log function was still called");
    assert_contains(read_file_text(err_path), "stateful warning note");
    unlink(out_path);
    unlink(err_path);
}
