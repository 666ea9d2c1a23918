/* SPDX-License-Identifier: MIT */
/*
 * What a JSON request may make the library hold: numeric lists are read
 * from the text straight into their arrays (never a jansson tree of one
 * node per number), the values left to jansson are counted and refused
 * past max_payload_values, and decoded arrays are held to max_array_bytes
 * and max_call_bytes before they are allocated. Peak memory is measured
 * in a forked child (VmHWM); values are compared bit for bit with the same
 * data sent as base64; malformed lists are refused with jansson's own
 * message at jansson's own line and column.
 */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "child_verdict.h"
#include "cli_run.h"
#include "test_util.h"

#define NOOP BUNDLED_PLUGIN("noop")       /* x: float64 [n] */
#define ECHO TEST_PLUGIN("echo_dtypes")   /* float64_1, int64_1, bool_1, float64_2, ... */

/* ---- helpers ------------------------------------------------------------- */

/* Open path with an option (key NULL: none), without Criterion's asserts
 * (usable in a forked child). NULL on failure. */
static tsr_component *open_opt(const char *path, const char *key, const char *value) {
    tsr_options *o = tsr_options_new();
    if (o == NULL) return NULL;
    tsr_error err = {0};
    if (key != NULL && tsr_options_set(o, key, value, &err) != 0) {
        tsr_options_free(o);
        return NULL;
    }
    tsr_component *c = NULL;
    if (tsr_open(path, o, &c, &err) != 0) c = NULL;
    tsr_options_free(o);
    return c;
}

static tsr_component *open_ok_opt(const char *path, const char *key, const char *value) {
    tsr_component *c = open_opt(path, key, value);
    cr_assert_not_null(c, "opening %s failed", path);
    return c;
}

/* A line of /proc/self/status in KiB ("VmHWM", "VmRSS"); -1 if unread. */
static long status_kib(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, key, n) == 0 && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
    fclose(f);
    return v;
}

/* Restart the peak (VmHWM) at the present RSS where the kernel allows it. */
static void reset_peak(void) {
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd < 0) return;
    if (write(fd, "5", 1) != 1) { /* left as it is: the peak so far then counts too */
    }
    close(fd);
}

static const char encoded_head[] =
    "{\"inputs\": {\"x\": {\"object_type\": \"array\", \"shape\": [%zu], \"dtype\": \"float64\", "
    "\"data\": {\"encoding\": \"json\", \"buffer\": [";
static const char encoded_tail[] = "]}}}}";

/* A request for noop whose x holds n one-digit numbers (i % 10): the
 * densest numeric text, two characters a value. Written at its exact size
 * so that building it leaves no peak of its own. NULL when out of memory. */
static char *digits_request(size_t n, size_t *len) {
    char head[sizeof encoded_head + 32];
    int h = snprintf(head, sizeof head, encoded_head, n);
    size_t total = (size_t)h + 2 * n - (n > 0) + sizeof encoded_tail - 1;
    char *s = malloc(total + 1);
    if (s == NULL) return NULL;
    memcpy(s, head, (size_t)h);
    char *p = s + h;
    for (size_t i = 0; i < n; i++) {
        if (i > 0) *p++ = ',';
        *p++ = (char)('0' + i % 10);
    }
    memcpy(p, encoded_tail, sizeof encoded_tail);
    *len = total;
    return s;
}

/* {"inputs": {name: <value>}} */
static char *request_of(const char *name, const char *value) {
    char *s = NULL;
    cr_assert_gt(asprintf(&s, "{\"inputs\": {\"%s\": %s}}", name, value), 0);
    return s;
}

/* A request for echo_dtypes: members ("\"name\": value, ...") and every
 * other input 0 (false for bool), all of them being required. */
static char *echo_request(const char *members) {
    static const char *const dtypes[] = {"float64", "float32", "int32", "int64", "bool", "uint8"};
    char *s = NULL;
    cr_assert_gt(asprintf(&s, "{\"inputs\": {%s", members), 0);
    for (size_t d = 0; d < 6; d++)
        for (int r = 0; r < 4; r++) {
            char name[32];
            snprintf(name, sizeof name, "\"%s_%d\"", dtypes[d], r);
            if (strstr(members, name) != NULL) continue;
            char *t = NULL;
            cr_assert_gt(asprintf(&t, "%s, %s: %s", s, name, d == 4 ? "false" : "0"), 0);
            free(s);
            s = t;
        }
    char *t = NULL;
    cr_assert_gt(asprintf(&t, "%s}}", s), 0);
    free(s);
    return t;
}

