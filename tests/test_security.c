/* SPDX-License-Identifier: MIT */
/*
 * What the threat model (docs/threat-model.md) promises and tests can
 * show: shared-memory segments readable and writable by their owner only,
 * under names with 64 random bits; and the worker boundary: a plugin that
 * writes into its input damages the caller's array in process, but in a
 * worker it reaches only the arena copy, never the caller's memory (an
 * input the caller put in the arena with tsr_component_alloc is shared, and so is
 * reachable).
 */
#include <sys/stat.h>

#include "worker_util.h"

TestSuite(security, .fini = expect_no_own_segments, .timeout = 60);

/* Checks every /dev/shm entry of this process; returns how many, and
 * copies the random part of the first into hex. */
static int check_own_entries(char hex[17]) {
    char stem[48], names[4096];
    snprintf(stem, sizeof stem, "tessera-%ld-", (long)getpid());
    int total = shm_entries_list(getpid(), names, sizeof names), n = 0;
    for (char *name = names, *end; (end = strchr(name, '\n')) != NULL; name = end + 1) {
        *end = '\0';
        char path[sizeof "/dev/shm/" + sizeof names];
        snprintf(path, sizeof path, "/dev/shm/%s", name);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0, "%s", path);
        cr_expect_eq(st.st_mode & 07777, 0600, "%s has mode %o", path, st.st_mode & 07777);
        cr_expect_eq(st.st_uid, geteuid(), "%s is not owned by this user", path);
        /* tessera-<pid>-<start>-<16 hex>-<k> or -c<k> */
        unsigned long long start;
        char random[17] = "", rest[32] = "";
        int got = sscanf(name + strlen(stem), "%llu-%16[0-9a-f]-%31s", &start, random, rest);
        cr_expect_eq(got, 3, "unexpected name %s", name);
        cr_expect_eq(strlen(random), 16, "%s: the random part is not 64 bits", name);
        if (n++ == 0) memcpy(hex, random, 17);
    }
    cr_assert_eq(n, total, "more entries than their names' room");
    return n;
}

Test(security, segments_are_private_to_their_owner_with_unguessable_names) {
    mode_t old = umask(0); /* a permissive umask must not widen them */
    tsr_component *a = open_worker_cfg(BUNDLED_PLUGIN("noop"), NULL, NULL, NULL, NULL);
    char first[17];
    int n = check_own_entries(first);
    cr_expect_geq(n, 2, "an arena segment and a channel segment");
    tsr_close(a);
    tsr_component *b = open_worker_cfg(BUNDLED_PLUGIN("noop"), NULL, NULL, NULL, NULL);
    char second[17];
    cr_assert_geq(check_own_entries(second), 2);
    cr_expect_str_neq(first, second, "two arenas drew the same random part");
    tsr_close(b);
    umask(old);
}

/* hog with take=scribble overwrites its input x, then y = x. */
static double scribbled_input(tsr_mode mode, int in_arena) {
    tsr_options *o = mode_options(mode);
    set_config(o, "take", "scribble");
    tsr_component *c = open_ok(TEST_PLUGIN("hog"), o);
    tsr_options_free(o);
    double own[2] = {1, 2};
    double *x = in_arena ? tsr_component_alloc(c, sizeof own) : own;
    cr_assert_not_null(x);
    x[0] = 1;
    x[1] = 2;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    run_ok(call);
    double seen = x[0];
    tsr_call_free(call);
    if (in_arena) tsr_component_free_buffer(c, x);
    tsr_close(c);
    return seen;
}

Test(security, a_worker_cannot_write_into_the_callers_memory) {
    cr_expect(isnan(scribbled_input(TSR_MODE_INPROC, 0)), "in process the plugin can");
    cr_expect_eq(scribbled_input(TSR_MODE_WORKER, 0), 1.0, "a worker wrote the caller's array");
    cr_expect(isnan(scribbled_input(TSR_MODE_WORKER, 1)),
              "an input in the arena is shared with the worker");
}
