/* SPDX-License-Identifier: MIT */
/*
 * Tesseract-compatible payloads (include/tessera/payload.h): encoded
 * arrays of every dtype in json and base64, nesting, 0-d and empty
 * arrays, dtype conversion, requests for every endpoint, responses in
 * Tesseract's output form, schemas, and every malformed input with its
 * error code and message.
 */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "test_util.h"

/* ---- helpers ------------------------------------------------------------- */

typedef struct decoded {
    tsr_array a;
    void *buffer;
} decoded;

static decoded decode_ok(const char *text, tsr_dtype dtype) {
    decoded d;
    tsr_error err = {0};
    int rc = tsr_array_from_json(text, strlen(text), dtype, &d.a, &d.buffer, &err);
    cr_assert_eq(rc, 0, "decoding %s failed: %d %s", text, rc, err.message);
    cr_assert_eq(err.code, 0);
    cr_assert_not_null(d.buffer);
    cr_assert_eq(d.a.data, d.buffer);
    cr_assert_eq((uintptr_t)d.a.data % 64, 0, "decoded buffers are 64-byte aligned");
    return d;
}

/* Decoding must fail with code; the message must contain every needle. */
static void decode_fails(const char *text, tsr_dtype dtype, int code, const char *needle) {
    tsr_array a;
    void *buffer = (void *)0x1;
    tsr_error err = {0};
    int rc = tsr_array_from_json(text, strlen(text), dtype, &a, &buffer, &err);
    assert_code(rc, code, err.message);
    cr_assert_eq(err.code, code);
    cr_assert_null(buffer, "a failed decode leaves no buffer");
    assert_contains(err.message, needle);
}

static char *encode_ok(const tsr_array *a, tsr_encoding enc) {
    char *text = NULL;
    tsr_error err = {0};
    int rc = tsr_array_to_json(a, enc, &text, &err);
    cr_assert_eq(rc, 0, "encoding failed: %d %s", rc, err.message);
    cr_assert_not_null(text);
    return text;
}

static void encode_fails(const tsr_array *a, tsr_encoding enc, int code, const char *needle) {
    char *text = (char *)0x1;
    tsr_error err = {0};
    int rc = tsr_array_to_json(a, enc, &text, &err);
    assert_code(rc, code, err.message);
    cr_assert_null(text);
    assert_contains(err.message, needle);
}

/* An encoded-array text in exactly the form this library writes. */
static char *encoded_text(const char *dtype, const char *shape, const char *buffer,
                          const char *encoding) {
    char *s = NULL;
    cr_assert(asprintf(&s,
                       "{\"object_type\":\"array\",\"shape\":%s,\"dtype\":\"%s\","
                       "\"data\":{\"buffer\":%s,\"encoding\":\"%s\"}}",
                       shape, dtype, buffer, encoding) > 0);
    return s;
}

static tsr_payload *parse_ok(tsr_component *c, tsr_endpoint ep, const char *text) {
    tsr_payload *p = NULL;
    tsr_error err = {0};
    int rc = tsr_payload_parse(c, ep, text, strlen(text), &p, &err);
    cr_assert_eq(rc, 0, "parsing %s failed: %d %s", text, rc, err.message);
    cr_assert_not_null(p);
    return p;
}

/* Parsing must fail with code and a message naming component, endpoint
 * and the given needle (field path or cause). */
static void parse_fails(tsr_component *c, tsr_endpoint ep, const char *text, int code,
                        const char *needle) {
    tsr_payload *p = (tsr_payload *)0x1;
    tsr_error err = {0};
    int rc = tsr_payload_parse(c, ep, text, strlen(text), &p, &err);
    assert_code(rc, code, err.message);
    cr_assert_null(p, "a failed parse leaves no payload");
    char component[128], endpoint[128];
    snprintf(component, sizeof component, "component '%s'", tsr_component_name(c));
    snprintf(endpoint, sizeof endpoint, "endpoint '%s'", tsr_endpoint_name(ep));
    assert_contains(err.message, component);
    assert_contains(err.message, endpoint);
    assert_contains(err.message, needle);
}

/* Parse, bind, run and format: the response text. */
static char *respond(tsr_component *c, tsr_endpoint ep, const char *request, tsr_encoding enc) {
    tsr_payload *p = parse_ok(c, ep, request);
    tsr_call *call = new_call(c, ep);
    tsr_error err = {0};
    int rc = tsr_payload_bind(p, call, &err);
    cr_assert_eq(rc, 0, "bind failed: %d %s", rc, err.message);
    run_ok(call);
    char *out = NULL;
    rc = tsr_payload_format_results(p, call, enc, &out, &err);
    cr_assert_eq(rc, 0, "formatting failed: %d %s", rc, err.message);
    tsr_call_free(call);
    tsr_payload_free(p);
    return out;
}

/* ---- every dtype: json text -> array -> json text, and base64 ------------- */

typedef struct dtype_case {
    const char *dtype;
    const char *values; /* a json buffer holding the dtype's extremes */
    size_t itemsize;
} dtype_case;

static const dtype_case dtype_cases[] = {
    {"bool", "[true,false,true]", 1},
    {"int8", "[-128,0,127]", 1},
    {"int16", "[-32768,0,32767]", 2},
    {"int32", "[-2147483648,0,2147483647]", 4},
    {"int64", "[-9223372036854775808,0,9223372036854775807]", 8},
    {"uint8", "[0,1,255]", 1},
    {"uint16", "[0,1,65535]", 2},
    {"uint32", "[0,1,4294967295]", 4},
    {"uint64", "[0,1,9223372036854775807]", 8},
    {"float16", "[65504.0,-0.5,6.103515625e-05]", 2},
    {"float32", "[3.4028234663852886e+38,-0.5,1.401298464324817e-45]", 4},
    {"float64", "[0.1,-1e-300,1.7976931348623157e+308]", 8},
};

Test(payload_dtypes, json_round_trip_keeps_every_dtype_and_its_extremes) {
    for (size_t k = 0; k < sizeof dtype_cases / sizeof dtype_cases[0]; k++) {
        const dtype_case *dc = &dtype_cases[k];
        char *text = encoded_text(dc->dtype, "[3]", dc->values, "json");
        decoded d = decode_ok(text, TSR_DTYPE_INVALID);
        cr_assert_eq((int)d.a.dtype, tsr_dtype_from_name(dc->dtype), "%s", dc->dtype);
        cr_assert_eq(d.a.rank, 1);
        cr_assert_eq(d.a.shape[0], 3);
        char *again = encode_ok(&d.a, TSR_ENCODING_JSON);
        cr_assert_str_eq(again, text, "%s does not survive json -> array -> json", dc->dtype);
        tsr_json_free(again);
        tsr_array_buffer_free(d.buffer);
        free(text);
    }
}

