/* SPDX-License-Identifier: MIT */
/*
 * Cancelling a call (tsr_call_cancel, tsr_call_set_cancel_check,
 * tsr_ctx_cancelled) in every mode, with tests/plugins/long_call.c: apply
 * runs for `ms` milliseconds (an input), polling for cancellation unless
 * configured with poll=0.
 *
 * Bounds on time are generous (a loaded machine): a cancelled 3 s call
 * must end well before 3 s, nothing tighter. Where a test needs a polling
 * worker to answer within the cancel grace (to be reused), it sets
 * cancel_grace_ms to GENEROUS_GRACE, so that how the scheduler runs the
 * worker (4 test programs on 2 cores, ASan) cannot turn the answer into a
 * kill; with the default grace a slow answer is a kill, a behaviour of its
 * own, tested with a plugin that never answers.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>

#include "worker_util.h"

#define LONG_MS 3000.0
#define ENDS_BEFORE_MS 1500.0   /* a cancelled LONG_MS call ends before this */
#define GENEROUS_GRACE "1000"   /* cancel_grace_ms: past any scheduling delay */

typedef struct long_call {
    tsr_component *c;
    tsr_call *call;
    double ms, x[4], xs[4 * 4], mss[4];
} long_call;

/* long_call.so in a mode, with the configuration and options given
 * (NULL: none, the default). */
static void open_long_grace(long_call *lc, tsr_mode mode, const char *poll, const char *how,
                            const char *workers, const char *grace) {
    tsr_options *o = mode_options(mode);
    if (poll) set_config(o, "poll", poll);
    if (how) set_config(o, "how", how);
    if (workers) set_option(o, "workers", workers);
    if (grace) set_option(o, "cancel_grace_ms", grace);
    lc->c = open_ok(TEST_PLUGIN("long_call"), o);
    tsr_options_free(o);
    lc->call = tsr_call_new(lc->c, TSR_EP_APPLY);
    cr_assert_not_null(lc->call);
    for (int i = 0; i < 4; i++) lc->x[i] = i + 1;
    bind_ok(lc->call, "ms", f64_scalar(&lc->ms));
    bind_ok(lc->call, "x", f64_vec(lc->x, 4));
}

static void open_long(long_call *lc, tsr_mode mode, const char *poll, const char *how,
                      const char *workers) {
    open_long_grace(lc, mode, poll, how, workers, NULL);
}

static void close_long(long_call *lc) {
    tsr_call_free(lc->call);
    tsr_close(lc->c);
}

/* Run for ms; the code, and in *took how long the run took. */
static int run_for(long_call *lc, double ms, double *took) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    lc->ms = ms;
    int rc = tsr_call_run(lc->call);
    if (took) *took = ms_since(&t0);
    return rc;
}

static void run_short_ok(long_call *lc) {
    int rc = run_for(lc, 1.0, NULL);
    assert_code(rc, 0, tsr_call_errmsg(lc->call));
    const tsr_array *y = tsr_call_output(lc->call, "y");
    cr_assert_not_null(y);
    cr_assert_eq(((const double *)y->data)[3], 4.0);
}

/* A thread that cancels a call after a delay. */
typedef struct canceller {
    tsr_call *call;
    long after_ms;
    pthread_t thread;
} canceller;

static void *cancel_later(void *arg) {
    canceller *k = arg;
    sleep_ms(k->after_ms);
    tsr_call_cancel(k->call);
    return NULL;
}

static void cancel_in(canceller *k, tsr_call *call, long after_ms) {
    k->call = call;
    k->after_ms = after_ms;
    cr_assert_eq(pthread_create(&k->thread, NULL, cancel_later, k), 0);
}

/* A long call cancelled from another thread ends early, with
 * TSR_E_CANCELLED; returns its message. */
