/* SPDX-License-Identifier: MIT */
/*
 * Limits: bytes per array, per call and per arena, and payload size. Each
 * is refused with TSR_E_LIMIT (the arena's with TSR_E_SHM) and a message
 * naming the array, the limit and the option that raises it, before
 * anything is allocated; a shape claiming 2^62 elements never reaches an
 * allocator, in process, in a worker or from a payload.
 */
#include <tessera/payload.h>

#include "worker_util.h"

TestSuite(limits, .fini = expect_no_own_segments, .timeout = 60);

#define HUGE_DIM ((int64_t)1 << 62)

static tsr_component *open_with(const char *path, tsr_mode mode, const char *key,
                                const char *value) {
    tsr_options *o = mode_options(mode);
    if (key) set_option(o, key, value);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* vectoradd: result = a + s * b, every vector of length n. */
static tsr_call *vectoradd_call(tsr_component *c, double *a, double *b, int64_t n) {
    static double s = 2;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "a", f64_vec(a, n));
    bind_ok(call, "b", f64_vec(b, n));
    bind_ok(call, "s", f64_scalar(&s));
    return call;
}

/* ---- options ------------------------------------------------------------------- */

Test(limits, sizes_take_suffixes_and_bad_values_are_refused) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    const char *good[] = {"0", "1", "512K", "64M", "3G", "1T", "1k", "18446744073709551615"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        cr_expect_eq(tsr_options_set(o, "max_array_bytes", good[i], &err), 0, "%s: %s", good[i],
                     err.message);
    const char *bad[] = {"", "-1", "12Q", "1MB", "M", " 1", "18446744073709551616",
                         "17179869184T"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(tsr_options_set(o, "max_call_bytes", bad[i], &err), TSR_E_ARGUMENT, "%s",
                     bad[i]);
        assert_contains(err.message, "option 'max_call_bytes'");
        assert_contains(err.message, "K, M, G or T suffix");
    }
    const char *keys[] = {"max_arena_bytes", "max_payload_bytes", "rlimit_as", "rlimit_cpu",
                          "rlimit_nofile"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_expect_eq(tsr_options_set(o, keys[i], "1M", &err), 0, "%s", keys[i]);
    cr_expect_eq(tsr_options_set(o, "max_bytes", "1", &err), TSR_E_ARGUMENT);
    assert_contains(err.message, "max_payload_bytes");
    tsr_options_free(o);
}

/* ---- one array ------------------------------------------------------------------------ */

Test(limits, an_array_over_max_array_bytes_is_refused_naming_the_option) {
    for (int m = 0; m < 3; m += 2) {
        tsr_component *c =
            open_with(BUNDLED_PLUGIN("vectoradd"), (tsr_mode)m, "max_array_bytes", "64");
        double a[10] = {0}, b[10] = {0};
        tsr_call *call = vectoradd_call(c, a, b, 10);
        const char *msg = run_fails(call, TSR_E_LIMIT);
        assert_contains(msg, "input 'a': 80 bytes exceed max_array_bytes (64)");
        assert_contains(msg, "raise the option max_array_bytes");
        tsr_stats s = stats_of(c);
        cr_expect_eq(s.calls, 0, "%s: the plugin was not called", mode_names[m]);
        cr_expect_eq(s.bytes_copied, 0, "%s: nothing was staged", mode_names[m]);
        /* at the limit: accepted */
        bind_ok(call, "a", f64_vec(a, 8));
        bind_ok(call, "b", f64_vec(b, 8));
        run_ok(call);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* 2^62 float64 elements: 2^65 bytes. data points at one double, which a
 * run that tried to read or copy it would overrun. */
Test(limits, a_shape_of_2_to_the_62_is_refused_before_anything_is_allocated) {
    for (int m = 0; m < 3; m++) {
        tsr_component *c = open_with(BUNDLED_PLUGIN("vectoradd"), (tsr_mode)m, NULL, NULL);
        double one = 1;
        tsr_call *call = vectoradd_call(c, &one, &one, HUGE_DIM);
        const char *msg = run_fails(call, TSR_E_LIMIT);
        cr_log_info("%s: %s", mode_names[m], msg);
        assert_contains(msg, "input 'a'");
        assert_contains(msg, "max_array_bytes");
        cr_expect_eq(stats_of(c).calls, 0);
        cr_expect_eq(stats_of(c).bytes_copied, 0);
        tsr_call_free(call);
        /* abstract_eval allocates nothing, and refuses the same shape */
        call = new_call(c, TSR_EP_ABSTRACT_EVAL);
        bind_ok(call, "a", f64_vec(NULL, HUGE_DIM));
        bind_ok(call, "b", f64_vec(NULL, HUGE_DIM));
        bind_ok(call, "s", f64_scalar(NULL));
        assert_contains(run_fails(call, TSR_E_LIMIT), "max_array_bytes");
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(limits, a_payload_claiming_2_to_the_62_elements_is_refused_while_decoding) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    const char *texts[] = {
        /* base64: the buffer is checked against the shape before the
         * buffer for the shape is allocated */
        "{\"inputs\": {\"a\": {\"object_type\": \"array\", \"shape\": [4611686018427387904], "
        "\"dtype\": \"float64\", \"data\": {\"buffer\": \"AAAAAAAA8D8=\", \"encoding\": "
        "\"base64\"}}, \"b\": [1], \"s\": 1}}",
        /* uint8 keeps the byte count itself representable */
        "{\"inputs\": {\"a\": {\"object_type\": \"array\", \"shape\": [4611686018427387904], "
        "\"dtype\": \"uint8\", \"data\": {\"buffer\": [1], \"encoding\": \"json\"}}, "
        "\"b\": [1], \"s\": 1}}",
    };
    for (size_t i = 0; i < 2; i++) {
        tsr_payload *p = NULL;
        tsr_error err = TSR_ERROR_INIT;
        int rc = tsr_payload_parse(c, TSR_EP_APPLY, texts[i], strlen(texts[i]), &p, &err);
        cr_log_info("%s", err.message);
        cr_expect(rc == TSR_E_PAYLOAD || rc == TSR_E_DTYPE, "payload %zu: code %d", i, rc);
        cr_expect_null(p);
    }
    /* for abstract_eval the payload holds only the shape; the call refuses it */
    const char *shapes = "{\"inputs\": {\"a\": {\"shape\": [4611686018427387904], \"dtype\": "
                         "\"float64\"}, \"b\": {\"shape\": [4611686018427387904], \"dtype\": "
                         "\"float64\"}, \"s\": {\"shape\": [], \"dtype\": \"float64\"}}}";
    tsr_payload *p = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_payload_parse(c, TSR_EP_ABSTRACT_EVAL, shapes, strlen(shapes), &p, &err), 0,
                 "%s", err.message);
    tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    cr_assert_eq(tsr_payload_bind(p, call, &err), 0, "%s", err.message);
    assert_contains(run_fails(call, TSR_E_LIMIT), "max_array_bytes");
    tsr_call_free(call);
    tsr_payload_free(p);
    tsr_close(c);
}

/* A result the host sizes from the inputs: a Jacobian block of n x n. */
Test(limits, a_result_too_large_for_the_limit_is_refused_before_allocation) {
    tsr_component *c = open_ok(TEST_PLUGIN("fd_central"), NULL);
    int64_t n = (int64_t)1 << 20;   /* 8 MiB of x; the block would be 8 TiB */
    double *x = calloc((size_t)n, sizeof *x);
    double a = 1;
    cr_assert_not_null(x);
    tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
    bind_ok(call, "x", f64_vec(x, n));
    bind_ok(call, "a", f64_scalar(&a));
    const char *in[1] = {"x"}, *out[1] = {"y"};
    wrt_ok(call, in, 1, out, 1);
    const char *msg = run_fails(call, TSR_E_LIMIT);
    assert_contains(msg, "jacobian block 'y'/'x': 8796093022208 bytes exceed max_array_bytes");
    tsr_call_free(call);
    free(x);
    tsr_close(c);
}

/* ---- a whole call ------------------------------------------------------------------ */

Test(limits, the_arrays_of_a_call_together_stay_under_max_call_bytes) {
    for (int m = 0; m < 3; m += 2) {
        tsr_component *c =
            open_with(BUNDLED_PLUGIN("vectoradd"), (tsr_mode)m, "max_call_bytes", "2000");
        double a[100] = {0}, b[100] = {0};
        tsr_call *call = vectoradd_call(c, a, b, 100);
        /* a and b: 1608 bytes with s; the result's 800 would pass 2000 */
        const char *msg = run_fails(call, TSR_E_LIMIT);
        assert_contains(msg, "output 'result': 800 bytes bring the call's arrays to 2408 bytes, "
                             "past max_call_bytes (2000)");
        cr_expect_eq(stats_of(c).calls, 0);
        bind_ok(call, "a", f64_vec(a, 80));
        bind_ok(call, "b", f64_vec(b, 80));
        run_ok(call);   /* 1928 bytes */
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* die sizes its result itself (tsr_ctx_alloc): the limit holds there too,
 * in a worker through the CHAN_ALLOC round trip. */
Test(limits, a_result_the_plugin_sizes_is_held_to_the_limits_too) {
    for (int m = 0; m < 3; m += 2) {
        tsr_component *c = open_with(TEST_PLUGIN("die"), (tsr_mode)m, "max_call_bytes", "100");
        double x[10] = {0};
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 10));
        const char *msg = run_fails(call, TSR_E_LIMIT);
        cr_log_info("%s: %s", mode_names[m], msg);
        assert_contains(msg, "output 'y': 80 bytes bring the call's arrays to 160 bytes");
        cr_expect_eq(stats_of(c).worker_deaths, 0);
        bind_ok(call, "x", f64_vec(x, 6));
        run_ok(call);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(limits, a_batch_counts_its_batched_arrays) {
    tsr_component *c =
        open_with(BUNDLED_PLUGIN("vectoradd"), TSR_MODE_INPROC, "max_array_bytes", "100");
    double a[40] = {0}, b[40] = {0}, s[4] = {1, 2, 3, 4};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "a", f64_mat(a, 4, 10));
    bind_ok(call, "b", f64_mat(b, 4, 10));
    bind_ok(call, "s", f64_vec(s, 4));
    int rc = tsr_call_run_batch(call, 4);
    const char *msg = expect_failure(call, rc, TSR_E_LIMIT);
    assert_contains(msg, "input 'a': 320 bytes exceed max_array_bytes (100)");
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- payloads and the arena -------------------------------------------------------- */

Test(limits, a_payload_over_max_payload_bytes_is_refused_before_parsing) {
    tsr_options *o = tsr_options_new();
    set_option(o, "max_payload_bytes", "40");
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), o);
    tsr_options_free(o);
    const char *text = "{\"inputs\": {\"a\": [1, 2], \"b\": [3, 4], \"s\": 2}}";
    tsr_payload *p = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_payload_parse(c, TSR_EP_APPLY, text, strlen(text), &p, &err);
    assert_code(rc, TSR_E_LIMIT, err.message);
    assert_contains(err.message, "the payload is 46 bytes, more than max_payload_bytes (40)");
    cr_expect_null(p);
    rc = tsr_payload_parse(c, TSR_EP_APPLY, text, 40, &p, &err); /* cut: malformed, not too long */
    assert_code(rc, TSR_E_PAYLOAD, err.message);
    tsr_close(c);
}

Test(limits, the_arena_does_not_grow_past_max_arena_bytes) {
    tsr_component *c =
        open_with(BUNDLED_PLUGIN("vectoradd"), TSR_MODE_WORKER, "max_arena_bytes", "2M");
    int64_t n = 256 * 1024;   /* 2 MiB per vector: staging needs a segment the limit forbids */
    double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b);
    cr_assert(a && b);
    tsr_call *call = vectoradd_call(c, a, b, n);
    const char *msg = run_fails(call, TSR_E_SHM);
    assert_contains(msg, "max_arena_bytes (2097152)");
    assert_contains(msg, "raise the option max_arena_bytes");
    cr_expect_eq(stats_of(c).worker_deaths, 0);
    bind_ok(call, "a", f64_vec(a, 1000));
    bind_ok(call, "b", f64_vec(b, 1000));
    run_ok(call);
    tsr_call_free(call);
    free(a);
    free(b);
    tsr_close(c);
}