Test(payload_dtypes, base64_round_trip_is_bytewise_exact_for_every_dtype) {
    for (size_t k = 0; k < sizeof dtype_cases / sizeof dtype_cases[0]; k++) {
        const dtype_case *dc = &dtype_cases[k];
        char *text = encoded_text(dc->dtype, "[3]", dc->values, "json");
        decoded d = decode_ok(text, TSR_DTYPE_INVALID);
        char *b64 = encode_ok(&d.a, TSR_ENCODING_BASE64);
        assert_contains(b64, "\"encoding\":\"base64\"");
        decoded back = decode_ok(b64, TSR_DTYPE_INVALID);
        cr_assert_eq(back.a.dtype, d.a.dtype);
        cr_assert_eq(back.a.shape[0], 3);
        cr_assert_eq(memcmp(back.buffer, d.buffer, 3 * dc->itemsize), 0, "%s bytes differ", dc->dtype);
        tsr_array_buffer_free(back.buffer);
        tsr_json_free(b64);
        tsr_array_buffer_free(d.buffer);
        free(text);
    }
}

Test(payload_dtypes, complex_round_trips_through_base64) {
    double complex128[4] = {1.5, -2.0, 0.0, 1e300};
    float complex64[4] = {0.25f, -0.5f, 3.0f, 4.0f};
    tsr_array a128 = make_array(complex128, TSR_COMPLEX128, 1, (int64_t[]){2});
    tsr_array a64 = make_array(complex64, TSR_COMPLEX64, 1, (int64_t[]){2});
    const tsr_array *arrays[] = {&a128, &a64};
    size_t sizes[] = {sizeof complex128, sizeof complex64};
    for (int k = 0; k < 2; k++) {
        char *b64 = encode_ok(arrays[k], TSR_ENCODING_BASE64);
        decoded d = decode_ok(b64, TSR_DTYPE_INVALID);
        cr_assert_eq(d.a.dtype, arrays[k]->dtype);
        cr_assert_eq(memcmp(d.buffer, arrays[k]->data, sizes[k]), 0);
        tsr_array_buffer_free(d.buffer);
        tsr_json_free(b64);
    }
}

Test(payload_dtypes, complex_has_no_json_form_either_way) {
    double z[2] = {1.0, 2.0};
    tsr_array a = make_array(z, TSR_COMPLEX128, 1, (int64_t[]){1});
    encode_fails(&a, TSR_ENCODING_JSON, TSR_E_UNSUPPORTED, "complex128 values have no json form");
    char *text = encoded_text("complex64", "[1]", "[1.0]", "json");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "complex64 values have no json form");
    free(text);
    decode_fails("[1.0, 2.0]", TSR_COMPLEX128, TSR_E_PAYLOAD, "with base64 encoding");
}

Test(payload_dtypes, base64_matches_tesseract_documented_bytes) {
    /* Tesseract's docs show [14, 22, 30] float64 as this buffer. */
    decoded d = decode_ok("{\"object_type\":\"array\",\"shape\":[3],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":\"AAAAAAAALEAAAAAAAAA2QAAAAAAAAD5A\","
                          "\"encoding\":\"base64\"}}",
                          TSR_FLOAT64);
    const double *v = d.buffer;
    cr_assert(v[0] == 14.0 && v[1] == 22.0 && v[2] == 30.0, "got %g %g %g", v[0], v[1], v[2]);
    char *b64 = encode_ok(&d.a, TSR_ENCODING_BASE64);
    assert_contains(b64, "\"buffer\":\"AAAAAAAALEAAAAAAAAA2QAAAAAAAAD5A\"");
    tsr_json_free(b64);
    tsr_array_buffer_free(d.buffer);

    /* float16 1.0 is 0x3c00, little-endian 00 3c (its bits: clang before 15
     * has no _Float16). */
    uint16_t one = 0x3c00;
    tsr_array h = make_array(&one, TSR_FLOAT16, 0, NULL);
    char *text = encode_ok(&h, TSR_ENCODING_BASE64);
    assert_contains(text, "\"buffer\":\"ADw=\"");
    tsr_json_free(text);
}

Test(payload_dtypes, uint64_beyond_int64_is_written_exactly) {
    uint64_t v[2] = {UINT64_MAX, 1};
    tsr_array a = make_array(v, TSR_UINT64, 1, (int64_t[]){2});
    char *text = encode_ok(&a, TSR_ENCODING_JSON);
    assert_contains(text, "\"buffer\":[18446744073709551615,1]");
    tsr_json_free(text);
}

Test(payload_dtypes, floats_are_written_with_the_fewest_exact_digits) {
    double v[7] = {0.1, 1.0, -0.0, 1e300, 1.0 / 3.0, 5e-324, 123456789.0};
    tsr_array a = make_array(v, TSR_FLOAT64, 1, (int64_t[]){7});
    char *text = encode_ok(&a, TSR_ENCODING_JSON);
    assert_contains(text, "[0.1,1.0,-0.0,1e+300,0.3333333333333333,5e-324,123456789.0]");
    tsr_json_free(text);

    float f = 0.1f; /* written as the double it is, like numpy's tolist() */
    tsr_array af = make_array(&f, TSR_FLOAT32, 0, NULL);
    text = encode_ok(&af, TSR_ENCODING_JSON);
    assert_contains(text, "\"buffer\":0.10000000149011612");
    decoded d = decode_ok(text, TSR_DTYPE_INVALID);
    cr_assert_eq(*(float *)d.buffer, 0.1f);
    tsr_array_buffer_free(d.buffer);
    tsr_json_free(text);
}

