/* SPDX-License-Identifier: MIT */
#include "number_text.h"

#include <math.h>
#include <string.h>

#include "double_conv.h"

static const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Digits of v < 10^8 (n of them, counted by the caller) into out[0..n),
 * two at a time from the end. */
static inline void digits_u32(uint32_t v, size_t n, char *out) {
    char *q = out + n;
    while (v >= 100) {
        q -= 2;
        memcpy(q, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) memcpy(q - 2, digit_pairs + 2 * v, 2);
    else q[-1] = (char)('0' + v);
}

/* Exactly eight digits of v < 10^8, leading zeros included: four
 * independent pairs. */
static inline void eight_digits(uint32_t v, char *out) {
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(out, digit_pairs + 2 * (hi / 100), 2);
    memcpy(out + 2, digit_pairs + 2 * (hi % 100), 2);
    memcpy(out + 4, digit_pairs + 2 * (lo / 100), 2);
    memcpy(out + 6, digit_pairs + 2 * (lo % 100), 2);
}

static inline size_t count_digits_u32(uint32_t v) {
    return 1 + (v >= 10) + (v >= 100) + (v >= 1000) + (v >= 10000) + (v >= 100000) +
           (v >= 1000000) + (v >= 10000000);
}

/* Digits of v, most significant first, into out; returns the count. Cut
 * into pieces of eight digits, so that the divisions are by constants on
 * 32-bit pieces and do not wait on each other. */
static size_t digits_u64(uint64_t v, char *out) {
    if (v < 100000000) {
        size_t n = count_digits_u32((uint32_t)v);
        digits_u32((uint32_t)v, n, out);
        return n;
    }
    uint32_t low = (uint32_t)(v % 100000000);
    uint64_t high = v / 100000000;
    size_t n;
    if (high < 10) { /* 9 digits */
        out[0] = (char)('0' + high);
        n = 1;
    } else if (high < 100000000) {
        n = count_digits_u32((uint32_t)high);
        digits_u32((uint32_t)high, n, out);
    } else if (high < 1000000000) { /* 17 digits: most doubles */
        out[0] = (char)('0' + high / 100000000);
        eight_digits((uint32_t)(high % 100000000), out + 1);
        n = 9;
    } else {
        uint32_t top = (uint32_t)(high / 100000000); /* v < 2^64: at most 4 digits */
        n = count_digits_u32(top);
        digits_u32(top, n, out);
        eight_digits((uint32_t)(high % 100000000), out + n);
        n += 8;
    }
    eight_digits(low, out + n);
    return n + 8;
}

size_t numtext_uint(uint64_t v, char *out) {
    return digits_u64(v, out);
}

size_t numtext_int(int64_t v, char *out) {
    if (v >= 0) return digits_u64((uint64_t)v, out);
    out[0] = '-';
    return 1 + digits_u64((uint64_t)0 - (uint64_t)v, out + 1);
}

size_t numtext_double(double v, char *out) {
    size_t o = 0;
    if (signbit(v)) {
        out[o++] = '-';
        v = -v;
    }
    if (v == 0.0) {
        memcpy(out + o, "0.0", 3);
        return o + 3;
    }
    uint64_t m;
    int e;
    dconv_shortest(v, &m, &e);
    /* The digits are written where they end up, then the few before the
     * point moved left by one to make room for it. */
    char *d = out + o + 1;
    int len = (int)digits_u64(m, d);
    int point = len + e; /* v ~ 0.d1d2...dlen x 10^point */
    /* "%.*g" at P digits: fixed notation when -4 <= X < P, X the decimal
     * exponent; P was the first of 15, 16, 17 that read back, which is
     * max(15, len) (a double's nearest 15-digit decimal is its shortest
     * form whenever that has at most 15 digits). */
    int x = point - 1, prec = len > 15 ? len : 15;
    if (x < -4 || x >= prec) {
        out[o] = d[0];
        if (len > 1) {
            out[o + 1] = '.';
            o += (size_t)len + 1;
        } else {
            o += 1;
        }
        out[o++] = 'e';
        out[o++] = x < 0 ? '-' : '+';
        int ex = x < 0 ? -x : x;
        if (ex >= 100) out[o++] = (char)('0' + ex / 100);
        memcpy(out + o, digit_pairs + 2 * (ex % 100), 2);
        return o + 2;
    }
    /* The moves below copy fixed sizes (inlined, no call), past the digits
     * into the scratch room NUMTEXT_MAX leaves. */
    if (point <= 0) { /* 0.000ddd: at most three zeros (x >= -4) */
        int zeros = -point;
        memmove(out + o + 2 + zeros, d, 17);
        out[o] = '0';
        out[o + 1] = '.';
        for (int k = 0; k < zeros; k++) out[o + 2 + k] = '0';
        return o + 2 + (size_t)zeros + (size_t)len;
    }
    memmove(out + o, d, 17); /* the digits one to the left, where they belong */
    if (point < len) { /* ddd.ddd: the fraction back one to the right */
        memmove(out + o + point + 1, out + o + point, 16);
        out[o + point] = '.';
        return o + (size_t)len + 1;
    }
    o += (size_t)len; /* ddd000.0 */
    for (int k = len; k < point; k++) out[o++] = '0';
    out[o++] = '.';
    out[o++] = '0';
    return o;
}

int numtext_real(const char *p, size_t n, double *out) {
    return dconv_parse(p, n, out);
}
