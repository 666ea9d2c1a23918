/* SPDX-License-Identifier: MIT */
/*
 * Allocation failure at each allocation: a scenario (a call of every
 * endpoint, a payload from text to response, finite differences, a batch,
 * a worker-mode call, tsr_open) runs once with its first allocation
 * failing, then its second, and so on until it runs with none failing.
 * Every run must end in success or a clean error (a TSR_E_* code and a
 * message), and leave no block behind. alloc_fault.h interposes the
 * allocator of this program; nothing in the library is changed for it.
 */
#include "alloc_fault.h"

#include <tessera/payload.h>

#include "worker_util.h"

TestSuite(alloc_faults, .fini = expect_no_own_segments, .timeout = 300);

/* A scenario returns 0 or a TSR_E_* code, and its message in msg. */
typedef int (*scenario_fn)(tsr_component *c, char *msg, size_t n);

static int done(int rc, const char *what, char *msg, size_t n) {
    snprintf(msg, n, "%s", rc ? what : "");
    return rc;
}

/* Ends a scenario's call: its code and message, or NOMEM when there was
 * no call to make (tsr_call_new returned NULL). */
static int call_done(int rc, tsr_call *call, char *msg, size_t n) {
    if (!call) return done(TSR_E_NOMEM, "tsr_call_new returned NULL", msg, n);
    snprintf(msg, n, "%s", rc ? tsr_call_errmsg(call) : "");
    tsr_call_free(call);
    return rc;
}

/* ---- the contract plugin: every endpoint ------------------------------- */

static double nodes[4] = {1, 2, 3, 4}, d_nodes[4] = {1, 0, 0, 1};
static int32_t cells[3] = {0, 1, 2};
static bool flags[3] = {true, false, true};
static float scale = 0.5f;
static double z[4] = {1, -1, 0.5, 2}, d_z[4] = {1, 0, 0, 1};

static int bind_contract(tsr_call *call) {
    int64_t s_nodes[2] = {2, 2}, s_cells[2] = {1, 3}, s_flags[1] = {3}, s_z[1] = {2};
    tsr_array a[5] = {make_array(nodes, TSR_FLOAT64, 2, s_nodes),
                      make_array(cells, TSR_INT32, 2, s_cells),
                      make_array(flags, TSR_BOOL, 1, s_flags),
                      make_array(&scale, TSR_FLOAT32, 0, NULL),
                      make_array(z, TSR_COMPLEX128, 1, s_z)};
    int rc = 0;
    for (int32_t i = 0; !rc && i < 5; i++) rc = tsr_call_set_input_at(call, i, &a[i]);
    return rc;
}

static int contract_endpoint(tsr_component *c, tsr_endpoint ep, char *msg, size_t n) {
    tsr_call *call = tsr_call_new(c, ep);
    if (!call) return call_done(0, NULL, msg, n);
    int rc = bind_contract(call);
    const char *in[2] = {"mesh.nodes", "z"}, *out[2] = {"moved.nodes", "z"};
    if (!rc && ep != TSR_EP_APPLY && ep != TSR_EP_ABSTRACT_EVAL)
        rc = tsr_call_set_wrt(call, in, 2, out, 2);
    int64_t s_nodes[2] = {2, 2}, s_z[1] = {2};
    tsr_array sn = make_array(d_nodes, TSR_FLOAT64, 2, s_nodes);
    tsr_array sz = make_array(d_z, TSR_COMPLEX128, 1, s_z);
    if (!rc && ep == TSR_EP_JVP) rc = tsr_call_set_seed(call, "mesh.nodes", &sn);
    if (!rc && ep == TSR_EP_JVP) rc = tsr_call_set_seed(call, "z", &sz);
    int cot = ep == TSR_EP_VJP || ep == TSR_EP_HVP;
    if (!rc && cot) rc = tsr_call_set_seed(call, "moved.nodes", &sn);
    if (!rc && cot) rc = tsr_call_set_seed(call, "z", &sz);
    if (!rc && ep == TSR_EP_HVP) rc = tsr_call_set_tangent(call, "mesh.nodes", &sn);
    if (!rc && ep == TSR_EP_HVP) rc = tsr_call_set_tangent(call, "z", &sz);
    if (!rc) rc = tsr_call_run(call);
    if (!rc) rc = tsr_call_run(call); /* again: buffers are reused */
    if (!rc && tsr_call_n_results(call) == 0) rc = TSR_E_PLUGIN_RESULT;
    return call_done(rc, call, msg, n);
}