Test(payload_dtypes, non_finite_values_need_base64) {
    double v[2] = {1.0, NAN};
    tsr_array a = make_array(v, TSR_FLOAT64, 1, (int64_t[]){2});
    encode_fails(&a, TSR_ENCODING_JSON, TSR_E_UNSUPPORTED, "element 1 is NaN");
    v[1] = -INFINITY;
    encode_fails(&a, TSR_ENCODING_JSON, TSR_E_UNSUPPORTED, "element 1 is infinite");
    char *b64 = encode_ok(&a, TSR_ENCODING_BASE64);
    decoded d = decode_ok(b64, TSR_FLOAT64);
    cr_assert(isinf(((double *)d.buffer)[1]));
    tsr_array_buffer_free(d.buffer);
    tsr_json_free(b64);
}

/* ---- ranks, 0-d, empty, nesting --------------------------------------------- */

Test(payload_shapes, zero_d_arrays_use_a_bare_buffer) {
    decoded d = decode_ok("{\"object_type\":\"array\",\"shape\":[],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":3.5,\"encoding\":\"json\"}}",
                          TSR_DTYPE_INVALID);
    cr_assert_eq(d.a.rank, 0);
    cr_assert_eq(*(double *)d.buffer, 3.5);
    char *text = encode_ok(&d.a, TSR_ENCODING_JSON);
    cr_assert_str_eq(text, "{\"object_type\":\"array\",\"shape\":[],\"dtype\":\"float64\","
                           "\"data\":{\"buffer\":3.5,\"encoding\":\"json\"}}");
    tsr_json_free(text);
    tsr_array_buffer_free(d.buffer);

    /* A one-element list fills a 0-d array too, as numpy's reshape allows. */
    d = decode_ok("{\"object_type\":\"array\",\"shape\":[],\"dtype\":\"int16\","
                  "\"data\":{\"buffer\":[7],\"encoding\":\"json\"}}",
                  TSR_DTYPE_INVALID);
    cr_assert_eq(*(int16_t *)d.buffer, 7);
    tsr_array_buffer_free(d.buffer);
}

Test(payload_shapes, empty_arrays_keep_their_shape_and_a_valid_pointer) {
    const char *cases[][3] = {
        /* shape, json buffer, base64 buffer */
        {"[0]", "[]", "\"\""},
        {"[2,0]", "[[],[]]", "\"\""},
        {"[0,3]", "[]", "\"\""},
    };
    for (size_t k = 0; k < 3; k++) {
        char *text = encoded_text("float64", cases[k][0], cases[k][1], "json");
        decoded d = decode_ok(text, TSR_DTYPE_INVALID);
        cr_assert_eq(tsr_array_count(&d.a), 0);
        char *again = encode_ok(&d.a, TSR_ENCODING_JSON);
        cr_assert_str_eq(again, text);
        char *b64 = encode_ok(&d.a, TSR_ENCODING_BASE64);
        char *expect_b64 = encoded_text("float64", cases[k][0], cases[k][2], "base64");
        cr_assert_str_eq(b64, expect_b64);
        decoded back = decode_ok(b64, TSR_DTYPE_INVALID);
        cr_assert_eq(back.a.rank, d.a.rank);
        cr_assert_eq(back.a.shape[0], d.a.shape[0]);
        tsr_array_buffer_free(back.buffer);
        free(expect_b64);
        tsr_json_free(b64);
        tsr_json_free(again);
        tsr_array_buffer_free(d.buffer);
        free(text);
    }
}

Test(payload_shapes, flat_and_nested_json_buffers_give_the_same_c_order_array) {
    decoded flat = decode_ok("{\"object_type\":\"array\",\"shape\":[2,3],\"dtype\":\"int32\","
                             "\"data\":{\"buffer\":[1,2,3,4,5,6],\"encoding\":\"json\"}}",
                             TSR_DTYPE_INVALID);
    decoded nested = decode_ok("{\"object_type\":\"array\",\"shape\":[2,3],\"dtype\":\"int32\","
                               "\"data\":{\"buffer\":[[1,2,3],[4,5,6]],\"encoding\":\"json\"}}",
                               TSR_DTYPE_INVALID);
    int32_t want[6] = {1, 2, 3, 4, 5, 6};
    cr_assert_eq(memcmp(flat.buffer, want, sizeof want), 0);
    cr_assert_eq(memcmp(nested.buffer, want, sizeof want), 0);
    /* Written back nested, as numpy's tolist() does. */
    char *text = encode_ok(&flat.a, TSR_ENCODING_JSON);
    assert_contains(text, "\"buffer\":[[1,2,3],[4,5,6]]");
    tsr_json_free(text);
    tsr_array_buffer_free(flat.buffer);
    tsr_array_buffer_free(nested.buffer);
}

Test(payload_shapes, rank_three_arrays_nest_three_deep) {
    decoded d = decode_ok("[[[1,2],[3,4]],[[5,6],[7,8]]]", TSR_UINT8);
    cr_assert_eq(d.a.rank, 3);
    cr_assert(d.a.shape[0] == 2 && d.a.shape[1] == 2 && d.a.shape[2] == 2);
    cr_assert_eq(((uint8_t *)d.buffer)[7], 8);
    char *text = encode_ok(&d.a, TSR_ENCODING_JSON);
    cr_assert_str_eq(text, "{\"object_type\":\"array\",\"shape\":[2,2,2],\"dtype\":\"uint8\","
                           "\"data\":{\"buffer\":[[[1,2],[3,4]],[[5,6],[7,8]]],\"encoding\":\"json\"}}");
    tsr_json_free(text);
    tsr_array_buffer_free(d.buffer);
}

Test(payload_shapes, plain_values_take_the_dtype_given_or_numpys_choice) {
    decoded d = decode_ok("2", TSR_DTYPE_INVALID);
    cr_assert_eq(d.a.dtype, TSR_INT64);
    cr_assert_eq(d.a.rank, 0);
    tsr_array_buffer_free(d.buffer);
    d = decode_ok("[true, false]", TSR_DTYPE_INVALID);
    cr_assert_eq(d.a.dtype, TSR_BOOL);
    tsr_array_buffer_free(d.buffer);
    d = decode_ok("[1, 2.5]", TSR_DTYPE_INVALID);
    cr_assert_eq(d.a.dtype, TSR_FLOAT64);
    tsr_array_buffer_free(d.buffer);
    d = decode_ok("[1, 2]", TSR_FLOAT32);
    cr_assert_eq(d.a.dtype, TSR_FLOAT32);
    cr_assert_eq(((float *)d.buffer)[1], 2.0f);
    tsr_array_buffer_free(d.buffer);
    d = decode_ok("[[true], [false]]", TSR_FLOAT64);
    cr_assert(d.a.rank == 2 && ((double *)d.buffer)[0] == 1.0);
    tsr_array_buffer_free(d.buffer);
}

