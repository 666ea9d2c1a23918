/* SPDX-License-Identifier: MIT */
#include "numeric.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <tessera/tessera.h>

/* IEEE half precision (1 sign, 5 exponent, 10 mantissa bits) converted in
 * plain C: clang before 15 has no _Float16 on x86, and its __fp16 calls
 * compiler-rt helpers (__gnu_h2f_ieee) that a default clang link lacks. */
static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Rounds to nearest, ties to even, as a conversion to _Float16 does;
 * beyond the largest half (65504) it gives infinity. */
static uint16_t half_from_double(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
    int e = (int)((b >> 52) & 0x7ff);
    uint64_t m = b & ((UINT64_C(1) << 52) - 1);
    if (e == 0x7ff) return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0)); /* inf, quiet NaN */
    if (e == 0) return sign;       /* double subnormals are far below half's: zero */
    int exp2 = e - 1023;           /* d = sig * 2^(exp2 - 52) */
    if (exp2 > 15) return (uint16_t)(sign | 0x7c00);
    uint64_t sig = m | (UINT64_C(1) << 52);
    /* Normal halves keep the top 11 bits of sig; subnormal ones (below
     * 2^-14) count units of 2^-24 and keep fewer. */
    int shift = exp2 >= -14 ? 42 : 28 - exp2;
    if (shift > 53) return sign;   /* below half the smallest subnormal */
    uint64_t q = sig >> shift, rem = sig & ((UINT64_C(1) << shift) - 1),
             halfway = UINT64_C(1) << (shift - 1);
    /* The implicit bit of q (normal case) carries into the exponent field,
     * hence exp2 + 14 rather than the biased exponent exp2 + 15. */
    uint16_t h = (uint16_t)(exp2 >= -14 ? ((uint64_t)(exp2 + 14) << 10) + q : q);
    if (rem > halfway || (rem == halfway && (h & 1))) h++; /* may carry up to infinity */
    return (uint16_t)(sign | h);
}

void num_load(tsr_dtype dtype, const void *src, num_value *out) {
    switch (dtype) {
    case TSR_BOOL: out->kind = NUM_BOOL; out->v.b = *(const uint8_t *)src != 0; return;
    case TSR_INT8: out->kind = NUM_INT; out->v.i = *(const int8_t *)src; return;
    case TSR_INT16: out->kind = NUM_INT; out->v.i = *(const int16_t *)src; return;
    case TSR_INT32: out->kind = NUM_INT; out->v.i = *(const int32_t *)src; return;
    case TSR_INT64: out->kind = NUM_INT; out->v.i = *(const int64_t *)src; return;
    case TSR_UINT8: out->kind = NUM_UINT; out->v.u = *(const uint8_t *)src; return;
    case TSR_UINT16: out->kind = NUM_UINT; out->v.u = *(const uint16_t *)src; return;
    case TSR_UINT32: out->kind = NUM_UINT; out->v.u = *(const uint32_t *)src; return;
    case TSR_UINT64: out->kind = NUM_UINT; out->v.u = *(const uint64_t *)src; return;
    case TSR_FLOAT16: out->kind = NUM_REAL; out->v.r = half_to_double(*(const uint16_t *)src); return;
    case TSR_FLOAT32: out->kind = NUM_REAL; out->v.r = (double)*(const float *)src; return;
    case TSR_FLOAT64: out->kind = NUM_REAL; out->v.r = *(const double *)src; return;
    case TSR_COMPLEX64: {
        const float *p = src;
        out->kind = NUM_COMPLEX;
        out->v.c[0] = p[0];
        out->v.c[1] = p[1];
        return;
    }
    case TSR_COMPLEX128: {
        const double *p = src;
        out->kind = NUM_COMPLEX;
        out->v.c[0] = p[0];
        out->v.c[1] = p[1];
        return;
    }
    default:
        /* Callers pass validated dtypes; a zero keeps the output defined. */
        out->kind = NUM_INT;
        out->v.i = 0;
        return;
    }
}

void num_describe(const num_value *v, char *buf, size_t size) {
    switch (v->kind) {
    case NUM_BOOL: snprintf(buf, size, "%s", v->v.b ? "true" : "false"); break;
    case NUM_INT: snprintf(buf, size, "%" PRId64, v->v.i); break;
    case NUM_UINT: snprintf(buf, size, "%" PRIu64, v->v.u); break;
    case NUM_REAL: snprintf(buf, size, "%.17g", v->v.r); break;
    case NUM_COMPLEX: snprintf(buf, size, "(%.17g%+.17gj)", v->v.c[0], v->v.c[1]); break;
    }
}