static char *echo_one(const char *name, const char *value) {
    char *m = NULL;
    cr_assert_gt(asprintf(&m, "\"%s\": %s", name, value), 0);
    char *s = echo_request(m);
    free(m);
    return s;
}

/* "[v0, v1, ...]" of n values made by fmt(i). */
static char *list_of(size_t n, void (*fmt)(char *, size_t, size_t)) {
    size_t cap = 64 + n * 32, used = 1;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    s[0] = '[';
    for (size_t i = 0; i < n; i++) {
        if (i > 0) s[used++] = ',';
        fmt(s + used, cap - used, i);
        used += strlen(s + used);
        cr_assert_lt(used + 4, cap);
    }
    s[used++] = ']';
    s[used] = '\0';
    return s;
}

static void fmt_int(char *b, size_t n, size_t i) {
    snprintf(b, n, "%zu", i);
}

static void fmt_bool(char *b, size_t n, size_t i) {
    snprintf(b, n, "%s", i % 3 ? "true" : "false");
}

/* Parse for c's apply; the payload or NULL with *err filled. */
static tsr_payload *parse(const tsr_component *c, const char *text, size_t len, tsr_error *err) {
    tsr_payload *p = NULL;
    memset(err, 0, sizeof *err);
    if (tsr_payload_parse(c, TSR_EP_APPLY, text, len, &p, err) != 0) return NULL;
    return p;
}

static tsr_payload *parse_ok(const tsr_component *c, const char *text) {
    tsr_error err = TSR_ERROR_INIT;
    tsr_payload *p = parse(c, text, strlen(text), &err);
    cr_assert_not_null(p, "parsing failed: %d %s", err.code, err.message);
    return p;
}

static void parse_fails(const tsr_component *c, const char *text, int code, const char *needle) {
    tsr_error err = TSR_ERROR_INIT;
    tsr_payload *p = parse(c, text, strlen(text), &err);
    cr_assert_null(p, "parsing succeeded; expected %s", needle);
    assert_code(err.code, code, err.message);
    assert_contains(err.message, needle);
}

/* echo_fails: *members as an echo_dtypes request must fail so. */
static void echo_fails(const tsr_component *c, char **members, int code, const char *needle) {
    char *text = echo_request(*members);
    parse_fails(c, text, code, needle);
    free(text);
}

/* ---- peak memory ---------------------------------------------------------- */

/* Parse a json-encoded array of n one-digit values in this (forked)
 * process; its peak must stay within the text, the decoded array and
 * 16 MiB (the tree jansson used to build cost ~25 bytes a text byte). */
static const char *parse_digits_within_bounds(size_t n) {
    tsr_component *c = open_opt(NOOP, NULL, NULL);
    CHECK(c != NULL, "cannot open noop");
    size_t len;
    char *text = digits_request(n, &len);
    CHECK(text != NULL, "out of memory");
    reset_peak();
    long before = status_kib("VmHWM");
    tsr_error err = TSR_ERROR_INIT;
    tsr_payload *p = parse(c, text, len, &err);
    long after = status_kib("VmHWM");
    CHECK(p != NULL, "parsing failed: %s", err.message);
    const tsr_array *x = tsr_payload_input(p, "x");
    CHECK(x != NULL && x->dtype == TSR_FLOAT64 && x->rank == 1 && x->shape[0] == (int64_t)n,
          "x is not float64 [%zu]", n);
    const double *v = x->data;
    for (size_t i = 0; i < n; i++)
        CHECK(v[i] == (double)(i % 10), "x[%zu] is %g, not %zu", i, v[i], i % 10);
    long bound = (long)((len + n * sizeof(double)) / 1024) + 16 * 1024;
    CHECK(before > 0 && after > 0, "no VmHWM in /proc/self/status");
    CHECK(after - before <= bound,
          "parsing %zu bytes peaked %ld KiB above the start, more than %ld KiB", len,
          after - before, bound);
    tsr_payload_free(p);
    free(text);
    tsr_close(c);
    return "ok";
}

