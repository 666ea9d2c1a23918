/* SPDX-License-Identifier: MIT */
/* An endpoint's refusal of an input value (tsr_ctx_invalid): the message's
 * last line "invalid: <type> <path>" becomes TSR_E_VALUE, tsr_call_errloc
 * the path and tsr_call_errtype the type, the line stripped from the
 * message, in process and in a worker (shm and files transports). A line
 * that only looks like the convention leaves a plain plugin failure. */
#include <criterion/criterion.h>
#include <string.h>

#include "worker_util.h"

#define REFUSES TEST_PLUGIN("refuses_input")

typedef struct variant {
    tsr_mode mode;
    const char *transport;   /* worker: "shm" or "files" */
    const char *name;
} variant;

static const variant variants[] = {
    {TSR_MODE_INPROC, NULL, "inproc"},
    {TSR_MODE_ISOLATED, NULL, "isolated"},
    {TSR_MODE_WORKER, "shm", "worker shm"},
    {TSR_MODE_WORKER, "files", "worker files"},
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

static tsr_component *open_variant(size_t v) {
    tsr_options *o = mode_options(variants[v].mode);
    if (variants[v].transport) set_option(o, "transport", variants[v].transport);
    tsr_component *c = open_ok(REFUSES, o);
    tsr_options_free(o);
    return c;
}

/* Runs apply with x = {x0, 5}; returns the call (the caller frees it). */
static tsr_call *run_with(tsr_component *c, double x0, int *rc) {
    static double x[2];
    x[0] = x0;
    x[1] = 5;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    *rc = tsr_call_run(call);
    return call;
}

Test(invalid_input, a_refused_value_is_TSR_E_VALUE_at_its_path_in_every_mode) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(v);
        int rc;
        tsr_call *call = run_with(c, -1, &rc);
        const char *msg = expect_failure(call, rc, TSR_E_VALUE);
        cr_assert_str_eq(tsr_call_errloc(call), "inputs.x", "%s", variants[v].name);
        cr_assert_str_eq(tsr_call_errtype(call), "greater_than_equal", "%s", variants[v].name);
        assert_contains(msg, "x[0] must be >= 0");
        assert_contains(msg, "refuses_input");
        cr_assert_null(strstr(msg, "invalid:"), "%s: the line was not stripped: %s",
                       variants[v].name, msg);
        cr_assert_eq(msg[strlen(msg) - 1], '0', "%s: %s", variants[v].name, msg);
        /* The next call succeeds and clears all three. */
        tsr_call_free(call);
        call = run_with(c, 0, &rc);
        cr_assert_eq(rc, 0, "%s: %s", variants[v].name, tsr_call_errmsg(call));
        cr_assert_str_eq(tsr_call_errtype(call), "");
        cr_assert_str_eq(tsr_call_errloc(call), "");
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(invalid_input, no_type_is_value_error_and_a_path_may_hold_spaces) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(v);
        int rc;
        tsr_call *call = run_with(c, -2, &rc);
        expect_failure(call, rc, TSR_E_VALUE);
        cr_assert_str_eq(tsr_call_errloc(call), "inputs.opts.{a key}", "%s", variants[v].name);
        cr_assert_str_eq(tsr_call_errtype(call), "value_error", "%s", variants[v].name);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* The worker's answer holds less than a plugin message: the line is kept
 * whole, the text before it cut. */
Test(invalid_input, a_long_message_keeps_its_line_through_a_worker) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(v);
        int rc;
        tsr_call *call = run_with(c, -3, &rc);
        const char *msg = expect_failure(call, rc, TSR_E_VALUE);
        cr_assert_str_eq(tsr_call_errloc(call), "inputs.x", "%s", variants[v].name);
        cr_assert_str_eq(tsr_call_errtype(call), "too_long", "%s", variants[v].name);
        assert_contains(msg, "mmmmmmmm");
        cr_assert_null(strstr(msg, "invalid:"), "%s", variants[v].name);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(invalid_input, a_line_that_only_looks_like_one_is_a_plain_plugin_failure) {
    static const char *const kept[] = {"Not_Lower", "not the last line", "inputs.\tx",
                                       "invalid: value_error"};
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(v);
        for (int k = 1; k <= 4; k++) {
            int rc;
            tsr_call *call = run_with(c, k, &rc);
            const char *msg = expect_failure(call, rc, TSR_E_PLUGIN);
            cr_assert_str_eq(tsr_call_errloc(call), "", "%s, case %d", variants[v].name, k);
            cr_assert_str_eq(tsr_call_errtype(call), "plugin_error", "%s, case %d",
                             variants[v].name, k);
            assert_contains(msg, kept[k - 1]);
            tsr_call_free(call);
        }
        tsr_close(c);
    }
}

Test(invalid_input, errtype_of_no_call_is_empty) {
    cr_assert_str_eq(tsr_call_errtype(NULL), "");
}
