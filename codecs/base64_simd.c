/* SPDX-License-Identifier: MIT */
/* The bulk of base64 with AVX2, 24 bytes <-> 32 characters a step, when
 * the CPU has it (checked once at run time); base64.c does the rest of a
 * buffer, and all of it elsewhere. The method is Muła and Lemire's
 * ("Faster Base64 Encoding and Decoding Using AVX2 Instructions", 2018):
 * shuffles place each 3-byte group in a 32-bit lane, multiplies move the
 * 6-bit fields into bytes, and a 16-entry lookup indexed by a coarse class
 * of each value maps it to its character (and back, with a check of every
 * character by two nibble lookups). */
#include "base64_simd.h"

#include <stdatomic.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* 24 bytes -> 32 characters. */
static AVX2 __m256i encode_block(__m256i in) {
    /* Each 32-bit lane gets bytes (s1, s0, s2, s1) of its group. */
    const __m256i order = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,
                                           1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    in = _mm256_shuffle_epi8(in, order);
    /* Fields 0 and 2 shift down, fields 1 and 3 shift up, into bytes 0..3. */
    __m256i f02 = _mm256_mulhi_epu16(_mm256_and_si256(in, _mm256_set1_epi32(0x0fc0fc00)),
                                     _mm256_set1_epi32(0x04000040));
    __m256i f13 = _mm256_mullo_epi16(_mm256_and_si256(in, _mm256_set1_epi32(0x003f03f0)),
                                     _mm256_set1_epi32(0x01000010));
    __m256i v = _mm256_or_si256(f02, f13);
    /* Class of each value: 13 for 0..25, 0 for 26..51, 1..12 for 52..63;
     * the offset that class adds gives its character. */
    __m256i cls = _mm256_subs_epu8(v, _mm256_set1_epi8(51));
    __m256i upper = _mm256_cmpgt_epi8(_mm256_set1_epi8(26), v);
    cls = _mm256_or_si256(cls, _mm256_and_si256(upper, _mm256_set1_epi8(13)));
    const __m256i offset = _mm256_setr_epi8(
        'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0, 'a' - 26, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63,
        'A', 0, 0);
    return _mm256_add_epi8(v, _mm256_shuffle_epi8(offset, cls));
}

static AVX2 size_t encode_avx2(const unsigned char *src, size_t n, char *dst) {
    size_t i = 0;
    /* Two 16-byte loads (12 bytes used of each): the second reads 4 bytes
     * past the block, so stop while 4 more remain. */
    for (; i + 28 <= n; i += 24, dst += 32) {
        __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 12));
        __m256i in = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
        _mm256_storeu_si256((__m256i *)(void *)dst, encode_block(in));
    }
    return i;
}

/* 32 characters -> 24 bytes; *bad gets a nonzero lane where a character
 * is outside the alphabet. */
static AVX2 size_t decode_avx2(const char *text, size_t len, unsigned char *dst, int *bad) {
    /* Nibble classes: a character is valid when the classes of its high
     * and low nibbles share no bit. */
    const __m256i lut_lo = _mm256_setr_epi8(0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
                                            0x11, 0x13, 0x1a, 0x1b, 0x1b, 0x1b, 0x1a, 0x15, 0x11,
                                            0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13,
                                            0x1a, 0x1b, 0x1b, 0x1b, 0x1a);
    const __m256i lut_hi = _mm256_setr_epi8(0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10,
                                            0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10,
                                            0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10,
                                            0x10, 0x10, 0x10, 0x10, 0x10);
    /* What to add to a character, by its high nibble ('/' one below '+'). */
    const __m256i roll = _mm256_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0,
                                          0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    const __m256i gather = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
                                            2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    const __m256i pack = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    __m256i invalid = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= len; i += 32, dst += 24) {
        __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(text + i));
        __m256i hi = _mm256_and_si256(_mm256_srli_epi32(c, 4), nibble);
        __m256i lo = _mm256_and_si256(c, nibble);
        invalid = _mm256_or_si256(invalid, _mm256_and_si256(_mm256_shuffle_epi8(lut_lo, lo),
                                                            _mm256_shuffle_epi8(lut_hi, hi)));
        __m256i slash = _mm256_cmpeq_epi8(c, _mm256_set1_epi8('/'));
        __m256i v = _mm256_add_epi8(c, _mm256_shuffle_epi8(roll, _mm256_add_epi8(slash, hi)));
        /* (a, b, c, d) -> a<<18 | b<<12 | c<<6 | d in each 32-bit lane. */
        __m256i pairs = _mm256_maddubs_epi16(v, _mm256_set1_epi32(0x01400140));
        __m256i words = _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x00011000));
        __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(words, gather), pack);
        _mm_storeu_si128((__m128i *)(void *)dst, _mm256_castsi256_si128(bytes));
        _mm_storel_epi64((__m128i *)(void *)(dst + 16), _mm256_extracti128_si256(bytes, 1));
    }
    *bad = !_mm256_testz_si256(invalid, invalid);
    return i;
}

static int have_avx2(void) {
    /* Threads racing here only compute the same answer twice. */
    static _Atomic int known = -1;
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k < 0) {
        __builtin_cpu_init();
        k = __builtin_cpu_supports("avx2") ? 1 : 0;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k;
}

size_t b64_simd_encode(const unsigned char *src, size_t n, char *dst) {
    return have_avx2() ? encode_avx2(src, n, dst) : 0;
}

size_t b64_simd_decode(const char *text, size_t len, unsigned char *dst, int *bad) {
    *bad = 0;
    return have_avx2() ? decode_avx2(text, len, dst, bad) : 0;
}

#else

size_t b64_simd_encode(const unsigned char *src, size_t n, char *dst) {
    (void)src, (void)n, (void)dst;
    return 0;
}

size_t b64_simd_decode(const char *text, size_t len, unsigned char *dst, int *bad) {
    (void)text, (void)len, (void)dst;
    *bad = 0;
    return 0;
}

#endif
