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
