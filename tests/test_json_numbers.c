/* SPDX-License-Identifier: MIT */
/*
 * Numbers of json-encoded arrays through the public functions: every
 * float64 read back bit for bit from the text the library writes, over
 * random bit patterns and the hard cases, in lists of every rank; float32
 * printed as its double; integers of every width at their extremes; the
 * refusals (NaN, infinities, overflow, integers out of range) with their
 * messages; and a float64 list read under a locale whose decimal point is
 * a comma.
 */
#include <criterion/criterion.h>

#include <float.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

static uint64_t rng_state = 0x2545F4914F6CDD1Du;
static uint64_t next_bits(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* v[0..n) as a json-encoded array of the given shape, read back. */
static void round_trip(double *v, int32_t rank, const int64_t *shape) {
    tsr_array a = {.data = v, .dtype = TSR_FLOAT64, .rank = rank};
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= (a.shape[d] = shape[d]);
    char *text = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_array_to_json(&a, TSR_ENCODING_JSON, &text, &err), 0, "%s", err.message);
    tsr_array back;
    void *buffer = NULL;
    cr_assert_eq(tsr_array_from_json(text, strlen(text), TSR_FLOAT64, &back, &buffer, &err), 0,
                 "%s", err.message);
    cr_assert_eq(back.rank, rank);
    cr_assert_eq(memcmp(back.data, v, (size_t)n * sizeof *v), 0,
                 "a double does not read back to the bit");
    tsr_array_buffer_free(buffer);
    tsr_json_free(text);
}

Test(json_numbers, float64_arrays_read_back_to_the_bit_over_the_whole_range) {
    enum { N = 60000 };
    double *v = malloc(N * sizeof *v);
    cr_assert_not_null(v);
    int64_t k = 0;
    const double hard[] = {0.0, -0.0, DBL_MAX, -DBL_MAX, DBL_MIN, 5e-324, -5e-324, DBL_EPSILON,
                           0.1, 1.0 / 3, 1e22, 1e23, 9007199254740993.0, 2.2250738585072009e-308};
    for (size_t j = 0; j < sizeof hard / sizeof hard[0]; j++) v[k++] = hard[j];
    for (int e = -1074; e <= 1023 && k < N; e += 7) v[k++] = ldexp(1.0, e);
    for (int e = -323; e <= 308 && k < N; e += 3) v[k++] = pow(10.0, e);
    for (uint64_t b = 1; b < 500; b++) memcpy(&v[k++], &b, 8); /* subnormals */
    while (k < N) {
        uint64_t b = next_bits();
        double d;
        memcpy(&d, &b, 8);
        if (isfinite(d)) v[k++] = d;
    }
    round_trip(v, 1, (int64_t[]){N});
    round_trip(v, 2, (int64_t[]){300, 200});
    round_trip(v, 3, (int64_t[]){10, 60, 100});
    round_trip(v, 2, (int64_t[]){N, 1});
    free(v);
}

static char *json_of(void *data, tsr_dtype dtype, int64_t n) {
    tsr_array a = {.data = data, .dtype = dtype, .rank = 1, .shape = {n}};
    char *text = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_array_to_json(&a, TSR_ENCODING_JSON, &text, &err), 0, "%s", err.message);
    return text;
}

static void assert_buffer(const char *text, const char *buffer) {
    char want[512];
    snprintf(want, sizeof want, "\"buffer\":%s,", buffer);
    cr_assert_not_null(strstr(text, want), "%s lacks %s", text, want);
}

Test(json_numbers, doubles_print_in_the_shortest_form_with_a_point_or_an_exponent) {
    double v[] = {0.0, -0.0, 1.0, 0.1, -2.5, 100.0, 1e15, 1e16, 1e-5, 0.0001, 5e-324,
                        DBL_MAX, 123456789012345680.0, 7.120236347223045e-307};
    char *text = json_of(v, TSR_FLOAT64, sizeof v / sizeof v[0]);
    assert_buffer(text, "[0.0,-0.0,1.0,0.1,-2.5,100.0,1e+15,1e+16,1e-05,0.0001,5e-324,"
                        "1.7976931348623157e+308,"
                        "1.2345678901234568e+17,7.120236347223045e-307]");
    tsr_json_free(text);
}