static const char *parse_2mb(void) {
    return parse_digits_within_bounds(1000 * 1000); /* 2 MB of text */
}

static const char *parse_20mb(void) {
    return parse_digits_within_bounds(10 * 1000 * 1000); /* 20 MB */
}

Test(payload_memory, a_2mb_json_array_peaks_within_its_text_and_its_array) {
    run_in_child(parse_2mb, NULL);
}

Test(payload_memory, a_20mb_json_array_peaks_within_its_text_and_its_array, .timeout = 120) {
    run_in_child(parse_20mb, NULL);
}

/* {"inputs": {"k0": 1, ..., "k<n-1>": 1}}: n keys, 2n values. */
static char *many_keys(size_t n, size_t *len) {
    char *s = malloc(32 + n * 16);
    if (s == NULL) return NULL;
    size_t o = (size_t)sprintf(s, "{\"inputs\": {");
    for (size_t i = 0; i < n; i++) o += (size_t)sprintf(s + o, "%s\"k%zu\": 1", i ? ", " : "", i);
    o += (size_t)sprintf(s + o, "}}");
    *len = o;
    return s;
}

static char *many_keys_text(size_t n) {
    size_t len = 0;
    char *s = many_keys(n, &len);
    cr_assert_not_null(s);
    return s;
}

static const char *million_keys_refused(void) {
    tsr_component *c = open_opt(NOOP, NULL, NULL); /* the default max_payload_values */
    CHECK(c != NULL, "cannot open noop");
    size_t len = 0;
    char *text = many_keys(1000 * 1000, &len);
    CHECK(text != NULL, "out of memory");
    reset_peak();
    long before = status_kib("VmHWM");
    tsr_error err = TSR_ERROR_INIT;
    tsr_payload *p = parse(c, text, len, &err);
    long after = status_kib("VmHWM");
    CHECK(p == NULL && err.code == TSR_E_LIMIT, "expected TSR_E_LIMIT, got %d: %s", err.code,
          err.message);
    CHECK(strstr(err.message, "more than max_payload_values (1048576)") != NULL &&
              strstr(err.message, "raise the option max_payload_values") != NULL,
          "the message does not name the option: %s", err.message);
    long bound = 4 * 1024; /* refused before jansson built anything */
    CHECK(after - before <= bound, "refusing %zu bytes peaked %ld KiB above the start", len,
          after - before);
    free(text);
    tsr_close(c);
    return "ok";
}

Test(payload_memory, a_million_key_object_is_refused_by_max_payload_values_before_parsing) {
    run_in_child(million_keys_refused, NULL);
}

static const char *over_max_array_bytes_refused(void) {
    tsr_component *c = open_opt(NOOP, "max_array_bytes", "1M");
    CHECK(c != NULL, "cannot open noop");
    size_t n = 1000 * 1000, len;
    char *text = digits_request(n, &len);
    CHECK(text != NULL, "out of memory");
    reset_peak();
    long before = status_kib("VmHWM");
    tsr_error err = TSR_ERROR_INIT;
    tsr_payload *p = parse(c, text, len, &err);
    long after = status_kib("VmHWM");
    CHECK(p == NULL && err.code == TSR_E_LIMIT, "expected TSR_E_LIMIT, got %d: %s", err.code,
          err.message);
    CHECK(strstr(err.message, "field 'inputs.x': 8000000 bytes exceed max_array_bytes (1048576)") != NULL,
          "unexpected message: %s", err.message);
    CHECK(strcmp(err.loc, "inputs.x") == 0, "loc is %s", err.loc);
    CHECK(after - before <= 4 * 1024, "the refused array was allocated: %ld KiB", after - before);
    free(text);
    tsr_close(c);
    return "ok";
}

Test(payload_memory, a_json_array_over_max_array_bytes_is_refused_before_it_is_allocated) {
    run_in_child(over_max_array_bytes_refused, NULL);
}

/* ---- limits ---------------------------------------------------------------- */

