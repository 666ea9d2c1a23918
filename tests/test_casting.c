/* SPDX-License-Identifier: MIT */
/* Option casting: "exact" (the default) refuses an array of another dtype
 * than its field's; "same_kind" converts it by Tesseract's rule (numpy's
 * same_kind, refusing values that do not fit), in-process and in a worker
 * alike, and by the same rule as the payload decoder: every case below
 * also goes through tsr_array_from_json and must end the same way. */
#include <math.h>

#include <tessera/payload.h>

#include "worker_util.h"

static const tsr_mode modes[] = {TSR_MODE_INPROC, TSR_MODE_WORKER};

static tsr_component *open_casting(tsr_mode mode, const char *casting) {
    tsr_options *o = mode_options(mode);
    if (casting) set_option(o, "casting", casting);
    tsr_component *c = open_ok(TEST_PLUGIN("cast_targets"), o);
    tsr_options_free(o);
    return c;
}

/* Every field of cast_targets bound to an empty vector of its own dtype,
 * so that one field at a time carries the case. */
static void bind_fillers(tsr_call *call, const tsr_component *c) {
    static uint64_t filler[2];
    int64_t zero = 0;
    for (int32_t i = 0; i < tsr_component_n_inputs(c); i++) {
        tsr_array a = make_array(filler, tsr_component_input(c, i)->dtype, 1, &zero);
        cr_assert_eq(tsr_call_set_input_at(call, i, &a), 0);
    }
}

static tsr_dtype field_dtype(const tsr_component *c, const char *field) {
    int32_t i = tsr_component_find_input(c, field);
    cr_assert(i >= 0, "no field %s", field);
    return tsr_component_input(c, i)->dtype;
}

/* The payload decoder given src as a base64 array for a field of dtype
 * `to`: 0 with the converted bytes in *buffer, or the code with err. */
static int decode_as(const tsr_array *src, tsr_dtype to, void **buffer, tsr_error *err) {
    char *text = NULL;
    cr_assert_eq(tsr_array_to_json(src, TSR_ENCODING_BASE64, &text, err), 0, "%s", err->message);
    tsr_array out;
    *buffer = NULL;
    int rc = tsr_array_from_json(text, strlen(text), to, &out, buffer, err);
    tsr_json_free(text);
    return rc;
}

/* src bound to `field` is converted to exactly want (bytes) in every mode,
 * and the payload decoder gives the same bytes. */
static void converts(const char *field, tsr_array src, const void *want, size_t bytes) {
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        tsr_component *c = open_casting(modes[m], "same_kind");
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_fillers(call, c);
        bind_ok(call, field, src);
        run_ok(call);
        const tsr_array *r = tsr_call_output(call, field);
        cr_assert_not_null(r);
        cr_assert_eq(r->dtype, field_dtype(c, field));
        cr_assert_eq(r->shape[0], src.shape[0]);
        cr_assert(memcmp(r->data, want, bytes) == 0, "%s, %s: converted values differ", field,
                  mode_names[modes[m]]);
        tsr_call_free(call);
        tsr_close(c);
    }
    tsr_component *c = open_casting(TSR_MODE_INPROC, NULL);
    void *buffer;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(decode_as(&src, field_dtype(c, field), &buffer, &err), 0, "%s", err.message);
    cr_assert(memcmp(buffer, want, bytes) == 0, "%s: the payload decoder converts otherwise", field);
    tsr_array_buffer_free(buffer);
    tsr_close(c);
}

/* src bound to `field` is refused with TSR_E_DTYPE at inputs.<field>, the
 * message containing `cause`, in every mode; the payload decoder refuses
 * it with the same cause. */
static void refused(const char *field, tsr_array src, const char *cause) {
    char loc[64];
    snprintf(loc, sizeof loc, "inputs.%s", field);
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        tsr_component *c = open_casting(modes[m], "same_kind");
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_fillers(call, c);
        const char *msg = bind_or_run_fails(call, field, src, TSR_E_DTYPE);
        assert_contains(msg, cause);
        cr_assert_str_eq(tsr_call_errloc(call), loc);
        tsr_call_free(call);
        tsr_close(c);
    }
    tsr_component *c = open_casting(TSR_MODE_INPROC, NULL);
    void *buffer;
    tsr_error err = TSR_ERROR_INIT;
    assert_code(decode_as(&src, field_dtype(c, field), &buffer, &err), TSR_E_DTYPE, err.message);
    assert_contains(err.message, cause);
    tsr_close(c);
}

static tsr_array vec(void *data, tsr_dtype dtype, int64_t n) {
    return make_array(data, dtype, 1, &n);
}