/* ---- dtype conversion --------------------------------------------------------- */

Test(payload_convert, same_kind_casts_convert_every_value) {
    decoded d = decode_ok("{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"int32\","
                          "\"data\":{\"buffer\":[-3,4],\"encoding\":\"json\"}}",
                          TSR_FLOAT64);
    cr_assert_eq(d.a.dtype, TSR_FLOAT64);
    cr_assert(((double *)d.buffer)[0] == -3.0 && ((double *)d.buffer)[1] == 4.0);
    tsr_array_buffer_free(d.buffer);
    d = decode_ok("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"int64\","
                  "\"data\":{\"buffer\":[200],\"encoding\":\"json\"}}",
                  TSR_UINT8);
    cr_assert_eq(((uint8_t *)d.buffer)[0], 200);
    tsr_array_buffer_free(d.buffer);
}

Test(payload_convert, casts_across_kinds_downwards_are_refused) {
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":[1.0],\"encoding\":\"json\"}}",
                 TSR_INT32, TSR_E_DTYPE, "dtype float64 cannot be converted to the field's int32");
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"int8\","
                 "\"data\":{\"buffer\":[1],\"encoding\":\"json\"}}",
                 TSR_BOOL, TSR_E_DTYPE, "same_kind");
}

Test(payload_convert, a_cast_that_loses_a_value_names_the_element) {
    decode_fails("{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"int64\","
                 "\"data\":{\"buffer\":[1,300],\"encoding\":\"json\"}}",
                 TSR_UINT8, TSR_E_DTYPE, "element 1: 300 is out of range for uint8");
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":[1e39],\"encoding\":\"json\"}}",
                 TSR_FLOAT32, TSR_E_DTYPE, "out of range for float32");
}

/* ---- malformed arrays ------------------------------------------------------------ */

Test(payload_errors, out_of_range_integers_are_refused_per_dtype) {
    const char *cases[][3] = {
        {"int8", "[128]", "128 is out of range for int8"},
        {"int8", "[-129]", "-129 is out of range for int8"},
        {"int16", "[32768]", "out of range for int16"},
        {"int32", "[-2147483649]", "out of range for int32"},
        {"uint8", "[256]", "256 is out of range for uint8"},
        {"uint16", "[-1]", "-1 is out of range for uint16"},
        {"uint32", "[4294967296]", "out of range for uint32"},
        {"uint64", "[-1]", "out of range for uint64"},
        {"int64", "[1e19]", "out of range for int64"},
        {"int32", "[1.5]", "1.5 is not an integer, as needed for int32"},
        {"bool", "[2]", "2 is neither 0 nor 1, as needed for bool"},
        {"float16", "[70000.0]", "70000 is out of range for float16"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *text = encoded_text(cases[k][0], "[1]", cases[k][1], "json");
        decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD, cases[k][2]);
        free(text);
    }
}

Test(payload_errors, integers_beyond_int64_cannot_be_read_from_json_text) {
    decode_fails("[18446744073709551615]", TSR_UINT64, TSR_E_PAYLOAD, "malformed JSON");
}

Test(payload_errors, unknown_dtype) {
    char *text = encoded_text("float128", "[1]", "[1.0]", "json");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_DTYPE, "unknown dtype \"float128\"");
    free(text);
}

Test(payload_errors, shape_and_buffer_length_disagree) {
    char *text = encoded_text("float64", "[2,3]", "[1,2,3,4,5]", "json");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD,
                 "shape [2, 3] holds 6 elements but the json buffer, shaped [5], holds 5");
    free(text);
    text = encoded_text("float64", "[2]", "\"AAAAAAAA8D8=\"", "base64");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD,
                 "shape [2] of float64 needs 16 bytes but the base64 buffer holds 8");
    free(text);
    text = encoded_text("float64", "[]", "[1.0, 2.0]", "json");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "shape [] holds 1 elements");
    free(text);
}

Test(payload_errors, bad_base64) {
    char *text = encoded_text("uint8", "[2]", "\"AAA\"", "base64");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "invalid base64: length 3 is not a multiple of 4");
    free(text);
    text = encoded_text("uint8", "[3]", "\"AA*A\"", "base64");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "invalid base64: character '*' at position 2");
    free(text);
    text = encoded_text("uint8", "[2]", "\"A=AA\"", "base64");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "character '=' at position 1");
    free(text);
    text = encoded_text("uint8", "[2]", "[1, 2]", "base64");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "a base64 buffer must be a string");
    free(text);
}

Test(payload_errors, ragged_and_wrongly_nested_lists) {
    decode_fails("[[1,2],[3]]", TSR_FLOAT64, TSR_E_PAYLOAD,
                 "field '[1]': ragged nested list: 1 entries where 2 belong");
    decode_fails("[[1,2],3]", TSR_FLOAT64, TSR_E_PAYLOAD,
                 "field '[1]': ragged nested list: an integer where a list of 2 belongs");
    decode_fails("[1,[2]]", TSR_FLOAT64, TSR_E_PAYLOAD,
                 "field '[1]': ragged nested list: a list where a number belongs");
    decode_fails("[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]", TSR_FLOAT64, TSR_E_PAYLOAD,
                 "lists nest more than 16 deep");
}

Test(payload_errors, non_numeric_entries_name_their_position) {
    decode_fails("[1, \"a\"]", TSR_FLOAT64, TSR_E_PAYLOAD, "field '[1]': a string is not a number");
    decode_fails("[[1, null]]", TSR_FLOAT64, TSR_E_PAYLOAD, "field '[0][1]': null is not a number");
    decode_fails("\"text\"", TSR_FLOAT64, TSR_E_PAYLOAD, "got a string");
    decode_fails("{\"a\": 1}", TSR_FLOAT64, TSR_E_PAYLOAD, "expected an array");
}

