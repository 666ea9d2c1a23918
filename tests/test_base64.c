/* SPDX-License-Identifier: MIT */
/* base64 against a plain bit-by-bit reference written here: every length
 * from 0 to 400 bytes (so every split between the vector blocks and the
 * table-driven rest), every byte value, and every character that is not
 * base64 at every place of a text, which must be refused with its
 * position whichever part of the decoder meets it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/base64.h"
#include "codecs/base64_simd.h"

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* One output character per 6 bits, most significant first, '=' padding. */
static size_t reference_encode(const unsigned char *src, size_t n, char *dst) {
    size_t out = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned bits = 0, have = 0;
        for (size_t k = 0; k < 3; k++) {
            bits = bits << 8 | (i + k < n ? src[i + k] : 0);
            have += i + k < n ? 8 : 0;
        }
        for (unsigned k = 0; k < 4; k++)
            dst[out++] = k * 6 < have ? ALPHABET[(bits >> (18 - 6 * k)) & 63] : '=';
    }
    return out;
}

static unsigned char pattern(size_t i, unsigned seed) {
    unsigned x = (unsigned)i * 2654435761u + seed * 40503u;
    return (unsigned char)(x >> 13 ^ x >> 5);
}

Test(base64, encode_and_decode_match_the_reference_at_every_length_from_0_to_400) {
    unsigned char src[400], back[400];
    char want[540], got[540], why[160];
    for (unsigned seed = 0; seed < 3; seed++)
        for (size_t n = 0; n <= sizeof src; n++) {
            for (size_t i = 0; i < n; i++) src[i] = pattern(i, seed);
            size_t len = reference_encode(src, n, want);
            int overflow = 1;
            cr_assert_eq(b64_encoded_length(n, &overflow), len);
            cr_assert_eq(overflow, 0);
            memset(got, '#', sizeof got);
            b64_encode(src, n, got);
            cr_assert_eq(memcmp(got, want, len), 0, "encoding %zu bytes (seed %u)", n, seed);
            cr_assert_eq(got[len], '#', "encoding %zu bytes wrote past its end", n);
            cr_assert_eq(b64_decoded_length(want, len, why, sizeof why), (long long)n);
            memset(back, 0xa5, sizeof back);
            cr_assert_eq(b64_decode(want, len, back, why, sizeof why), 0, "%zu bytes: %s", n, why);
            cr_assert_eq(memcmp(back, src, n), 0, "decoding %zu bytes (seed %u)", n, seed);
            if (n < sizeof back) cr_assert_eq(back[n], 0xa5, "decoding %zu bytes wrote past its end", n);
        }
}

Test(base64, every_byte_value_round_trips) {
    unsigned char src[768], back[768];
    char text[1024], why[160];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)(i % 256 ^ i / 256 * 85);
    b64_encode(src, sizeof src, text);
    char want[1024];
    reference_encode(src, sizeof src, want);
    cr_assert_eq(memcmp(text, want, sizeof text), 0);
    cr_assert_eq(b64_decode(text, sizeof text, back, why, sizeof why), 0, "%s", why);
    cr_assert_eq(memcmp(back, src, sizeof src), 0);
}

Test(base64, a_character_outside_the_alphabet_is_refused_with_its_position_anywhere) {
    unsigned char src[120], back[120];
    char text[160], bad_text[160], why[160], want[80];
    for (size_t i = 0; i < sizeof src; i++) src[i] = pattern(i, 7);
    b64_encode(src, sizeof src, text);
    /* every byte value that is not base64 ('=' included: inside the text
     * it is as wrong as any) */
    for (int c = 0; c < 256; c++) {
        if (c && strchr(ALPHABET, c)) continue;
        for (size_t at = 0; at < sizeof text; at += c % 7 + 1) {
            memcpy(bad_text, text, sizeof text);
            bad_text[at] = (char)c;
            why[0] = 0;
            int rc = b64_decode(bad_text, sizeof text, back, why, sizeof why);
            if (c == '=' && at >= sizeof text - 2) {
                /* trailing '=' are padding: a different length, still valid */
                continue;
            }
            cr_assert_eq(rc, -1, "byte 0x%02x at %zu accepted", c, at);
            snprintf(want, sizeof want, "at position %zu", at);
            cr_assert(strstr(why, want) != NULL, "byte 0x%02x at %zu: %s", c, at, why);
        }
    }
}

Test(base64, the_vector_part_never_reads_or_writes_past_what_it_reports) {
    /* Its reports are multiples of its block and leave the tail alone. */
    unsigned char src[200];
    char text[280];
    for (size_t i = 0; i < sizeof src; i++) src[i] = pattern(i, 3);
    for (size_t n = 0; n <= sizeof src; n++) {
        memset(text, '#', sizeof text);
        size_t k = b64_simd_encode(src, n, text);
        cr_assert_eq(k % 24, 0);
        cr_assert(k == 0 || k + 4 <= n, "encoded %zu of %zu bytes", k, n);
        /* on a CPU with AVX2 the vector part does take the blocks */
        if (__builtin_cpu_supports("avx2")) cr_assert_eq(k, n < 4 ? 0 : (n - 4) / 24 * 24);
        cr_assert_eq(text[k / 3 * 4], '#');
    }
    char in[256];
    unsigned char out[256];
    reference_encode(src, 192, in);
    for (size_t len = 0; len <= 256; len += 4) {
        memset(out, 0xa5, sizeof out);
        int bad = 1;
        size_t k = b64_simd_decode(in, len, out, &bad);
        cr_assert_eq(k % 32, 0);
        cr_assert(k <= len);
        cr_assert_eq(bad, 0);
        if (__builtin_cpu_supports("avx2")) cr_assert_eq(k, len / 32 * 32);
        cr_assert_eq(out[k / 4 * 3], 0xa5, "decoding %zu characters wrote past %zu", len, k);
        cr_assert_eq(memcmp(out, src, k / 4 * 3), 0);
    }
}