Test(casting, bool_to_integer) {
    uint8_t b[] = {1, 0, 1};
    int32_t want[] = {1, 0, 1};
    converts("int32", vec(b, TSR_BOOL, 3), want, sizeof want);
}

Test(casting, integer_to_float) {
    int32_t v[] = {1, -2, 2147483647};
    double want[] = {1.0, -2.0, 2147483647.0};
    converts("float64", vec(v, TSR_INT32, 3), want, sizeof want);
}

Test(casting, float64_narrows_to_float32) {
    double v[] = {0.5, 0.1, -3.0e38};
    float want[] = {0.5f, 0.1f, -3.0e38f};
    converts("float32", vec(v, TSR_FLOAT64, 3), want, sizeof want);
}

Test(casting, int64_narrows_to_int32_when_values_fit) {
    int64_t v[] = {5, -7, 2147483647, -2147483647 - 1};
    int32_t want[] = {5, -7, 2147483647, -2147483647 - 1};
    converts("int32", vec(v, TSR_INT64, 4), want, sizeof want);
}

Test(casting, int64_out_of_int32_range_is_refused_naming_index_and_value) {
    int64_t v[] = {1, (int64_t)1 << 40};
    refused("int32", vec(v, TSR_INT64, 2), "element 1: 1099511627776 is out of range for int32");
}

Test(casting, signed_to_unsigned_when_values_fit) {
    int32_t v[] = {0, 255, 7};
    uint8_t want[] = {0, 255, 7};
    converts("uint8", vec(v, TSR_INT32, 3), want, sizeof want);
    int64_t big[] = {INT64_MAX};
    uint64_t big_want[] = {(uint64_t)INT64_MAX};
    converts("uint64", vec(big, TSR_INT64, 1), big_want, sizeof big_want);
}

Test(casting, negative_to_unsigned_is_refused) {
    int32_t v[] = {3, 4, -1};
    refused("uint8", vec(v, TSR_INT32, 3), "element 2: -1 is out of range for uint8");
}

Test(casting, unsigned_beyond_int64_is_refused) {
    uint64_t v[] = {UINT64_MAX};
    refused("int64", vec(v, TSR_UINT64, 1), "element 0: 18446744073709551615 is out of range");
}

Test(casting, float_to_integer_is_refused_as_another_kind) {
    double v[] = {1.0};
    refused("int64", vec(v, TSR_FLOAT64, 1), "float64");
    tsr_component *c = open_casting(TSR_MODE_INPROC, "same_kind");
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_fillers(call, c);
    const char *msg = bind_or_run_fails(call, "int64", vec(v, TSR_FLOAT64, 1), TSR_E_DTYPE);
    assert_contains(msg, "casting=same_kind does not convert float64 to int64");
    tsr_call_free(call);
    tsr_close(c);
}

Test(casting, integer_to_bool_is_refused_as_another_kind) {
    int32_t v[] = {1};
    refused("bool", vec(v, TSR_INT32, 1), "int32");
}

Test(casting, complex_to_float_is_refused) {
    float v[] = {1.0f, 0.0f};
    refused("float64", vec(v, TSR_COMPLEX64, 1), "complex64");
}

Test(casting, float_to_complex) {
    double v[] = {1.5, -2.0};
    float want[] = {1.5f, 0.0f, -2.0f, 0.0f};
    converts("complex64", vec(v, TSR_FLOAT64, 2), want, sizeof want);
}

Test(casting, a_float_beyond_float32_is_refused) {
    double v[] = {1.0, 2.0, 1e300};
    refused("float32", vec(v, TSR_FLOAT64, 3), "element 2: 1.0000000000000001e+300 is out of range for float32");
}

