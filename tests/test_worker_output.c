/* SPDX-License-Identifier: MIT */
/*
 * What a worker's plugin prints never holds a call: with a host whose
 * stderr is a pipe nobody reads, a plugin that prints 10 MB or never stops
 * printing leaves the call to end (or time out at timeout_ms), the lines
 * the host's stderr did not take are dropped and counted in a WARN log
 * message, and once stderr is read again a note in the stream says how
 * many are missing. Each body runs in a forked child with a watchdog
 * (alarm): a blocked host is killed and the test fails, instead of hanging.
 */
#include <pthread.h>

#include "worker_util.h"

TestSuite(output, .fini = expect_no_own_segments, .timeout = 90);

/* A generous deadline that only stops a hang: the calls below take well
 * under a second where nothing blocks. */
#define WATCHDOG_S 30

/* WARN messages of the component, counted and the last one kept. */
typedef struct warnings {
    pthread_mutex_t lock;
    int dropped_reports;
    char last[TSR_ERRMSG_MAX];
} warnings;

static void keep_warning(void *user, tsr_log_level level, const char *component,
                         const char *message) {
    (void)component;
    warnings *w = user;
    if (level < TSR_LOG_WARN) return;
    pthread_mutex_lock(&w->lock);
    if (strstr(message, "lines the plugin printed were dropped")) w->dropped_reports++;
    snprintf(w->last, sizeof w->last, "%s", message);
    pthread_mutex_unlock(&w->lock);
}

/* Make fd 2 a pipe that nobody reads (its read end is returned, kept open
 * so that writes neither fail nor raise SIGPIPE). */
static int stderr_to_unread_pipe(void) {
    int p[2];
    if (pipe(p) != 0) return -1;
    if (dup2(p[1], STDERR_FILENO) != STDERR_FILENO) return -1;
    close(p[1]);
    return p[0];
}

/* Open talk in a worker with one configuration key (and "lines" = 0 unless
 * that is the key) and a timeout (NULL: none). */
static tsr_component *open_talk(const char *key, const char *value, const char *timeout_ms,
                                tsr_log_fn log, void *log_user, char *why, size_t n) {
    tsr_options *o = tsr_options_new();
    tsr_error err = {0};
    tsr_component *c = NULL;
    if (!o || tsr_options_set(o, "mode", "worker", &err) ||
        (timeout_ms && tsr_options_set(o, "timeout_ms", timeout_ms, &err)) ||
        tsr_options_set_config(o, "lines", "0") || tsr_options_set_config(o, key, value)) {
        snprintf(why, n, "options refused: %s", err.message);
    } else {
        if (log) tsr_options_set_log(o, log, log_user);
        if (tsr_open(TEST_PLUGIN("talk"), o, &c, &err) != 0)
            snprintf(why, n, "tsr_open: %s", err.message);
    }
    tsr_options_free(o);
    return c;
}

static int apply_talk(tsr_component *c, char *msg, size_t n) {
    double x[1] = {1};
    tsr_array xa = {.data = x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {1}};
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    if (!call) return TSR_E_NOMEM;
    int rc = tsr_call_set_input(call, "x", &xa);
    if (!rc) rc = tsr_call_run(call);
    snprintf(msg, n, "%s", tsr_call_errmsg(call));
    tsr_call_free(call);
    return rc;
}

/* ---- a plugin that prints 10 MB ------------------------------------------------- */

static const char *ten_megabytes_to_an_unread_stderr(void) {
    alarm(WATCHDOG_S);
    static warnings w = {.lock = PTHREAD_MUTEX_INITIALIZER};
    char why[TSR_ERRMSG_MAX + 64] = "";
    if (stderr_to_unread_pipe() < 0) return "cannot make stderr a pipe";
    /* "long" prints one line of that many 'x', which reaches the host in
     * pieces of 4 KiB: 10 MB in about 2500 lines */
    tsr_component *c = open_talk("long", "10000000", "2000", keep_warning, &w, why, sizeof why);
    CHECK(c, "%s", why);
    char msg[TSR_ERRMSG_MAX];
    int rc = apply_talk(c, msg, sizeof msg);
    CHECK(rc == 0 || rc == TSR_E_TIMEOUT, "the call failed with %d: %s", rc, msg);
    CHECK(w.dropped_reports == 1, "%d reports of dropped lines (the last warning: %s)",
          w.dropped_reports, w.last);
    tsr_close(c);
    return "ok";
}

Test(output, ten_megabytes_printed_to_an_unread_stderr_do_not_block_the_call) {
    run_in_child(ten_megabytes_to_an_unread_stderr, NULL);
}

/* ---- a plugin that never stops printing --------------------------------------- */

