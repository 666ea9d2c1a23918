/* SPDX-License-Identifier: MIT */
/*
 * Faults in worker mode, seen through the public API: a plugin that
 * crashes, exits, hangs, fails or breaks the rules costs the call (and
 * for deaths the worker), never the host; the codes and messages say what
 * happened; restarts and the counters follow. Worker pids are read from
 * /proc (the workers are this test process's only children).
 */
#include "worker_util.h"

TestSuite(faults, .fini = expect_no_own_segments, .timeout = 60);

static tsr_component *open_worker_opts(const char *path, const char *const *kv) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    for (; kv && kv[0]; kv += 2) {
        if (strncmp(kv[0], "config:", 7) == 0) set_config(o, kv[0] + 7, kv[1]);
        else set_option(o, kv[0], kv[1]);
    }
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* apply on a one-field component (x -> y) with x = {1, 2}. */
static int apply_once(tsr_component *c, tsr_call **out) {
    static double x[2] = {1, 2};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    int rc = tsr_call_run(call);
    if (out) *out = call;
    else tsr_call_free(call);
    return rc;
}

static void apply_works(tsr_component *c) {
    tsr_call *call = NULL;
    int rc = apply_once(c, &call);
    cr_assert_eq(rc, 0, "apply failed: %s", tsr_call_errmsg(call));
    const tsr_array *y = tsr_call_output(call, "y");
    cr_assert_not_null(y);
    cr_expect(((double *)y->data)[0] == 1 && ((double *)y->data)[1] == 2, "y = x");
    tsr_call_free(call);
}

/* ---- deaths ------------------------------------------------------------------ */

/* A crash plugin with this fault kills its worker during apply: the call
 * fails with TSR_E_WORKER naming the worker's pid and `needle`, the worker
 * is gone, and the counters saw one start and one death. */
static void death_is_reported(const char *fault, const char *needle) {
    tsr_component *c = open_worker_cfg(TEST_PLUGIN("crash"), "fault", fault, NULL, NULL);
    pid_t worker = only_worker();
    tsr_call *call = NULL;
    int rc = apply_once(c, &call);
    const char *msg = expect_failure(call, rc, TSR_E_WORKER);
    assert_contains(msg, needle);
    char pid_text[48];
    snprintf(pid_text, sizeof pid_text, "(pid %ld)", (long)worker);
    assert_contains(msg, pid_text);
    assert_contains(msg, "component 'crash', endpoint 'apply'");
    cr_expect(process_gone(worker), "the dead worker was reaped");
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.worker_starts, 1);
    cr_expect_eq(s.worker_deaths, 1);
    tsr_call_free(call);
    tsr_close(c);
}

Test(faults, a_segfault_is_a_worker_error_naming_the_signal_and_the_pid) {
    death_is_reported("segv", "Segmentation fault");
}

Test(faults, a_write_through_null_is_a_segfault_too) {
    death_is_reported("null", "killed by signal 11");
}

Test(faults, an_abort_is_a_worker_error_naming_the_signal) {
    death_is_reported("abort", "killed by signal 6 (Aborted)");
}

Test(faults, an_exit_in_the_plugin_is_a_worker_error_with_its_status) {
    death_is_reported("exit", "exited with status 3");
}

Test(faults, a_hanging_call_times_out_and_its_worker_is_killed) {
    const char *kv[] = {"config:how", "spin", "timeout_ms", "200", NULL};
    tsr_component *c = open_worker_opts(TEST_PLUGIN("hang"), kv);
    pid_t worker = only_worker();
    tsr_call *call = NULL;
    int rc = apply_once(c, &call); /* must return: the suite's timeout catches a hang */
    const char *msg = expect_failure(call, rc, TSR_E_TIMEOUT);
    assert_contains(msg, "within 200 ms");
    char killed[64];
    snprintf(killed, sizeof killed, "the worker (pid %ld) was killed", (long)worker);
    assert_contains(msg, killed);
    cr_expect(process_gone(worker), "the worker was killed and reaped");
    cr_expect_eq(stats_of(c).worker_deaths, 1);
    /* restart=never: the component says why it cannot call */
    rc = tsr_call_run(call);
    msg = expect_failure(call, rc, TSR_E_WORKER);
    assert_contains(msg, "died earlier");
    assert_contains(msg, "within 200 ms");
    tsr_call_free(call);
    tsr_close(c);
}

