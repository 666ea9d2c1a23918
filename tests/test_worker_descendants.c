/* SPDX-License-Identifier: MIT */
/*
 * What a plugin forks in a worker ends with the worker, on every path by
 * which a worker ends: tsr_close, a timeout, tsr_component_restart, a
 * crash (restart=auto starting the next), a cancel that kills it, and the
 * host's own death by SIGKILL; and it inherits none of the shared memory,
 * so that a child left writing cannot touch what the next worker
 * computes. With tests/plugins/forker.c. A descendant that leaves the
 * worker's process group is covered where the worker ends by itself
 * (tsr_close, its host gone): a worker killed by a signal leaves it be.
 * "Gone" is proved by a flock every descendant holds: it can be taken
 * exclusively once the last of them has exited.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/syscall.h>

#include "temp_dir.h"
#include "worker_util.h"

TestSuite(descendants, .fini = expect_no_own_segments, .timeout = 90);

/* How long descendants may take to be gone: only a bound for a loaded
 * machine, never a measure. */
#define GONE_WITHIN_MS 10000

typedef struct forker {
    char dir[256], lock[300], pids[300];
    tsr_component *c;
} forker;

typedef struct forker_opts {
    const char *child, *leave, *orphan, *restart, *timeout_ms, *spawn;
} forker_opts;

static void forker_open(forker *f, forker_opts o) {
    make_temp_dir(f->dir, sizeof f->dir, "descendants");
    snprintf(f->lock, sizeof f->lock, "%s/lock", f->dir);
    snprintf(f->pids, sizeof f->pids, "%s/pids", f->dir);
    tsr_options *opts = mode_options(TSR_MODE_WORKER);
    set_config(opts, "dir", f->dir);
    if (o.child) set_config(opts, "child", o.child);
    if (o.leave) set_config(opts, "leave", o.leave);
    if (o.orphan) set_config(opts, "orphan", o.orphan);
    if (o.restart) set_option(opts, "restart", o.restart);
    if (o.timeout_ms) set_option(opts, "timeout_ms", o.timeout_ms);
    if (o.spawn) set_option(opts, "spawn", o.spawn);
    f->c = open_ok(TEST_PLUGIN("forker"), opts);
    tsr_options_free(opts);
}

static void forker_done(forker *f) {
    if (f->c) tsr_close(f->c);
    f->c = NULL;
    remove_tree(f->dir);
}

/* One apply over n values 1..n (x[0] = first when first != 0): its code;
 * on success y must be exactly x. */
static int call_n(tsr_component *c, int64_t n, double first, const char **msg) {
    static char kept[TSR_ERRMSG_MAX];
    double *x = malloc((size_t)n * sizeof *x);
    cr_assert_not_null(x);
    for (int64_t i = 0; i < n; i++) x[i] = (double)(i + 1);
    if (first != 0) x[0] = first;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, n));
    int rc = tsr_call_run(call);
    snprintf(kept, sizeof kept, "%s", tsr_call_errmsg(call));
    if (msg) *msg = kept;
    if (rc == 0) {
        const tsr_array *y = tsr_call_output(call, "y");
        cr_assert_not_null(y);
        cr_assert_eq(y->shape[0], n);
        int64_t wrong = 0;
        for (int64_t i = 0; i < n; i++) wrong += ((const double *)y->data)[i] != x[i];
        cr_assert_eq(wrong, 0, "%lld of %lld results are wrong", (long long)wrong, (long long)n);
    }
    tsr_call_free(call);
    free(x);
    return rc;
}

static void call_ok(tsr_component *c) {
    const char *msg;
    int rc = call_n(c, 16, 0, &msg);
    cr_assert_eq(rc, 0, "%s", msg);
}

/* The pid of the child the last call forked (as the worker saw it). */
static pid_t last_child(const forker *f) {
    FILE *in = fopen(f->pids, "r");
    cr_assert_not_null(in, "the plugin wrote no %s", f->pids);
    long pid = 0, p;
    while (fscanf(in, "%ld", &p) == 1) pid = p;
    fclose(in);
    cr_assert_gt(pid, 0);
    return (pid_t)pid;
}

