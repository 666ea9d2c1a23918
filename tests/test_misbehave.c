/* SPDX-License-Identifier: MIT */
/*
 * Plugins that break the rules: the host turns each into an error code
 * and a message naming the component, the endpoint and, where there is
 * one, the field; it never crashes or hands out a wrong result.
 * Uses tests/plugins/misbehave.c, whose config key "behave" picks the fault.
 */
#include "test_util.h"

#define MB_PATH TEST_PLUGIN("misbehave")

typedef struct mb_run {
    tsr_component *c;
    tsr_call *call;
    double x[4];
} mb_run;

/* Open misbehave with the given behaviour and prepare an apply call on
 * xin = (1, 2, 3, 4). */
static mb_run *mb_open(const char *behave, tsr_endpoint ep) {
    static mb_run r;
    r.c = open_with_config(MB_PATH, "behave", behave);
    r.call = new_call(r.c, ep);
    for (int i = 0; i < 4; i++) r.x[i] = i + 1;
    bind_ok(r.call, "xin", f64_vec(r.x, 4));
    return &r;
}

static void mb_close(mb_run *r) {
    tsr_call_free(r->call);
    tsr_close(r->c);
}

/* An apply that fails under "behave", with the expected code; the message
 * names the component and the endpoint (and `field` when not NULL). */
static void expect_apply_failure(const char *behave, int code, const char *field) {
    mb_run *r = mb_open(behave, TSR_EP_APPLY);
    const char *msg = run_fails(r->call, code);
    assert_contains(msg, "misbehave");
    assert_contains(msg, "apply");
    if (field) assert_contains(msg, field);
    mb_close(r);
}

/* The well-behaved configuration works, so the failures below are caused
 * by the faults alone. */
Test(misbehave, control_run_succeeds) {
    mb_run *r = mb_open("ok", TSR_EP_APPLY);
    run_ok(r->call);
    const double *dense = tsr_call_output(r->call, "dense")->data;
    for (int i = 0; i < 4; i++) cr_assert_eq(dense[i], 2 * r->x[i]);
    const tsr_array *ragged = tsr_call_output(r->call, "ragged");
    cr_assert_eq(ragged->shape[0], 2);
    cr_assert_eq(((double *)ragged->data)[1], 2.0);
    const tsr_array *rows = tsr_call_output(r->call, "rows3");
    cr_assert_eq(rows->shape[0], 1);
    cr_assert_eq(rows->shape[1], 3);
    mb_close(r);
}

/* A failure with a message: TSR_E_PLUGIN, and the message carries the
 * plugin's text, the component and the endpoint. */
Test(misbehave, failure_with_message) {
    mb_run *r = mb_open("fail_msg", TSR_EP_APPLY);
    const char *msg = run_fails(r->call, TSR_E_PLUGIN);
    assert_contains(msg, "the solver diverged");
    assert_contains(msg, "misbehave");
    assert_contains(msg, "apply");
    mb_close(r);
}

/* The same failure in jvp names jvp. */
Test(misbehave, failure_with_message_in_jvp) {
    mb_run *r = mb_open("fail_msg", TSR_EP_JVP);
    const char *ins[] = {"xin"}, *outs[] = {"dense"};
    wrt_ok(r->call, ins, 1, outs, 1);
    seed_ok(r->call, "xin", f64_vec(r->x, 4));
    const char *msg = run_fails(r->call, TSR_E_PLUGIN);
    assert_contains(msg, "the solver diverged");
    assert_contains(msg, "misbehave");
    assert_contains(msg, "jvp");
    mb_close(r);
}

/* A failure without a message is still TSR_E_PLUGIN with a message naming
 * the component and the endpoint. */
Test(misbehave, failure_without_message) {
    expect_apply_failure("fail_silent", TSR_E_PLUGIN, NULL);
}

/* A failed run does not leave the message of an earlier failure behind:
 * a silent failure after a loud one does not repeat the old text. */
Test(misbehave, silent_failure_does_not_reuse_old_message) {
    mb_run *r = mb_open("fail_msg", TSR_EP_APPLY);
    run_fails(r->call, TSR_E_PLUGIN);
    mb_close(r);
    r = mb_open("fail_silent", TSR_EP_APPLY);
    const char *msg = run_fails(r->call, TSR_E_PLUGIN);
    cr_assert_null(strstr(msg, "the solver diverged"), "stale message: %s", msg);
    mb_close(r);
}

/* tsr_ctx_alloc refuses a negative dim; the run fails naming the result. */
Test(misbehave, alloc_negative_dim) {
    expect_apply_failure("alloc_negative", TSR_E_PLUGIN_RESULT, "ragged");
}

/* tsr_ctx_alloc refuses a rank above TSR_MAX_RANK. */
Test(misbehave, alloc_rank_too_big) {
    expect_apply_failure("alloc_rank", TSR_E_PLUGIN_RESULT, "ragged");
}

/* tsr_ctx_alloc refuses a negative rank. */
Test(misbehave, alloc_rank_negative) {
    expect_apply_failure("alloc_rank_neg", TSR_E_PLUGIN_RESULT, "ragged");
}

/* tsr_ctx_alloc refuses (2, 4) for a field declared (*, 3). */
Test(misbehave, alloc_contradicts_fixed_dim) {
    expect_apply_failure("alloc_fixed", TSR_E_PLUGIN_RESULT, "rows3");
}

/* tsr_ctx_alloc refuses a result index that does not exist. */
Test(misbehave, alloc_bad_index) {
    expect_apply_failure("alloc_index", TSR_E_PLUGIN_RESULT, NULL);
}

/* Success without allocating a value-shaped result: TSR_E_PLUGIN_RESULT
 * naming it. */
Test(misbehave, success_without_allocating) {
    expect_apply_failure("no_alloc", TSR_E_PLUGIN_RESULT, "ragged");
}

/* Changing the dtype of a pre-allocated result: TSR_E_PLUGIN_RESULT. */
Test(misbehave, pre_allocated_dtype_changed) {
    expect_apply_failure("change_dtype", TSR_E_PLUGIN_RESULT, "dense");
}

/* Changing the rank of a pre-allocated result: TSR_E_PLUGIN_RESULT. */
Test(misbehave, pre_allocated_rank_changed) {
    expect_apply_failure("change_rank", TSR_E_PLUGIN_RESULT, "dense");
}

/* Changing the shape of a pre-allocated result: TSR_E_PLUGIN_RESULT. */
Test(misbehave, pre_allocated_shape_changed) {
    expect_apply_failure("change_shape", TSR_E_PLUGIN_RESULT, "dense");
}

/* After a plugin failure the component is still usable: a second call
 * object on a well-behaved load works, and the failing call can run
 * again and fail the same way. */
Test(misbehave, failure_leaves_component_usable) {
    mb_run *r = mb_open("fail_msg", TSR_EP_APPLY);
    run_fails(r->call, TSR_E_PLUGIN);
    assert_contains(run_fails(r->call, TSR_E_PLUGIN), "the solver diverged");
    mb_close(r);
    r = mb_open("ok", TSR_EP_APPLY);
    run_ok(r->call);
    mb_close(r);
}
