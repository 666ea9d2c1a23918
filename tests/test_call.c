/* SPDX-License-Identifier: MIT */
/*
 * The call object: reuse of result buffers, their lifetime and alignment,
 * rebinding, what a failed run leaves, and NULL handling. Uses the
 * bundled vectoradd (result = a*s + b) and linear plugins and the
 * schemacheck test plugin.
 */
#include "schemacheck.h"

#define VA_MAX 1000

typedef struct va_data {
    double a[VA_MAX], b[VA_MAX], s;
} va_data;

static void va_bind(tsr_call *call, va_data *d, int64_t n) {
    bind_ok(call, "a", f64_vec(d->a, n));
    bind_ok(call, "b", f64_vec(d->b, n));
    bind_ok(call, "s", f64_scalar(&d->s));
}

static void va_check(const tsr_call *call, const va_data *d, int64_t n) {
    const tsr_array *r = tsr_call_output(call, "result");
    cr_assert_not_null(r, "no result (n=%ld): %s", (long)n, tsr_call_errmsg(call));
    cr_assert_eq(r->rank, 1);
    cr_assert_eq(r->shape[0], n);
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(((const double *)r->data)[i], d->a[i] * d->s + d->b[i], "n=%ld i=%ld",
                     (long)n, (long)i);
}

static va_data *va_make(uint64_t seed) {
    static va_data d;
    fill_random(d.a, VA_MAX, seed);
    fill_random(d.b, VA_MAX, seed + 1);
    d.s = 0.5 + (double)seed;
    return &d;
}

/* Running again with the same shapes reuses the same result buffer and
 * overwrites it with the new values. */
Test(call, result_buffer_reused) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    va_data *d = va_make(1);
    va_bind(call, d, 8);
    run_ok(call);
    const tsr_array *first = tsr_call_output(call, "result");
    void *data = first->data;
    for (int k = 0; k < 20; k++) {
        d->s = k;
        d->a[3] = k * 10.0;
        run_ok(call);
        cr_assert_eq(tsr_call_output(call, "result")->data, data, "run %d moved the buffer", k);
        va_check(call, d, 8);
    }
    tsr_call_free(call);
    tsr_close(c);
}

/* Input data is borrowed, not copied at bind time: changing it before the
 * next run changes the result; the tsr_array struct itself is copied, so
 * changing it after binding changes nothing. */
Test(call, input_data_borrowed_struct_copied) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    va_data *d = va_make(2);
    tsr_array a = f64_vec(d->a, 5);
    cr_assert_eq(tsr_call_set_input(call, "a", &a), 0);
    a.shape[0] = 999;
    a.data = NULL;
    a.dtype = TSR_INT8;
    bind_ok(call, "b", f64_vec(d->b, 5));
    bind_ok(call, "s", f64_scalar(&d->s));
    run_ok(call);
    va_check(call, d, 5);
    d->a[0] = 123.0;
    d->s = -3.0;
    run_ok(call);
    va_check(call, d, 5);
    tsr_call_free(call);
    tsr_close(c);
}

/* Rebinding inputs with another n gives results of the new length: 3,
 * 1000, 2, 0, then 3 again. */
Test(call, rebinding_with_new_n) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    va_data *d = va_make(3);
    int64_t sizes[] = {3, 1000, 2, 0, 3};
    for (int k = 0; k < 5; k++) {
        va_bind(call, d, sizes[k]);
        run_ok(call);
        va_check(call, d, sizes[k]);
    }
    tsr_call_free(call);
    tsr_close(c);
}

/* Results stay readable after the run, and another call object on the
 * same component keeps its own results. */
Test(call, results_belong_to_their_call) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *one = new_call(c, TSR_EP_APPLY), *two = new_call(c, TSR_EP_APPLY);
    static va_data d1, d2;
    d1 = *va_make(4);
    d2 = *va_make(9);
    va_bind(one, &d1, 6);
    va_bind(two, &d2, 4);
    run_ok(one);
    run_ok(two);
    cr_assert_neq(tsr_call_output(one, "result")->data, tsr_call_output(two, "result")->data);
    va_check(one, &d1, 6);
    va_check(two, &d2, 4);
    tsr_call_free(two);
    va_check(one, &d1, 6);
    tsr_call_free(one);
    tsr_close(c);
}

/* Results stay valid until the next run (tessera.h: "valid until the next
 * tsr_call_run or tsr_call_free"): binding new inputs, or failing to bind
 * one, does not take them away before that run. */
Test(call, results_survive_rebinding_until_next_run) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    static va_data d, e;
    d = *va_make(10);
    e = *va_make(20);
    va_bind(call, &d, 5);
    run_ok(call);
    va_bind(call, &e, 7);
    va_check(call, &d, 5);
    double v = 0;
    tsr_array bad = f64_scalar(&v);
    cr_assert_eq(tsr_call_set_input(call, "nonesuch", &bad), TSR_E_UNKNOWN_FIELD);
    va_check(call, &d, 5);
    run_ok(call);
    va_check(call, &e, 7);
    tsr_call_free(call);
    tsr_close(c);
}

/* A failed run invalidates the previous results and records its code and
 * message; the next successful run clears them. */