Test(faults, an_answer_within_the_timeout_is_not_a_timeout) {
    const char *kv[] = {"config:hang_ms", "50", "timeout_ms", "20000", NULL};
    tsr_component *c = open_worker_opts(TEST_PLUGIN("hang"), kv);
    apply_works(c);
    cr_expect_eq(stats_of(c).worker_deaths, 0);
    tsr_close(c);
}

/* ---- the plugin's own failures -------------------------------------------- */

Test(faults, a_plugin_error_keeps_the_worker_and_the_next_call_works) {
    tsr_component *c = open_worker_cfg(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE,
                                       NULL, NULL);
    pid_t worker = only_worker();
    double x[5] = {1, 2, 3, 4, 5};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 5));
    const char *msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "component 'linear', endpoint 'apply': the plugin failed: x: got 5 "
                         "entries");
    cr_expect_eq(only_worker(), worker, "the same worker lives on");
    bind_ok(call, "x", f64_vec(x, 4));
    run_ok(call);
    const double *y = tsr_call_output(call, "y")->data;
    /* the first row of the example matrix is 1 2 0 -1 */
    cr_expect_eq(y[0], 1.0 * 1 + 2.0 * 2 + 0.0 * 3 - 1.0 * 4);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.worker_starts, 1);
    cr_expect_eq(s.worker_deaths, 0);
    tsr_call_free(call);
    tsr_close(c);
}

Test(faults, a_plugin_failure_carries_the_plugins_message_or_its_status) {
    double x[3] = {1, 2, 3};
    tsr_component *c = open_worker_cfg(TEST_PLUGIN("misbehave"), "behave", "fail_msg", NULL, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "xin", f64_vec(x, 3));
    cr_expect_str_eq(run_fails(call, TSR_E_PLUGIN),
                     "component 'misbehave', endpoint 'apply': the plugin failed: the solver "
                     "diverged");
    /* the same again: the worker still serves */
    run_fails(call, TSR_E_PLUGIN);
    cr_expect_eq(stats_of(c).worker_deaths, 0);
    tsr_call_free(call);
    tsr_close(c);

    c = open_worker_cfg(TEST_PLUGIN("misbehave"), "behave", "fail_silent", NULL, NULL);
    call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "xin", f64_vec(x, 3));
    assert_contains(run_fails(call, TSR_E_PLUGIN), "(status 3) without a message");
    tsr_call_free(call);
    tsr_close(c);
}

/* misbehave with this behaviour returns what its schema forbids: the call
 * fails with TSR_E_PLUGIN_RESULT naming `field`, as it does inproc, and
 * the worker lives on. */
static void result_refused(const char *behave, const char *field) {
    double x[3] = {1, 2, 3};
    for (int m = 0; m < 3; m += 2) {
        tsr_options *o = mode_options((tsr_mode)m);
        set_config(o, "behave", behave);
        tsr_component *c = open_ok(TEST_PLUGIN("misbehave"), o);
        tsr_options_free(o);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "xin", f64_vec(x, 3));
        const char *msg = run_fails(call, TSR_E_PLUGIN_RESULT);
        cr_log_info("%s, %s: %s", behave, mode_names[m], msg);
        assert_contains(msg, field);
        cr_expect_eq(stats_of(c).worker_deaths, 0);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(faults, results_of_the_wrong_shape_or_type_are_refused) {
    result_refused("change_shape", "'dense'");
    result_refused("change_rank", "'dense'");
    result_refused("change_dtype", "'dense'");
    result_refused("alloc_fixed", "'rows3'");
    result_refused("alloc_negative", "'ragged'");
    result_refused("no_alloc", "'ragged'");
}

/* ---- restarts ---------------------------------------------------------------- */

Test(faults, after_a_death_calls_fail_until_tsr_restart) {
    /* the worker works once, then dies on its second call */
    tsr_component *c = open_worker_cfg(TEST_PLUGIN("crash"), "fault", "segv", "when", "call:2");
    pid_t first = only_worker();
    apply_works(c);
    tsr_call *call = NULL;
    int rc = apply_once(c, &call);
    expect_failure(call, rc, TSR_E_WORKER);
    tsr_call_free(call);
    /* restart=never (the default): every later call says why */
    for (int i = 0; i < 2; i++) {
        rc = apply_once(c, &call);
        const char *msg = expect_failure(call, rc, TSR_E_WORKER);
        assert_contains(msg, "died earlier");
        assert_contains(msg, "Segmentation fault");
        assert_contains(msg, "tsr_component_restart");
        tsr_call_free(call);
    }
    cr_expect_eq(children_of(getpid(), (pid_t[4]){0}, 4), 0, "no worker runs");
    cr_assert_eq(tsr_component_restart(c), 0);
    pid_t second = only_worker();
    cr_expect_neq(second, first);
    apply_works(c); /* the new worker's first call */
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.worker_starts, 2);
    cr_expect_eq(s.worker_deaths, 1);
    /* nothing dead: tsr_component_restart does nothing */
    cr_expect_eq(tsr_component_restart(c), 0);
    cr_expect_eq(only_worker(), second);
    cr_expect_eq(stats_of(c).worker_starts, 2);
    tsr_close(c);
}