Test(casting, nan_and_infinities_carry_over) {
    double v[] = {NAN, INFINITY, -INFINITY};
    float want[] = {NAN, INFINITY, -INFINITY};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        tsr_component *c = open_casting(modes[m], "same_kind");
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_fillers(call, c);
        bind_ok(call, "float32", vec(v, TSR_FLOAT64, 3));
        run_ok(call);
        const float *r = tsr_call_output(call, "float32")->data;
        cr_assert(isnan(r[0]) && r[1] == want[1] && r[2] == want[2]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(casting, float16_overflow_is_refused) {
    double fits[] = {65504.0, -0.5};
    uint16_t want[] = {0x7bff, 0xb800};
    converts("float16", vec(fits, TSR_FLOAT64, 2), want, sizeof want);
    double v[] = {1e5};
    refused("float16", vec(v, TSR_FLOAT64, 1), "element 0: 100000 is out of range for float16");
}

Test(casting, exact_is_the_default_and_refuses_another_dtype) {
    int32_t v[] = {1, 2};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        for (int explicit_exact = 0; explicit_exact < 2; explicit_exact++) {
            tsr_component *c = open_casting(modes[m], explicit_exact ? "exact" : NULL);
            tsr_call *call = new_call(c, TSR_EP_APPLY);
            bind_fillers(call, c);
            const char *msg = bind_or_run_fails(call, "float64", vec(v, TSR_INT32, 2), TSR_E_DTYPE);
            assert_contains(msg, "input 'float64': dtype int32 given, float64 expected");
            cr_assert_str_eq(tsr_call_errloc(call), "inputs.float64");
            tsr_call_free(call);
            tsr_close(c);
        }
    }
}

Test(casting, an_unknown_value_is_refused_naming_the_option) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    assert_code(tsr_options_set(o, "casting", "safe", &err), TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "option 'casting': invalid value 'safe' (expected exact or same_kind)");
    tsr_options_free(o);
}

/* The converted copy is made at every run from the caller's data as it is
 * then: changed in place, or rebound to another array of the same shape
 * (the fast path), or of another length. */
Test(casting, repeated_runs_convert_the_data_of_each_run) {
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        tsr_component *c = open_casting(modes[m], "same_kind");
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_fillers(call, c);
        int32_t v[4] = {1, 2, 3, 4};
        bind_ok(call, "float64", vec(v, TSR_INT32, 4));
        for (int round = 0; round < 5; round++) {
            for (int i = 0; i < 4; i++) v[i] = round * 10 + i;
            run_ok(call);
            const double *r = tsr_call_output(call, "float64")->data;
            for (int i = 0; i < 4; i++) cr_assert_eq(r[i], round * 10 + i, "round %d", round);
        }
        int32_t w[4] = {-1, -2, -3, -4};
        bind_ok(call, "float64", vec(w, TSR_INT32, 4));
        run_ok(call);
        cr_assert_eq(((const double *)tsr_call_output(call, "float64")->data)[3], -4.0);
        int64_t longer[6] = {6, 5, 4, 3, 2, 1};
        bind_ok(call, "float64", vec(longer, TSR_INT64, 6));
        run_ok(call);
        const tsr_array *r = tsr_call_output(call, "float64");
        cr_assert_eq(r->shape[0], 6);
        cr_assert_eq(((const double *)r->data)[0], 6.0);
        /* The caller's arrays are read, never written. */
        cr_assert_eq(w[0], -1);
        cr_assert_eq(longer[5], 1);
        /* Back to the field's own dtype: passed as it is. */
        double d[2] = {0.25, 0.5};
        bind_ok(call, "float64", vec(d, TSR_FLOAT64, 2));
        run_ok(call);
        cr_assert_eq(((const double *)tsr_call_output(call, "float64")->data)[1], 0.5);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* A refused element fails the run; the next run with data that fits
 * succeeds on the same call. */
Test(casting, a_refusal_leaves_the_call_usable) {
    tsr_component *c = open_casting(TSR_MODE_INPROC, "same_kind");
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_fillers(call, c);
    int32_t v[2] = {1, 300};
    bind_ok(call, "uint8", vec(v, TSR_INT32, 2));
    assert_contains(run_fails(call, TSR_E_DTYPE), "element 1: 300 is out of range for uint8");
    v[1] = 200;
    run_ok(call);
    cr_assert_eq(((const uint8_t *)tsr_call_output(call, "uint8")->data)[1], 200);
    cr_assert_str_eq(tsr_call_errloc(call), "");
    tsr_call_free(call);
    tsr_close(c);
}

/* Tangents and cotangents follow the same rule as inputs. */
Test(casting, seeds_are_converted_too) {
    static const char *const wrt_in[] = {"a"}, *const wrt_out[] = {"result"};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        tsr_options *o = mode_options(modes[m]);
        set_option(o, "casting", "same_kind");
        tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), o);
        tsr_options_free(o);
        double a[2] = {1, 2}, b[2] = {3, 4}, s = 3;
        int32_t ia[2] = {1, 2};
        tsr_call *jvp = new_call(c, TSR_EP_JVP);
        bind_ok(jvp, "a", vec(ia, TSR_INT32, 2));
        bind_ok(jvp, "b", f64_vec(b, 2));
        bind_ok(jvp, "s", f64_scalar(&s));
        wrt_ok(jvp, wrt_in, 1, wrt_out, 1);
        int32_t tangent[2] = {1, -1};
        seed_ok(jvp, "a", vec(tangent, TSR_INT32, 2));
        run_ok(jvp);
        const double *t = tsr_call_output(jvp, "result")->data;
        cr_assert(t[0] == 3.0 && t[1] == -3.0, "jvp %g %g", t[0], t[1]);
        tsr_call *vjp = new_call(c, TSR_EP_VJP);
        bind_ok(vjp, "a", f64_vec(a, 2));
        bind_ok(vjp, "b", f64_vec(b, 2));
        bind_ok(vjp, "s", f64_scalar(&s));
        wrt_ok(vjp, wrt_in, 1, wrt_out, 1);
        float cot[2] = {0.5f, 2.0f};
        seed_ok(vjp, "result", vec(cot, TSR_FLOAT32, 2));
        run_ok(vjp);
        const double *g = tsr_call_output(vjp, "a")->data;
        cr_assert(g[0] == 1.5 && g[1] == 6.0, "vjp %g %g", g[0], g[1]);
        double complex_like[4] = {1, 0, 1, 0};
        seed_ok(vjp, "result", vec(complex_like, TSR_COMPLEX128, 2));
        assert_contains(run_fails(vjp, TSR_E_DTYPE), "cotangent_vector['result']");
        cr_assert_str_eq(tsr_call_errloc(vjp), "cotangent_vector.result");
        tsr_call_free(jvp);
        tsr_call_free(vjp);
        tsr_close(c);
    }
}

