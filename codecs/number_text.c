/* SPDX-License-Identifier: MIT */
#include "number_text.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "double_conv.h"

/* Digits of v, most significant first, into out; returns the count. */
static size_t digits_u64(uint64_t v, char *out) {
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t k = 0; k < n; k++) out[k] = tmp[n - 1 - k];
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
    char d[DCONV_DIGITS_MAX];
    int point;
    int len = dconv_shortest(v, d, &point);
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
        int e = x < 0 ? -x : x;
        if (e >= 100) out[o++] = (char)('0' + e / 100);
        out[o++] = (char)('0' + e / 10 % 10);
        out[o++] = (char)('0' + e % 10);
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
    const char *q = p, *end = p + n;
    bool neg = *q == '-';
    if (neg) q++;
    /* The significant digits (integer and fraction, leading zeros
     * dropped) and the power of ten that scales them. */
    char digits[DCONV_PARSE_DIGITS_MAX];
    int count = 0;
    long scale = 0;
    for (; q < end && *q >= '0' && *q <= '9'; q++) {
        if (count == 0 && *q == '0') continue;
        if (count == DCONV_PARSE_DIGITS_MAX) return 1;
        digits[count++] = *q;
    }
    if (q < end && *q == '.') {
        for (q++; q < end && *q >= '0' && *q <= '9'; q++) {
            scale--;
            if (count == 0 && *q == '0') continue;
            if (count == DCONV_PARSE_DIGITS_MAX) return 1;
            digits[count++] = *q;
        }
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        bool eneg = *q == '-';
        if (*q == '+' || *q == '-') q++;
        long e = 0;
        for (; q < end; q++)
            if (e < 100000) e = e * 10 + (*q - '0'); /* far past any double either way */
        scale += eneg ? -e : e;
    }
    /* At most 768 digits: past these bounds the value is 0 or infinite
     * either way, and the clamped power still says which. */
    if (scale < -200000) scale = -200000;
    if (scale > 200000) scale = 200000;
    double v = count == 0 ? 0.0 : dconv_parse(digits, count, (int)scale);
    if (isinf(v)) return -1;
    *out = neg ? -v : v;
    return 0;
}