Test(payload_errors, malformed_encoded_array_objects) {
    decode_fails("{\"object_type\":\"tensor\",\"shape\":[1],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":[1],\"encoding\":\"json\"}}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "\"object_type\" must be \"array\"");
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\",\"extra\":1,"
                 "\"data\":{\"buffer\":[1],\"encoding\":\"json\"}}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "unknown key \"extra\" in an encoded array");
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\"}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "the array lacks \"data\"");
    decode_fails("{\"object_type\":\"array\",\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":[1],\"encoding\":\"json\"}}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "the array lacks \"shape\"");
    decode_fails("{\"object_type\":\"array\",\"shape\":[-1],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":[1],\"encoding\":\"json\"}}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "\"shape\" entry 0 must be a non-negative integer");
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":[1],\"encoding\":\"hex\"}}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "unknown encoding \"hex\"");
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":\"AAAAAAAA8D8=\",\"encoding\":\"base64\",\"compression\":\"lz4\"}}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "not an lz4 frame");
    /* A shape far beyond what its frame can hold is refused before
     * anything is allocated for it (8 stored bytes, 2 TB claimed). */
    decode_fails("{\"object_type\":\"array\",\"shape\":[1000000,1000000],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":\"AAAAAAAA8D8=\",\"encoding\":\"base64\",\"compression\":\"lz4\"}}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "more than an lz4 frame of 8 bytes can hold");
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":\"AAAAAAAA8D8=\",\"encoding\":\"base64\",\"compression\":\"zstd\"}}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "unknown compression \"zstd\"");
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":[1],\"encoding\":\"json\",\"compression\":\"lz4\"}}",
                 TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "json buffers cannot be compressed");
    decode_fails("{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":\"tessera-no-such-file.bin:0\",\"encoding\":\"binref\"}}",
                 TSR_DTYPE_INVALID, TSR_E_IO, "cannot open binref file 'tessera-no-such-file.bin'");
}

Test(payload_errors, oversized_shapes_are_refused_before_allocating) {
    char *text = encoded_text("float64", "[4294967296,4294967296,16]", "\"\"", "base64");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "shape is too large to allocate");
    free(text);
    text = encoded_text("float64", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "[1]", "json");
    decode_fails(text, TSR_DTYPE_INVALID, TSR_E_PAYLOAD, "17 dimensions, more than the 16 supported");
    free(text);
}

Test(payload_errors, malformed_json_reports_line_and_column) {
    decode_fails("[1,\n 2,,3]", TSR_FLOAT64, TSR_E_PAYLOAD, "malformed JSON at line 2, column 4");
}

/* ---- requests ------------------------------------------------------------------------ */

Test(payload_requests, apply_decodes_every_input_into_aligned_buffers) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_payload *p = parse_ok(c, TSR_EP_APPLY,
                              "{\"inputs\": {\"a\": [1, 2, 3], \"s\": 2,"
                              " \"b\": {\"object_type\": \"array\", \"shape\": [3], \"dtype\": \"float64\","
                              " \"data\": {\"buffer\": \"AAAAAAAALEAAAAAAAAA2QAAAAAAAAD5A\", \"encoding\": \"base64\"}}}}");
    cr_assert_eq(tsr_payload_endpoint(p), TSR_EP_APPLY);
    const tsr_array *a = tsr_payload_input(p, "a"), *b = tsr_payload_input(p, "b"), *s = tsr_payload_input(p, "s");
    cr_assert(a && b && s);
    cr_assert_eq(a->dtype, TSR_FLOAT64, "plain integers take the field's float64");
    cr_assert_eq(((double *)b->data)[2], 30.0);
    cr_assert_eq(s->rank, 0);
    cr_assert_eq((uintptr_t)a->data % 64, 0);
    cr_assert_eq((uintptr_t)b->data % 64, 0);
    cr_assert_null(tsr_payload_input(p, "nope"));
    cr_assert_eq(tsr_payload_n_wrt_inputs(p), 0);
    tsr_payload_free(p);
    tsr_close(c);
}

Test(payload_requests, apply_response_is_the_outputs_object_unwrapped) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    const char *req = "{\"inputs\": {\"a\": [1, 2, 3], \"b\": [4, 5, 6], \"s\": 2}}";
    char *out = respond(c, TSR_EP_APPLY, req, TSR_ENCODING_JSON);
    cr_assert_str_eq(out, "{\"result\":{\"object_type\":\"array\",\"shape\":[3],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":[6.0,9.0,12.0],\"encoding\":\"json\"}}}");
    tsr_json_free(out);
    out = respond(c, TSR_EP_APPLY, req, TSR_ENCODING_BASE64);
    cr_assert_str_eq(out, "{\"result\":{\"object_type\":\"array\",\"shape\":[3],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":\"AAAAAAAAGEAAAAAAAAAiQAAAAAAAAChA\",\"encoding\":\"base64\"}}}");
    tsr_json_free(out);
    tsr_close(c);
}

static const char *fields_request =
    "{\"inputs\": {"
    "\"mesh\": {\"nodes\": [[1, 2], [3, 4]], \"cells\": [[0, 1, 2]]},"
    "\"flags\": [true, false, false],"
    "\"scale\": {\"object_type\": \"array\", \"shape\": [], \"dtype\": \"float32\","
    "            \"data\": {\"buffer\": 0.5, \"encoding\": \"json\"}},"
    "\"z\": {\"object_type\": \"array\", \"shape\": [1], \"dtype\": \"complex128\","
    "        \"data\": {\"buffer\": \"AAAAAAAA8D8AAAAAAAAAQA==\", \"encoding\": \"base64\"}}}}";

Test(payload_requests, nested_inputs_flatten_and_outputs_nest_back_by_dots) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    tsr_payload *p = parse_ok(c, TSR_EP_APPLY, fields_request);
    const tsr_array *nodes = tsr_payload_input(p, "mesh.nodes");
    cr_assert_not_null(nodes);
    cr_assert(nodes->rank == 2 && nodes->shape[0] == 2 && nodes->shape[1] == 2);
    cr_assert_eq(tsr_payload_input(p, "mesh.cells")->dtype, TSR_INT32);
    tsr_payload_free(p);

    char *out = respond(c, TSR_EP_APPLY, fields_request, TSR_ENCODING_BASE64);
    /* z = conj(1 + 2j) = 1 - 2j */
    assert_contains(out, "\"z\":{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"complex128\","
                         "\"data\":{\"buffer\":\"AAAAAAAA8D8AAAAAAAAAwA==\",\"encoding\":\"base64\"}}");
    tsr_json_free(out);

    /* json cannot carry the complex output; the message names the field. */
    p = parse_ok(c, TSR_EP_APPLY, fields_request);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(tsr_payload_bind(p, call, NULL), 0);
    run_ok(call);
    char *text = (char *)0x1;
    tsr_error err = {0};
    assert_code(tsr_payload_format_results(p, call, TSR_ENCODING_JSON, &text, &err), TSR_E_UNSUPPORTED,
                err.message);
    cr_assert_null(text);
    assert_contains(err.message, "field 'z': complex128 values have no json form");
    tsr_call_free(call);
    tsr_payload_free(p);
    tsr_close(c);
}

