/* SPDX-License-Identifier: MIT */
/*
 * tsr_call_set_result_buffer: results written into memory the caller owns,
 * in every mode (in-process: by the plugin itself; worker mode: copied out
 * of shared memory), across runs that hand new memory each time, in
 * batches and for derivatives; a buffer too small fails before the
 * plugin runs. Uses the bundled vectoradd (result = a*s + b).
 */
#include "worker_util.h"

#define N 64

typedef struct inputs {
    double a[N], b[N], s;
} inputs;

static void bind_inputs(tsr_call *call, inputs *in, int64_t n) {
    bind_ok(call, "a", f64_vec(in->a, n));
    bind_ok(call, "b", f64_vec(in->b, n));
    bind_ok(call, "s", f64_scalar(&in->s));
}

static void fill(inputs *in, double s) {
    for (int i = 0; i < N; i++) {
        in->a[i] = i + 0.5;
        in->b[i] = -2.0 * i;
    }
    in->s = s;
}

static void expect_values(const double *out, const inputs *in, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(out[i], in->a[i] * in->s + in->b[i], "element %ld", (long)i);
}

static uint64_t calls_of(const tsr_component *c) {
    tsr_stats st = TSR_STATS_INIT;
    cr_assert_eq(tsr_component_stats(c, &st), 0);
    return st.calls;
}

/* Every run writes into the buffer given before it, also when each run
 * gives new memory (as XLA does), and the result views that memory. */
static void written_in_place(tsr_mode mode) {
    tsr_component *c = open_mode(BUNDLED_PLUGIN("vectoradd"), mode);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    inputs in;
    fill(&in, 3.0);
    bind_inputs(call, &in, N);
    double out[4][N];
    for (int run = 0; run < 8; run++) {
        double *mine = out[run % 4];
        memset(mine, 0, sizeof out[0]);
        in.s = run + 0.25;
        cr_assert_eq(tsr_call_set_result_buffer(call, 0, mine, sizeof out[0]), 0);
        run_ok(call);
        const tsr_array *r = tsr_call_output(call, "result");
        cr_assert_eq(r->data, mine, "%s run %d: the result is not in the caller's buffer",
                     mode_names[mode], run);
        expect_values(mine, &in, N);
    }
    /* Cleared: the call's own buffer again, and the caller's memory is
     * left alone. */
    double *last = out[7 % 4];
    cr_assert_eq(tsr_call_set_result_buffer(call, 0, NULL, 0), 0);
    double before = last[5];
    in.s = 100.0;
    run_ok(call);
    const tsr_array *r = tsr_call_output(call, "result");
    cr_assert_neq(r->data, last);
    cr_assert_eq(last[5], before, "a cleared buffer was written");
    expect_values(r->data, &in, N);
    tsr_call_free(call);
    tsr_close(c);
}

Test(result_buffer, inproc) { written_in_place(TSR_MODE_INPROC); }
Test(result_buffer, isolated) { written_in_place(TSR_MODE_ISOLATED); }
Test(result_buffer, worker) { written_in_place(TSR_MODE_WORKER); }

/* A buffer smaller than the result fails the run before the plugin is
 * called, naming the result and both sizes; the call works again with a
 * buffer that fits. */
static void too_small(tsr_mode mode) {
    tsr_component *c = open_mode(BUNDLED_PLUGIN("vectoradd"), mode);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    inputs in;
    fill(&in, 2.0);
    bind_inputs(call, &in, N);
    run_ok(call);   /* the fast path is armed: the check must still happen */
    uint64_t calls = calls_of(c);
    double small[N / 2];
    cr_assert_eq(tsr_call_set_result_buffer(call, 0, small, sizeof small), 0);
    int rc = tsr_call_run(call);
    assert_code(rc, TSR_E_ARGUMENT, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "result");
    assert_contains(tsr_call_errmsg(call), "512 bytes");
    assert_contains(tsr_call_errmsg(call), "256");
    cr_assert_eq(calls_of(c), calls, "the plugin ran with a buffer too small");
    double fits[N];
    cr_assert_eq(tsr_call_set_result_buffer(call, 0, fits, sizeof fits), 0);
    run_ok(call);
    expect_values(fits, &in, N);
    tsr_call_free(call);
    tsr_close(c);
}

Test(result_buffer, too_small_inproc) { too_small(TSR_MODE_INPROC); }
Test(result_buffer, too_small_worker) { too_small(TSR_MODE_WORKER); }

