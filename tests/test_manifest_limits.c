/* SPDX-License-Identifier: MIT */
/*
 * A manifest's workspaces and staged copies count against max_array_bytes
 * and max_call_bytes like the call's arrays: a workspace "n*n" of a large
 * n is refused with TSR_E_LIMIT, naming the workspace, the endpoint and
 * the option, before its memory is allocated (the child's peak RSS shows
 * it); a size a routine reports for a queried workspace is counted too;
 * and calls within the limits run, again and again on one call object.
 */
#include <stdlib.h>
#include <sys/resource.h>

#include "child_verdict.h"
#include "worker_util.h"

#define MANIFEST(name) TSR_TEST_MANIFEST_DIR "/" name ".json"

TestSuite(manifest_limits, .fini = expect_no_own_segments);

/* A component in mode `mode` with both limits set. */
static tsr_component *open_limited(const char *manifest, tsr_mode mode, const char *array_bytes,
                                   const char *call_bytes) {
    tsr_options *o = mode_options(mode);
    set_option(o, "max_array_bytes", array_bytes);
    set_option(o, "max_call_bytes", call_bytes);
    tsr_component *c = open_ok(manifest, o);
    tsr_options_free(o);
    return c;
}

static long peak_rss_kib(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* n = 5000 (a 40 KB input): the workspace would be 200 MB, zeroed. */
enum { BIG_N = 5000 };

static const char *big_workspace_in_child(void) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    CHECK(o && tsr_options_set(o, "max_array_bytes", "1000000", &err) == 0 &&
              tsr_options_set(o, "max_call_bytes", "1000000", &err) == 0,
          "options");
    tsr_component *c = NULL;
    int rc = tsr_open(MANIFEST("fx_ws_square"), o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == 0, "open: %s", err.message);
    double *x = calloc(BIG_N, sizeof *x);
    CHECK(x, "out of memory");
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    tsr_array a = f64_vec(x, BIG_N);
    CHECK(call && tsr_call_set_input(call, "x", &a) == 0, "bind");
    long before = peak_rss_kib();
    rc = tsr_call_run(call);
    long after = peak_rss_kib();
    const char *msg = tsr_call_errmsg(call);
    CHECK(rc == TSR_E_LIMIT, "the call returned %d (%s), not TSR_E_LIMIT", rc, msg);
    CHECK(strstr(msg, "endpoint 'apply': workspace 'work' (fx_ws_square_ args[3])") &&
              strstr(msg, "200000000 bytes exceed max_array_bytes (1000000)") &&
              strstr(msg, "raise the option max_array_bytes"),
          "message: %s", msg);
    /* 200 MB zeroed would raise the peak by 195,000 KiB; nothing near. */
    CHECK(before > 0 && after - before < 20000,
          "peak RSS grew by %ld KiB during a refused call", after - before);
    tsr_call_free(call);
    tsr_close(c);
    free(x);
    return "ok";
}

Test(manifest_limits, a_workspace_over_max_array_bytes_is_refused_before_it_is_allocated) {
    run_in_child_watched(big_workspace_in_child, NULL, 60);
}

Test(manifest_limits, a_workspace_that_brings_the_call_past_max_call_bytes_is_refused) {
    for (int mode = 0; mode < 2; mode++) {
        /* n = 353: the workspace alone (996,872 bytes) fits either limit, with
         * x and y (5,648) the call does not. */
        tsr_component *c =
            open_limited(MANIFEST("fx_ws_square"), (tsr_mode)mode, "1000000", "1000000");
        double *x = calloc(353, sizeof *x);
        cr_assert_not_null(x);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 353));
        const char *msg = run_fails(call, TSR_E_LIMIT);
        assert_contains(msg, "endpoint 'apply': workspace 'work' (fx_ws_square_ args[3]): "
                             "996872 bytes bring the call's arrays to 1002520 bytes, past "
                             "max_call_bytes (1000000)");
        assert_contains(msg, "raise the option max_call_bytes");
        tsr_call_free(call);
        tsr_close(c);
        free(x);
    }
}

Test(manifest_limits, a_call_within_the_limits_runs_and_runs_again) {
    for (int mode = 0; mode < 3; mode++) {
        /* n = 300: 724,800 bytes of a 1,000,000 budget, so a second run
         * that counted the first's workspace again would be refused. */
        tsr_component *c =
            open_limited(MANIFEST("fx_ws_square"), (tsr_mode)mode, "1000000", "1000000");
        double x[300], y0 = 0;
        for (int i = 0; i < 300; i++) x[i] = i * 0.5;
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 300));
        for (int run = 0; run < 3; run++) {
            run_ok(call);
            const tsr_array *y = tsr_call_output(call, "y");
            cr_assert_eq(y->shape[0], 300);
            for (int i = 0; i < 300; i++)
                cr_assert_eq(((const double *)y->data)[i], x[i], "%s run %d: y[%d]",
                             mode_names[mode], run, i);
            y0 += ((const double *)y->data)[1];
        }
        cr_assert_eq(y0, 1.5);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_limits, a_size_the_routine_asks_for_is_counted_too) {
    for (int mode = 0; mode < 2; mode++) {
        /* fx_wsq_ asks for 2n + 1 doubles: for n = 70,000 that is 1,120,008
         * bytes, over max_array_bytes, though the input (560,000) is not. */
        tsr_component *c = open_limited(MANIFEST("fx_wsq"), (tsr_mode)mode, "1000000", "100000000");
        double *x = calloc(70000, sizeof *x);
        cr_assert_not_null(x);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 70000));
        const char *msg = run_fails(call, TSR_E_LIMIT);
        assert_contains(msg, "endpoint 'apply': workspace 'work' (fx_wsq_ args[4]): 1120008 "
                             "bytes exceed max_array_bytes (1000000)");
        tsr_call_free(call);
        /* A smaller one is asked, counted, laid out again and run. */
        call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 1000));
        run_ok(call);
        run_ok(call);
        tsr_call_free(call);
        tsr_close(c);
        free(x);
    }
}
