/* SPDX-License-Identifier: MIT */
/*
 * `tessera test`: the obtained outputs against a case's expected_outputs,
 * as tesseract-runtime compares them: first the structure (the same dict
 * keys, list lengths, array shapes and dtypes, the same kind of value at
 * each place), then the values (floats within atol + rtol * |expected|,
 * NaN equal to NaN, everything else exactly). An array expected as a
 * plain list or number takes the obtained array's dtype, as pydantic
 * reads expected_outputs against the schema.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/payload.h>

#include "test_case.h"

typedef struct comparer {
    double atol, rtol;
    /* jacobian, jvp, vjp: tesseract-core's schema keeps the endpoint's own
     * float width there (Array[..., None]) while Tessera's host gives the
     * schema's, so float widths are not compared. */
    bool any_float_width;
    char *why;
    size_t n;
} comparer;

__attribute__((format(printf, 2, 3))) static bool differ(comparer *cmp, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmp->why, cmp->n, fmt, ap);
    va_end(ap);
    return false;
}

static bool is_array_object(json_t *v) {
    json_t *type = json_object_get(v, "object_type");
    return json_is_object(v) && json_is_string(type) && strcmp(json_string_value(type), "array") == 0;
}

static float half_to_float(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY)
                                                       : ldexpf((float)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Element k as a number (real and imaginary parts); integers are exact
 * in a long double. */
static void element(const tsr_array *a, size_t k, long double *re, long double *im) {
    const unsigned char *d = a->data;
    *im = 0;
    switch (a->dtype) {
    case TSR_BOOL: *re = d[k] != 0; return;
    case TSR_INT8: *re = ((const int8_t *)a->data)[k]; return;
    case TSR_INT16: *re = ((const int16_t *)a->data)[k]; return;
    case TSR_INT32: *re = ((const int32_t *)a->data)[k]; return;
    case TSR_INT64: *re = (long double)((const int64_t *)a->data)[k]; return;
    case TSR_UINT8: *re = d[k]; return;
    case TSR_UINT16: *re = ((const uint16_t *)a->data)[k]; return;
    case TSR_UINT32: *re = ((const uint32_t *)a->data)[k]; return;
    case TSR_UINT64: *re = (long double)((const uint64_t *)a->data)[k]; return;
    case TSR_FLOAT16: *re = half_to_float(((const uint16_t *)a->data)[k]); return;
    case TSR_FLOAT32: *re = ((const float *)a->data)[k]; return;
    case TSR_FLOAT64: *re = ((const double *)a->data)[k]; return;
    case TSR_COMPLEX64:
        *re = ((const float *)a->data)[2 * k];
        *im = ((const float *)a->data)[2 * k + 1];
        return;
    case TSR_COMPLEX128:
        *re = ((const double *)a->data)[2 * k];
        *im = ((const double *)a->data)[2 * k + 1];
        return;
    default: *re = 0; return;
    }
}

static bool inexact(tsr_dtype d) {
    return d == TSR_FLOAT16 || d == TSR_FLOAT32 || d == TSR_FLOAT64 || d == TSR_COMPLEX64 ||
           d == TSR_COMPLEX128;
}

static bool is_complex(tsr_dtype d) {
    return d == TSR_COMPLEX64 || d == TSR_COMPLEX128;
}

/* numpy.isclose(obtained, expected, equal_nan=True). */
static bool close_enough(long double got, long double want, const comparer *cmp) {
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    if (isinf(got) || isinf(want)) return got == want;
    return fabsl(got - want) <= cmp->atol + cmp->rtol * fabsl(want);
}

static bool decode(json_t *v, tsr_dtype dtype, tsr_array *a, void **buf, const char *path,
                   comparer *cmp) {
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text == NULL) return differ(cmp, "%s: out of memory", path);
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_array_from_json(text, strlen(text), dtype, a, buf, &err);
    free(text);
    if (rc != 0) return differ(cmp, "%s: not an array: %s", path, err.message);
    return true;
}

static bool compare_arrays(json_t *got_v, json_t *want_v, const char *path, comparer *cmp) {
    tsr_array got, want;
    void *got_buf = NULL, *want_buf = NULL;
    bool ok = decode(got_v, TSR_DTYPE_INVALID, &got, &got_buf, path, cmp) &&
              decode(want_v, is_array_object(want_v) ? TSR_DTYPE_INVALID : got.dtype, &want,
                     &want_buf, path, cmp);
    if (ok && (got.rank != want.rank || memcmp(got.shape, want.shape,
                                                (size_t)want.rank * sizeof want.shape[0]) != 0))
        ok = differ(cmp, "Structure mismatch: shape mismatch for array at %s", path);
    bool same_width_free = cmp->any_float_width && inexact(got.dtype) && inexact(want.dtype) &&
                           is_complex(got.dtype) == is_complex(want.dtype);
    if (ok && got.dtype != want.dtype && !same_width_free)
        ok = differ(cmp, "Structure mismatch: dtype mismatch for array at %s: expected %s, obtained %s",
                    path, tsr_dtype_name(want.dtype), tsr_dtype_name(got.dtype));
    if (ok) {
        size_t count = 1, bad = 0, first = 0;
        for (int32_t d = 0; d < want.rank; d++) count *= (size_t)want.shape[d];
        bool approx = inexact(want.dtype) || inexact(got.dtype);
        long double g0 = 0, w0 = 0;
        for (size_t k = 0; k < count; k++) {
            long double gr, gi, wr, wi;
            element(&got, k, &gr, &gi);
            element(&want, k, &wr, &wi);
            bool same = approx ? close_enough(gr, wr, cmp) && close_enough(gi, wi, cmp)
                               : gr == wr && gi == wi;
            if (!same && bad++ == 0) {
                first = k;
                g0 = gr;
                w0 = wr;
            }
        }
        if (bad > 0)
            ok = differ(cmp,
                        "Values are not sufficiently close: %s: %zu of %zu differ; first at flat "
                        "index %zu: obtained %.17Lg, expected %.17Lg",
                        path, bad, count, first, g0, w0);
    }
    tsr_array_buffer_free(got_buf);
    tsr_array_buffer_free(want_buf);
    return ok;
}

