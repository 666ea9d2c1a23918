/* SPDX-License-Identifier: MIT */
/*
 * A full /dev/shm, seen through the public API: a child process gets a
 * private mount namespace with a small tmpfs on /dev/shm (its workers
 * inherit it), then opens components and calls them. Opening fails with
 * TSR_E_SHM saying /dev/shm is full; a call whose inputs cannot be staged
 * fails the same way and the next, smaller call works; afterwards the
 * small /dev/shm is empty again. Skipped without the privilege to mount.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "private_tmpfs.h"
#include "worker_util.h"

TestSuite(shm_full, .timeout = 60);

/* Entries in the (private) /dev/shm. */
static int entries(void) { return dir_entries("/dev/shm", ""); }

/* A tmpfs of `size` on /dev/shm in a namespace of this process's own. */
static const char *small_dev_shm(const char *size) {
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s,mode=1777", size);
    return private_tmpfs("/dev/shm", 0, opts);
}

/* Shared memory only: by default a component that cannot have it falls
 * back to files (tests/test_worker_files.c). */
static tsr_options *worker_options(void) {
    tsr_options *o = tsr_options_new();
    tsr_error err;
    if (o && (tsr_options_set(o, "mode", "worker", &err) != 0 ||
              tsr_options_set(o, "transport", "shm", &err) != 0)) {
        tsr_options_free(o);
        return NULL;
    }
    return o;
}

/* 512 KiB: not even the arena's first segment (1 MiB) fits. */
static const char *open_in_a_full_dev_shm(void) {
    const char *why = small_dev_shm("512k");
    if (why) return why;
    tsr_options *o = worker_options();
    CHECK(o, "options");
    tsr_component *c = NULL;
    tsr_error err;
    int rc = tsr_open(TEST_PLUGIN("contract"), o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == TSR_E_SHM && c == NULL, "tsr_open gave %d: %s", rc, err.message);
    CHECK(strstr(err.message, "/dev/shm is full"), "message: %s", err.message);
    CHECK(entries() == 0, "%d entries left in /dev/shm", entries());
    CHECK(children_of(getpid(), (pid_t[2]){0}, 2) == 0, "a worker was left");
    return "ok";
}

/* 3 MiB: the component opens (1 MiB arena, a sparse channel), a call
 * whose two 1 MiB inputs must be staged does not fit. */
static const char *call_in_a_full_dev_shm(void) {
    const char *why = small_dev_shm("3m");
    if (why) return why;
    tsr_options *o = worker_options();
    CHECK(o, "options");
    tsr_component *c = NULL;
    tsr_error err;
    int rc = tsr_open(BUNDLED_PLUGIN("vectoradd"), o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == 0, "tsr_open: %s", err.message);
    int64_t n = 128 * 1024;
    double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b), s = 2;
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    CHECK(a && b && call, "out of memory");
    tsr_array aa = {a, TSR_FLOAT64, 1, {n}}, ba = {b, TSR_FLOAT64, 1, {n}};
    tsr_array sa = {&s, TSR_FLOAT64, 0, {0}};
    tsr_call_set_input(call, "a", &aa);
    tsr_call_set_input(call, "b", &ba);
    tsr_call_set_input(call, "s", &sa);
    rc = tsr_call_run(call);
    CHECK(rc == TSR_E_SHM, "the big call gave %d: %s", rc, tsr_call_errmsg(call));
    CHECK(strstr(tsr_call_errmsg(call), "/dev/shm is full"), "message: %s", tsr_call_errmsg(call));
    tsr_stats st = TSR_STATS_INIT;
    tsr_component_stats(c, &st);
    CHECK(st.worker_deaths == 0, "the worker died");
    aa.shape[0] = ba.shape[0] = 1000;
    tsr_call_set_input(call, "a", &aa);
    tsr_call_set_input(call, "b", &ba);
    rc = tsr_call_run(call);
    CHECK(rc == 0, "the small call after it: %s", tsr_call_errmsg(call));
    tsr_call_free(call);
    tsr_close(c);
    free(a);
    free(b);
    CHECK(entries() == 0, "%d entries left in /dev/shm", entries());
    return "ok";
}

/* Run fn in a child (which may change its mount namespace) and check its
 * verdict. */
static void in_child(const char *(*fn)(void)) {
    run_in_child(fn, "no privilege to mount a small tmpfs");
}

Test(shm_full, opening_a_worker_component_fails_with_a_clear_error) {
    in_child(open_in_a_full_dev_shm);
}

Test(shm_full, a_call_that_does_not_fit_fails_and_the_next_works) {
    in_child(call_in_a_full_dev_shm);
}