static int refuse(const num_value *v, tsr_dtype dtype, const char *cause, char *why, size_t why_size) {
    char text[80];
    num_describe(v, text, sizeof text);
    snprintf(why, why_size, "%s %s %s", text, cause, tsr_dtype_name(dtype));
    return -1;
}

/* An integral value as sign and magnitude, so that every integer target
 * checks its range the same way. */
static int integral_parts(const num_value *v, tsr_dtype dtype, bool *negative, uint64_t *magnitude,
                          char *why, size_t why_size) {
    *negative = false; /* the outputs are set on every path, refusals included */
    *magnitude = 0;
    switch (v->kind) {
    case NUM_BOOL:
        *negative = false;
        *magnitude = v->v.b;
        return 0;
    case NUM_INT:
        *negative = v->v.i < 0;
        *magnitude = *negative ? (uint64_t)0 - (uint64_t)v->v.i : (uint64_t)v->v.i;
        return 0;
    case NUM_UINT:
        *negative = false;
        *magnitude = v->v.u;
        return 0;
    case NUM_REAL: {
        double r = v->v.r;
        if (!isfinite(r)) return refuse(v, dtype, "cannot be stored as", why, why_size);
        if (floor(r) != r) return refuse(v, dtype, "is not an integer, as needed for", why, why_size);
        /* 2^64 and beyond fit no integer type. */
        if (fabs(r) >= 18446744073709551616.0)
            return refuse(v, dtype, "is out of range for", why, why_size);
        *negative = r < 0;
        *magnitude = (uint64_t)fabs(r);
        return 0;
    }
    case NUM_COMPLEX:
        break;
    }
    return refuse(v, dtype, "is complex and cannot be stored as", why, why_size);
}

static int store_integer(tsr_dtype dtype, void *dst, const num_value *v, char *why, size_t why_size) {
    bool negative;
    uint64_t magnitude;
    if (integral_parts(v, dtype, &negative, &magnitude, why, why_size) != 0) return -1;

    size_t bits = 8 * tsr_dtype_size(dtype);
    bool is_signed = dtype >= TSR_INT8 && dtype <= TSR_INT64;
    uint64_t max_positive = is_signed ? (UINT64_C(1) << (bits - 1)) - 1
                                      : (bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1);
    uint64_t max_negative = is_signed ? UINT64_C(1) << (bits - 1) : 0;
    if (negative ? magnitude > max_negative : magnitude > max_positive)
        return refuse(v, dtype, "is out of range for", why, why_size);

    uint64_t bits_value = negative ? (uint64_t)0 - magnitude : magnitude; /* two's complement */
    switch (bits) {
    case 8: { uint8_t x = (uint8_t)bits_value; memcpy(dst, &x, 1); break; }
    case 16: { uint16_t x = (uint16_t)bits_value; memcpy(dst, &x, 2); break; }
    case 32: { uint32_t x = (uint32_t)bits_value; memcpy(dst, &x, 4); break; }
    default: memcpy(dst, &bits_value, 8); break;
    }
    return 0;
}

static int real_value(const num_value *v, tsr_dtype dtype, double *out, char *why, size_t why_size) {
    *out = 0.0; /* set on every path, the refusal included */
    switch (v->kind) {
    case NUM_BOOL: *out = v->v.b ? 1.0 : 0.0; return 0;
    case NUM_INT: *out = (double)v->v.i; return 0;
    case NUM_UINT: *out = (double)v->v.u; return 0;
    case NUM_REAL: *out = v->v.r; return 0;
    case NUM_COMPLEX: break;
    }
    return refuse(v, dtype, "is complex and cannot be stored as", why, why_size);
}

/* Narrow a double to float16/32/64; a finite value that becomes infinite
 * is out of range (Tesseract refuses such casts too). */
