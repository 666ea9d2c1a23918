/* SPDX-License-Identifier: MIT */
/*
 * Standard base64 (RFC 4648, '+' '/' alphabet, '=' padding), as Tesseract
 * writes array buffers. Decoding is strict, like Tesseract's validating
 * decoder: no whitespace, no other characters, padding where it belongs.
 * Both directions take 24 bytes a step with AVX2 where the CPU has it
 * (base64_simd.h), and lookup tables (built once, thread-safe) for the
 * rest of a buffer and on other CPUs.
 */
#ifndef TESSERA_CODECS_BASE64_H
#define TESSERA_CODECS_BASE64_H

#include <stddef.h>

/* Length of the encoding of n bytes, without the terminating NUL; 0 with
 * *overflow set if it does not fit a size_t. */
size_t b64_encoded_length(size_t n, int *overflow);

/* Write the encoding of src[0..n) to dst (b64_encoded_length(n) bytes,
 * no NUL). */
void b64_encode(const unsigned char *src, size_t n, char *dst);

/* Number of bytes text[0..len) decodes to, from its length and padding
 * alone, or -1 with the cause in why when these are not valid base64. The
 * characters themselves are checked by b64_decode. */
long long b64_decoded_length(const char *text, size_t len, char *why, size_t why_size);

/* Decode a text whose length b64_decoded_length accepted into dst.
 * Returns 0, or -1 with the first bad character and its position in why
 * (dst then holds garbage). */
int b64_decode(const char *text, size_t len, unsigned char *dst, char *why, size_t why_size);

/* Find the first character of text that is not base64 where it stands:
 * -1 with it described in why, or 0 when there is none. A full scan, for
 * error messages. */
int b64_find_bad(const char *text, size_t len, char *why, size_t why_size);

#endif /* TESSERA_CODECS_BASE64_H */
