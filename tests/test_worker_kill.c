/* SPDX-License-Identifier: MIT */
/*
 * A worker killed (SIGKILL: no chance to clean up or say why) at each step
 * of its life and of a call: during start-up, while idle between calls,
 * before and after the CHAN_ALLOC round trip of a result it sizes itself,
 * and with its result written but not yet answered. Each ends in a clear
 * TSR_E_WORKER naming the signal, or, where the request never reached the
 * worker and restart=auto, in the call simply working; tsr_component_restart and
 * restart=auto bring the component back; nothing is left in /dev/shm and
 * no process is left running.
 */
#include "worker_util.h"

TestSuite(worker_kill, .fini = expect_no_own_segments, .timeout = 60);

static tsr_component *open_die(const char *at, const char *on_call, const char *restart) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_config(o, "at", at);
    if (on_call) set_config(o, "call", on_call);
    if (restart) set_option(o, "restart", restart);
    tsr_component *c = open_ok(TEST_PLUGIN("die"), o);
    tsr_options_free(o);
    return c;
}

/* apply with x = {1, 2, 3}: 0 and y == x, or the failure's code. */
static int apply(tsr_component *c, const char **msg) {
    static double x[3] = {1, 2, 3};
    static char kept[TSR_ERRMSG_MAX];
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 3));
    int rc = tsr_call_run(call);
    snprintf(kept, sizeof kept, "%s", tsr_call_errmsg(call));
    if (msg) *msg = kept;
    if (rc == 0) {
        const tsr_array *y = tsr_call_output(call, "y");
        cr_assert_not_null(y);
        cr_assert_eq(y->shape[0], 3);
        cr_expect(memcmp(y->data, x, sizeof x) == 0, "y = x");
    } else {
        cr_expect_eq(tsr_call_n_results(call), 0, "a failed call has no results");
    }
    tsr_call_free(call);
    return rc;
}

static void no_worker_left(void) {
    cr_expect_eq(children_of(getpid(), (pid_t[4]){0}, 4), 0, "a worker process is left");
}

/* Closed: no process and no /dev/shm entry of this host remain. */
static void close_clean(tsr_component *c) {
    tsr_close(c);
    no_worker_left();
    cr_expect_eq(shm_entries_of(getpid()), 0, "segments remain after tsr_close");
}

Test(worker_kill, during_start_up_fails_tsr_open_naming_the_signal) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_config(o, "at", "init");
    tsr_error e = open_fails(TEST_PLUGIN("die"), o);
    tsr_options_free(o);
    assert_code(e.code, TSR_E_WORKER, e.message);
    assert_contains(e.message, "before it was ready");
    assert_contains(e.message, "killed by signal 9");
    no_worker_left();
    cr_expect_eq(shm_entries_of(getpid()), 0, "a failed tsr_open left segments");
}

/* Killed between calls, by someone else. */
static pid_t kill_idle_worker(void) {
    pid_t w = only_worker();
    cr_assert_eq(kill(w, SIGKILL), 0);
    cr_assert(wait_gone(w, 5000), "the killed worker did not die");
    return w;
}

Test(worker_kill, while_idle_fails_the_next_call_until_tsr_restart) {
    tsr_component *c = open_die("none", NULL, NULL);
    cr_assert_eq(apply(c, NULL), 0);
    pid_t first = kill_idle_worker();
    const char *msg;
    int rc = apply(c, &msg);
    assert_code(rc, TSR_E_WORKER, msg);
    char pid[32];
    snprintf(pid, sizeof pid, "(pid %ld)", (long)first);
    assert_contains(msg, pid);
    assert_contains(msg, "killed by signal 9");
    assert_code(apply(c, &msg), TSR_E_WORKER, msg);
    assert_contains(msg, "tsr_component_restart");
    cr_assert_eq(tsr_component_restart(c), 0);
    cr_assert_eq(apply(c, &msg), 0, "%s", msg);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.worker_starts, 2);
    cr_expect_eq(s.worker_deaths, 1);
    close_clean(c);
}

Test(worker_kill, while_idle_with_restart_auto_the_call_just_works) {
    tsr_component *c = open_die("none", NULL, "auto");
    cr_assert_eq(apply(c, NULL), 0);
    pid_t first = kill_idle_worker();
    const char *msg;
    cr_assert_eq(apply(c, &msg), 0, "the request never reached the dead worker: %s", msg);
    cr_expect_neq(only_worker(), first);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.worker_starts, 2);
    cr_expect_eq(s.worker_deaths, 1);
    close_clean(c);
}

