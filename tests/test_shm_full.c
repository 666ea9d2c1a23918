/* SPDX-License-Identifier: MIT */
/*
 * Shared memory running out, seen through the public API. The arena's
 * segments are memfds: no tmpfs size limits them, memory does. Past a
 * memory cgroup's limit, fallocate of a memfd does not fail, the OOM
 * killer ends a process; so the library checks the room first (the
 * cgroup's limit and the machine's available memory), and running out is
 * a clear TSR_E_SHM at allocation. A child process moves into a memory
 * cgroup of its own (made by the test; skipped without the privilege),
 * sets a limit just above what it uses, then opens components and calls
 * them: opening fails saying why; a call whose inputs cannot be staged
 * fails the same way and the next, smaller call works; nobody is killed,
 * and nothing is left. A full or read-only /dev/shm no longer matters.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "memcg_util.h"
#include "private_tmpfs.h"
#include "worker_util.h"

TestSuite(shm_full, .timeout = 60);

#define MIB ((uint64_t)1 << 20)

static memcg cg;

/* Enter the test's cgroup and allow `room` bytes beyond what this process
 * (and what it already charged) uses. */
static const char *limit_to(uint64_t room) {
    if (memcg_enter(&cg) != 0) return "cannot enter the memory cgroup";
    long long used = memcg_usage(&cg);
    if (used < 0 || memcg_set_limit(&cg, (uint64_t)used + room) != 0)
        return "cannot set the memory cgroup's limit";
    return NULL;
}

/* Shared memory only: by default a component that cannot have it falls
 * back to files (tests/test_worker_files.c). */
static tsr_options *worker_options(void) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    if (o && (tsr_options_set(o, "mode", "worker", &err) != 0 ||
              tsr_options_set(o, "transport", "shm", &err) != 0)) {
        tsr_options_free(o);
        return NULL;
    }
    return o;
}

/* Room for 512 KiB: not even the arena's first segment (1 MiB) fits. */
static const char *open_without_room(void) {
    const char *why = limit_to(512 << 10);
    if (why) return why;
    tsr_options *o = worker_options();
    CHECK(o, "options");
    tsr_component *c = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_open(TEST_PLUGIN("contract"), o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == TSR_E_SHM && c == NULL, "tsr_open gave %d: %s", rc, err.message);
    CHECK(strstr(err.message, "not enough memory for arena segment 0") &&
              strstr(err.message, "memory cgroup"),
          "message: %s", err.message);
    CHECK(memfds_held(getpid()) == 0, "a segment was left");
    CHECK(children_of(getpid(), (pid_t[2]){0}, 2) == 0, "a worker was left");
    return "ok";
}

/* Room for 48 MiB: the component opens (1 MiB arena, a sparse channel, a
 * worker), a call whose two 32 MiB inputs must be staged does not fit. */
static const char *call_without_room(void) {
    int64_t n = 4 * 1024 * 1024;
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), s = 2;
    CHECK(a && b, "out of memory");
    for (int64_t i = 0; i < n; i++) a[i] = b[i] = 1; /* charged before the limit is set */
    const char *why = limit_to(48 * MIB);
    if (why) return why;
    tsr_options *o = worker_options();
    CHECK(o, "options");
    tsr_component *c = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_open(BUNDLED_PLUGIN("vectoradd"), o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == 0, "tsr_open: %s", err.message);
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    CHECK(call, "out of memory");
    tsr_array aa = {a, TSR_FLOAT64, 1, {n}}, ba = {b, TSR_FLOAT64, 1, {n}};
    tsr_array sa = {&s, TSR_FLOAT64, 0, {0}};
    tsr_call_set_input(call, "a", &aa);
    tsr_call_set_input(call, "b", &ba);
    tsr_call_set_input(call, "s", &sa);
    rc = tsr_call_run(call);
    CHECK(rc == TSR_E_SHM, "the big call gave %d: %s", rc, tsr_call_errmsg(call));
    CHECK(strstr(tsr_call_errmsg(call), "not enough memory for arena segment") &&
              strstr(tsr_call_errmsg(call), "memory cgroup"),
          "message: %s", tsr_call_errmsg(call));
    tsr_stats st = TSR_STATS_INIT;
    tsr_component_stats(c, &st);
    CHECK(st.worker_deaths == 0, "the worker died");
    aa.shape[0] = ba.shape[0] = 1000;
    tsr_call_set_input(call, "a", &aa);
    tsr_call_set_input(call, "b", &ba);
    rc = tsr_call_run(call);
    CHECK(rc == 0, "the small call after it: %s", tsr_call_errmsg(call));
    CHECK(((const double *)tsr_call_result(call, 0)->data)[999] == 3, "wrong result");
    tsr_call_free(call);
    tsr_close(c);
    free(a);
    free(b);
    CHECK(memfds_held(getpid()) == 0, "segments left after tsr_close");
    return "ok";
}