Test(call, failed_run_invalidates_results) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    va_data *d = va_make(5);
    va_bind(call, d, 4);
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), 1);
    bind_ok(call, "b", f64_vec(d->b, 3));
    run_fails(call, TSR_E_SHAPE);
    cr_assert_eq(tsr_call_n_results(call), 0);
    cr_assert_null(tsr_call_result(call, 0));
    cr_assert_null(tsr_call_output(call, "result"));
    bind_ok(call, "b", f64_vec(d->b, 4));
    run_ok(call);
    va_check(call, d, 4);
    tsr_call_free(call);
    tsr_close(c);
}

/* Before any run there are no results, and there is no error. */
Test(call, fresh_call_has_no_results) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(tsr_call_n_results(call), 0);
    cr_assert_null(tsr_call_result(call, 0));
    cr_assert_null(tsr_call_output(call, "result"));
    cr_assert_eq(tsr_call_errcode(call), 0);
    cr_assert_str_eq(tsr_call_errmsg(call), "");
    tsr_call_free(call);
    tsr_close(c);
}

/* Lookups of results that do not exist give NULL. */
Test(call, absent_results_are_null) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
    va_data *d = va_make(6);
    va_bind(call, d, 3);
    const char *ins[] = {"a", "s"}, *outs[] = {"result"};
    wrt_ok(call, ins, 2, outs, 1);
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), 2);
    cr_assert_null(tsr_call_result(call, 2));
    cr_assert_null(tsr_call_result(call, -1));
    cr_assert_not_null(tsr_call_jacobian(call, "result", "s"));
    cr_assert_null(tsr_call_jacobian(call, "result", "b"));
    cr_assert_null(tsr_call_jacobian(call, "a", "result"));
    cr_assert_null(tsr_call_jacobian(call, "nonesuch", "a"));
    cr_assert_null(tsr_call_output(call, "nonesuch"));
    cr_assert_null(tsr_call_output(call, NULL));
    cr_assert_null(tsr_call_jacobian(call, NULL, "a"));
    cr_assert_null(tsr_call_jacobian(call, "result", NULL));
    tsr_call_free(call);
    tsr_close(c);
}

static void assert_aligned(const tsr_array *r, const char *what) {
    cr_assert_not_null(r);
    cr_assert_not_null(r->data, "%s has no data", what);
    cr_assert_eq((uintptr_t)r->data % 64, 0, "%s at %p is not 64-byte aligned", what, r->data);
}

/* Result buffers are 64-byte aligned, whatever their length. */
Test(call, results_aligned_apply) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    va_data *d = va_make(7);
    for (int64_t n = 1; n <= 17; n++) {
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        va_bind(call, d, n);
        run_ok(call);
        assert_aligned(tsr_call_output(call, "result"), "result");
        tsr_call_free(call);
    }
    tsr_close(c);
}

/* Every Jacobian block is 64-byte aligned, including odd-sized ones. */
Test(call, results_aligned_jacobian_blocks) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
    va_data *d = va_make(8);
    va_bind(call, d, 3);
    const char *ins[] = {"s", "a", "b"}, *outs[] = {"result"};
    wrt_ok(call, ins, 3, outs, 1);
    run_ok(call);
    for (int k = 0; k < 3; k++) assert_aligned(tsr_call_result(call, k), ins[k]);
    tsr_call_free(call);
    tsr_close(c);
}

/* Buffers that a plugin allocates through tsr_ctx_alloc are aligned too. */
Test(call, results_aligned_plugin_allocated) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    for (int64_t n = 1; n <= 9; n++) {
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        sc_inputs in = sc_make(n, 1, 100 + (uint64_t)n);
        in.flag = false;
        sc_bind_except(call, &in, NULL);
        run_ok(call);
        assert_aligned(tsr_call_output(call, "picked"), "picked");
        assert_aligned(tsr_call_output(call, "total"), "total");
        tsr_call_free(call);
    }
    tsr_close(c);
    c = open_with_config(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double x[4] = {1, 2, 3, 4};
    bind_ok(call, "x", f64_vec(x, 4));
    run_ok(call);
    assert_aligned(tsr_call_output(call, "y"), "y");
    tsr_call_free(call);
    tsr_close(c);
}

/* A plugin-allocated result is reused across runs with the same shape and
 * follows the shape when it changes. */