static const char *cancelled_early(long_call *lc) {
    canceller k;
    cancel_in(&k, lc->call, 200);
    double took;
    int rc = run_for(lc, LONG_MS, &took);
    pthread_join(k.thread, NULL);
    assert_code(rc, TSR_E_CANCELLED, tsr_call_errmsg(lc->call));
    cr_assert(took < ENDS_BEFORE_MS, "the cancelled call took %.0f ms", took);
    cr_assert_eq(tsr_call_n_results(lc->call), 0, "a cancelled run has no results");
    return tsr_call_errmsg(lc->call);
}

/* cancel_grace_ms takes 1 ms to a day; 0 (never wait), a negative, a
 * non-number and past a day are refused, naming the option. */
Test(cancel, grace_option_refuses_values_out_of_range) {
    const char *bad[] = {"0", "-5", "10ms", "", "86400001"};
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tsr_error err = TSR_ERROR_INIT;
        assert_code(tsr_options_set(o, "cancel_grace_ms", bad[i], &err), TSR_E_ARGUMENT,
                    err.message);
        assert_contains(err.message, "option 'cancel_grace_ms'");
    }
    set_option(o, "cancel_grace_ms", "1");
    set_option(o, "cancel_grace_ms", "86400000");
    tsr_options_free(o);
}

Test(cancel, strerror_names_the_code) {
    cr_assert_str_eq(tsr_strerror(TSR_E_CANCELLED), "call cancelled");
    assert_code(tsr_call_cancel(NULL), TSR_E_ARGUMENT, "");
    assert_code(tsr_call_set_cancel_check(NULL, NULL, NULL, 0), TSR_E_ARGUMENT, "");
}

/* In-process, the plugin stops at its next poll; the component serves on. */
Test(cancel, inproc_plugin_that_polls_stops) {
    for (int m = TSR_MODE_INPROC; m <= TSR_MODE_ISOLATED; m++) {
        long_call lc;
        open_long(&lc, (tsr_mode)m, NULL, NULL, NULL);
        const char *msg = cancelled_early(&lc);
        assert_contains(msg, "cancelled");
        assert_contains(msg, "the plugin failed: cancelled after");
        run_short_ok(&lc);
        close_long(&lc);
    }
}

/* A plugin that never polls runs to its end; the run fails all the same,
 * and the request is consumed by it. */
Test(cancel, inproc_plugin_that_does_not_poll_finishes_then_fails) {
    long_call lc;
    open_long(&lc, TSR_MODE_INPROC, "0", NULL, NULL);
    canceller k;
    cancel_in(&k, lc.call, 50);
    double took;
    int rc = run_for(&lc, 400.0, &took);
    pthread_join(k.thread, NULL);
    assert_code(rc, TSR_E_CANCELLED, tsr_call_errmsg(lc.call));
    cr_assert(took >= 390.0, "the plugin cannot be stopped, yet the call took %.0f ms", took);
    assert_contains(tsr_call_errmsg(lc.call), "results are dropped");
    run_short_ok(&lc);
    close_long(&lc);
}

/* A request made between runs cancels the next run before the plugin. */
Test(cancel, request_before_a_run_fails_it_at_once) {
    for (int m = TSR_MODE_INPROC; m <= TSR_MODE_WORKER; m++) {
        long_call lc;
        open_long(&lc, (tsr_mode)m, NULL, NULL, NULL);
        uint64_t calls = stats_of(lc.c).calls;
        assert_code(tsr_call_cancel(lc.call), 0, "");
        double took;
        int rc = run_for(&lc, LONG_MS, &took);
        assert_code(rc, TSR_E_CANCELLED, tsr_call_errmsg(lc.call));
        assert_contains(tsr_call_errmsg(lc.call), "cancelled before it ran");
        cr_assert(took < ENDS_BEFORE_MS, "%s: took %.0f ms", mode_names[m], took);
        cr_assert_eq(stats_of(lc.c).calls, calls, "%s: the plugin was called", mode_names[m]);
        run_short_ok(&lc); /* consumed */
        close_long(&lc);
    }
}