Test(payload_memory, the_arrays_of_a_payload_together_are_held_to_max_call_bytes) {
    tsr_component *c = open_ok_opt(ECHO, "max_call_bytes", "1000");
    char *list = list_of(100, fmt_int); /* 800 bytes as int64 */
    char *text = NULL;
    char *members = NULL;
    cr_assert_gt(asprintf(&members, "\"int64_1\": %s, \"float64_1\": %s", list, list), 0);
    text = echo_request(members);
    free(members);
    parse_fails(c, text, TSR_E_LIMIT,
                "field 'inputs.float64_1': 800 bytes bring the payload's arrays to 1600 bytes, past "
                "max_call_bytes (1000); raise the option max_call_bytes");
    free(text);
    text = echo_one("int64_1", list);
    tsr_payload_free(parse_ok(c, text)); /* one alone fits */
    free(text);
    free(list);
    tsr_close(c);
}

Test(payload_memory, a_skeleton_over_max_payload_values_is_refused_naming_the_option) {
    tsr_component *c = open_ok_opt(NOOP, "max_payload_values", "10");
    /* {"inputs": {"x": [1, 2, 3]}}: two objects, two keys, the list and
     * its 3 numbers: 8 values; a list of 64 numbers or more counts as one. */
    tsr_payload_free(parse_ok(c, "{\"inputs\": {\"x\": [1, 2, 3]}}"));
    parse_fails(c, "{\"inputs\": {\"x\": [1, 2, 3, 4, 5, 6, 7, 8]}}", TSR_E_LIMIT,
                "the payload holds more than max_payload_values (10) JSON values");
    char *list = list_of(5000, fmt_int);
    char *text = request_of("x", list);
    tsr_payload *p = parse_ok(c, text);
    cr_assert_eq(tsr_payload_input(p, "x")->shape[0], 5000);
    tsr_payload_free(p);
    free(text);
    /* A list that holds a string is no numeric list: all its values count. */
    strcpy(list + strlen(list) - 1, ", \"a\"]");
    text = request_of("x", list);
    parse_fails(c, text, TSR_E_LIMIT, "raise the option max_payload_values to allow it");
    free(text);
    free(list);
    tsr_close(c);
}

Test(payload_memory, max_payload_values_takes_sizes_and_zero_for_none) {
    tsr_options *o = tsr_options_new();
    tsr_error err = {0};
    cr_assert_eq(tsr_options_set(o, "max_payload_values", "2M", &err), 0, "%s", err.message);
    cr_assert_eq(tsr_options_set(o, "max_payload_values", "0", &err), 0, "%s", err.message);
    cr_assert_eq(tsr_options_set(o, "max_payload_values", "-1", &err), TSR_E_ARGUMENT);
    assert_contains(err.message, "max_payload_values");
    tsr_component *c = open_ok(NOOP, o);
    tsr_options_free(o);
    size_t len = 0;
    char *text = many_keys(2000, &len);
    tsr_error perr = TSR_ERROR_INIT;
    tsr_payload *p = parse(c, text, len, &perr);
    cr_assert_null(p);
    assert_code(perr.code, TSR_E_UNKNOWN_FIELD, perr.message); /* no limit: the schema refuses */
    free(text);
    tsr_close(c);
}

/* ---- values ------------------------------------------------------------------ */

/* A double from random bits, neither NaN nor infinite. */
static double random_double(uint64_t *state) {
    for (;;) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        double d;
        memcpy(&d, state, sizeof d);
        if (isfinite(d)) return d;
    }
}