Test(json_numbers, float32_prints_as_the_double_it_widens_to) {
    float v[] = {0.1f, 1.5f, -3.0f, FLT_MAX, FLT_MIN, 1e-45f};
    char *text = json_of(v, TSR_FLOAT32, 6);
    assert_buffer(text, "[0.10000000149011612,1.5,-3.0,3.4028234663852886e+38,"
                        "1.1754943508222875e-38,1.401298464324817e-45]");
    tsr_array back;
    void *buffer = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_array_from_json(text, strlen(text), TSR_FLOAT32, &back, &buffer, &err), 0);
    cr_assert_eq(memcmp(back.data, v, sizeof v), 0);
    tsr_array_buffer_free(buffer);
    tsr_json_free(text);
}

Test(json_numbers, integers_of_every_width_print_their_extremes) {
    int64_t i64[] = {INT64_MIN, -1, 0, INT64_MAX};
    uint64_t u64[] = {0, 1, UINT64_MAX};
    int8_t i8[] = {INT8_MIN, 0, INT8_MAX};
    uint16_t u16[] = {0, UINT16_MAX};
    int32_t i32[] = {INT32_MIN, INT32_MAX};
    uint8_t b[] = {1, 0, 1};
    struct { void *data; tsr_dtype dtype; int64_t n; const char *want; } cases[] = {
        {i64, TSR_INT64, 4, "[-9223372036854775808,-1,0,9223372036854775807]"},
        {u64, TSR_UINT64, 3, "[0,1,18446744073709551615]"},
        {i8, TSR_INT8, 3, "[-128,0,127]"},
        {u16, TSR_UINT16, 2, "[0,65535]"},
        {i32, TSR_INT32, 2, "[-2147483648,2147483647]"},
        {b, TSR_BOOL, 3, "[true,false,true]"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *text = json_of(cases[k].data, cases[k].dtype, cases[k].n);
        assert_buffer(text, cases[k].want);
        if (cases[k].dtype == TSR_UINT64) { /* beyond int64: jansson reads no such integer */
            tsr_json_free(text);
            continue;
        }
        tsr_array back;
        void *buffer = NULL;
        tsr_error err = TSR_ERROR_INIT;
        cr_assert_eq(tsr_array_from_json(text, strlen(text), cases[k].dtype, &back, &buffer, &err),
                     0, "%s", err.message);
        cr_assert_eq(memcmp(back.data, cases[k].data, (size_t)cases[k].n * tsr_dtype_size(cases[k].dtype)),
                     0);
        tsr_array_buffer_free(buffer);
        tsr_json_free(text);
    }
}

Test(json_numbers, nan_and_infinities_are_refused_with_the_element_named) {
    double v[300];
    for (int k = 0; k < 300; k++) v[k] = k * 0.5;
    v[257] = NAN;
    tsr_array a = {.data = v, .dtype = TSR_FLOAT64, .rank = 1, .shape = {300}};
    char *text = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_array_to_json(&a, TSR_ENCODING_JSON, &text, &err), TSR_E_UNSUPPORTED);
    cr_assert_null(text);
    cr_assert_not_null(strstr(err.message, "element 257 is NaN, which JSON cannot represent; "
                                           "use base64 encoding"), "%s", err.message);
    v[257] = -INFINITY;
    float f[2] = {1.0f, INFINITY};
    cr_assert_eq(tsr_array_to_json(&a, TSR_ENCODING_JSON, &text, &err), TSR_E_UNSUPPORTED);
    cr_assert_not_null(strstr(err.message, "element 257 is infinite"), "%s", err.message);
    a = (tsr_array){.data = f, .dtype = TSR_FLOAT32, .rank = 1, .shape = {2}};
    cr_assert_eq(tsr_array_to_json(&a, TSR_ENCODING_JSON, &text, &err), TSR_E_UNSUPPORTED);
    cr_assert_not_null(strstr(err.message, "element 1 is infinite"), "%s", err.message);
}

static int decode_list(const char *list, tsr_dtype dtype, tsr_error *err) {
    char text[4096];
    int n = 0;
    for (const char *p = list; *p; p++) n += *p == ',';
    snprintf(text, sizeof text,
             "{\"object_type\":\"array\",\"shape\":[%d],\"dtype\":\"%s\","
             "\"data\":{\"buffer\":%s,\"encoding\":\"json\"}}",
             n + 1, tsr_dtype_name(dtype), list);
    tsr_array a;
    void *buffer = NULL;
    int rc = tsr_array_from_json(text, strlen(text), dtype, &a, &buffer, err);
    tsr_array_buffer_free(buffer);
    return rc;
}

