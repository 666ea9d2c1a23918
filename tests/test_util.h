/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the Criterion tests of the core: where plugins live,
 * opening them, building arrays, checking error messages, temporary files.
 * Header-only because every tests/test_*.c is its own program.
 */
#ifndef TESSERA_TEST_UTIL_H
#define TESSERA_TEST_UTIL_H

#include <criterion/criterion.h>

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tessera/tessera.h>

/* A plugin built from tests/plugins/NAME.c, and a bundled one. */
#define TEST_PLUGIN(name) TSR_TEST_PLUGIN_DIR "/" name ".so"
#define BUNDLED_PLUGIN(name) TSR_PLUGIN_DIR "/" name ".so"
#define LINEAR_MATRIX_FILE TSR_SOURCE_DIR "/plugins/linear/example_matrix.txt"

/* Fail unless `haystack` contains `needle`; show both otherwise. */
#define assert_contains(haystack, needle)                                       \
    do {                                                                        \
        const char *h_ = (haystack);                                            \
        const char *n_ = (needle);                                              \
        cr_assert(h_ != NULL && strstr(h_, n_) != NULL,                         \
                  "expected the message to contain \"%s\", got \"%s\"", n_,     \
                  h_ ? h_ : "(null)");                                          \
    } while (0)

/* Fail unless the status equals the expected TSR_E_* code. */
#define assert_code(got, want, msg)                                             \
    do {                                                                        \
        int g_ = (got), w_ = (want);                                            \
        cr_assert_eq(g_, w_, "expected code %d (%s), got %d (%s); message: %s", \
                     w_, tsr_strerror(w_), g_, tsr_strerror(g_),                \
                     (msg) ? (msg) : "(null)");                                 \
    } while (0)

/* Open a plugin that must load; options may be NULL. */
static inline tsr_component *open_ok(const char *path, const tsr_options *opts) {
    tsr_component *c = NULL;
    tsr_error err = {0};
    int rc = tsr_open(path, opts, &c, &err);
    cr_assert_eq(rc, 0, "tsr_open(%s) failed: %d %s", path, rc, err.message);
    cr_assert_not_null(c, "tsr_open(%s) returned 0 but no component", path);
    return c;
}

/* Open with a single configuration key (NULL key: no configuration). */
static inline tsr_component *open_with_config(const char *path, const char *key,
                                              const char *value) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    if (key) cr_assert_eq(tsr_options_set_config(o, key, value), 0);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* Open a plugin that must fail; returns the error and checks *out is NULL. */
static inline tsr_error open_fails(const char *path, const tsr_options *opts) {
    tsr_component *c = (tsr_component *)(uintptr_t)0x1; /* must be reset */
    tsr_error err = TSR_ERROR_INIT;
    memset(&err, 0, sizeof err);
    int rc = tsr_open(path, opts, &c, &err);
    cr_assert_neq(rc, 0, "tsr_open(%s) succeeded but should have failed", path);
    cr_assert_eq(rc, err.code, "return value %d differs from err.code %d", rc, err.code);
    cr_assert_null(c, "tsr_open(%s) failed but left *out set", path);
    cr_assert(err.message[0] != '\0', "tsr_open(%s) failed with an empty message", path);
    return err;
}

/* Build arrays. The shape is copied; unused dims stay 0. */
static inline tsr_array make_array(void *data, tsr_dtype dtype, int32_t rank,
                                   const int64_t *shape) {
    tsr_array a;
    memset(&a, 0, sizeof a);
    a.data = data;
    a.dtype = dtype;
    a.rank = rank;
    for (int32_t i = 0; i < rank && i < TSR_MAX_RANK; i++) a.shape[i] = shape[i];
    return a;
}

static inline tsr_array f64_scalar(double *v) {
    return make_array(v, TSR_FLOAT64, 0, NULL);
}

static inline tsr_array f64_vec(double *v, int64_t n) {
    return make_array(v, TSR_FLOAT64, 1, &n);
}

static inline tsr_array f64_mat(double *v, int64_t rows, int64_t cols) {
    int64_t s[2] = {rows, cols};
    return make_array(v, TSR_FLOAT64, 2, s);
}