Test(payload_memory, json_values_are_bit_exact_against_the_same_array_in_base64) {
    tsr_component *c = open_ok_opt(NOOP, NULL, NULL);
    size_t n = 200000;
    double *v = malloc(n * sizeof *v);
    cr_assert_not_null(v);
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) v[i] = random_double(&state);
    const double edge[] = {0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                           -1.7976931348623157e308, 0.1, 0.0 /* written 1e-400 */, 123456789.0};
    memcpy(v, edge, sizeof edge);
    /* "%.17g" reads back exactly; "e" and "E", with and without signs. */
    size_t cap = n * 32 + 256, used = 0;
    char *list = malloc(cap);
    cr_assert_not_null(list);
    list[used++] = '[';
    for (size_t i = 0; i < n; i++) {
        used += (size_t)snprintf(list + used, cap - used, "%s", i ? (i % 7 ? "," : " ,\n ") : "");
        if (i == 8) used += (size_t)snprintf(list + used, cap - used, "1e-400"); /* underflows */
        else if (i % 3 == 0) used += (size_t)snprintf(list + used, cap - used, "%.17g", v[i]);
        else if (i % 3 == 1) used += (size_t)snprintf(list + used, cap - used, "%.17E", v[i]);
        else used += (size_t)snprintf(list + used, cap - used, "%.17e", v[i]);
    }
    list[used++] = ']';
    list[used] = '\0';
    char *json = NULL;
    cr_assert_gt(asprintf(&json,
                          "{\"inputs\": {\"x\": {\"object_type\": \"array\", \"shape\": [%zu], "
                          "\"dtype\": \"float64\", \"data\": {\"buffer\": %s, \"encoding\": "
                          "\"json\"}}}}",
                          n, list),
                 0);
    tsr_array a = f64_vec(v, (int64_t)n);
    char *b64 = NULL;
    tsr_error err = {0};
    cr_assert_eq(tsr_array_to_json(&a, TSR_ENCODING_BASE64, &b64, &err), 0, "%s", err.message);
    char *b64_request = request_of("x", b64);
    char *plain_request = request_of("x", list);
    tsr_payload *pj = parse_ok(c, json), *pb = parse_ok(c, b64_request),
                *pp = parse_ok(c, plain_request);
    const tsr_array *xj = tsr_payload_input(pj, "x"), *xb = tsr_payload_input(pb, "x"),
                    *xp = tsr_payload_input(pp, "x");
    cr_assert_eq(xj->shape[0], (int64_t)n);
    cr_assert_eq(xp->shape[0], (int64_t)n);
    cr_assert_eq(memcmp(xj->data, xb->data, n * sizeof(double)), 0, "json differs from base64");
    cr_assert_eq(memcmp(xp->data, xb->data, n * sizeof(double)), 0, "a plain list differs");
    cr_assert_eq(((const double *)xj->data)[8], 0.0);
    cr_assert(signbit(((const double *)xj->data)[1]), "-0 keeps its sign");
    tsr_payload_free(pj);
    tsr_payload_free(pb);
    tsr_payload_free(pp);
    tsr_json_free(b64);
    free(b64_request);
    free(plain_request);
    free(json);
    free(list);
    free(v);
    tsr_close(c);
}

Test(payload_memory, json_int64_bool_and_float32_arrays_keep_their_values) {
    /* Encoded arrays of their own dtype, decoded alone. */
    char *ints = list_of(100, fmt_int);
    char *text = NULL;
    /* int64's extremes first, through the whole list. */
    cr_assert_gt(asprintf(&text,
                          "{\"object_type\": \"array\", \"shape\": [102], \"dtype\": \"int64\", "
                          "\"data\": {\"encoding\": \"json\", \"buffer\": [-9223372036854775808, "
                          "9223372036854775807, %s}}",
                          ints + 1),
                 0);
    tsr_array a;
    void *buf = NULL;
    tsr_error err = {0};
    cr_assert_eq(tsr_array_from_json(text, strlen(text), TSR_DTYPE_INVALID, &a, &buf, &err), 0,
                 "%s", err.message);
    const int64_t *iv = a.data;
    cr_assert_eq(a.dtype, TSR_INT64);
    cr_assert_eq(iv[0], INT64_MIN);
    cr_assert_eq(iv[1], INT64_MAX);
    cr_assert_eq(iv[2], 0);
    cr_assert_eq(iv[101], 99);
    tsr_array_buffer_free(buf);
    free(text);
    char *bools = list_of(90, fmt_bool);
    cr_assert_gt(asprintf(&text,
                          "{\"object_type\": \"array\", \"shape\": [90], \"dtype\": \"bool\", "
                          "\"data\": {\"encoding\": \"json\", \"buffer\": %s}}",
                          bools),
                 0);
    cr_assert_eq(tsr_array_from_json(text, strlen(text), TSR_DTYPE_INVALID, &a, &buf, &err), 0,
                 "%s", err.message);
    const bool *bv = a.data;
    for (size_t i = 0; i < 90; i++) cr_assert_eq(bv[i], i % 3 != 0, "bool %zu", i);
    tsr_array_buffer_free(buf);
    free(text);
    /* A float32 array of 1.5: exact; 1e39 does not fit a float32. */
    cr_assert_gt(asprintf(&text,
                          "{\"object_type\": \"array\", \"shape\": [100], \"dtype\": \"float32\", "
                          "\"data\": {\"encoding\": \"json\", \"buffer\": %s}}",
                          ints),
                 0);
    cr_assert_eq(tsr_array_from_json(text, strlen(text), TSR_DTYPE_INVALID, &a, &buf, &err), 0,
                 "%s", err.message);
    cr_assert_eq(((const float *)a.data)[99], 99.0f);
    tsr_array_buffer_free(buf);
    free(text);
    free(bools);
    free(ints);
}

