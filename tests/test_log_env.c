/* SPDX-License-Identifier: MIT */
/* TESSERA_LOG: the log level every host gets by default (an explicit
 * log_level option wins; a value that names no level is refused with one
 * warning naming the variable and the accepted values, and the open goes
 * on at the default), and the line a call logs at level debug: endpoint,
 * result code and time as "ms=" with three decimals, as tessera serve's
 * access log writes it. Each Test runs in its own process: setenv here
 * touches no other test. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"
#include "worker_util.h"

typedef struct log_seen {
    int n;
    tsr_log_level level[64];
    char component[64][64];
    char text[64][512];
} log_seen;

static void collect(void *user, tsr_log_level level, const char *component, const char *message) {
    log_seen *l = user;
    if (l->n >= 64) return;
    l->level[l->n] = level;
    snprintf(l->component[l->n], sizeof l->component[0], "%s", component);
    snprintf(l->text[l->n], sizeof l->text[0], "%s", message);
    l->n++;
}

/* The lines that start with "call ". */
static int call_lines(const log_seen *l) {
    int n = 0;
    for (int i = 0; i < l->n; i++) n += strncmp(l->text[i], "call ", 5) == 0;
    return n;
}

/* noop opened with options made under the environment as it is now (and
 * log_level when not NULL), one good apply and one that fails (x unbound). */
static void open_and_call(const char *plugin, const char *log_level, log_seen *seen) {
    memset(seen, 0, sizeof *seen);
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    if (log_level) set_option(o, "log_level", log_level);
    tsr_options_set_log(o, collect, seen);
    tsr_component *c = open_ok(plugin, o);
    tsr_options_free(o);
    double xs[2] = {1, 2};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(xs, 2));
    run_ok(call);
    tsr_call_free(call);
    call = new_call(c, TSR_EP_APPLY);
    run_fails(call, TSR_E_MISSING);
    tsr_call_free(call);
    tsr_close(c);
}

/* "ms=" then digits, a point and exactly three digits, ending the line. */
static int ends_with_ms(const char *line) {
    const char *ms = strstr(line, " ms=");
    if (!ms) return 0;
    const char *p = ms + 4;
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) p++;
    if (*p++ != '.') return 0;
    for (int i = 0; i < 3; i++)
        if (!isdigit((unsigned char)*p++)) return 0;
    return *p == '\0';
}

Test(log_env, debug_logs_one_line_per_call_with_endpoint_code_and_ms) {
    setenv("TESSERA_LOG", "debug", 1);
    log_seen seen;
    open_and_call(BUNDLED_PLUGIN("noop"), NULL, &seen);
    int good = -1, bad = -1;
    for (int i = 0; i < seen.n; i++) {
        if (strncmp(seen.text[i], "call apply rc=0 ms=", 19) == 0) good = i;
        if (strncmp(seen.text[i], "call apply rc=-8 error=", 23) == 0) bad = i;
    }
    cr_assert_geq(good, 0, "no line for the good call among %d", seen.n);
    cr_assert_geq(bad, 0, "no line for the failed call among %d", seen.n);
    cr_expect_eq(call_lines(&seen), 2, "one line per call");
    for (int k = 0; k < 2; k++) {
        int i = k ? bad : good;
        cr_expect_eq(seen.level[i], TSR_LOG_DEBUG);
        cr_expect_str_eq(seen.component[i], "noop");
        cr_expect(ends_with_ms(seen.text[i]), "not ms=D.DDD at the end: '%s'", seen.text[i]);
    }
    assert_contains(seen.text[bad], tsr_error_type(TSR_E_MISSING));
}

Test(log_env, capitals_name_the_same_level) {
    setenv("TESSERA_LOG", "DEBUG", 1);
    log_seen seen;
    open_and_call(BUNDLED_PLUGIN("noop"), NULL, &seen);
    cr_expect_eq(call_lines(&seen), 2);
}

Test(log_env, an_explicit_log_level_wins_over_the_environment) {
    setenv("TESSERA_LOG", "debug", 1);
    log_seen seen;
    open_and_call(BUNDLED_PLUGIN("noop"), "warn", &seen);
    cr_expect_eq(call_lines(&seen), 0, "log_level=warn, yet debug lines came");
    setenv("TESSERA_LOG", "off", 1);
    open_and_call(BUNDLED_PLUGIN("noop"), "debug", &seen);
    cr_expect_eq(call_lines(&seen), 2, "log_level=debug under TESSERA_LOG=off");
}