/* The worker dies at `step` of its second call. */
static void killed_mid_call(const char *step, const char *restart) {
    tsr_component *c = open_die(step, "2", restart);
    cr_assert_eq(apply(c, NULL), 0, "the first call works");
    pid_t first = only_worker();
    const char *msg;
    int rc = apply(c, &msg);
    cr_log_info("%s: %s", step, msg);
    assert_code(rc, TSR_E_WORKER, msg);
    assert_contains(msg, "component 'die', endpoint 'apply'");
    assert_contains(msg, "killed by signal 9");
    cr_expect(process_gone(first), "the dead worker was reaped");
    if (restart == NULL) {
        /* restart=never: calls say why until tsr_component_restart */
        assert_code(apply(c, &msg), TSR_E_WORKER, msg);
        assert_contains(msg, "died earlier");
        cr_assert_eq(tsr_component_restart(c), 0);
    }
    /* the new worker counts its calls from 1 again */
    cr_assert_eq(apply(c, &msg), 0, "after the death: %s", msg);
    cr_expect_neq(only_worker(), first);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.worker_starts, 2);
    cr_expect_eq(s.worker_deaths, 1);
    close_clean(c);
}

Test(worker_kill, mid_request_before_the_alloc_round_trip) {
    killed_mid_call("before_alloc", NULL);
}

Test(worker_kill, mid_request_after_the_alloc_round_trip) {
    killed_mid_call("after_alloc", NULL);
}

Test(worker_kill, with_the_result_written_but_not_answered) {
    killed_mid_call("after_write", NULL);
}

/* A request that reached the worker is not sent again: it may have had
 * effects. restart=auto starts a new worker for the next call. */
Test(worker_kill, mid_request_with_restart_auto_fails_that_call_only) {
    killed_mid_call("after_alloc", "auto");
}

Test(worker_kill, one_of_a_pool_leaves_the_others_serving) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "workers", "2");
    set_option(o, "restart", "auto");
    tsr_component *c = open_ok(TEST_PLUGIN("die"), o);
    tsr_options_free(o);
    pid_t kids[4];
    cr_assert_eq(children_of(getpid(), kids, 4), 2);
    cr_assert_eq(kill(kids[0], SIGKILL), 0);
    cr_assert(wait_gone(kids[0], 5000));
    for (int i = 0; i < 4; i++) {
        const char *msg;
        cr_assert_eq(apply(c, &msg), 0, "call %d: %s", i, msg);
    }
    close_clean(c);
}

/* ---- deaths in a pool -------------------------------------------------------- */

/* Log messages, kept (WARN and above) for the tests below. */
typedef struct kept_log {
    pthread_mutex_t lock;
    int n;
    char text[16][TSR_ERRMSG_MAX];
} kept_log;

static void keep_warnings(void *user, tsr_log_level level, const char *component,
                          const char *message) {
    (void)component;
    kept_log *l = user;
    if (level < TSR_LOG_WARN) return;
    pthread_mutex_lock(&l->lock);
    if (l->n < 16) snprintf(l->text[l->n++], sizeof l->text[0], "%s", message);
    pthread_mutex_unlock(&l->lock);
}

/* How many kept messages contain needle. */
static int logged_with(kept_log *l, const char *needle) {
    pthread_mutex_lock(&l->lock);
    int n = 0;
    for (int i = 0; i < l->n; i++) n += strstr(l->text[i], needle) != NULL;
    pthread_mutex_unlock(&l->lock);
    return n;
}

/* whoami on two workers, restart=never (the default), warnings kept. */
static tsr_component *open_whoami_pool(kept_log *log) {
    memset(log, 0, sizeof *log);
    pthread_mutex_init(&log->lock, NULL);
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "workers", "2");
    tsr_options_set_log(o, keep_warnings, log);
    tsr_component *c = open_ok(TEST_PLUGIN("whoami"), o);
    tsr_options_free(o);
    return c;
}

/* One whoami apply: 0 and the pid of the worker that ran it, or the code. */
static int whoami(tsr_component *c, pid_t *pid, const char **msg) {
    static char kept[TSR_ERRMSG_MAX];
    double x[2] = {1, 2};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    int rc = tsr_call_run(call);
    snprintf(kept, sizeof kept, "%s", tsr_call_errmsg(call));
    if (msg) *msg = kept;
    if (rc == 0 && pid) *pid = (pid_t)*(const int64_t *)tsr_call_output(call, "pid")->data;
    tsr_call_free(call);
    return rc;
}

static pid_t the_other(pid_t one) {
    pid_t kids[4];
    cr_assert_eq(children_of(getpid(), kids, 4), 2, "two workers run");
    return kids[0] == one ? kids[1] : kids[0];
}

/* Kill a worker and wait until this process, its parent, can see the
 * death (peeking, without reaping it): after SIGKILL the worker's main
 * thread is a zombie before its other threads are gone, and only then is
 * the worker waitable and its pidfd readable. */
static void kill_worker(pid_t w) {
    cr_assert_eq(kill(w, SIGKILL), 0);
    for (int i = 0; i < 5000; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)w, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == w)
            return;
        sleep_ms(1);
    }
    cr_assert_fail("the killed worker %ld did not die", (long)w);
}