static int every_endpoint(tsr_component *c, char *msg, size_t n) {
    for (int ep = 0; ep < TSR_EP_COUNT; ep++) {
        int rc = contract_endpoint(c, (tsr_endpoint)ep, msg, n);
        if (rc) return rc;
    }
    return 0;
}

/* ---- a payload from text to response ------------------------------------- */

static const char payload_text[] =
    "{\"inputs\": {\"mesh\": {\"nodes\": [[1, 2], [3, 4]], \"cells\": {\"object_type\": "
    "\"array\", \"shape\": [1, 3], \"dtype\": \"int32\", \"data\": {\"buffer\": "
    "\"AAAAAAEAAAACAAAA\", \"encoding\": \"base64\"}}}, \"flags\": [true, false, true], "
    "\"scale\": 0.5, \"z\": {\"object_type\": \"array\", \"shape\": [1], \"dtype\": "
    "\"complex128\", \"data\": {\"buffer\": \"AAAAAAAA8D8AAAAAAADwvw==\", \"encoding\": "
    "\"base64\"}}}, \"jvp_inputs\": [\"mesh.nodes\"], \"jvp_outputs\": [\"moved.nodes\", "
    "\"total\"], \"tangent_vector\": {\"mesh.nodes\": [[1, 0], [0, 1]]}}";

static int payload_round(tsr_component *c, char *msg, size_t n) {
    tsr_payload *p = NULL;
    tsr_error err = {0};
    int rc = tsr_payload_parse(c, TSR_EP_JVP, payload_text, strlen(payload_text), &p, &err);
    if (rc) return done(rc, err.message, msg, n);
    tsr_call *call = tsr_call_new(c, TSR_EP_JVP);
    if (!call) rc = TSR_E_NOMEM, snprintf(err.message, sizeof err.message, "tsr_call_new");
    if (!rc) rc = tsr_payload_bind(p, call, &err);
    if (!rc && (rc = tsr_call_run(call)) != 0)
        snprintf(err.message, sizeof err.message, "%s", tsr_call_errmsg(call));
    for (int e = 0; !rc && e < 2; e++) {
        char *out = NULL;
        rc = tsr_payload_format_results(p, call, (tsr_encoding)e, &out, &err);
        tsr_json_free(out);
    }
    tsr_call_free(call);
    tsr_payload_free(p);
    return done(rc, err.message, msg, n);
}

/* ---- finite differences and batches ------------------------------------------- */

static int fd_endpoints(tsr_component *c, char *msg, size_t n) {
    static double x[3] = {1, 2, 3}, a = 2, dx[3] = {1, 1, 1}, dy[3] = {1, 0, 1};
    const char *in[1] = {"x"}, *out[1] = {"y"};
    for (int ep = TSR_EP_JVP; ep <= TSR_EP_JACOBIAN; ep++) {
        tsr_call *call = tsr_call_new(c, (tsr_endpoint)ep);
        if (!call) return call_done(0, NULL, msg, n);
        int rc = tsr_call_set_input(call, "x", &(tsr_array){x, TSR_FLOAT64, 1, {3}});
        if (!rc) rc = tsr_call_set_input(call, "a", &(tsr_array){&a, TSR_FLOAT64, 0, {0}});
        if (!rc) rc = tsr_call_set_wrt(call, in, 1, out, 1);
        if (!rc && ep == TSR_EP_JVP)
            rc = tsr_call_set_seed(call, "x", &(tsr_array){dx, TSR_FLOAT64, 1, {3}});
        if (!rc && ep == TSR_EP_VJP)
            rc = tsr_call_set_seed(call, "y", &(tsr_array){dy, TSR_FLOAT64, 1, {3}});
        if (!rc) rc = tsr_call_run(call);
        if (rc) return call_done(rc, call, msg, n);
        call_done(0, call, msg, n);
    }
    return 0;
}

static int batch_of_three(tsr_component *c, char *msg, size_t n) {
    static double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {6, 5, 4, 3, 2, 1}, s[3] = {1, 2, 3};
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    if (!call) return call_done(0, NULL, msg, n);
    int rc = tsr_call_set_input(call, "a", &(tsr_array){a, TSR_FLOAT64, 2, {3, 2}});
    if (!rc) rc = tsr_call_set_input(call, "b", &(tsr_array){b, TSR_FLOAT64, 2, {3, 2}});
    if (!rc) rc = tsr_call_set_input(call, "s", &(tsr_array){s, TSR_FLOAT64, 1, {3}});
    if (!rc) rc = tsr_call_run_batch(call, 3);
    return call_done(rc, call, msg, n);
}

/* ---- the driver ---------------------------------------------------------------- */