/* 64 values: a list this long is read by the list reader (json_hoist.c,
 * HOIST_MIN_LEAVES), a shorter one by jansson. */
#define PAD16 "0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,"
#define PAD PAD16 PAD16 PAD16 PAD16

Test(json_numbers, bad_numbers_are_refused_alike_in_long_and_short_lists) {
    const char *bad[] = {"1e309", "-1.8e308", "NaN", "Infinity", "-Infinity", "01", "1.", ".5",
                         "+1", "0x10", "1e", "-", "1.5.3", "1e+", "--1", "1e5.0"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char list[1024];
        for (int pad = 0; pad < 2; pad++) {
            snprintf(list, sizeof list, "[%s%s]", pad ? PAD : "", bad[k]);
            tsr_error err = TSR_ERROR_INIT;
            cr_assert_eq(decode_list(list, TSR_FLOAT64, &err), TSR_E_PAYLOAD, "%s is read", list);
            cr_assert_not_null(strstr(err.message, "malformed JSON"), "%s: %s", bad[k], err.message);
        }
    }
    const char *good[] = {"1e308", "1e-400", "-0", "2", "1E+2", "-0.0", "4.9e-324", "1.7976931348623157e308"};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        char list[1024];
        for (int pad = 0; pad < 2; pad++) {
            snprintf(list, sizeof list, "[%s%s]", pad ? PAD : "", good[k]);
            tsr_error err = TSR_ERROR_INIT;
            cr_assert_eq(decode_list(list, TSR_FLOAT64, &err), 0, "%s: %s", good[k], err.message);
        }
    }
}

Test(json_numbers, integers_out_of_range_are_refused_with_the_element_named) {
    char list[1024] = "[";
    for (int k = 0; k < 64; k++) strcat(list, "-128,");
    strcat(list, "128]");
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(decode_list(list, TSR_INT8, &err), TSR_E_PAYLOAD, "%s", err.message);
    cr_assert_not_null(strstr(err.message, "out of range"), "%s", err.message);
    cr_assert(strstr(err.message, "[64]") != NULL || strstr(err.loc, "64") != NULL, "%s | %s",
              err.message, err.loc);
}

Test(json_numbers, integers_and_booleans_in_float64_lists_read_as_their_doubles) {
    char text[2048];
    snprintf(text, sizeof text,
             "{\"object_type\":\"array\",\"shape\":[68],\"dtype\":\"float64\","
             "\"data\":{\"buffer\":[" PAD "-0, 9007199254740993, true, -0.0e0],\"encoding\":\"json\"}}");
    tsr_array a;
    void *buffer = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_array_from_json(text, strlen(text), TSR_FLOAT64, &a, &buffer, &err), 0, "%s",
                 err.message);
    const double *d = a.data;
    cr_assert(d[64] == 0.0 && !signbit(d[64]), "the integer -0 is +0.0, as (double)0");
    cr_assert_eq(d[65], 9007199254740992.0, "an integer rounds to the nearest double");
    cr_assert_eq(d[66], 1.0);
    cr_assert(d[67] == 0.0 && signbit(d[67]), "the real -0.0e0 keeps its sign");
    tsr_array_buffer_free(buffer);
}

Test(json_numbers, a_comma_decimal_locale_changes_nothing) {
    if (setlocale(LC_NUMERIC, "de_DE.UTF-8") == NULL && setlocale(LC_NUMERIC, "fr_FR.UTF-8") == NULL)
        cr_skip_test("no locale with a decimal comma installed");
    double v[40];
    for (int k = 0; k < 40; k++) v[k] = k / 7.0 - 2.5;
    char *text = json_of(v, TSR_FLOAT64, 40);
    cr_assert_null(strstr(text, "0,14"), "%s", text);
    cr_assert_not_null(strstr(text, "-2.5,-2.357142857142857,"), "%s", text);
    tsr_array a;
    void *buffer = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_array_from_json(text, strlen(text), TSR_FLOAT64, &a, &buffer, &err), 0);
    cr_assert_eq(memcmp(a.data, v, sizeof v), 0);
    tsr_array_buffer_free(buffer);
    tsr_json_free(text);
    setlocale(LC_NUMERIC, "C");
}