/* 1 when the lock can be taken exclusively: no descendant holds it. */
static int lock_free(const char *lock) {
    int fd = open(lock, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT;
    int got = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return got;
}

static int lock_free_within(const char *lock, long ms) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!lock_free(lock) && ms_since(&t0) < (double)ms) sleep_ms(5);
    return lock_free(lock);
}

/* The descendants of the last call are alive now and gone after `end`. */
static void expect_gone(const forker *f, const char *after) {
    cr_assert(lock_free_within(f->lock, GONE_WITHIN_MS),
              "a process the plugin forked is still alive %d ms after %s", GONE_WITHIN_MS, after);
}

static void expect_alive(const forker *f) {
    cr_assert(!lock_free(f->lock), "the plugin's child is not alive after the call");
}

/* ---- tsr_close ---------------------------------------------------------- */

static void ends_at_close(forker_opts o) {
    forker f;
    forker_open(&f, o);
    call_ok(f.c);
    expect_alive(&f);
    pid_t child = last_child(&f);
    tsr_close(f.c);
    f.c = NULL;
    expect_gone(&f, "tsr_close");
    cr_expect(wait_gone(child, GONE_WITHIN_MS), "the child %ld is alive", (long)child);
    forker_done(&f);
}

Test(descendants, a_child_ends_at_tsr_close) {
    ends_at_close((forker_opts){0});
}

Test(descendants, an_orphan_that_left_the_group_ends_at_tsr_close) {
    ends_at_close((forker_opts){.leave = "setsid", .orphan = "1"});
}

/* ---- a timeout ---------------------------------------------------------- */

static void ends_at_timeout(forker_opts o) {
    forker f;
    o.timeout_ms = "300";
    o.restart = "auto";
    forker_open(&f, o);
    const char *msg;
    cr_assert_eq(call_n(f.c, 16, -1.0, &msg), TSR_E_TIMEOUT, "%s", msg);
    expect_gone(&f, "the timeout killed the worker");
    call_ok(f.c); /* the next worker serves */
    forker_done(&f);
}

Test(descendants, a_child_ends_when_a_timeout_kills_the_worker) {
    ends_at_timeout((forker_opts){0});
}

/* ---- tsr_component_restart ---------------------------------------------- */

/* The worker killed from outside (as the OOM killer would), then
 * tsr_component_restart starting another. */
static void kill_worker_and_restart(tsr_component *c) {
    pid_t worker = only_worker();
    /* Its pidfd, readable once all its threads are gone (its /proc entry
     * says 'Z' before that), which is when its host can see the death. */
    int pidfd = (int)syscall(SYS_pidfd_open, worker, 0);
    cr_assert_geq(pidfd, 0, "pidfd_open: %s", strerror(errno));
    cr_assert_eq(kill(worker, SIGKILL), 0);
    struct pollfd dead = {.fd = pidfd, .events = POLLIN};
    cr_assert_eq(poll(&dead, 1, GONE_WITHIN_MS), 1, "the worker %ld did not die", (long)worker);
    close(pidfd);
    cr_assert_eq(tsr_component_restart(c), 0);
}

static void ends_at_restart(forker_opts o) {
    forker f;
    forker_open(&f, o);
    call_ok(f.c);
    expect_alive(&f);
    kill_worker_and_restart(f.c);
    expect_gone(&f, "tsr_component_restart");
    call_ok(f.c);
    forker_done(&f);
}

Test(descendants, a_child_ends_when_a_killed_worker_is_restarted_by_tsr_component_restart) {
    ends_at_restart((forker_opts){0});
}

/* ---- a crash, restart=auto ---------------------------------------------- */