/* Run fn with allocation 1, 2, ... failing until a run has none failing. */
static void each_allocation_fails_cleanly(const char *what, tsr_component *c, scenario_fn fn) {
    char msg[TSR_ERRMSG_MAX];
    int codes = 0;
    for (long at = 1; at < 20000; at++) {
        fault_reset_tracking();
        msg[0] = '\0';
        fault_arm(at);
        int rc = fn(c, msg, sizeof msg);
        int failed = fault_disarm();
        long live = fault_live_blocks();
        cr_assert_eq(live, 0, "%s: with allocation %ld failing, %ld blocks were left behind "
                              "(code %d: %s)", what, at, live, rc, msg);
        if (!failed) {
            cr_assert_eq(rc, 0, "%s failed with no allocation failing: %d %s", what, rc, msg);
            cr_log_info("%s: %ld allocations, each failure clean (%d failed runs)", what, at - 1,
                        codes);
            return;
        }
        if (rc != 0) {
            codes++;
            cr_assert(rc < 0 && rc >= TSR_E_LIMIT, "%s: allocation %ld failing gave code %d",
                      what, at, rc);
            cr_assert(msg[0] != '\0', "%s: allocation %ld failing gave code %d and no message",
                      what, at, rc);
        }
    }
    cr_assert_fail("%s never ran to the end", what);
}

Test(alloc_faults, every_endpoint_in_process) {
    tsr_component *c = open_mode(TEST_PLUGIN("contract"), TSR_MODE_INPROC);
    each_allocation_fails_cleanly("every endpoint, inproc", c, every_endpoint);
    tsr_close(c);
}

Test(alloc_faults, every_endpoint_in_a_worker) {
    tsr_component *c = open_mode(TEST_PLUGIN("contract"), TSR_MODE_WORKER);
    each_allocation_fails_cleanly("every endpoint, worker", c, every_endpoint);
    cr_expect_eq(stats_of(c).worker_deaths, 0);
    tsr_close(c);
}

Test(alloc_faults, a_payload_from_text_to_response) {
    tsr_component *c = open_mode(TEST_PLUGIN("contract"), TSR_MODE_INPROC);
    each_allocation_fails_cleanly("payload", c, payload_round);
    tsr_close(c);
}

Test(alloc_faults, finite_differences) {
    tsr_component *c = open_mode(TEST_PLUGIN("fd_central"), TSR_MODE_INPROC);
    each_allocation_fails_cleanly("finite differences", c, fd_endpoints);
    tsr_close(c);
}

/* Forward differences also evaluate the base point (central ones of
 * outputs the schema sizes do not). */
Test(alloc_faults, forward_differences_with_their_base_point) {
    tsr_component *c = open_mode(TEST_PLUGIN("fd_forward"), TSR_MODE_INPROC);
    each_allocation_fails_cleanly("forward differences", c, fd_endpoints);
    tsr_close(c);
}

Test(alloc_faults, a_batch) {
    tsr_component *c = open_mode(BUNDLED_PLUGIN("vectoradd"), TSR_MODE_INPROC);
    each_allocation_fails_cleanly("batch", c, batch_of_three);
    tsr_close(c);
}

/* tsr_open and tsr_close, with the component they make. */
static const char *open_path;
static tsr_mode open_in;

static int open_and_close(tsr_component *unused, char *msg, size_t n) {
    (void)unused;
    tsr_options *o = tsr_options_new();
    tsr_error err = {0};
    if (!o) return done(TSR_E_NOMEM, "tsr_options_new", msg, n);
    int rc = tsr_options_set(o, "mode", open_in == TSR_MODE_WORKER ? "worker" : "inproc", &err);
    tsr_component *c = NULL;
    if (!rc) rc = tsr_open(open_path, o, &c, &err);
    tsr_options_free(o);
    if (!rc) rc = every_endpoint(c, err.message, sizeof err.message);
    tsr_close(c);
    return done(rc, err.message, msg, n);
}

Test(alloc_faults, opening_a_component_in_process) {
    open_path = TEST_PLUGIN("contract");
    open_in = TSR_MODE_INPROC;
    each_allocation_fails_cleanly("tsr_open, inproc", NULL, open_and_close);
}

Test(alloc_faults, opening_a_component_in_a_worker) {
    open_path = TEST_PLUGIN("contract");
    open_in = TSR_MODE_WORKER;
    each_allocation_fails_cleanly("tsr_open, worker", NULL, open_and_close);
    cr_expect_eq(children_of(getpid(), (pid_t[4]){0}, 4), 0, "a worker was left running");
}