Test(payload_requests, nested_output_names_group_under_one_object) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    char *out = respond(c, TSR_EP_APPLY, fields_request, TSR_ENCODING_BASE64);
    json_error_t jerr;
    json_t *root = json_loads(out, 0, &jerr);
    cr_assert_not_null(root, "response is not JSON: %s", jerr.text);
    json_t *moved = json_object_get(root, "moved");
    cr_assert(json_is_object(moved));
    cr_assert_eq(json_object_size(moved), 2);
    cr_assert_not_null(json_object_get(moved, "nodes"));
    cr_assert_not_null(json_object_get(moved, "cells"));
    cr_assert_eq(json_object_size(root), 4, "moved, flags, total, z");
    json_decref(root);
    /* Values through a json response of the real-valued fields. */
    assert_contains(out, "\"total\":{\"object_type\":\"array\",\"shape\":[],\"dtype\":\"float64\"");
    tsr_json_free(out);
    tsr_close(c);
}

Test(payload_requests, abstract_eval_takes_shape_dtype_and_answers_in_kind) {
    tsr_component *c = open_with_config(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE);
    char *out = respond(c, TSR_EP_ABSTRACT_EVAL,
                        "{\"inputs\": {\"x\": {\"shape\": [4], \"dtype\": \"float64\"}}}",
                        TSR_ENCODING_JSON);
    cr_assert_str_eq(out, "{\"y\":{\"shape\":[3],\"dtype\":\"float64\"}}");
    tsr_json_free(out);
    /* An encoded array or a plain list says its shape too. */
    tsr_payload *p = parse_ok(c, TSR_EP_ABSTRACT_EVAL, "{\"inputs\": {\"x\": [1, 2, 3, 4]}}");
    const tsr_array *x = tsr_payload_input(p, "x");
    cr_assert(x->rank == 1 && x->shape[0] == 4 && x->data == NULL);
    tsr_payload_free(p);
    tsr_close(c);
}

Test(payload_requests, jacobian_response_nests_outputs_then_inputs) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    char *out = respond(c, TSR_EP_JACOBIAN,
                        "{\"inputs\": {\"x\": [1, 2], \"a\": 1, \"b\": 100},"
                        " \"jac_inputs\": [\"x\", \"b\"], \"jac_outputs\": [\"value\"]}",
                        TSR_ENCODING_JSON);
    /* d/dx = (-2(a - x0) - 4 b x0 (x1 - x0^2), 2 b (x1 - x0^2)); d/db = (x1 - x0^2)^2 */
    cr_assert_str_eq(out, "{\"value\":{"
                          "\"x\":{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":[-400.0,200.0],\"encoding\":\"json\"}},"
                          "\"b\":{\"object_type\":\"array\",\"shape\":[],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":1.0,\"encoding\":\"json\"}}}}");
    tsr_json_free(out);
    tsr_close(c);
}

/* A field named twice in a differentiation list is refused, as
 * tsr_call_set_wrt and Tesseract refuse it, naming the field and the list. */
Test(payload_requests, a_field_named_twice_in_a_wrt_list_is_refused) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    parse_fails(c, TSR_EP_VJP,
                "{\"inputs\": {\"mesh\": {\"nodes\": [[1, 2]], \"cells\": [[0, 1, 2]]},"
                " \"flags\": [true], \"scale\": 2, \"z\": {\"object_type\": \"array\","
                " \"shape\": [0], \"dtype\": \"complex128\", \"data\": {\"buffer\": \"\","
                " \"encoding\": \"base64\"}}},"
                " \"vjp_inputs\": [\"scale\", \"scale\"], \"vjp_outputs\": [\"total\"],"
                " \"cotangent_vector\": {\"total\": 1}}",
                TSR_E_PAYLOAD, "\"scale\" is named twice in \"vjp_inputs\"");
    tsr_close(c);
}

Test(payload_requests, jvp_and_vjp_key_results_by_dotted_names) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    const char *base = "{\"inputs\": {\"mesh\": {\"nodes\": [[1, 2]], \"cells\": [[0, 1, 2]]},"
                       " \"flags\": [true], \"scale\": 2, \"z\": {\"object_type\": \"array\","
                       " \"shape\": [0], \"dtype\": \"complex128\", \"data\": {\"buffer\": \"\","
                       " \"encoding\": \"base64\"}}},";
    char *req = NULL;
    cr_assert(asprintf(&req, "%s \"jvp_inputs\": [\"mesh.nodes\", \"scale\"],"
                             " \"jvp_outputs\": [\"total\", \"moved.nodes\"],"
                             " \"tangent_vector\": {\"scale\": 1, \"mesh.nodes\": [[1, 0]]}}",
                       base) > 0);
    tsr_payload *p = parse_ok(c, TSR_EP_JVP, req);
    cr_assert_eq(tsr_payload_n_wrt_inputs(p), 2);
    cr_assert_str_eq(tsr_payload_wrt_input(p, 0), "mesh.nodes");
    cr_assert_str_eq(tsr_payload_wrt_output(p, 1), "moved.nodes");
    cr_assert_eq(tsr_payload_seed(p, "scale")->dtype, TSR_FLOAT32, "a tangent takes its input's dtype");
    tsr_payload_free(p);
    char *out = respond(c, TSR_EP_JVP, req, TSR_ENCODING_JSON);
    /* total = s * sum(nodes): d = s * sum(dn) + sum(n) * ds = 2 * 1 + 3 * 1 = 5;
     * moved = s * n: d = s * dn + n * ds = [2 + 1, 0 + 2] */
    cr_assert_str_eq(out, "{\"total\":{\"object_type\":\"array\",\"shape\":[],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":5.0,\"encoding\":\"json\"}},"
                          "\"moved.nodes\":{\"object_type\":\"array\",\"shape\":[1,2],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":[[3.0,2.0]],\"encoding\":\"json\"}}}");
    tsr_json_free(out);
    free(req);
    tsr_close(c);

    c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    out = respond(c, TSR_EP_VJP,
                  "{\"inputs\": {\"x\": [1, 2], \"a\": 1, \"b\": 100}, \"vjp_inputs\": [\"x\"],"
                  " \"vjp_outputs\": [\"value\"], \"cotangent_vector\": {\"value\": 0.5}}",
                  TSR_ENCODING_JSON);
    cr_assert_str_eq(out, "{\"x\":{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":[-200.0,100.0],\"encoding\":\"json\"}}}");
    tsr_json_free(out);
    tsr_close(c);
}