/* Worker mode, a plugin that polls, given a grace no scheduling delay
 * reaches: the worker stops the call and is reused (no death, no new
 * start). */
Test(cancel, worker_plugin_that_polls_is_reused) {
    long_call lc;
    open_long_grace(&lc, TSR_MODE_WORKER, NULL, NULL, NULL, GENEROUS_GRACE);
    pid_t pid = only_worker();
    const char *msg = cancelled_early(&lc);
    assert_contains(msg, "stopped the call and serves on");
    run_short_ok(&lc);
    tsr_stats s = stats_of(lc.c);
    cr_assert_eq(s.worker_deaths, 0);
    cr_assert_eq(s.worker_starts, 1);
    cr_assert_eq(only_worker(), pid, "the same worker serves on");
    close_long(&lc);
}

/* Worker mode, a plugin that does not poll (sleeping or spinning): the
 * worker never answers, so it is killed after the grace (the default, or
 * cancel_grace_ms), the message says so, and another starts at the next
 * call, with restart=never too. */
Test(cancel, worker_plugin_that_does_not_poll_is_killed_and_replaced) {
    const char *hows[] = {"sleep", "spin"};
    const char *graces[] = {NULL, "40"};
    const char *within[] = {"did not stop within 25 ms", "did not stop within 40 ms"};
    for (int h = 0; h < 2; h++) {
        long_call lc;
        open_long_grace(&lc, TSR_MODE_WORKER, "0", hows[h], NULL, graces[h]);
        pid_t pid = only_worker();
        const char *msg = cancelled_early(&lc);
        assert_contains(msg, within[h]);
        assert_contains(msg, "was killed; another starts at the next call");
        cr_assert(wait_gone(pid, 2000), "%s: the worker %d is still there", hows[h], (int)pid);
        run_short_ok(&lc);
        tsr_stats s = stats_of(lc.c);
        cr_assert_eq(s.worker_deaths, 1, "%s", hows[h]);
        cr_assert_eq(s.worker_starts, 2, "%s", hows[h]);
        close_long(&lc);
    }
}

/* A batch over a pool stops every item in flight; given a grace no
 * scheduling delay reaches, each worker answers and the pool serves on
 * without a death. */
Test(cancel, worker_batch_stops_every_lane) {
    long_call lc;
    open_long_grace(&lc, TSR_MODE_WORKER, NULL, NULL, "2", GENEROUS_GRACE);
    int64_t shape[2] = {4, 4};
    for (int i = 0; i < 16; i++) lc.xs[i] = i;
    for (int i = 0; i < 4; i++) lc.mss[i] = LONG_MS;
    int64_t four = 4;
    bind_ok(lc.call, "ms", make_array(lc.mss, TSR_FLOAT64, 1, &four));
    bind_ok(lc.call, "x", make_array(lc.xs, TSR_FLOAT64, 2, shape));
    canceller k;
    cancel_in(&k, lc.call, 200);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = tsr_call_run_batch(lc.call, 4);
    double took = ms_since(&t0);
    pthread_join(k.thread, NULL);
    assert_code(rc, TSR_E_CANCELLED, tsr_call_errmsg(lc.call));
    cr_assert(took < ENDS_BEFORE_MS, "the cancelled batch took %.0f ms", took);
    for (int i = 0; i < 4; i++) lc.mss[i] = 1.0;
    rc = tsr_call_run_batch(lc.call, 4);
    assert_code(rc, 0, tsr_call_errmsg(lc.call));
    cr_assert_eq(stats_of(lc.c).worker_deaths, 0);
    close_long(&lc);
}

/* ---- the host's check ----------------------------------------------------- */

typedef struct check_state {
    pthread_t runner;
    _Atomic int calls, other_thread, stop;
} check_state;

static int check(void *user) {
    check_state *st = user;
    atomic_fetch_add(&st->calls, 1);
    if (!pthread_equal(pthread_self(), st->runner)) atomic_store(&st->other_thread, 1);
    return atomic_load(&st->stop);
}