static void ends_at_crash(forker_opts o) {
    forker f;
    o.restart = "auto";
    forker_open(&f, o);
    const char *msg;
    cr_assert_eq(call_n(f.c, 16, -2.0, &msg), TSR_E_WORKER, "%s", msg);
    assert_contains(msg, "signal 11");
    expect_gone(&f, "the worker crashed");
    call_ok(f.c);
    forker_done(&f);
}

Test(descendants, a_child_ends_when_the_worker_crashes) {
    ends_at_crash((forker_opts){0});
}

Test(descendants, an_orphan_in_the_group_ends_when_the_worker_crashes) {
    ends_at_crash((forker_opts){.orphan = "1"});
}

/* ---- a cancel that kills the worker ------------------------------------- */

typedef struct canceller {
    tsr_call *call;
    const char *lock;
    pthread_t thread;
} canceller;

/* Cancels once the call's child holds the lock (the plugin then hangs
 * without polling, so the worker is killed after the grace period). */
static void *cancel_when_forked(void *arg) {
    canceller *k = arg;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (lock_free(k->lock) && ms_since(&t0) < GONE_WITHIN_MS) sleep_ms(5);
    tsr_call_cancel(k->call);
    return NULL;
}

static void ends_at_cancel(forker_opts o) {
    forker f;
    forker_open(&f, o);
    double x[4] = {-1, 2, 3, 4};
    tsr_call *call = new_call(f.c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 4));
    canceller k = {.call = call, .lock = f.lock};
    cr_assert_eq(pthread_create(&k.thread, NULL, cancel_when_forked, &k), 0);
    int rc = tsr_call_run(call);
    pthread_join(k.thread, NULL);
    cr_assert_eq(rc, TSR_E_CANCELLED, "%s", tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "was killed");
    tsr_call_free(call);
    expect_gone(&f, "the cancel killed the worker");
    call_ok(f.c); /* another worker starts for the next call */
    forker_done(&f);
}

Test(descendants, a_child_ends_when_a_cancel_kills_the_worker) {
    ends_at_cancel((forker_opts){0});
}

/* ---- the host killed ---------------------------------------------------- */

/* The host is a child of the test that opens the component, calls once,
 * says so, and waits to be killed. */
static void ends_with_the_host(forker_opts o) {
    char dir[256], lock[300], pids[300];
    make_temp_dir(dir, sizeof dir, "descendants-host");
    snprintf(lock, sizeof lock, "%s/lock", dir);
    snprintf(pids, sizeof pids, "%s/pids", dir);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t host = fork();
    cr_assert_geq(host, 0);
    if (host == 0) {
        close(p[0]);
        tsr_options *opts = tsr_options_new();
        tsr_component *c = NULL;
        tsr_error err = TSR_ERROR_INIT;
        char ok = 0;
        if (opts && tsr_options_set(opts, "mode", "worker", &err) == 0 &&
            tsr_options_set_config(opts, "dir", dir) == 0 &&
            (!o.leave || tsr_options_set_config(opts, "leave", o.leave) == 0) &&
            (!o.orphan || tsr_options_set_config(opts, "orphan", o.orphan) == 0) &&
            tsr_open(TEST_PLUGIN("forker"), opts, &c, &err) == 0) {
            double x[2] = {1, 2};
            tsr_array xa = f64_vec(x, 2);
            tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
            ok = call && tsr_call_set_input(call, "x", &xa) == 0 && tsr_call_run(call) == 0;
        }
        if (write(p[1], &ok, 1) != 1) _exit(1);
        for (;;) pause();
    }
    close(p[1]);
    char ok = 0;
    cr_assert_eq(read(p[0], &ok, 1), 1);
    close(p[0]);
    if (!ok) kill(host, SIGKILL);
    cr_assert(ok, "the host could not open forker and call it");
    cr_assert(!lock_free(lock), "the plugin's child is not alive after the call");
    cr_assert_eq(kill(host, SIGKILL), 0);
    int status;
    cr_assert_eq(waitpid(host, &status, 0), host);
    cr_assert(lock_free_within(lock, GONE_WITHIN_MS),
              "a process the plugin forked is alive %d ms after its host was killed",
              GONE_WITHIN_MS);
    remove_tree(dir);
}

