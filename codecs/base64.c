/* SPDX-License-Identifier: MIT */
#include "base64.h"
#include "base64_simd.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A character outside the alphabet sets this bit in a decoded group. */
#define BAD 0x80000000u

/* pairs[v]: the two characters of the 12-bit value v. d0..d3[c]: the
 * value of character c shifted to its place in a 24-bit group, or BAD. */
static char pairs[4096][2];
static uint32_t d0[256], d1[256], d2[256], d3[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
    for (int v = 0; v < 4096; v++) {
        pairs[v][0] = alphabet[v >> 6];
        pairs[v][1] = alphabet[v & 63];
    }
    for (int c = 0; c < 256; c++) d0[c] = d1[c] = d2[c] = d3[c] = BAD;
    for (uint32_t v = 0; v < 64; v++) {
        unsigned char c = (unsigned char)alphabet[v];
        d0[c] = v << 18;
        d1[c] = v << 12;
        d2[c] = v << 6;
        d3[c] = v;
    }
}

static void tables(void) {
    /* pthread_once cannot fail with a valid control; nothing to check. */
    (void)pthread_once(&tables_once, build_tables);
}

size_t b64_encoded_length(size_t n, int *overflow) {
    size_t groups = n / 3 + (n % 3 != 0);
    if (groups > SIZE_MAX / 4) {
        *overflow = 1;
        return 0;
    }
    *overflow = 0;
    return groups * 4;
}

void b64_encode(const unsigned char *src, size_t n, char *dst) {
    tables();
    size_t i = b64_simd_encode(src, n, dst);
    dst += i / 3 * 4;
    for (; i + 3 <= n; i += 3, dst += 4) {
        uint32_t w = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
        memcpy(dst, pairs[w >> 12], 2);
        memcpy(dst + 2, pairs[w & 0xfff], 2);
    }
    if (n - i == 1) {
        uint32_t w = (uint32_t)src[i] << 16;
        memcpy(dst, pairs[w >> 12], 2);
        dst[2] = '=';
        dst[3] = '=';
    } else if (n - i == 2) {
        uint32_t w = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8;
        memcpy(dst, pairs[w >> 12], 2);
        dst[2] = alphabet[(w >> 6) & 63];
        dst[3] = '=';
    }
}

static size_t padding_of(const char *text, size_t len) {
    if (len < 4 || text[len - 1] != '=') return 0;
    return text[len - 2] == '=' ? 2 : 1;
}

long long b64_decoded_length(const char *text, size_t len, char *why, size_t why_size) {
    if (len % 4 != 0) {
        snprintf(why, why_size, "invalid base64: length %zu is not a multiple of 4", len);
        return -1;
    }
    return (long long)(len / 4 * 3 - padding_of(text, len));
}

int b64_find_bad(const char *text, size_t len, char *why, size_t why_size) {
    tables();
    size_t valid = len - padding_of(text, len);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (i < valid && d3[c] != BAD) continue;
        if (i >= valid) break;
        if (c >= 0x20 && c < 0x7f)
            snprintf(why, why_size, "invalid base64: character '%c' at position %zu", c, i);
        else
            snprintf(why, why_size, "invalid base64: byte 0x%02x at position %zu", c, i);
        return -1;
    }
    return 0;
}

int b64_decode(const char *text, size_t len, unsigned char *dst, char *why, size_t why_size) {
    tables();
    if (len == 0) return 0;
    const unsigned char *t = (const unsigned char *)text;
    size_t full = len / 4 - 1; /* every group but the last, which may be padded */
    int simd_bad;
    size_t done = b64_simd_decode(text, full * 4, dst, &simd_bad);
    uint32_t bad = simd_bad ? BAD : 0;
    size_t g = done / 4;
    t += done;
    dst += done / 4 * 3;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Two groups per step, stored as 8 bytes of which the next step
     * overwrites the last two: stop while that slack remains. */
    for (; g + 3 <= full; g += 2, t += 8, dst += 6) {
        uint32_t a = d0[t[0]] | d1[t[1]] | d2[t[2]] | d3[t[3]];
        uint32_t b = d0[t[4]] | d1[t[5]] | d2[t[6]] | d3[t[7]];
        bad |= a | b;
        uint64_t v = (uint64_t)(__builtin_bswap32(a) >> 8) |
                     (uint64_t)(__builtin_bswap32(b) >> 8) << 24;
        memcpy(dst, &v, 8);
    }
#endif
    for (; g < full; g++, t += 4, dst += 3) {
        uint32_t w = d0[t[0]] | d1[t[1]] | d2[t[2]] | d3[t[3]];
        bad |= w;
        dst[0] = (unsigned char)(w >> 16);
        dst[1] = (unsigned char)(w >> 8);
        dst[2] = (unsigned char)w;
    }
    size_t padding = padding_of(text, len);
    uint32_t w = d0[t[0]] | d1[t[1]];
    if (padding < 2) w |= d2[t[2]];
    if (padding < 1) w |= d3[t[3]];
    bad |= w;
    dst[0] = (unsigned char)(w >> 16);
    if (padding < 2) dst[1] = (unsigned char)(w >> 8);
    if (padding < 1) dst[2] = (unsigned char)w;
    if ((bad & BAD) && b64_find_bad(text, len, why, why_size) == 0)
        snprintf(why, why_size, "invalid base64"); /* cannot happen: bad says there is one */
    return bad & BAD ? -1 : 0;
    return 0;
}