/* The shape grows between runs: the buffer is checked against the new
 * size, not the one the fast path remembers. */
Test(result_buffer, shape_change_checked) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    inputs in;
    fill(&in, 1.5);
    double out[N];
    bind_inputs(call, &in, 8);
    cr_assert_eq(tsr_call_set_result_buffer(call, 0, out, 8 * sizeof(double)), 0);
    run_ok(call);
    expect_values(out, &in, 8);
    bind_inputs(call, &in, 16);
    int rc = tsr_call_run(call);
    assert_code(rc, TSR_E_ARGUMENT, tsr_call_errmsg(call));
    tsr_call_free(call);
    tsr_close(c);
}

/* A taken result is the call's own buffer: one in the caller's memory
 * cannot be taken. */
Test(result_buffer, cannot_be_taken) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    inputs in;
    fill(&in, 1.0);
    bind_inputs(call, &in, N);
    double out[N];
    cr_assert_eq(tsr_call_set_result_buffer(call, 0, out, sizeof out), 0);
    run_ok(call);
    cr_assert_null(tsr_call_take_result(call, 0));
    tsr_call_free(call);
    tsr_close(c);
}

Test(result_buffer, index_out_of_range) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double out[N];
    int rc = tsr_call_set_result_buffer(call, 7, out, sizeof out);
    assert_code(rc, TSR_E_ARGUMENT, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "out of range");
    assert_code(tsr_call_set_result_buffer(call, -1, out, sizeof out), TSR_E_ARGUMENT, NULL);
    assert_code(tsr_call_set_result_buffer(NULL, 0, out, sizeof out), TSR_E_ARGUMENT, NULL);
    tsr_call_free(call);
    tsr_close(c);
}

/* A batch writes every item's result into its slice of the caller's
 * buffer, in-process and across a pool of workers. */
static void batch_into(tsr_mode mode) {
    tsr_options *o = mode_options(mode);
    if (mode == TSR_MODE_WORKER) set_option(o, "workers", "2");
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), o);
    tsr_options_free(o);
    enum { B = 6, M = 5 };
    double a[B][M], b[B][M], s[B], out[B][M];
    for (int k = 0; k < B; k++) {
        s[k] = k - 1.5;
        for (int i = 0; i < M; i++) {
            a[k][i] = k * 10 + i;
            b[k][i] = -i;
        }
    }
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "a", f64_mat(&a[0][0], B, M));
    bind_ok(call, "b", f64_mat(&b[0][0], B, M));
    bind_ok(call, "s", f64_vec(s, B));
    cr_assert_eq(tsr_call_set_result_buffer(call, 0, out, sizeof out), 0);
    int rc = tsr_call_run_batch(call, B);
    cr_assert_eq(rc, 0, "%s", tsr_call_errmsg(call));
    cr_assert_eq(tsr_call_result(call, 0)->data, (void *)out);
    for (int k = 0; k < B; k++)
        for (int i = 0; i < M; i++)
            cr_assert_eq(out[k][i], a[k][i] * s[k] + b[k][i], "item %d element %d", k, i);
    tsr_call_free(call);
    tsr_close(c);
}

Test(result_buffer, batch_inproc) { batch_into(TSR_MODE_INPROC); }
Test(result_buffer, batch_worker) { batch_into(TSR_MODE_WORKER); }

/* Derivative results are numbered as tsr_call_result numbers them: a vjp's
 * one per vjp input. */
Test(result_buffer, vjp) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_VJP);
    inputs in;
    fill(&in, 4.0);
    bind_inputs(call, &in, N);
    const char *wrt_in[] = {"b", "a"}, *wrt_out[] = {"result"};
    wrt_ok(call, wrt_in, 2, wrt_out, 1);
    double cot[N], grad_b[N], grad_a[N];
    for (int i = 0; i < N; i++) cot[i] = i - 3.0;
    seed_ok(call, "result", f64_vec(cot, N));
    cr_assert_eq(tsr_call_set_result_buffer(call, 0, grad_b, sizeof grad_b), 0);
    cr_assert_eq(tsr_call_set_result_buffer(call, 1, grad_a, sizeof grad_a), 0);
    run_ok(call);
    cr_assert_eq(tsr_call_output(call, "a")->data, (void *)grad_a);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(grad_b[i], cot[i]);
        cr_assert_eq(grad_a[i], cot[i] * in.s);
    }
    tsr_call_free(call);
    tsr_close(c);
}