Test(log_env, info_and_above_log_no_call_lines) {
    const char *levels[] = {"info", "warn", "error"};
    for (int k = 0; k < 3; k++) {
        setenv("TESSERA_LOG", levels[k], 1);
        log_seen seen;
        open_and_call(BUNDLED_PLUGIN("noop"), NULL, &seen);
        cr_expect_eq(call_lines(&seen), 0, "TESSERA_LOG=%s", levels[k]);
        for (int i = 0; i < seen.n; i++)
            cr_expect_geq((int)seen.level[i], (int)TSR_LOG_INFO + k,
                          "TESSERA_LOG=%s let '%s' through", levels[k], seen.text[i]);
    }
}

Test(log_env, off_silences_a_plugins_warning_and_warn_lets_it_through) {
    setenv("TESSERA_LOG", "warn", 1);
    log_seen seen;
    open_and_call(TEST_PLUGIN("talk"), NULL, &seen);
    int warned = 0;
    for (int i = 0; i < seen.n; i++) warned += strcmp(seen.text[i], "a warning from talk") == 0;
    cr_expect_eq(warned, 1);
    setenv("TESSERA_LOG", "off", 1);
    open_and_call(TEST_PLUGIN("talk"), NULL, &seen);
    cr_expect_eq(seen.n, 0, "TESSERA_LOG=off, yet '%s'", seen.n ? seen.text[0] : "");
}

Test(log_env, an_invalid_value_keeps_the_default_and_the_open_succeeds) {
    const char *bad[] = {"verbose", "2", "debug ", "warning", "DEBUGX"};
    for (int k = 0; k < 5; k++) {
        setenv("TESSERA_LOG", bad[k], 1);
        log_seen seen;
        open_and_call(TEST_PLUGIN("talk"), NULL, &seen);
        cr_expect_eq(call_lines(&seen), 0, "TESSERA_LOG='%s' acted as debug", bad[k]);
        int warned = 0;
        for (int i = 0; i < seen.n; i++) warned += strcmp(seen.text[i], "a warning from talk") == 0;
        cr_expect_eq(warned, 1, "TESSERA_LOG='%s': the default, warn, is gone", bad[k]);
    }
}

/* The CLI is a host like any other; the warning comes once, on stderr. */
/* In worker mode too: the worker leaves TESSERA_LOG to its host. */
Test(log_env, the_cli_warns_once_about_an_invalid_value_naming_the_accepted_ones) {
    setenv("TESSERA_LOG", "verbose", 1);
    const char *modes[] = {"inproc", "worker"};
    for (int m = 0; m < 2; m++) {
        cli_run r = run_cli(NULL, "apply", "--mode", modes[m], BUNDLED_PLUGIN("noop"),
                            "{\"inputs\": {\"x\": [1, 2]}}");
        cr_expect_eq(r.status, 0, "%s: stderr: %s", modes[m], r.err);
        const char *want = "TESSERA_LOG='verbose' is not a log level (accepted: debug, info, "
                           "warn, error, off); the default, warn, stays";
        const char *at = strstr(r.err, want);
        cr_expect_not_null(at, "%s: stderr: %s", modes[m], r.err);
        if (at) cr_expect_null(strstr(at + 1, want), "%s: warned twice: %s", modes[m], r.err);
        run_free(&r);
    }
}

Test(log_env, the_cli_at_debug_logs_the_call_on_stderr) {
    setenv("TESSERA_LOG", "debug", 1);
    cli_run r = run_cli(NULL, "apply", BUNDLED_PLUGIN("noop"), "{\"inputs\": {\"x\": [1, 2]}}");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    const char *line = strstr(r.err, "tessera[noop] DEBUG: call apply rc=0 ms=");
    cr_assert_not_null(line, "stderr: %s", r.err);
    char one[256];
    size_t len = strcspn(line, "\n");
    snprintf(one, sizeof one, "%.*s", (int)len, line);
    cr_expect(ends_with_ms(one), "'%s'", one);
    run_free(&r);
}

Test(log_env, a_worker_mode_call_at_debug_is_logged_by_the_host_once) {
    setenv("TESSERA_LOG", "debug", 1);
    log_seen seen;
    memset(&seen, 0, sizeof seen);
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    tsr_options_set_log(o, collect, &seen);
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), o);
    tsr_options_free(o);
    double xs[2] = {1, 2};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(xs, 2));
    run_ok(call);
    tsr_call_free(call);
    tsr_close(c);
    cr_expect_eq(call_lines(&seen), 1);
}