Test(payload_requests, a_payload_binds_into_a_reused_call) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    for (int k = 1; k <= 3; k++) {
        char req[128];
        snprintf(req, sizeof req, "{\"inputs\": {\"x\": [%d, %d]}}", k, 10 * k);
        tsr_payload *p = parse_ok(c, TSR_EP_APPLY, req);
        cr_assert_eq(tsr_payload_bind(p, call, NULL), 0);
        run_ok(call);
        const double *y = tsr_call_output(call, "y")->data;
        cr_assert(y[0] == k && y[1] == 10 * k);
        tsr_payload_free(p);
    }
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- malformed requests ------------------------------------------------------------ */

Test(payload_request_errors, malformed_json_has_line_and_column) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\":\n  {\"x\": [1,]}}", TSR_E_PAYLOAD,
                "malformed JSON at line 2, column");
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\": {\"x\": [1]}, \"inputs\": {}}", TSR_E_PAYLOAD,
                "duplicate object key");
    parse_fails(c, TSR_EP_APPLY, "[1]", TSR_E_PAYLOAD, "the payload must be a JSON object");
    parse_fails(c, TSR_EP_APPLY, "", TSR_E_PAYLOAD, "malformed JSON");
    tsr_close(c);
}

Test(payload_request_errors, top_level_keys_are_checked_per_endpoint) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\": {\"x\": [1]}, \"jac_inputs\": [\"x\"]}",
                TSR_E_PAYLOAD, "unknown key \"jac_inputs\" in the payload (this endpoint takes \"inputs\")");
    parse_fails(c, TSR_EP_JVP, "{\"inputs\": {\"x\": [1]}, \"jvp_inputs\": [\"x\"], \"jvp_outputs\": [\"y\"],"
                               " \"cotangent_vector\": {}}",
                TSR_E_PAYLOAD, "unknown key \"cotangent_vector\"");
    parse_fails(c, TSR_EP_APPLY, "{\"outputs\": {}}", TSR_E_PAYLOAD, "unknown key \"outputs\"");
    parse_fails(c, TSR_EP_APPLY, "{}", TSR_E_PAYLOAD, "the payload lacks \"inputs\"");
    parse_fails(c, TSR_EP_JACOBIAN, "{\"inputs\": {\"x\": [1]}, \"jac_inputs\": [\"x\"]}", TSR_E_PAYLOAD,
                "the payload lacks \"jac_outputs\"");
    parse_fails(c, TSR_EP_VJP, "{\"inputs\": {\"x\": [1]}, \"vjp_inputs\": [\"x\"], \"vjp_outputs\": [\"y\"]}",
                TSR_E_PAYLOAD, "the payload lacks \"cotangent_vector\"");
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\": [1]}", TSR_E_PAYLOAD, "\"inputs\" must be an object");
    tsr_close(c);
}

Test(payload_request_errors, input_fields_are_checked_against_the_schema) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\": {\"speed\": 1}}", TSR_E_UNKNOWN_FIELD,
                "field 'inputs.speed': no input field \"speed\" in the schema (inputs: mesh.nodes, mesh.cells");
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\": {\"mesh\": {\"faces\": 1}}}", TSR_E_UNKNOWN_FIELD,
                "field 'inputs.mesh.faces': no input field \"mesh.faces\"");
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\": {\"mesh.nodes\": [[1, 2]]}}", TSR_E_UNKNOWN_FIELD,
                "field 'inputs': key \"mesh.nodes\": keys of \"inputs\" are single names");
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\": {\"mesh\": [1, 2]}}", TSR_E_PAYLOAD,
                "field 'inputs.mesh': expected an object holding the fields \"mesh.*\"");
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\": {\"mesh\": {\"nodes\": [[1, \"x\"]]}}}", TSR_E_PAYLOAD,
                "field 'inputs.mesh.nodes[0][1]': a string is not a number");
    parse_fails(c, TSR_EP_APPLY,
                "{\"inputs\": {\"mesh\": {\"nodes\": [[1, 2]], \"cells\": [[0, 1, 2]]},"
                " \"flags\": [true], \"scale\": 1}}",
                TSR_E_MISSING, "field 'inputs.z': required input is missing");
    parse_fails(c, TSR_EP_APPLY, "{\"inputs\": {\"mesh\": {\"cells\": [[1.5, 0, 0]]}}}", TSR_E_DTYPE,
                "field 'inputs.mesh.cells': values read as float64 cannot be converted to the "
                "field's int32");
    tsr_close(c);
}

Test(payload_request_errors, wrt_lists_name_differentiable_fields) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    const char *inputs = "{\"inputs\": {\"mesh\": {\"nodes\": [[1, 2]], \"cells\": [[0, 1, 2]]},"
                         " \"flags\": [true], \"scale\": 1, \"z\": []},";
    struct {
        const char *rest;
        int code;
        const char *needle;
    } cases[] = {
        {"\"jac_inputs\": [], \"jac_outputs\": [\"total\"]}", TSR_E_PAYLOAD,
         "\"jac_inputs\" must name at least one field"},
        {"\"jac_inputs\": \"scale\", \"jac_outputs\": [\"total\"]}", TSR_E_PAYLOAD,
         "\"jac_inputs\" must be a list of field names"},
        {"\"jac_inputs\": [1], \"jac_outputs\": [\"total\"]}", TSR_E_PAYLOAD,
         "field 'jac_inputs[0]': a field name must be a string"},
        {"\"jac_inputs\": [\"scale\", \"speed\"], \"jac_outputs\": [\"total\"]}", TSR_E_UNKNOWN_FIELD,
         "field 'jac_inputs[1]': \"speed\" is not an input field"},
        {"\"jac_inputs\": [\"mesh.cells\"], \"jac_outputs\": [\"total\"]}", TSR_E_NOT_DIFFERENTIABLE,
         "\"mesh.cells\" is not differentiable"},
        {"\"jac_inputs\": [\"scale\"], \"jac_outputs\": [\"moved.cells\"]}", TSR_E_NOT_DIFFERENTIABLE,
         "field 'jac_outputs[0]': \"moved.cells\" is not differentiable"},
        {"\"jac_inputs\": [\"scale\"], \"jac_outputs\": [\"scale\"]}", TSR_E_UNKNOWN_FIELD,
         "\"scale\" is not an output field"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *req = NULL;
        cr_assert(asprintf(&req, "%s %s", inputs, cases[k].rest) > 0);
        parse_fails(c, TSR_EP_JACOBIAN, req, cases[k].code, cases[k].needle);
        free(req);
    }
    tsr_close(c);
}

