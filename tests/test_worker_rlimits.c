/* SPDX-License-Identifier: MIT */
/*
 * The worker's resource limits (options rlimit_as, rlimit_cpu,
 * rlimit_nofile): the worker sets them on itself before it loads the
 * plugin, so a plugin that wants more memory or files than allowed is
 * refused by the system (and fails cleanly if it checks, as hog does), and
 * one that spins past its CPU time is killed with a death that names the
 * signal; the host's own limits are untouched.
 */
#include <sys/resource.h>

#include "worker_util.h"

TestSuite(worker_rlimits, .fini = expect_no_own_segments, .timeout = 60);

static tsr_component *open_limited(const char *plugin, const char *const *kv) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    for (; kv && kv[0]; kv += 2) {
        if (strncmp(kv[0], "config:", 7) == 0) set_config(o, kv[0] + 7, kv[1]);
        else set_option(o, kv[0], kv[1]);
    }
    tsr_component *c = open_ok(plugin, o);
    tsr_options_free(o);
    return c;
}

static int apply(tsr_component *c, const char **msg) {
    static double x[2] = {1, 2};
    static char kept[TSR_ERRMSG_MAX];
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    int rc = tsr_call_run(call);
    snprintf(kept, sizeof kept, "%s", tsr_call_errmsg(call));
    *msg = kept;
    tsr_call_free(call);
    return rc;
}

Test(worker_rlimits, address_space_refuses_a_plugins_large_allocation) {
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer reserves terabytes of address space at start. */
    cr_skip_test("RLIMIT_AS cannot be tested under AddressSanitizer");
#endif
    const char *without[] = {"config:take", "memory", "config:bytes", "1073741824", NULL};
    const char *with[] = {"config:take", "memory", "config:bytes", "1073741824", "rlimit_as",
                          "512M", NULL};
    const char *msg;
    tsr_component *c = open_limited(TEST_PLUGIN("hog"), without);
    cr_assert_eq(apply(c, &msg), 0, "1 GiB without a limit: %s", msg);
    tsr_close(c);
    c = open_limited(TEST_PLUGIN("hog"), with);
    int rc = apply(c, &msg);
    assert_code(rc, TSR_E_PLUGIN, msg);
    assert_contains(msg, "cannot allocate 1073741824 bytes");
    cr_expect_eq(stats_of(c).worker_deaths, 0, "the worker lives on");
    struct rlimit mine;
    cr_assert_eq(getrlimit(RLIMIT_AS, &mine), 0);
    cr_expect_eq(mine.rlim_cur, RLIM_INFINITY, "the host's own limit is untouched");
    tsr_close(c);
}

Test(worker_rlimits, cpu_time_kills_a_spinning_plugin_naming_the_signal) {
    const char *kv[] = {"config:how", "spin", "rlimit_cpu", "1", NULL};
    tsr_component *c = open_limited(TEST_PLUGIN("hang"), kv);
    const char *msg;
    int rc = apply(c, &msg); /* must return: the suite's timeout catches a hang */
    assert_code(rc, TSR_E_WORKER, msg);
    assert_contains(msg, "killed by signal 24 (CPU time limit exceeded)");
    cr_expect_eq(stats_of(c).worker_deaths, 1);
    tsr_close(c);
}

Test(worker_rlimits, open_files_are_limited) {
    const char *without[] = {"config:take", "files", "config:files", "64", NULL};
    const char *with[] = {"config:take", "files", "config:files", "64", "rlimit_nofile", "32",
                          NULL};
    const char *msg;
    tsr_component *c = open_limited(TEST_PLUGIN("hog"), without);
    cr_assert_eq(apply(c, &msg), 0, "64 files without a limit: %s", msg);
    tsr_close(c);
    c = open_limited(TEST_PLUGIN("hog"), with);
    int rc = apply(c, &msg);
    assert_code(rc, TSR_E_PLUGIN, msg);
    assert_contains(msg, "Too many open files");
    cr_expect_eq(stats_of(c).worker_deaths, 0);
    tsr_close(c);
}

/* A worker started with limits works as any other: every endpoint, the
 * arena, a restart. */
Test(worker_rlimits, a_limited_worker_serves_normally) {
    const char *kv[] = {"rlimit_cpu", "600", "rlimit_nofile", "64", NULL};
    tsr_component *c = open_limited(TEST_PLUGIN("hog"), kv);
    const char *msg;
    cr_assert_eq(apply(c, &msg), 0, "%s", msg);
    cr_assert_eq(apply(c, &msg), 0, "%s", msg);
    tsr_close(c);
}
