/* SPDX-License-Identifier: MIT */
/* The bulk of a base64 buffer with the CPU's vector instructions
 * (base64_simd.c); base64.c calls these first and finishes what they
 * leave. Both return 0 where the CPU lacks AVX2. */
#ifndef TESSERA_CODECS_BASE64_SIMD_H
#define TESSERA_CODECS_BASE64_SIMD_H

#include <stddef.h>

/* Encode the first k bytes of src[0..n) into dst (4k/3 characters), k a
 * multiple of 24 chosen so that no read passes src + n; returns k. */
size_t b64_simd_encode(const unsigned char *src, size_t n, char *dst);

/* Decode the first k characters of text[0..len) into dst (3k/4 bytes), k
 * a multiple of 32 with k <= len; returns k. Sets *bad when one of those
 * characters is outside the alphabet ('=' included: the caller keeps the
 * last group for itself), dst then holding garbage. */
size_t b64_simd_decode(const char *text, size_t len, unsigned char *dst, int *bad);

#endif /* TESSERA_CODECS_BASE64_SIMD_H */