Test(faults, restart_auto_starts_a_new_worker_at_the_next_call) {
    const char *kv[] = {"config:fault", "exit:9", "config:when", "call:2", "restart", "auto", NULL};
    tsr_component *c = open_worker_opts(TEST_PLUGIN("crash"), kv);
    pid_t first = only_worker();
    apply_works(c);
    tsr_call *call = NULL;
    int rc = apply_once(c, &call);
    assert_contains(expect_failure(call, rc, TSR_E_WORKER), "exited with status 9");
    tsr_call_free(call);
    apply_works(c); /* a new worker, on its first call */
    pid_t second = only_worker();
    cr_expect_neq(second, first);
    rc = apply_once(c, &call); /* its second call */
    expect_failure(call, rc, TSR_E_WORKER);
    tsr_call_free(call);
    apply_works(c); /* a third worker */
    cr_expect_neq(only_worker(), second);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.worker_starts, 3);
    cr_expect_eq(s.worker_deaths, 2);
    cr_expect_eq(s.calls, 5);
    tsr_close(c);
}

Test(faults, a_timed_out_worker_comes_back_with_tsr_restart) {
    const char *kv[] = {"config:hang_ms", "60000", "timeout_ms", "200", NULL};
    tsr_component *c = open_worker_opts(TEST_PLUGIN("hang"), kv);
    tsr_call *call = NULL;
    int rc = apply_once(c, &call);
    expect_failure(call, rc, TSR_E_TIMEOUT);
    tsr_call_free(call);
    cr_assert_eq(tsr_component_restart(c), 0);
    cr_expect_eq(children_of(getpid(), (pid_t[4]){0}, 4), 1);
    cr_expect_eq(stats_of(c).worker_starts, 2);
    tsr_close(c);
}

/* ---- failures at open ---------------------------------------------------------- */

/* tsr_open in worker mode fails with `code` and a message containing
 * `needle`, and leaves no worker behind. */
static tsr_error worker_open_fails(const char *path, const char *const *kv, int code,
                                   const char *needle) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    for (; kv && kv[0]; kv += 2) {
        if (strncmp(kv[0], "config:", 7) == 0) set_config(o, kv[0] + 7, kv[1]);
        else set_option(o, kv[0], kv[1]);
    }
    tsr_error err = open_fails(path, o);
    tsr_options_free(o);
    cr_log_info("%s", err.message);
    assert_code(err.code, code, err.message);
    assert_contains(err.message, needle);
    cr_expect_eq(children_of(getpid(), (pid_t[4]){0}, 4), 0, "a worker was left running");
    return err;
}

Test(faults, an_init_failure_in_the_worker_fails_tsr_open_with_the_plugins_message) {
    worker_open_fails(TEST_PLUGIN("init_fails"), NULL, TSR_E_INIT,
                      "init failed: cannot open mesh 'missing.msh'");
}

Test(faults, a_crash_during_init_fails_tsr_open_with_a_worker_error) {
    const char *kv[] = {"config:fault", "exit:5", "config:when", "init", NULL};
    worker_open_fails(TEST_PLUGIN("crash"), kv, TSR_E_WORKER, "exited with status 5");
}

Test(faults, an_init_that_never_returns_times_out) {
    const char *kv[] = {"config:when", "init", "start_timeout_ms", "300", NULL};
    tsr_error e = worker_open_fails(TEST_PLUGIN("hang"), kv, TSR_E_TIMEOUT, "300 ms");
    assert_contains(e.message, "was killed");
}

Test(faults, a_missing_plugin_file_is_a_load_error) {
    tsr_error e = worker_open_fails("/nonexistent/dir/nothing.so", NULL, TSR_E_LOAD,
                                    "/nonexistent/dir/nothing.so");
    assert_contains(e.message, "No such file");
}

Test(faults, a_missing_worker_executable_is_a_worker_error_naming_it) {
    const char *kv[] = {"worker_exe", "/nonexistent/tessera-worker", NULL};
    worker_open_fails(BUNDLED_PLUGIN("noop"), kv, TSR_E_WORKER, "'/nonexistent/tessera-worker'");
}