Test(call, plugin_allocated_result_follows_shape) {
    tsr_component *c = open_ok(SC_PATH, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    sc_inputs in = sc_make(6, 1, 55);
    in.flag = false;
    sc_bind_except(call, &in, NULL);
    run_ok(call);
    void *data = tsr_call_output(call, "picked")->data;
    run_ok(call);
    cr_assert_eq(tsr_call_output(call, "picked")->data, data);
    in.flag = true;
    in.left[0] = 1;
    in.left[1] = -1;
    in.left[2] = 2;
    in.left[3] = -2;
    in.left[4] = -3;
    in.left[5] = 3;
    run_ok(call);
    const tsr_array *p = tsr_call_output(call, "picked");
    cr_assert_eq(p->shape[0], 3);
    cr_assert_eq(((double *)p->data)[0], 1.0);
    cr_assert_eq(((double *)p->data)[1], 2.0);
    cr_assert_eq(((double *)p->data)[2], 3.0);
    tsr_call_free(call);
    tsr_close(c);
}

/* A result taken over outlives later runs, which allocate a new buffer;
 * the caller frees it; a result is taken once; batches, plugin-allocated
 * results and jacobian blocks can be taken; abstract_eval's cannot. */
Test(call, take_result_keeps_it_past_later_runs) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_null(tsr_call_take_result(call, 0), "nothing ran yet");
    va_data *d = va_make(3);
    va_bind(call, d, 8);
    run_ok(call);
    double want[8];
    memcpy(want, tsr_call_output(call, "result")->data, sizeof want);
    double *kept = tsr_call_take_result(call, 0);
    cr_assert_not_null(kept);
    cr_assert_eq(kept, tsr_call_output(call, "result")->data, "still the result's data");
    cr_assert_null(tsr_call_take_result(call, 0), "taken twice");
    cr_assert_null(tsr_call_take_result(call, 1));
    cr_assert_null(tsr_call_take_result(call, -1));
    for (int k = 0; k < 5; k++) {
        d->s = 10.0 + k;
        run_ok(call);
        cr_assert_neq(tsr_call_output(call, "result")->data, kept, "run %d reused it", k);
        va_check(call, d, 8);
        cr_assert_arr_eq(kept, want, sizeof want, "run %d overwrote the taken result", k);
    }
    void *second = tsr_call_take_result(call, 0);
    cr_assert_not_null(second);
    cr_assert_eq((uintptr_t)second % TSR_ALIGNMENT, 0);
    tsr_component_free_buffer(c, kept);
    tsr_call_free(call);
    tsr_component_free_buffer(c, second);   /* after the call: owned by the caller */

    /* a batch's results */
    call = new_call(c, TSR_EP_APPLY);
    double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0}, s[2] = {2, 3};
    tsr_array ab = f64_vec(a, 3), bb = f64_vec(b, 3), sb = f64_vec(s, 2);
    ab.rank = bb.rank = 2;
    ab.shape[0] = bb.shape[0] = 2;
    ab.shape[1] = bb.shape[1] = 3;
    bind_ok(call, "a", ab);
    bind_ok(call, "b", bb);
    bind_ok(call, "s", sb);
    cr_assert_eq(tsr_call_run_batch(call, 2), 0, "%s", tsr_call_errmsg(call));
    double *batched = tsr_call_take_result(call, 0);
    cr_assert_not_null(batched);
    a[0] = 100;
    cr_assert_eq(tsr_call_run_batch(call, 2), 0, "%s", tsr_call_errmsg(call));
    cr_assert_eq(batched[0], 2.0);
    cr_assert_eq(batched[5], 18.0);
    cr_assert_eq(((const double *)tsr_call_result(call, 0)->data)[0], 200.0);
    tsr_component_free_buffer(c, batched);
    tsr_call_free(call);

    call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    va_bind(call, d, 8);
    if (tsr_call_run(call) == 0) cr_assert_null(tsr_call_take_result(call, 0));
    tsr_call_free(call);
    tsr_close(c);

    /* a result the plugin allocated (tsr_ctx_alloc) */
    c = open_with_config(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE);
    call = new_call(c, TSR_EP_APPLY);
    double x[4] = {1, 0, 0, 0};
    bind_ok(call, "x", f64_vec(x, 4));
    run_ok(call);
    double *y = tsr_call_take_result(call, 0);
    cr_assert_not_null(y);
    x[0] = 2;
    run_ok(call);
    cr_assert_eq(y[0], 1.0);
    cr_assert_eq(((const double *)tsr_call_output(call, "y")->data)[0], 2.0);
    tsr_call_free(call);
    tsr_component_free_buffer(c, y);
    tsr_close(c);
}

/* A call object of every endpoint can be created and freed unused. */
Test(call, create_and_free_unused) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    for (int ep = 0; ep < TSR_EP_COUNT; ep++) tsr_call_free(new_call(c, (tsr_endpoint)ep));
    tsr_close(c);
}

/* Free functions accept NULL; tsr_call_new of no component gives NULL. */
Test(call, null_handles) {
    tsr_call_free(NULL);
    tsr_close(NULL);
    tsr_options_free(NULL);
    cr_assert_null(tsr_call_new(NULL, TSR_EP_APPLY));
}

/* Schema lookups out of range or by unknown name give NULL or -1. */
Test(call, schema_lookups_out_of_range) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    cr_assert_null(tsr_component_input(c, 3));
    cr_assert_null(tsr_component_input(c, -1));
    cr_assert_null(tsr_component_output(c, 1));
    cr_assert_eq(tsr_component_find_input(c, "result"), -1);
    cr_assert_eq(tsr_component_find_output(c, "a"), -1);
    cr_assert_eq(tsr_component_find_input(c, "nonesuch"), -1);
    cr_assert_eq(tsr_component_find_input(c, NULL), -1);
    cr_assert_eq(tsr_component_find_output(c, NULL), -1);
    tsr_close(c);
}