static const char *endless_output_to_an_unread_stderr(void) {
    alarm(WATCHDOG_S);
    static warnings w = {.lock = PTHREAD_MUTEX_INITIALIZER};
    char why[TSR_ERRMSG_MAX + 64] = "";
    if (stderr_to_unread_pipe() < 0) return "cannot make stderr a pipe";
    tsr_component *c = open_talk("flood", "1", "1000", keep_warning, &w, why, sizeof why);
    CHECK(c, "%s", why);
    char msg[TSR_ERRMSG_MAX];
    int rc = apply_talk(c, msg, sizeof msg);
    CHECK(rc == TSR_E_TIMEOUT, "expected TSR_E_TIMEOUT, got %d: %s", rc, msg);
    CHECK(strstr(msg, "within 1000 ms"), "message: %s", msg);
    CHECK(w.dropped_reports == 1, "%d reports of dropped lines (the last warning: %s)",
          w.dropped_reports, w.last);
    tsr_close(c);
    return "ok";
}

Test(output, a_plugin_printing_without_end_to_an_unread_stderr_times_out) {
    run_in_child(endless_output_to_an_unread_stderr, NULL);
}

/* An output function that only counts: stderr is not involved, and the
 * call still ends at its timeout however fast the plugin prints. */
static void count_line(void *user, const char *component, const char *line) {
    (void)component;
    (void)line;
    ++*(long *)user;
}

Test(output, a_plugin_printing_without_end_to_an_output_function_times_out) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "timeout_ms", "1000");
    set_config(o, "lines", "0");
    set_config(o, "flood", "1");
    long lines = 0;
    tsr_options_set_output(o, count_line, &lines);
    tsr_component *c = open_ok(TEST_PLUGIN("talk"), o);
    tsr_options_free(o);
    char msg[TSR_ERRMSG_MAX];
    int rc = apply_talk(c, msg, sizeof msg); /* the suite's timeout catches a hang */
    cr_assert_eq(rc, TSR_E_TIMEOUT, "expected TSR_E_TIMEOUT, got %d: %s", rc, msg);
    cr_expect_gt(lines, 0, "lines reached the output function");
    tsr_close(c);
}

/* ---- the note once stderr is read again ---------------------------------------- */

typedef struct reader {
    int fd;
    char *text;
    size_t len, cap;
} reader;

static void *read_all(void *arg) {
    reader *r = arg;
    for (;;) {
        if (r->cap - r->len < 65536) {
            char *bigger = realloc(r->text, r->cap * 2 + 65536);
            if (!bigger) break;
            r->text = bigger;
            r->cap = r->cap * 2 + 65536;
        }
        ssize_t got = read(r->fd, r->text + r->len, r->cap - r->len - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        r->len += (size_t)got;
    }
    if (r->text) r->text[r->len] = '\0';
    return NULL;
}

static const char *dropped_lines_are_noted_when_stderr_is_read(void) {
    alarm(WATCHDOG_S);
    char why[TSR_ERRMSG_MAX + 64] = "";
    int saved = dup(STDERR_FILENO);
    int unread = stderr_to_unread_pipe();
    if (saved < 0 || unread < 0) return "cannot make stderr a pipe";
    /* 300 000 short lines (~3 MB): more than the pipe and the library's
     * buffer hold; the default log (stderr) */
    tsr_component *c = open_talk("lines", "300000", NULL, NULL, NULL, why, sizeof why);
    CHECK(c, "%s", why);
    char msg[TSR_ERRMSG_MAX];
    int rc = apply_talk(c, msg, sizeof msg);
    CHECK(rc == 0, "the call failed with %d: %s", rc, msg);
    /* now someone reads: what waited, then the note, reach the pipe by
     * tsr_close at the latest */
    reader r = {.fd = unread};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, read_all, &r) == 0, "no reader thread");
    tsr_close(c);
    dup2(saved, STDERR_FILENO); /* the pipe's last write end: the reader sees its end */
    close(saved);
    pthread_join(t, NULL);
    close(unread);
    CHECK(r.text, "nothing read");
    const char *first = strstr(r.text, "talk: out 1\n");
    const char *note = strstr(r.text, "lines of output were dropped here");
    CHECK(first, "the first lines are missing");
    CHECK(note && note > first, "no note on the dropped lines in %zu bytes", r.len);
    unsigned long long n = 0;
    const char *count = note;
    while (count > r.text && count[-1] != '\n') count--;
    CHECK(sscanf(count, "tessera: %llu lines", &n) == 1 && n > 0, "the note: %.200s", count);
    free(r.text);
    return "ok";
}

Test(output, dropped_lines_are_noted_in_the_stream_once_stderr_is_read) {
    run_in_child(dropped_lines_are_noted_when_stderr_is_read, NULL);
}