Test(faults, a_worker_executable_that_is_no_worker_is_a_worker_error) {
    /* a program that exits at once without answering */
    const char *kv[] = {"worker_exe", "/bin/true", "start_timeout_ms", "20000", NULL};
    worker_open_fails(BUNDLED_PLUGIN("noop"), kv, TSR_E_WORKER, "exited with status 0");
    /* a file that cannot be executed */
    const char *kv2[] = {"worker_exe", LINEAR_MATRIX_FILE, NULL};
    worker_open_fails(BUNDLED_PLUGIN("noop"), kv2, TSR_E_WORKER, "Permission denied");
}

Test(faults, a_missing_working_directory_is_refused) {
    const char *kv[] = {"cwd", "/nonexistent/dir", NULL};
    worker_open_fails(BUNDLED_PLUGIN("noop"), kv, TSR_E_ARGUMENT, "/nonexistent/dir");
}

/* ---- the host dies --------------------------------------------------------------- */

Test(faults, a_host_killed_mid_call_takes_its_worker_along_and_leaves_nothing) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t host = fork();
    cr_assert_geq(host, 0);
    if (host == 0) {
        /* a host of its own, stuck in a call that never ends */
        close(p[0]);
        tsr_options *o = tsr_options_new();
        tsr_error err = TSR_ERROR_INIT;
        if (!o || tsr_options_set(o, "mode", "worker", &err) != 0) _exit(2);
        tsr_component *c = NULL;
        if (tsr_options_set_config(o, "how", "spin") != 0) _exit(2);
        if (tsr_open(TEST_PLUGIN("hang"), o, &c, &err) != 0) _exit(3);
        tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
        double x[1] = {1};
        tsr_array xa = {.data = x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {1}};
        if (!call || tsr_call_set_input(call, "x", &xa) != 0) _exit(4);
        if (write(p[1], "g", 1) != 1) _exit(5);
        tsr_call_run(call);
        _exit(6);
    }
    close(p[1]);
    char go = 0;
    ssize_t got = read(p[0], &go, 1);
    close(p[0]);
    if (got != 1) {
        kill(host, SIGKILL);
        waitpid(host, NULL, 0);
        cr_assert_fail("the child host could not start its call");
    }
    pid_t worker = 0;
    cr_assert_eq(children_of(host, &worker, 1), 1, "the child host has no worker");
    /* The plugin spins: once the worker has used 50 ms of CPU (an idle
     * worker uses none), the call is running in the plugin. */
    long long ticks0 = proc_cpu_ticks(worker);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (proc_cpu_ticks(worker) < ticks0 + sysconf(_SC_CLK_TCK) / 20 && ms_since(&t0) < 5000)
        sleep_ms(10);
    cr_expect_geq(proc_cpu_ticks(worker), ticks0 + sysconf(_SC_CLK_TCK) / 20,
                  "the call did not reach the plugin");
    /* Its shared memory: memfds, open and mapped, with no name anywhere. */
    cr_assert_gt(memfd_maps_of(host, "arena"), 0, "the child host maps no arena segment");
    cr_assert_gt(memfd_maps_of(worker, "arena"), 0, "the worker maps no arena segment");
    cr_expect_eq(shm_entries_of(host), 0, "the child host has entries in /dev/shm");

    cr_assert_eq(kill(host, SIGKILL), 0);
    /* 10 s only so that a worker that stays does not hang the test */
    int worker_left = wait_gone(worker, 10000);
    if (!worker_left) kill(worker, SIGKILL); /* do not leave it behind */
    cr_expect(worker_left, "the worker (pid %ld) outlived its host", (long)worker);
    cr_assert_eq(waitpid(host, NULL, 0), host);
    /* Nothing had a name: nothing is left for a later tsr_open to clear,
     * and a component of this process works as ever. */
    cr_expect_eq(shm_entries_of(host), 0, "the dead host left entries in /dev/shm");
    tsr_component *mine = open_worker_cfg(BUNDLED_PLUGIN("noop"), NULL, NULL, NULL, NULL);
    cr_expect_eq(shm_entries_of(getpid()), 0, "an open component has entries in /dev/shm");
    cr_expect_gt(memfd_fds_of(getpid(), "arena"), 0, "an open component holds no arena");
    tsr_component *next = open_worker_cfg(BUNDLED_PLUGIN("noop"), NULL, NULL, NULL, NULL);
    static double x[2] = {1, 2};
    tsr_call *call = new_call(mine, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    run_ok(call);
    tsr_call_free(call);
    tsr_close(next);
    tsr_close(mine);
}