/* Bind an input that must be accepted. */
static inline void bind_ok(tsr_call *call, const char *name, tsr_array a) {
    int rc = tsr_call_set_input(call, name, &a);
    cr_assert_eq(rc, 0, "binding %s failed: %d %s", name, rc, tsr_call_errmsg(call));
}

static inline void seed_ok(tsr_call *call, const char *name, tsr_array a) {
    int rc = tsr_call_set_seed(call, name, &a);
    cr_assert_eq(rc, 0, "seeding %s failed: %d %s", name, rc, tsr_call_errmsg(call));
}

static inline void wrt_ok(tsr_call *call, const char *const *in, int32_t n_in,
                          const char *const *out, int32_t n_out) {
    int rc = tsr_call_set_wrt(call, in, n_in, out, n_out);
    cr_assert_eq(rc, 0, "set_wrt failed: %d %s", rc, tsr_call_errmsg(call));
}

static inline void run_ok(tsr_call *call) {
    int rc = tsr_call_run(call);
    cr_assert_eq(rc, 0, "run failed: %d %s", rc, tsr_call_errmsg(call));
    cr_assert_eq(tsr_call_errcode(call), 0);
    cr_assert_str_eq(tsr_call_errmsg(call), "");
}

static inline tsr_call *new_call(tsr_component *c, tsr_endpoint ep) {
    tsr_call *call = tsr_call_new(c, ep);
    cr_assert_not_null(call, "tsr_call_new(%d) returned NULL", (int)ep);
    return call;
}

/* A call that must have failed with `code` (rc is what the API returned):
 * the call's code must agree and the message must be non-empty. Returns
 * the message. */
static inline const char *expect_failure(tsr_call *call, int rc, int code) {
    const char *msg = tsr_call_errmsg(call);
    assert_code(rc, code, msg);
    cr_assert_eq(tsr_call_errcode(call), rc, "tsr_call_errcode disagrees with the failure");
    cr_assert(msg != NULL && msg[0] != '\0', "failure with an empty message");
    return msg;
}

/* Run a call that must fail with `code`. */
static inline const char *run_fails(tsr_call *call, int code) {
    return expect_failure(call, tsr_call_run(call), code);
}

/* Bind an input that must be refused, either at once or by the next run
 * (the API allows both); returns the message. */
static inline const char *bind_or_run_fails(tsr_call *call, const char *name, tsr_array a,
                                            int code) {
    int rc = tsr_call_set_input(call, name, &a);
    if (rc == 0) rc = tsr_call_run(call);
    return expect_failure(call, rc, code);
}

/* The same for a seed. */
static inline const char *seed_or_run_fails(tsr_call *call, const char *name, tsr_array a,
                                            int code) {
    int rc = tsr_call_set_seed(call, name, &a);
    if (rc == 0) rc = tsr_call_run(call);
    return expect_failure(call, rc, code);
}

/* Copy of `msg` with every occurrence of `cut` removed, so that digits
 * in a path cannot be mistaken for a version number in the message. */
static inline void strip_substring(char *out, size_t cap, const char *msg, const char *cut) {
    size_t len = strlen(cut), o = 0;
    for (const char *p = msg; *p && o + 1 < cap;) {
        if (len && strncmp(p, cut, len) == 0) {
            p += len;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
}

/* Deterministic pseudo-random numbers in [-1, 1) (no global state). */
static inline double rand_unit(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / (double)(1ull << 52) - 1.0;
}

static inline void fill_random(double *v, int64_t n, uint64_t seed) {
    uint64_t s = seed * 2654435761ull + 1;
    for (int64_t i = 0; i < n; i++) v[i] = rand_unit(&s);
}

/* A fresh, empty temporary file; the caller unlinks it. */
static inline void temp_path(char *buf, size_t cap) {
    const char *dir = getenv("TMPDIR");
    snprintf(buf, cap, "%s/tessera-test-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(buf);
    cr_assert(fd >= 0, "mkstemp failed");
    close(fd);
}

static inline void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Whole file as a string (static buffer; tests read small files). */
static inline const char *read_file_text(const char *path) {
    static char buf[4096];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

#endif /* TESSERA_TEST_UTIL_H */