/* Plain JSON values take the dtype numpy reads them as (bool, int64 or
 * float64, as Tesseract's validation does) and then the same rule. */
static int decode_plain_as(const char *text, tsr_dtype to, tsr_error *err) {
    tsr_array out;
    void *buffer = NULL;
    int rc = tsr_array_from_json(text, strlen(text), to, &out, &buffer, err);
    tsr_array_buffer_free(buffer);
    return rc;
}

Test(casting, plain_json_values_follow_the_same_rule) {
    static const struct {
        const char *text;
        tsr_dtype to;
        int code;
        const char *cause;
    } cases[] = {
        {"[true, false]", TSR_INT32, 0, NULL},
        {"[1, 2]", TSR_FLOAT32, 0, NULL},
        {"[1, 2.5]", TSR_FLOAT64, 0, NULL},
        {"[[true], [2]]", TSR_UINT8, 0, NULL},
        {"[]", TSR_INT32, 0, NULL},
        {"[2.0]", TSR_INT32, TSR_E_DTYPE, "values read as float64 cannot be converted to the field's int32"},
        {"[1, 0]", TSR_BOOL, TSR_E_DTYPE, "values read as int64 cannot be converted to the field's bool"},
        {"3", TSR_BOOL, TSR_E_DTYPE, "values read as int64"},
        {"[1, 2.5]", TSR_INT64, TSR_E_DTYPE, "values read as float64"},
        {"[1e300]", TSR_FLOAT32, TSR_E_DTYPE, "1.0000000000000001e+300 is out of range for float32"},
        {"[1, 300]", TSR_UINT8, TSR_E_DTYPE, "300 is out of range for uint8"},
        {"[-1]", TSR_UINT64, TSR_E_DTYPE, "-1 is out of range for uint64"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tsr_error err = {0};
        int rc = decode_plain_as(cases[k].text, cases[k].to, &err);
        cr_assert_eq(rc, cases[k].code, "%s as %s: %d %s", cases[k].text,
                     tsr_dtype_name(cases[k].to), rc, err.message);
        if (cases[k].cause) assert_contains(err.message, cases[k].cause);
    }
}

/* A batch converts each item as a run of its own does. */
Test(casting, batches_convert_every_item) {
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        tsr_options *o = mode_options(modes[m]);
        set_option(o, "casting", "same_kind");
        tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), o);
        tsr_options_free(o);
        int32_t a[3][2] = {{1, 2}, {3, 4}, {5, 6}};
        double b[3][2] = {{0, 0}, {1, 1}, {2, 2}};
        float s[3] = {1, 2, 3};
        int64_t ab_shape[2] = {3, 2}, s_shape[1] = {3};
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "a", make_array(a, TSR_INT32, 2, ab_shape));
        bind_ok(call, "b", make_array(b, TSR_FLOAT64, 2, ab_shape));
        bind_ok(call, "s", make_array(s, TSR_FLOAT32, 1, s_shape));
        int rc = tsr_call_run_batch(call, 3);
        cr_assert_eq(rc, 0, "%s", tsr_call_errmsg(call));
        const double *r = tsr_call_output(call, "result")->data;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++)
                cr_assert_eq(r[i * 2 + j], a[i][j] * s[i] + b[i][j], "item %d", i);
        tsr_call_free(call);
        tsr_close(c);
    }
}
