#include "base64.h"

#include <stdint.h>
#include <stdio.h>

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Value of a base64 character, or -1. */
static int sextet(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

size_t tsr_b64_encoded_length(size_t n, int *overflow) {
    size_t groups = n / 3 + (n % 3 != 0);
    if (groups > SIZE_MAX / 4) {
        *overflow = 1;
        return 0;
    }
    *overflow = 0;
    return groups * 4;
}

void tsr_b64_encode(const unsigned char *src, size_t n, char *dst) {
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t w = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
        *dst++ = alphabet[w >> 18];
        *dst++ = alphabet[(w >> 12) & 63];
        *dst++ = alphabet[(w >> 6) & 63];
        *dst++ = alphabet[w & 63];
    }
    if (n - i == 1) {
        uint32_t w = (uint32_t)src[i] << 16;
        *dst++ = alphabet[w >> 18];
        *dst++ = alphabet[(w >> 12) & 63];
        *dst++ = '=';
        *dst++ = '=';
    } else if (n - i == 2) {
        uint32_t w = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8;
        *dst++ = alphabet[w >> 18];
        *dst++ = alphabet[(w >> 12) & 63];
        *dst++ = alphabet[(w >> 6) & 63];
        *dst++ = '=';
    }
}

long long tsr_b64_decoded_length(const char *text, size_t len, char *why, size_t why_size) {
    if (len % 4 != 0) {
        snprintf(why, why_size, "invalid base64: length %zu is not a multiple of 4", len);
        return -1;
    }
    size_t padding = 0;
    if (len >= 4 && text[len - 1] == '=') padding = text[len - 2] == '=' ? 2 : 1;
    for (size_t i = 0; i < len - padding; i++) {
        if (sextet((unsigned char)text[i]) < 0) {
            unsigned char c = (unsigned char)text[i];
            if (c >= 0x20 && c < 0x7f)
                snprintf(why, why_size, "invalid base64: character '%c' at position %zu", c, i);
            else
                snprintf(why, why_size, "invalid base64: byte 0x%02x at position %zu", c, i);
            return -1;
        }
    }
    return (long long)(len / 4 * 3 - padding);
}

void tsr_b64_decode(const char *text, size_t len, unsigned char *dst) {
    size_t padding = 0;
    if (len >= 4 && text[len - 1] == '=') padding = text[len - 2] == '=' ? 2 : 1;
    for (size_t i = 0; i < len; i += 4) {
        int last = i + 4 == len;
        uint32_t w = 0;
        int valid = last ? 4 - (int)padding : 4;
        for (int k = 0; k < 4; k++) {
            int s = k < valid ? sextet((unsigned char)text[i + k]) : 0;
            w = w << 6 | (uint32_t)s;
        }
        *dst++ = (unsigned char)(w >> 16);
        if (valid > 2) *dst++ = (unsigned char)(w >> 8);
        if (valid > 3) *dst++ = (unsigned char)w;
    }
}
