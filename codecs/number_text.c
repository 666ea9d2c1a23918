/* SPDX-License-Identifier: MIT */
#include "number_text.h"

#include <math.h>
#include <string.h>

#include "double_conv.h"

static const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static size_t count_digits(uint64_t v) {
    size_t n = 1;
    for (; v >= 10000; v /= 10000) n += 4;
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Digits of v, most significant first, into out; returns the count.
 * Two at a time from the end, as a table gives them. */
static size_t digits_u64(uint64_t v, char *out) {
    size_t n = count_digits(v);
    char *q = out + n;
    while (v >= 100) {
        q -= 2;
        memcpy(q, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) memcpy(q - 2, digit_pairs + 2 * v, 2);
    else q[-1] = (char)('0' + v);
    return n;
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
    char d[20];
    int len = (int)digits_u64(m, d);
    int point = len + e; /* v ~ 0.d1d2...dlen x 10^point */
    /* "%.*g" at P digits: fixed notation when -4 <= X < P, X the decimal
     * exponent; P was the first of 15, 16, 17 that read back, which is
     * max(15, len) (a double's nearest 15-digit decimal is its shortest
     * form whenever that has at most 15 digits). */
    int x = point - 1, prec = len > 15 ? len : 15;
    if (x < -4 || x >= prec) {
        out[o++] = d[0];
        if (len > 1) {
            out[o++] = '.';
            memcpy(out + o, d + 1, (size_t)len - 1);
            o += (size_t)len - 1;
        }
        out[o++] = 'e';
        out[o++] = x < 0 ? '-' : '+';
        int ex = x < 0 ? -x : x;
        if (ex >= 100) out[o++] = (char)('0' + ex / 100);
        out[o++] = (char)('0' + ex / 10 % 10);
        out[o++] = (char)('0' + ex % 10);
        return o;
    }
    if (point <= 0) {
        out[o++] = '0';
        out[o++] = '.';
        memset(out + o, '0', (size_t)-point);
        o += (size_t)-point;
        memcpy(out + o, d, (size_t)len);
        return o + (size_t)len;
    }
    if (point < len) {
        memcpy(out + o, d, (size_t)point);
        o += (size_t)point;
        out[o++] = '.';
        memcpy(out + o, d + point, (size_t)(len - point));
        return o + (size_t)(len - point);
    }
    memcpy(out + o, d, (size_t)len);
    o += (size_t)len;
    memset(out + o, '0', (size_t)(point - len));
    o += (size_t)(point - len);
    memcpy(out + o, ".0", 2);
    return o + 2;
}

int numtext_real(const char *p, size_t n, double *out) {
    return dconv_parse(p, n, out);
}