Test(worker_kill, a_dead_worker_of_a_pool_is_skipped_and_the_others_serve) {
    /* one thread: every call prefers the same worker, which is killed */
    kept_log log;
    tsr_component *c = open_whoami_pool(&log);
    pid_t first, served;
    const char *msg;
    cr_assert_eq(whoami(c, &first, &msg), 0, "%s", msg);
    pid_t second = the_other(first);
    kill_worker(first);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(whoami(c, &served, &msg), 0, "call %d after the death: %s", i, msg);
        cr_expect_eq(served, second, "call %d was served by pid %ld", i, (long)served);
    }
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.worker_deaths, 1);
    cr_expect_eq(s.worker_starts, 2);
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "(pid %ld)", (long)first);
    cr_expect_eq(logged_with(&log, pid_text), 1, "the death is logged once");
    cr_expect_eq(logged_with(&log, "1 still serves calls"), 1);

    /* the last one dies too: calls say so, and how to restart */
    kill_worker(second);
    int rc = whoami(c, NULL, &msg);
    assert_code(rc, TSR_E_WORKER, msg);
    assert_contains(msg, "all 2 workers died earlier");
    snprintf(pid_text, sizeof pid_text, "(pid %ld)", (long)second);
    assert_contains(msg, pid_text);
    assert_contains(msg, "tsr_component_restart");
    assert_code(whoami(c, NULL, &msg), TSR_E_WORKER, msg);
    cr_expect_eq(stats_of(c).worker_deaths, 2);
    cr_expect_eq(logged_with(&log, "no worker is left"), 1);

    cr_assert_eq(tsr_component_restart(c), 0);
    cr_expect_eq(children_of(getpid(), (pid_t[4]){0}, 4), 2, "both workers run again");
    cr_assert_eq(whoami(c, NULL, &msg), 0, "%s", msg);
    cr_expect_eq(stats_of(c).worker_starts, 4);
    pthread_mutex_destroy(&log.lock);
    close_clean(c);
}

Test(worker_kill, an_idle_worker_no_call_uses_is_counted_when_it_dies) {
    kept_log log;
    tsr_component *c = open_whoami_pool(&log);
    pid_t served;
    const char *msg;
    cr_assert_eq(whoami(c, &served, &msg), 0, "%s", msg);
    pid_t unused = the_other(served);
    kill_worker(unused);
    /* calls go on in the live worker, and one of them notices the death
     * (a generous deadline only stops a hang) */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (stats_of(c).worker_deaths == 0 && ms_since(&t0) < 10000) {
        cr_assert_eq(whoami(c, &served, &msg), 0, "%s", msg);
        sleep_ms(20);
    }
    cr_expect_eq(stats_of(c).worker_deaths, 1, "the death of the unused worker is counted");
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "(pid %ld)", (long)unused);
    cr_expect_eq(logged_with(&log, pid_text), 1, "the death is logged once");
    cr_assert_eq(tsr_component_restart(c), 0);
    cr_expect_eq(children_of(getpid(), (pid_t[4]){0}, 4), 2);
    cr_expect_eq(stats_of(c).worker_starts, 3);
    pthread_mutex_destroy(&log.lock);
    close_clean(c);
}

Test(worker_kill, component_restart_restarts_an_idle_worker_that_died_unseen) {
    kept_log log;
    tsr_component *c = open_whoami_pool(&log);
    pid_t served;
    const char *msg;
    cr_assert_eq(whoami(c, &served, &msg), 0, "%s", msg);
    kill_worker(the_other(served));
    cr_assert_eq(tsr_component_restart(c), 0);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.worker_deaths, 1);
    cr_expect_eq(s.worker_starts, 3);
    cr_expect_eq(children_of(getpid(), (pid_t[4]){0}, 4), 2, "both workers run");
    cr_assert_eq(whoami(c, NULL, &msg), 0, "%s", msg);
    pthread_mutex_destroy(&log.lock);
    close_clean(c);
}

Test(worker_kill, a_death_during_a_call_fails_that_call_and_the_pool_serves_on) {
    /* each worker dies on its second call; restart=never */
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "workers", "2");
    set_config(o, "fault", "exit:5");
    set_config(o, "when", "call:2");
    tsr_component *c = open_ok(TEST_PLUGIN("crash"), o);
    tsr_options_free(o);
    const char *msg;
    cr_assert_eq(apply(c, &msg), 0, "%s", msg);         /* worker A, call 1 */
    assert_code(apply(c, &msg), TSR_E_WORKER, msg);    /* worker A, call 2: dies */
    assert_contains(msg, "exited with status 5");
    cr_assert_eq(apply(c, &msg), 0, "the other worker serves: %s", msg); /* B, call 1 */
    assert_code(apply(c, &msg), TSR_E_WORKER, msg);    /* B, call 2: dies */
    assert_code(apply(c, &msg), TSR_E_WORKER, msg);    /* none left */
    assert_contains(msg, "all 2 workers died earlier");
    assert_contains(msg, "tsr_component_restart");
    cr_expect_eq(stats_of(c).worker_deaths, 2);
    close_clean(c);
}