Test(payload_memory, plain_lists_are_typed_as_numpy_types_them) {
    tsr_component *c = open_ok_opt(ECHO, NULL, NULL);
    char *ints = list_of(100, fmt_int), *bools = list_of(100, fmt_bool);
    /* ints into int64 and float64; booleans into all three. */
    char *text = NULL;
    char *members = NULL;
    cr_assert_gt(asprintf(&members, "\"int64_1\": %s, \"float64_1\": %s, \"bool_1\": %s", ints,
                          ints, bools),
                 0);
    text = echo_request(members);
    free(members);
    tsr_payload *p = parse_ok(c, text);
    cr_assert_eq(((const int64_t *)tsr_payload_input(p, "int64_1")->data)[42], 42);
    cr_assert_eq(((const double *)tsr_payload_input(p, "float64_1")->data)[99], 99.0);
    cr_assert_eq(((const bool *)tsr_payload_input(p, "bool_1")->data)[1], true);
    tsr_payload_free(p);
    free(text);
    /* One real (the last, 9.5 for 99) makes the list float64: no int64
     * field takes it. */
    char *at = strstr(ints, ",99]");
    cr_assert_not_null(at);
    char *m2 = NULL;
    cr_assert_gt(asprintf(&m2, "%.*s,9.5]", (int)(at - ints), ints), 0);
    text = echo_one("int64_1", m2);
    parse_fails(c, text, TSR_E_DTYPE,
                "values read as float64 cannot be converted to the field's int64");
    free(text);
    text = echo_one("float64_1", m2);
    p = parse_ok(c, text);
    cr_assert_eq(((const double *)tsr_payload_input(p, "float64_1")->data)[99], 9.5);
    tsr_payload_free(p);
    free(text);
    /* An integer among booleans makes them int64: no bool field takes it. */
    char *b2 = NULL;
    cr_assert_gt(asprintf(&b2, "[1, %s", bools + 1), 0);
    text = echo_one("bool_1", b2);
    parse_fails(c, text, TSR_E_DTYPE,
                "values read as int64 cannot be converted to the field's bool");
    free(text);
    /* Within a field's dtype, each value is checked. */
    char *big = NULL;
    cr_assert_gt(asprintf(&big, "[3000000000, %s", ints + 1), 0);
    text = echo_one("int32_1", big);
    parse_fails(c, text, TSR_E_DTYPE, "inputs.int32_1");
    free(text);
    free(big);
    free(b2);
    free(m2);
    free(bools);
    free(ints);
    tsr_close(c);
}

/* ---- malformed lists --------------------------------------------------------------- */

/* text must be refused with jansson's own message, line and column. */
static void refused_as_jansson_refuses(const tsr_component *c, const char *text) {
    json_error_t jerr;
    json_t *root = json_loadb(text, strlen(text), JSON_REJECT_DUPLICATES, &jerr);
    cr_assert_null(root, "jansson accepts %.80s...", text);
    char want[400];
    snprintf(want, sizeof want, "malformed JSON at line %d, column %d: %s", jerr.line, jerr.column,
             jerr.text);
    parse_fails(c, text, TSR_E_PAYLOAD, want);
}

/* A request whose x is a long list (numbers 0..n-1) with bad in place of
 * element k; tail follows the list. */
static char *with_bad_element(size_t n, size_t k, const char *bad, const char *tail) {
    size_t cap = n * 12 + strlen(bad) + strlen(tail) + 128, o = 0;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    o += (size_t)snprintf(s, cap, "{\"inputs\": {\"x\": [");
    for (size_t i = 0; i < n; i++) {
        if (i > 0) s[o++] = ',';
        if (i % 16 == 15) s[o++] = '\n';
        if (i == k) o += (size_t)snprintf(s + o, cap - o, "%s", bad);
        else o += (size_t)snprintf(s + o, cap - o, "%zu", i);
    }
    snprintf(s + o, cap - o, "]%s", tail);
    return s;
}

