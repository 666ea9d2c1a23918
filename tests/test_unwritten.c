/* SPDX-License-Identifier: MIT */
/*
 * No result carries another call's bytes. A plugin that returns 0 without
 * writing a result (tests/plugins/lazy.c) hands back zeros, never the
 * previous call's values nor stale heap memory: in process, in a
 * namespace, in a worker over shared memory and over files, through a
 * result the host sized and one the plugin allocated, for apply and jvp,
 * and behind `tessera serve --mode worker` from one client to the next.
 * With option unwritten=check the call fails naming the result instead.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "net_util.h"
#include "worker_util.h"

#define LAZY TEST_PLUGIN("lazy")

enum { PLAIN, FILES, N_SETUPS = TSR_MODE_WORKER + 2 };

/* inproc, isolated, worker over shared memory, worker over files. */
static tsr_component *open_setup(int setup, const char *unwritten) {
    tsr_mode mode = setup > TSR_MODE_WORKER ? TSR_MODE_WORKER : (tsr_mode)setup;
    tsr_options *o = mode_options(mode);
    if (setup > TSR_MODE_WORKER) set_option(o, "transport", "files");
    if (unwritten) set_option(o, "unwritten", unwritten);
    tsr_component *c = open_ok(LAZY, o);
    tsr_options_free(o);
    return c;
}

static const char *setup_name(int setup) {
    return setup > TSR_MODE_WORKER ? "worker (files)" : mode_names[setup];
}

static void run_apply(tsr_call *call, double *x, int64_t n) {
    bind_ok(call, "x", f64_vec(x, n));
    run_ok(call);
}

static void assert_all_zero(const tsr_array *a, const char *what, int setup) {
    cr_assert_not_null(a, "%s: no result", what);
    size_t bytes = (size_t)tsr_array_count(a) * tsr_dtype_size(a->dtype);
    const unsigned char *p = a->data;
    for (size_t i = 0; i < bytes; i++)
        cr_assert_eq(p[i], 0, "%s in %s: byte %zu is %#x, not 0 (another call's data?)", what,
                     setup_name(setup), i, p[i]);
}