static void *stop_later(void *arg) {
    sleep_ms(200);
    atomic_store(&((check_state *)arg)->stop, 1);
    return NULL;
}

/* The check runs every interval in the running thread, only during long
 * runs, and a nonzero answer cancels. */
Test(cancel, check_cancels_in_every_mode) {
    for (int m = TSR_MODE_INPROC; m <= TSR_MODE_WORKER; m++) {
        long_call lc;
        open_long(&lc, (tsr_mode)m, NULL, NULL, NULL);
        check_state st = {.runner = pthread_self()};
        assert_code(tsr_call_set_cancel_check(lc.call, check, &st, 20), 0, "");
        run_short_ok(&lc);
        cr_assert_eq(atomic_load(&st.calls), 0, "%s: checked during a 1 ms run",
                     mode_names[m]);
        assert_code(run_for(&lc, 200.0, NULL), 0, tsr_call_errmsg(lc.call));
        cr_assert(atomic_load(&st.calls) >= 2, "%s: %d checks in 200 ms", mode_names[m],
                  atomic_load(&st.calls));
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, stop_later, &st), 0);
        double took;
        int rc = run_for(&lc, LONG_MS, &took);
        pthread_join(t, NULL);
        assert_code(rc, TSR_E_CANCELLED, tsr_call_errmsg(lc.call));
        cr_assert(took < ENDS_BEFORE_MS, "%s: took %.0f ms", mode_names[m], took);
        cr_assert_eq(atomic_load(&st.other_thread), 0, "%s: checked by another thread",
                     mode_names[m]);
        atomic_store(&st.stop, 0);
        run_short_ok(&lc);
        assert_code(tsr_call_set_cancel_check(lc.call, NULL, NULL, 0), 0, "");
        close_long(&lc);
    }
}

/* ---- from a signal handler of the host's own ------------------------------- */

static tsr_call *volatile alarm_call;

static void on_alarm(int sig) {
    (void)sig;
    tsr_call_cancel(alarm_call);
}

Test(cancel, from_a_signal_handler) {
    for (int m = TSR_MODE_INPROC; m <= TSR_MODE_WORKER; m += TSR_MODE_WORKER) {
        long_call lc;
        open_long(&lc, (tsr_mode)m, m == TSR_MODE_WORKER ? "0" : NULL, NULL, NULL);
        alarm_call = lc.call;
        struct sigaction sa = {.sa_handler = on_alarm};
        sigemptyset(&sa.sa_mask);
        cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
        struct itimerval it = {.it_value = {0, 200 * 1000}};
        cr_assert_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
        double took;
        int rc = run_for(&lc, LONG_MS, &took);
        assert_code(rc, TSR_E_CANCELLED, tsr_call_errmsg(lc.call));
        cr_assert(took < ENDS_BEFORE_MS, "%s: took %.0f ms", mode_names[m], took);
        signal(SIGALRM, SIG_DFL);
        run_short_ok(&lc);
        close_long(&lc);
    }
}

/* ---- the plugin's side ------------------------------------------------------ */

/* Under a host whose tsr_host_api predates `cancelled`, tsr_ctx_cancelled
 * says 0 without reading past the host's struct. */
static int always(tsr_ctx *ctx) {
    (void)ctx;
    return 1;
}

Test(cancel, older_host_never_cancels) {
    tsr_host_api api = {.struct_size = sizeof api, .cancelled = always};
    tsr_ctx ctx = {.struct_size = sizeof ctx, .host = &api};
    cr_assert_eq(tsr_ctx_cancelled(&ctx), 1);
    api.struct_size = (uint32_t)offsetof(tsr_host_api, cancelled);
    cr_assert_eq(tsr_ctx_cancelled(&ctx), 0);
    api.struct_size = sizeof api;
    api.cancelled = NULL;
    cr_assert_eq(tsr_ctx_cancelled(&ctx), 0);
}