Test(payload_request_errors, tangents_and_cotangents_match_the_wrt_lists) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    parse_fails(c, TSR_EP_JVP,
                "{\"inputs\": {\"x\": [1, 2], \"a\": 1, \"b\": 2}, \"jvp_inputs\": [\"x\", \"a\"],"
                " \"jvp_outputs\": [\"value\"], \"tangent_vector\": {\"x\": [1, 0]}}",
                TSR_E_MISSING, "field 'tangent_vector.a': missing; every field of \"jvp_inputs\" needs one");
    parse_fails(c, TSR_EP_JVP,
                "{\"inputs\": {\"x\": [1, 2], \"a\": 1, \"b\": 2}, \"jvp_inputs\": [\"x\"],"
                " \"jvp_outputs\": [\"value\"], \"tangent_vector\": {\"x\": [1, 0], \"b\": 1}}",
                TSR_E_UNKNOWN_FIELD, "field 'tangent_vector.b': \"b\" is not among \"jvp_inputs\"");
    parse_fails(c, TSR_EP_VJP,
                "{\"inputs\": {\"x\": [1, 2], \"a\": 1, \"b\": 2}, \"vjp_inputs\": [\"x\"],"
                " \"vjp_outputs\": [\"value\"], \"cotangent_vector\": [1]}",
                TSR_E_PAYLOAD, "\"cotangent_vector\" must be an object keyed by the fields of \"vjp_outputs\"");
    parse_fails(c, TSR_EP_VJP,
                "{\"inputs\": {\"x\": [1, 2], \"a\": 1, \"b\": 2}, \"vjp_inputs\": [\"x\"],"
                " \"vjp_outputs\": [\"value\"], \"cotangent_vector\": {\"value\": \"one\"}}",
                TSR_E_PAYLOAD, "field 'cotangent_vector.value': expected an array");
    tsr_close(c);
}

Test(payload_request_errors, shape_errors_surface_at_run_with_the_field_named) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_payload *p = parse_ok(c, TSR_EP_APPLY, "{\"inputs\": {\"a\": [1, 2, 3], \"b\": [1, 2], \"s\": 1}}");
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(tsr_payload_bind(p, call, NULL), 0);
    const char *msg = run_fails(call, TSR_E_SHAPE);
    assert_contains(msg, "vectoradd");
    char *out = (char *)0x1;
    tsr_error err = {0};
    cr_assert_neq(tsr_payload_format_results(p, call, TSR_ENCODING_JSON, &out, &err), 0,
                  "a failed call has no results to format");
    cr_assert_null(out);
    tsr_call_free(call);
    tsr_payload_free(p);
    tsr_close(c);
}

Test(payload_request_errors, null_arguments_are_refused_not_crashed_on) {
    tsr_error err = {0};
    tsr_payload *p = (tsr_payload *)0x1;
    assert_code(tsr_payload_parse(NULL, TSR_EP_APPLY, "{}", 2, &p, &err), TSR_E_ARGUMENT, err.message);
    cr_assert_null(p);
    assert_code(tsr_payload_bind(NULL, NULL, &err), TSR_E_ARGUMENT, err.message);
    tsr_payload_free(NULL);
    tsr_json_free(NULL);
    cr_assert_null(tsr_payload_input(NULL, "x"));
    cr_assert_eq(tsr_payload_n_wrt_outputs(NULL), 0);
}

/* ---- schema and encodings ------------------------------------------------------------ */

Test(payload_schema, schema_lists_fields_dims_and_endpoints) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    char *text = NULL;
    tsr_error err = {0};
    cr_assert_eq(tsr_schema_to_json(c, &text, &err), 0, "%s", err.message);
    assert_contains(text, "{\"name\":\"payload_fields\",\"version\":\"1.0\","
                          "\"description\":\"nested names and mixed dtypes for payload tests\",");
    assert_contains(text, "{\"name\":\"mesh.nodes\",\"dtype\":\"float64\",\"shape\":[\"n\",2],"
                          "\"differentiable\":true,\"doc\":\"node coordinates\",\"required\":true,"
                          "\"kind\":\"array\"}");
    assert_contains(text, "{\"name\":\"flags\",\"dtype\":\"bool\",\"shape\":[null],"
                          "\"differentiable\":false,\"doc\":null,\"kind\":\"array\"}");
    assert_contains(text, "{\"name\":\"scale\",\"dtype\":\"float32\",\"shape\":[],");
    assert_contains(text, "\"endpoints\":[\"apply\",\"jvp\"]}");
    json_t *root = json_loads(text, 0, NULL);
    cr_assert_not_null(root, "the schema is valid JSON");
    cr_assert_eq(json_array_size(json_object_get(root, "inputs")), 5);
    cr_assert_eq(json_array_size(json_object_get(root, "outputs")), 5);
    json_decref(root);
    tsr_json_free(text);
    tsr_close(c);
}

Test(payload_schema, encoding_names) {
    cr_assert_eq(tsr_encoding_from_name("json"), TSR_ENCODING_JSON);
    cr_assert_eq(tsr_encoding_from_name("json+base64"), TSR_ENCODING_BASE64);
    cr_assert_eq(tsr_encoding_from_name("base64"), TSR_ENCODING_BASE64);
    cr_assert_eq(tsr_encoding_from_name("msgpack"), -1);
    cr_assert_eq(tsr_encoding_from_name(NULL), -1);
    cr_assert_str_eq(tsr_encoding_name(TSR_ENCODING_BASE64), "base64");
    cr_assert_null(tsr_encoding_name((tsr_encoding)7));
}
