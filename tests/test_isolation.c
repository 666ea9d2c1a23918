/* SPDX-License-Identifier: MIT */
/*
 * What each mode isolates, shown on two plugins whose libraries clash:
 * clash_v1.so and clash_v2.so (tests/clash/) each need a libclash.so with
 * the same SONAME and symbols, v1's returning 1 and v2's 2, found only
 * through each plugin's own rpath. value = x * clash_value().
 *
 * inproc: the loader binds a dependency by SONAME to whatever is already
 * loaded, so the second plugin silently gets the first one's library. The
 * inproc tests assert that this wrong result happens: it is the reason
 * isolated and worker modes exist. Criterion runs each test in a process
 * of its own, so nothing loaded by one test is seen by another.
 */
#include <dlfcn.h>
#include <sys/wait.h>

#include "test_util.h"
#include "forked_leak_check.h"

#define CLASH_PLUGIN(v) TSR_CLASH_DIR "/clash_v" v ".so"

static tsr_component *open_mode(const char *path, const char *mode) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    tsr_error err = {0};
    cr_assert_eq(tsr_options_set(o, "mode", mode, &err), 0, "%s", err.message);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* apply with x; returns value. */
static double value_of(tsr_component *c, double x) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_scalar(&x));
    run_ok(call);
    const tsr_array *v = tsr_call_output(call, "value");
    cr_assert(v && v->data && v->rank == 0 && v->dtype == TSR_FLOAT64);
    double out = *(const double *)v->data;
    tsr_call_free(call);
    return out;
}

/* Open v1 then v2 in the given modes and return both values for x = 3. */
static void both(const char *mode1, const char *mode2, double *v1, double *v2) {
    tsr_component *c1 = open_mode(CLASH_PLUGIN("1"), mode1);
    tsr_component *c2 = open_mode(CLASH_PLUGIN("2"), mode2);
    /* The plugins themselves are the right ones whatever happens below. */
    cr_assert_str_eq(tsr_component_version(c1), "1");
    cr_assert_str_eq(tsr_component_version(c2), "2");
    *v1 = value_of(c1, 3.0);
    *v2 = value_of(c2, 3.0);
    tsr_close(c2);
    tsr_close(c1);
}

/* ---- the premise ---------------------------------------------------------- */

Test(isolation, libclash_is_found_only_through_each_plugins_rpath) {
    /* If the default search path found a libclash.so, every mode would get
     * that one and the test below would show nothing. */
    void *h = dlopen("libclash.so", RTLD_NOW | RTLD_LOCAL);
    cr_assert_null(h, "libclash.so is on the default search path; the clash tests need it "
                      "not to be");
}

Test(isolation, each_plugin_alone_gets_its_own_library) {
    tsr_component *c = open_mode(CLASH_PLUGIN("2"), "inproc");
    cr_assert_float_eq(value_of(c, 3.0), 6.0, 0.0);
    tsr_close(c);
}

/* ---- inproc: the clash ---------------------------------------------------- */

Test(isolation, inproc_second_plugin_silently_binds_the_first_ones_library) {
    double v1, v2;
    both("inproc", "inproc", &v1, &v2);
    cr_assert_float_eq(v1, 3.0, 0.0);
    cr_assert_float_eq(v2, 3.0, 0.0, "expected the clash (3 = 3 * v1's clash_value), got %g", v2);
}

Test(isolation, inproc_clash_follows_load_order) {
    tsr_component *c2 = open_mode(CLASH_PLUGIN("2"), "inproc");
    tsr_component *c1 = open_mode(CLASH_PLUGIN("1"), "inproc");
    cr_assert_float_eq(value_of(c1, 3.0), 6.0, 0.0, "v1 should get v2's library");
    cr_assert_float_eq(value_of(c2, 3.0), 6.0, 0.0);
    tsr_close(c1);
    tsr_close(c2);
}

/* ---- isolated and worker: each gets its own ------------------------------ */

Test(isolation, isolated_plugins_each_get_their_own_library) {
    double v1, v2;
    both("isolated", "isolated", &v1, &v2);
    cr_assert_float_eq(v1, 3.0, 0.0);
    cr_assert_float_eq(v2, 6.0, 0.0);
}

Test(isolation, isolated_plugin_beside_an_inproc_one_gets_its_own_library) {
    double v1, v2;
    both("inproc", "isolated", &v1, &v2);
    cr_assert_float_eq(v1, 3.0, 0.0);
    cr_assert_float_eq(v2, 6.0, 0.0);
}

Test(isolation, worker_plugins_each_get_their_own_library) {
    double v1, v2;
    both("worker", "worker", &v1, &v2);
    cr_assert_float_eq(v1, 3.0, 0.0);
    cr_assert_float_eq(v2, 6.0, 0.0);
}

/* spawn=fork needs a single-threaded host and Criterion's test process
 * has a second thread, so the host here is a child forked from the test:
 * it reports both values, or a message, through a pipe. */
typedef struct fork_report {
    double v1, v2;
    char message[TSR_ERRMSG_MAX];
} fork_report;