Test(payload_memory, bad_numbers_in_a_long_list_are_refused_where_jansson_refuses_them) {
    tsr_component *c = open_ok_opt(NOOP, NULL, NULL);
    const char *bad[] = {"01",  "1.",  ".5",   "+1",    "NaN",   "nan",  "-",      "1e",
                         "1e+", "-01", "0x1",  "1.5.3", "tru",   "truex", "Infinity", "1ee",
                         "99999999999999999999", "-9223372036854775809",
                         "1e400", "-1e400", "1,", "1,,", "[2]]", "1 2", "1]", "\x01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (size_t k = 0; k < 2; k++) {
            char *text = with_bad_element(5000, k ? 4000 : 0, bad[i], "}}");
            refused_as_jansson_refuses(c, text);
            free(text);
        }
    }
    tsr_close(c);
}

Test(payload_memory, broken_list_structure_is_refused_where_jansson_refuses_it) {
    tsr_component *c = open_ok_opt(NOOP, NULL, NULL);
    char *list = list_of(3000, fmt_int);
    size_t n = strlen(list);
    char *text = NULL;
    /* trailing comma; truncated text at several places; a brace closing
     * a list; an error after the list; an error before it. */
    char *trailing = malloc(n + 2);   /* the list, its last ']' as ",]" */
    cr_assert_not_null(trailing);
    memcpy(trailing, list, n - 1);
    memcpy(trailing + n - 1, ",]", 3);
    const char *tails[] = {"}}", "", "}", ",}}", "} x}"};
    for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
        cr_assert_gt(asprintf(&text, "{\"inputs\": {\"x\": %s%s", t == 3 ? list : trailing,
                              tails[t]),
                     0);
        refused_as_jansson_refuses(c, text);
        free(text);
    }
    for (size_t cut = n - 1; cut > n - 40; cut -= 7) {
        cr_assert_gt(asprintf(&text, "{\"inputs\": {\"x\": %.*s", (int)cut, list), 0);
        refused_as_jansson_refuses(c, text);
        free(text);
    }
    cr_assert_gt(asprintf(&text, "{\"inputs\": {\"x\": [[%s}]}}", list + 1), 0);
    refused_as_jansson_refuses(c, text);
    free(text);
    cr_assert_gt(asprintf(&text, "{\"inputs\": {\"y\" 1, \"x\": %s}}", list), 0);
    refused_as_jansson_refuses(c, text);
    free(text);
    cr_assert_gt(asprintf(&text, "{\"inputs\": {\"x\": %s, \"x\": %s}}", list, list), 0);
    refused_as_jansson_refuses(c, text); /* a duplicate key after a cut list */
    free(text);
    cr_assert_gt(asprintf(&text, "{\"inputs\": {\"x\": %s\n,\n \"y\": %.*s", list, (int)(n / 2),
                          list),
                 0);
    refused_as_jansson_refuses(c, text); /* a bad list after a good one */
    free(text);
    free(trailing);
    free(list);
    tsr_close(c);
}