Test(descendants, a_child_ends_when_the_host_is_killed) {
    ends_with_the_host((forker_opts){0});
}

Test(descendants, an_orphan_that_left_the_group_ends_when_the_host_is_killed) {
    ends_with_the_host((forker_opts){.leave = "setsid", .orphan = "1"});
}

/* ---- shared memory ------------------------------------------------------ */

static void child_maps_nothing(void) {
    forker f;
    forker_open(&f, (forker_opts){0});
    call_n(f.c, 1 << 17, 0, NULL);
    expect_alive(&f);
    pid_t child = last_child(&f);
    int maps = memfd_maps_of(child, "");
    cr_expect_eq(maps, 0, "the plugin's child maps %d of the library's memfds", maps);
    forker_done(&f);
}

Test(descendants, a_child_maps_none_of_the_arena_or_channel) {
    child_maps_nothing();
}

/* A child that writes into the call's output buffer for as long as it can:
 * neither that call nor 2000 calls of the workers started after its worker
 * was killed see a wrong value. */
static void no_corruption(void) {
    forker f;
    forker_open(&f, (forker_opts){.child = "write"});
    const char *msg;
    for (int round = 0; round < 4; round++) {
        cr_assert_eq(call_n(f.c, 4096, 0, &msg), 0, "%s", msg);
        kill_worker_and_restart(f.c);
    }
    for (int i = 0; i < 2000; i++) {
        int rc = call_n(f.c, 512, 0, &msg);
        cr_assert_eq(rc, 0, "call %d: %s", i, msg);
    }
    forker_done(&f);
}

Test(descendants, a_child_left_writing_corrupts_no_result) {
    no_corruption();
}

/* spawn=fork: the worker is a copy of the host, which drops the host's
 * arenas and channels, so its plugin's child has none of them either. */
static const char *forked_worker_child_maps_nothing(void) {
    forker f;
    make_temp_dir(f.dir, sizeof f.dir, "descendants-fork");
    snprintf(f.lock, sizeof f.lock, "%s/lock", f.dir);
    snprintf(f.pids, sizeof f.pids, "%s/pids", f.dir);
    tsr_options *opts = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    CHECK(opts && tsr_options_set(opts, "mode", "worker", &err) == 0 &&
              tsr_options_set(opts, "spawn", "fork", &err) == 0 &&
              tsr_options_set_config(opts, "dir", f.dir) == 0,
          "options");
    /* A second component first: its arena is in the host when the
     * forker's worker is forked. */
    tsr_component *other = NULL, *c = NULL;
    CHECK(tsr_open(TEST_PLUGIN("forker"), opts, &other, &err) == 0, "%s", err.message);
    CHECK(tsr_open(TEST_PLUGIN("forker"), opts, &c, &err) == 0, "%s", err.message);
    tsr_options_free(opts);
    double x[2] = {1, 2};
    tsr_array xa = f64_vec(x, 2);
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    CHECK(call && tsr_call_set_input(call, "x", &xa) == 0 && tsr_call_run(call) == 0,
          "the call failed: %s", call ? tsr_call_errmsg(call) : "no call");
    tsr_call_free(call);
    FILE *in = fopen(f.pids, "r");
    long pid = 0;
    CHECK(in && fscanf(in, "%ld", &pid) == 1, "no pid in %s", f.pids);
    fclose(in);
    int maps = memfd_maps_of((pid_t)pid, "");
    CHECK(maps == 0, "the child of a forked worker maps %d of the library's memfds", maps);
    tsr_close(c);
    tsr_close(other);
    CHECK(lock_free_within(f.lock, GONE_WITHIN_MS), "the child is alive after tsr_close");
    remove_tree(f.dir);
    return "ok";
}

Test(descendants, the_child_of_a_forked_worker_maps_none_of_the_hosts_shared_memory) {
    run_in_child_watched(forked_worker_child_maps_nothing, NULL, 60);
}