static void fork_host(int fd) {
    fork_report rep = {.v1 = NAN, .v2 = NAN};
    tsr_options *o = tsr_options_new();
    tsr_component *c[2] = {NULL, NULL};
    tsr_error err = {0};
    const char *paths[2] = {CLASH_PLUGIN("1"), CLASH_PLUGIN("2")};
    double *out[2] = {&rep.v1, &rep.v2};
    if (!o || tsr_options_set(o, "mode", "worker", &err) ||
        tsr_options_set(o, "spawn", "fork", &err))
        goto done;
    for (int i = 0; i < 2; i++)
        if (tsr_open(paths[i], o, &c[i], &err) != 0) goto done;
    for (int i = 0; i < 2; i++) {
        double x = 3.0;
        tsr_array a = f64_scalar(&x);
        tsr_call *call = tsr_call_new(c[i], TSR_EP_APPLY);
        if (call && tsr_call_set_input(call, "x", &a) == 0 && tsr_call_run(call) == 0)
            *out[i] = *(const double *)tsr_call_output(call, "value")->data;
        else
            snprintf(err.message, sizeof err.message, "%s",
                     call ? tsr_call_errmsg(call) : "no call");
        tsr_call_free(call);
    }
done:
    snprintf(rep.message, sizeof rep.message, "%s", err.message);
    tsr_close(c[1]);
    tsr_close(c[0]);
    tsr_options_free(o);
    ssize_t w = write(fd, &rep, sizeof rep);
    forked_leak_check(); /* _exit skips LeakSanitizer's own */
    _exit(w == (ssize_t)sizeof rep ? 0 : 1);
}

Test(isolation, forked_worker_plugins_each_get_their_own_library) {
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        fork_host(fds[1]);
    }
    close(fds[1]);
    fork_report rep;
    ssize_t got = read(fds[0], &rep, sizeof rep);
    close(fds[0]);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(got == (ssize_t)sizeof rep && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the forked host failed (status %d)", status);
    cr_assert_float_eq(rep.v1, 3.0, 0.0, "%s", rep.message);
    cr_assert_float_eq(rep.v2, 6.0, 0.0, "%s", rep.message);
}

Test(isolation, worker_plugin_beside_an_inproc_one_gets_its_own_library) {
    /* An exec'd worker starts from a clean process, whatever the host has
     * loaded. */
    double v1, v2;
    both("inproc", "worker", &v1, &v2);
    cr_assert_float_eq(v1, 3.0, 0.0);
    cr_assert_float_eq(v2, 6.0, 0.0);
}

/* ---- isolated mode runs out of namespaces cleanly -------------------------- */

/*
 * glibc gives dlmopen 15 namespaces besides the program's own, and every
 * namespace that loads libc takes a slice of a fixed static TLS reserve;
 * whichever runs out first ends the series (noop.so needs libc, clash_v1.so
 * does not). The reserve is given back only when the closed module's slice
 * is at the end of the used area, so components are closed here in the
 * reverse order of opening: closed in opening order, all but one of the
 * slices stay lost (glibc 2.36).
 */
#define MAX_TRY 64

/* Check that an opened component computes; noop: y = x, clash: x * 1. */
static void check_works(tsr_component *c, int i) {
    if (tsr_component_find_input(c, "x") >= 0 && tsr_component_find_output(c, "value") >= 0) {
        cr_assert_float_eq(value_of(c, 3.0), 3.0, 0.0, "isolated component %d is wrong", i);
        return;
    }
    double x[2] = {1.5, -2.0};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    run_ok(call);
    const double *y = tsr_call_output(call, "y")->data;
    cr_assert(y[0] == 1.5 && y[1] == -2.0, "isolated component %d is wrong", i);
    tsr_call_free(call);
}

/* Open isolated components until one fails; each one opened must work.
 * Returns how many opened and leaves the failure in *err. */
static int open_until_failure(const char *path, tsr_component **cs, tsr_error *err) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    cr_assert_eq(tsr_options_set(o, "mode", "isolated", NULL), 0);
    int n = 0;
    while (n < MAX_TRY) {
        tsr_component *c = (tsr_component *)(uintptr_t)0x1;
        memset(err, 0, sizeof *err);
        int rc = tsr_open(path, o, &c, err);
        if (rc != 0) {
            cr_assert_eq(rc, err->code);
            cr_assert_null(c);
            break;
        }
        check_works(c, n);
        cs[n++] = c;
    }
    tsr_options_free(o);
    return n;
}

static void close_all(tsr_component **cs, int n) {
    while (n > 0) tsr_close(cs[--n]);
}

static void limit_fails_cleanly(const char *path) {
    tsr_component *cs[MAX_TRY];
    tsr_error err = TSR_ERROR_INIT;
    int n = open_until_failure(path, cs, &err);
    cr_assert_lt(n, MAX_TRY, "opened %d isolated components; expected glibc to refuse", n);
    cr_assert_geq(n, 3, "only %d isolated components opened: %s", n, err.message);
    cr_assert_leq(n, 15, "more isolated components (%d) than glibc has namespaces", n);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, "namespace");
    assert_contains(err.message, "worker mode");

    /* What opened still works after the refusal. */
    for (int i = 0; i < n; i++) check_works(cs[i], i);
    close_all(cs, n);

    /* Closing gives everything back. */
    int again = open_until_failure(path, cs, &err);
    close_all(cs, again);
    cr_assert_eq(again, n, "after closing all, %d opened again instead of %d: %s", again, n,
                 err.message);
}

Test(isolation, isolated_mode_beyond_the_namespace_limit_fails_cleanly) {
    limit_fails_cleanly(BUNDLED_PLUGIN("noop"));
}

Test(isolation, isolated_mode_beyond_the_namespace_limit_fails_cleanly_without_libc) {
    limit_fails_cleanly(CLASH_PLUGIN("1"));
}

Test(isolation, inproc_components_do_not_count_against_the_namespace_limit) {
    tsr_component *cs[MAX_TRY];
    tsr_error err = TSR_ERROR_INIT;
    int n = open_until_failure(BUNDLED_PLUGIN("noop"), cs, &err);
    /* Isolated mode is used up; inproc still loads into the main namespace. */
    tsr_component *c = open_mode(BUNDLED_PLUGIN("vectoradd"), "inproc");
    tsr_close(c);
    close_all(cs, n);
}