static int store_real_part(tsr_dtype real_dtype, tsr_dtype reported, void *dst, double d,
                           const num_value *v, char *why, size_t why_size) {
    switch (real_dtype) {
    case TSR_FLOAT16: {
        uint16_t h = half_from_double(d);
        if (isfinite(d) && !isfinite(half_to_double(h))) return refuse(v, reported, "is out of range for", why, why_size);
        memcpy(dst, &h, sizeof h);
        return 0;
    }
    case TSR_FLOAT32: {
        float f = (float)d;
        if (isfinite(d) && !isfinite(f)) return refuse(v, reported, "is out of range for", why, why_size);
        memcpy(dst, &f, sizeof f);
        return 0;
    }
    default:
        memcpy(dst, &d, sizeof d);
        return 0;
    }
}

static int store_bool(void *dst, const num_value *v, char *why, size_t why_size) {
    bool value;
    switch (v->kind) {
    case NUM_BOOL: value = v->v.b; break;
    case NUM_INT:
        if (v->v.i != 0 && v->v.i != 1) return refuse(v, TSR_BOOL, "is neither 0 nor 1, as needed for", why, why_size);
        value = v->v.i == 1;
        break;
    case NUM_UINT:
        if (v->v.u > 1) return refuse(v, TSR_BOOL, "is neither 0 nor 1, as needed for", why, why_size);
        value = v->v.u == 1;
        break;
    case NUM_REAL:
        if (v->v.r != 0.0 && v->v.r != 1.0) return refuse(v, TSR_BOOL, "is neither 0 nor 1, as needed for", why, why_size);
        value = v->v.r == 1.0;
        break;
    default:
        return refuse(v, TSR_BOOL, "is complex and cannot be stored as", why, why_size);
    }
    uint8_t byte = value ? 1 : 0;
    memcpy(dst, &byte, 1);
    return 0;
}

int num_store(tsr_dtype dtype, void *dst, const num_value *v, char *why, size_t why_size) {
    switch (dtype) {
    case TSR_BOOL:
        return store_bool(dst, v, why, why_size);
    case TSR_INT8: case TSR_INT16: case TSR_INT32: case TSR_INT64:
    case TSR_UINT8: case TSR_UINT16: case TSR_UINT32: case TSR_UINT64:
        return store_integer(dtype, dst, v, why, why_size);
    case TSR_FLOAT16: case TSR_FLOAT32: case TSR_FLOAT64: {
        double d;
        if (real_value(v, dtype, &d, why, why_size) != 0) return -1;
        return store_real_part(dtype, dtype, dst, d, v, why, why_size);
    }
    case TSR_COMPLEX64: case TSR_COMPLEX128: {
        double re, im = 0.0;
        if (v->kind == NUM_COMPLEX) {
            re = v->v.c[0];
            im = v->v.c[1];
        } else if (real_value(v, dtype, &re, why, why_size) != 0) {
            return -1;
        }
        tsr_dtype part = dtype == TSR_COMPLEX64 ? TSR_FLOAT32 : TSR_FLOAT64;
        size_t half = tsr_dtype_size(part);
        if (store_real_part(part, dtype, dst, re, v, why, why_size) != 0) return -1;
        return store_real_part(part, dtype, (char *)dst + half, im, v, why, why_size);
    }
    default:
        snprintf(why, why_size, "invalid dtype %d", (int)dtype);
        return -1;
    }
}

static int kind_rank(tsr_dtype dtype) {
    if (dtype == TSR_BOOL) return 0;
    if (dtype >= TSR_INT8 && dtype <= TSR_UINT64) return 1;
    if (dtype >= TSR_FLOAT16 && dtype <= TSR_FLOAT64) return 2;
    return 3;
}

bool dtype_casts_same_kind(tsr_dtype from, tsr_dtype to) {
    return kind_rank(from) <= kind_rank(to);
}

bool dtype_is_complex(tsr_dtype dtype) {
    return dtype == TSR_COMPLEX64 || dtype == TSR_COMPLEX128;
}

int num_convert(const void *src, tsr_dtype from, void *dst, tsr_dtype to, int64_t count,
                    int64_t *bad, char *why, size_t why_size) {
    size_t from_size = tsr_dtype_size(from), to_size = tsr_dtype_size(to);
    *bad = -1;
    for (int64_t k = 0; k < count; k++) {
        num_value num;
        char cause[160];
        num_load(from, (const char *)src + (size_t)k * from_size, &num);
        if (num_store(to, (char *)dst + (size_t)k * to_size, &num, cause, sizeof cause) != 0) {
            *bad = k;
            snprintf(why, why_size, "element %" PRId64 ": %s", k, cause);
            return -1;
        }
    }
    return 0;
}