/* Run fn in a child that moves into a memory cgroup of the test's own. */
static void in_limited_child(const char *(*fn)(void), const char *tag) {
    if (memcg_create(&cg, tag) != 0) cr_skip_test("no memory cgroup of our own can be made");
    run_in_child(fn, NULL);
    memcg_remove(&cg);
}

Test(shm_full, opening_a_worker_component_without_memory_fails_with_a_clear_error) {
    if (!MEMCG_TIGHT_LIMITS_WORK) cr_skip_test("sanitizer and coverage builds need more than 512 KiB of room");
    in_limited_child(open_without_room, "open");
}

Test(shm_full, a_call_that_does_not_fit_fails_and_the_next_works) {
    in_limited_child(call_without_room, "call");
}

/* A tmpfs of 64 KiB, or a read-only one, over /dev/shm (in a mount
 * namespace of the child's own): worker mode does not use it. */
static const char *dev_shm_unusable(int read_only) {
    const char *why = private_tmpfs("/dev/shm", read_only ? MS_RDONLY : 0, "size=64k,mode=1777");
    if (why) return why;
    tsr_options *o = worker_options();
    CHECK(o, "options");
    tsr_component *c = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_open(BUNDLED_PLUGIN("vectoradd"), o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == 0, "tsr_open with /dev/shm unusable: %s", err.message);
    int64_t n = 1 << 20;
    double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b), s = 2;
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    CHECK(a && b && call, "out of memory");
    tsr_array aa = {a, TSR_FLOAT64, 1, {n}}, ba = {b, TSR_FLOAT64, 1, {n}};
    tsr_array sa = {&s, TSR_FLOAT64, 0, {0}};
    tsr_call_set_input(call, "a", &aa);
    tsr_call_set_input(call, "b", &ba);
    tsr_call_set_input(call, "s", &sa);
    rc = tsr_call_run(call);
    CHECK(rc == 0, "an 8 MiB call: %s", tsr_call_errmsg(call));
    tsr_stats st = TSR_STATS_INIT;
    tsr_component_stats(c, &st);
    CHECK(st.bytes_copied > 0 && st.bytes_by_ref == 0, "not through shared memory");
    tsr_call_free(call);
    tsr_close(c);
    free(a);
    free(b);
    CHECK(dir_entries("/dev/shm", "") == 0, "entries in the small /dev/shm");
    return "ok";
}

static const char *full_dev_shm(void) { return dev_shm_unusable(0); }
static const char *read_only_dev_shm(void) { return dev_shm_unusable(1); }

Test(shm_full, a_full_dev_shm_does_not_matter) {
    run_in_child(full_dev_shm, "no privilege to mount a tmpfs on /dev/shm");
}

Test(shm_full, a_read_only_dev_shm_does_not_matter) {
    run_in_child(read_only_dev_shm, "no privilege to mount a tmpfs on /dev/shm");
}