static const char *kind_name(json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "dict";
    case JSON_ARRAY: return "list";
    case JSON_STRING: return "str";
    case JSON_INTEGER: return "int";
    case JSON_REAL: return "float";
    case JSON_TRUE:
    case JSON_FALSE: return "bool";
    default: return "NoneType";
    }
}

static bool compare(json_t *got, json_t *want, const char *path, comparer *cmp);

static bool compare_objects(json_t *got, json_t *want, const char *path, comparer *cmp) {
    const char *key;
    json_t *v;
    json_object_foreach(want, key, v) {
        if (json_object_get(got, key) == NULL)
            return differ(cmp, "Structure mismatch: key mismatch at %s: missing key '%s'",
                          path[0] ? path : "(top)", key);
    }
    json_object_foreach(got, key, v) {
        if (json_object_get(want, key) == NULL)
            return differ(cmp, "Structure mismatch: key mismatch at %s: unexpected key '%s'",
                          path[0] ? path : "(top)", key);
    }
    json_object_foreach(want, key, v) {
        char child[512];
        snprintf(child, sizeof child, "%s%s%s", path, path[0] ? "." : "", key);
        if (!compare(json_object_get(got, key), v, child, cmp)) return false;
    }
    return true;
}

static bool compare(json_t *got, json_t *want, const char *path, comparer *cmp) {
    /* An array against an array, or a plain value pydantic would read
     * into one. */
    if (is_array_object(got) || is_array_object(want)) {
        if (is_array_object(got) && (is_array_object(want) || json_is_array(want) ||
                                     json_is_number(want) || json_is_boolean(want)))
            return compare_arrays(got, want, path, cmp);
        return differ(cmp, "Structure mismatch: type mismatch at %s: expected %s, obtained %s",
                      path, is_array_object(want) ? "ndarray" : kind_name(want),
                      is_array_object(got) ? "ndarray" : kind_name(got));
    }
    /* Python numbers: an int where a float is expected is a float field
     * that pydantic read; a bool is never a number here. */
    bool both_numbers = json_is_number(got) && json_is_number(want);
    if (!both_numbers && strcmp(kind_name(got), kind_name(want)) != 0)
        return differ(cmp, "Structure mismatch: type mismatch at %s: expected %s, obtained %s", path,
                      kind_name(want), kind_name(got));
    switch (json_typeof(want)) {
    case JSON_OBJECT: return compare_objects(got, want, path, cmp);
    case JSON_ARRAY: {
        if (json_array_size(got) != json_array_size(want))
            return differ(cmp, "Structure mismatch: length of list at %s: expected %zu, obtained %zu",
                          path, json_array_size(want), json_array_size(got));
        for (size_t k = 0; k < json_array_size(want); k++) {
            char child[512];
            snprintf(child, sizeof child, "%s%s[%zu]", path, path[0] ? "." : "", k);
            if (!compare(json_array_get(got, k), json_array_get(want, k), child, cmp)) return false;
        }
        return true;
    }
    case JSON_STRING:
        if (strcmp(json_string_value(got), json_string_value(want)) == 0) return true;
        return differ(cmp, "%s: expected '%s', obtained '%s'", path, json_string_value(want),
                      json_string_value(got));
    case JSON_INTEGER:
    case JSON_REAL: {
        double g = json_number_value(got), w = json_number_value(want);
        bool same = json_is_real(want) ? close_enough(g, w, cmp)
                                       : json_is_integer(got) ? json_integer_value(got) ==
                                                                    json_integer_value(want)
                                                              : g == w;
        if (same) return true;
        return differ(cmp, "Values are not sufficiently close: %s: expected %.17g, obtained %.17g",
                      path, w, g);
    }
    case JSON_TRUE:
    case JSON_FALSE:
        if (json_is_true(got) == json_is_true(want)) return true;
        return differ(cmp, "%s: expected %s, obtained %s", path, json_is_true(want) ? "True" : "False",
                      json_is_true(got) ? "True" : "False");
    default: return true; /* both null */
    }
}

bool test_compare_outputs(const tsr_component *c, tsr_endpoint ep, json_t *obtained,
                          json_t *expected, double atol, double rtol, char *why, size_t n) {
    (void)c;
    comparer cmp = {.atol = atol, .rtol = rtol, .why = why, .n = n,
                    .any_float_width = ep == TSR_EP_JACOBIAN || ep == TSR_EP_JVP || ep == TSR_EP_VJP};
    return compare(obtained, expected, "", &cmp);
}