Test(unwritten, a_result_left_unwritten_is_zeros_not_the_previous_calls_in_every_mode) {
    for (int setup = 0; setup < N_SETUPS; setup++) {
        tsr_component *c = open_setup(setup, NULL);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double good[3] = {1.5, 3, 4.5}, lazy[3] = {-1, 0, 0};
        run_apply(call, good, 3);
        const double *y = tsr_call_output(call, "y")->data;
        cr_assert(y[0] == 3 && y[1] == 6 && y[2] == 9, "%s: the good call", setup_name(setup));
        /* The same call object, whose buffers are reused: the fast path. */
        run_apply(call, lazy, 3);
        assert_all_zero(tsr_call_output(call, "y"), "output 'y'", setup);
        const int32_t *ids = tsr_call_output(call, "ids")->data;
        cr_assert(ids[0] == 0 && ids[1] == 1 && ids[2] == 2);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(unwritten, nothing_written_at_all_gives_zeros_for_every_result_of_every_size) {
    const int64_t sizes[] = {1, 3, 1000, 1000000};
    for (int setup = 0; setup < N_SETUPS; setup++) {
        tsr_component *c = open_setup(setup, NULL);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int64_t n = sizes[s];
            double *x = malloc((size_t)n * sizeof *x);
            cr_assert_not_null(x);
            for (int64_t i = 0; i < n; i++) x[i] = 1.0 + (double)i;
            tsr_call *call = new_call(c, TSR_EP_APPLY);
            run_apply(call, x, n);
            /* A new call: new buffers, from the heap or the arena. */
            tsr_call *next = new_call(c, TSR_EP_APPLY);
            x[0] = -10;
            run_apply(next, x, n);
            assert_all_zero(tsr_call_output(next, "y"), "output 'y'", setup);
            assert_all_zero(tsr_call_output(next, "ids"), "output 'ids'", setup);
            tsr_call_free(next);
            tsr_call_free(call);
            free(x);
        }
        tsr_close(c);
    }
}

Test(unwritten, a_result_the_plugin_allocated_and_left_unwritten_is_zeros) {
    for (int setup = 0; setup < N_SETUPS; setup++) {
        tsr_component *c = open_setup(setup, NULL);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double good[4] = {7, 8, 9, 10}, lazy[4] = {-6, 1, 2, 3};
        run_apply(call, good, 4);
        const double *tail = tsr_call_output(call, "tail")->data;
        cr_assert(tail[0] == 7 && tail[3] == 10);
        run_apply(call, lazy, 4);
        assert_all_zero(tsr_call_output(call, "tail"), "output 'tail'", setup);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(unwritten, a_jvp_left_unwritten_is_zeros) {
    for (int setup = 0; setup < N_SETUPS; setup++) {
        tsr_component *c = open_setup(setup, NULL);
        tsr_call *call = new_call(c, TSR_EP_JVP);
        const char *in[] = {"x"}, *out[] = {"y"};
        wrt_ok(call, in, 1, out, 1);
        double x[3] = {1, 2, 3}, t[3] = {5, 6, 7};
        seed_ok(call, "x", f64_vec(t, 3));
        run_apply(call, x, 3);
        cr_assert_eq(((const double *)tsr_call_result(call, 0)->data)[2], 14);
        x[0] = -1;
        run_apply(call, x, 3);
        assert_all_zero(tsr_call_result(call, 0), "jvp result", setup);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(unwritten, with_unwritten_check_a_result_left_unwritten_fails_the_call_naming_it) {
    for (int setup = 0; setup < N_SETUPS; setup++) {
        tsr_component *c = open_setup(setup, "check");
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double good[3] = {1.5, 3, 4.5}, lazy[3] = {-1, 0, 0}, partial[3] = {-5, 0, 0};
        run_apply(call, good, 3);   /* a plugin that writes everything passes */
        bind_ok(call, "x", f64_vec(lazy, 3));
        const char *msg = run_fails(call, TSR_E_PLUGIN_RESULT);
        assert_contains(msg, "output 'y'");
        assert_contains(msg, "3 of 3 elements left unwritten");
        assert_contains(msg, "unwritten=check");
        cr_assert_eq(tsr_call_n_results(call), 0, "%s: a failed call has no results",
                     setup_name(setup));
        bind_ok(call, "x", f64_vec(partial, 3));
        msg = run_fails(call, TSR_E_PLUGIN_RESULT);
        assert_contains(msg, "2 of 3 elements left unwritten");
        double alloc_lazy[3] = {-6, 1, 1};
        bind_ok(call, "x", f64_vec(alloc_lazy, 3));
        msg = run_fails(call, TSR_E_PLUGIN_RESULT);
        assert_contains(msg, "output 'tail'");
        run_apply(call, good, 3);   /* and the next good call works */
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(unwritten, the_option_takes_zero_check_or_keep_only) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "unwritten", "zero", &err), 0);
    cr_assert_eq(tsr_options_set(o, "unwritten", "nan", &err), TSR_E_ARGUMENT);
    assert_contains(err.message, "zero, check or keep");
    tsr_options_free(o);
}

/* ---- behind tessera serve, from one client to the next ------------------ */

Test(unwritten, under_tessera_serve_the_next_client_never_receives_the_previous_clients_result,
     .fini = stop_servers) {
    server_spec spec = {
        .args = (const char *const[]){"serve", "--port", "{port}", "--mode", "worker", LAZY, NULL}};
    const char *url = serve_ok(&spec)->url;
    /* Two clients, each its own connection: the remote backend. */
    tsr_component *alice = open_ok(url, NULL), *bob = open_ok(url, NULL);
    const int64_t sizes[] = {3, 2000, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        double *x = malloc((size_t)n * sizeof *x);
        cr_assert_not_null(x);
        for (int64_t i = 0; i < n; i++) x[i] = 1.5 * (double)(i + 1);
        tsr_call *a = new_call(alice, TSR_EP_APPLY);
        run_apply(a, x, n);
        cr_assert_eq(((const double *)tsr_call_output(a, "y")->data)[n - 1], 3.0 * (double)n);
        x[0] = -1;
        tsr_call *b = new_call(bob, TSR_EP_APPLY);
        run_apply(b, x, n);
        const double *y = tsr_call_output(b, "y")->data;
        for (int64_t i = 0; i < n; i++)
            cr_assert_eq(y[i], 0.0, "n=%lld: bob's y[%lld] is %g: alice's data", (long long)n,
                         (long long)i, y[i]);
        tsr_call_free(b);
        tsr_call_free(a);
        free(x);
    }
    tsr_close(bob);
    tsr_close(alice);
}

Test(unwritten, with_unwritten_keep_results_are_left_as_they_were_for_a_trusted_plugin) {
    for (int setup = 0; setup < N_SETUPS; setup++) {
        tsr_component *c = open_setup(setup, "keep");
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double good[3] = {1.5, 3, 4.5}, lazy[3] = {-1, 0, 0};
        run_apply(call, good, 3);
        const double *y = tsr_call_output(call, "y")->data;
        cr_assert(y[0] == 3 && y[1] == 6 && y[2] == 9, "%s: the good call", setup_name(setup));
        /* The host chose to trust the plugin: nothing clears its buffers. */
        run_apply(call, lazy, 3);
        y = tsr_call_output(call, "y")->data;
        cr_assert(y[0] == 3 && y[2] == 9, "%s: keep left the buffer as it was", setup_name(setup));
        tsr_call_free(call);
        tsr_close(c);
    }
}