Test(payload_memory, ragged_and_mixed_long_lists_are_refused_naming_the_element) {
    tsr_component *c = open_ok_opt(ECHO, NULL, NULL);
    char *row = list_of(70, fmt_int), *shorter = list_of(69, fmt_int);
    char *text = NULL;
    cr_assert_gt(asprintf(&text, "\"float64_2\": [%s, %s, %s]", row, row, shorter),
                 0);
    echo_fails(c, &text, TSR_E_PAYLOAD,
                "field 'inputs.float64_2[2]': ragged nested list: 69 entries where 70 belong");
    free(text);
    cr_assert_gt(asprintf(&text, "\"float64_2\": [%s, 7]", row), 0);
    echo_fails(c, &text, TSR_E_PAYLOAD,
                "field 'inputs.float64_2[1]': ragged nested list: an integer where a list of 70 belongs");
    free(text);
    cr_assert_gt(asprintf(&text, "\"float64_1\": [%.*s, [1]]", (int)strlen(row) - 2,
                          row + 1),
                 0);
    echo_fails(c, &text, TSR_E_PAYLOAD,
                "field 'inputs.float64_1[70]': ragged nested list: a list where a number belongs");
    free(text);
    /* Values are checked in order along the way, as a parsed list's are:
     * -1 in the first row is no uint8, before the short row is reached. */
    char *negative = NULL;
    cr_assert_gt(asprintf(&negative, "[-1, %s", row + 3), 0); /* "[-1, 1,2,...]" */
    cr_assert_gt(asprintf(&text, "\"uint8_2\": [%s, %s]", negative, shorter), 0);
    echo_fails(c, &text, TSR_E_DTYPE, "field 'inputs.uint8_2[0][0]': -1 is out of range for uint8");
    free(text);
    free(negative);
    /* The shape read along the first elements must hold what the encoded
     * array's shape says. */
    cr_assert_gt(asprintf(&text,
                          "\"float64_1\": {\"object_type\": \"array\", \"shape\": "
                          "[71], \"dtype\": \"float64\", \"data\": {\"encoding\": \"json\", "
                          "\"buffer\": %s}}",
                          row),
                 0);
    echo_fails(c, &text, TSR_E_PAYLOAD,
                "shape [71] holds 71 elements but the json buffer, shaped [70], holds 70");
    free(text);
    free(row);
    free(shorter);
    tsr_close(c);
}

/* ---- the 422 body ---------------------------------------------------------------- */

static void fmt_zero(char *b, size_t n, size_t i) {
    (void)i;
    snprintf(b, n, "0");
}

Test(payload_memory, the_422_input_of_a_long_numeric_list_is_the_list_itself_when_short) {
    char *zeros = list_of(64, fmt_zero); /* cut out of the text, 129 characters */
    char *text = request_of("x", zeros);
    char *out = NULL;
    cr_assert_eq(tsr_error_detail_json(TSR_E_SHAPE, "inputs.x", "bad", text, strlen(text), &out), 0);
    char *want = NULL;
    cr_assert_gt(asprintf(&want, "\"input\":%s}", zeros), 0);
    assert_contains(out, want);
    tsr_json_free(out);
    free(want);
    free(text);
    char *long_list = list_of(5000, fmt_int);
    text = request_of("x", long_list);
    cr_assert_eq(tsr_error_detail_json(TSR_E_SHAPE, "inputs.x", "bad", text, strlen(text), &out), 0);
    assert_contains(out, "\"input\":null}");
    tsr_json_free(out);
    free(text);
    free(long_list);
    free(zeros);
}

static const char *detail_of_million_keys_is_small(void) {
    size_t len = 0;
    char *text = many_keys(1000 * 1000, &len);
    CHECK(text != NULL, "out of memory");
    reset_peak();
    long before = status_kib("VmHWM");
    char *out = NULL;
    int rc = tsr_error_detail_json(TSR_E_LIMIT, "inputs.k5", "too many", text, len, &out);
    long after = status_kib("VmHWM");
    CHECK(rc == 0 && out != NULL, "no 422 body: %d", rc);
    CHECK(strstr(out, "\"input\":null") != NULL, "unexpected body %s", out);
    CHECK(after - before <= 4 * 1024, "the 422 body of %zu bytes peaked %ld KiB above the start",
          len, after - before);
    tsr_json_free(out);
    free(text);
    return "ok";
}

Test(payload_memory, the_422_body_of_a_million_key_object_builds_no_tree_of_it) {
    run_in_child(detail_of_million_keys_is_small, NULL);
}

/* ---- the CLI ---------------------------------------------------------------------- */

Test(payload_memory, tessera_apply_reads_a_long_json_list_and_refuses_too_many_values) {
    char *list = list_of(5000, fmt_int);
    char *text = request_of("x", list);
    cli_run r = run_cli(text, "apply", "--option", "max_payload_values=20", NOOP, "-");
    assert_ok(&r);
    assert_contains(r.out, "\"shape\":[5000]");
    assert_contains(r.out, ",4998.0,4999.0]"); /* noop's y = x, written as json */
    run_free(&r);
    free(text);
    text = many_keys_text(30);
    r = run_cli(text, "apply", "--option", "max_payload_values=20", NOOP, "-");
    assert_fails(&r, EXIT_PAYLOAD, "more than max_payload_values (20) JSON values");
    run_free(&r);
    free(text);
    free(list);
}
