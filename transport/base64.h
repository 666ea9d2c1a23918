/*
 * Standard base64 (RFC 4648, '+' '/' alphabet, '=' padding), as Tesseract
 * writes array buffers. Decoding is strict, like Tesseract's validating
 * decoder: no whitespace, no other characters, padding where it belongs.
 */
#ifndef TESSERA_TRANSPORT_BASE64_H
#define TESSERA_TRANSPORT_BASE64_H

#include <stddef.h>

/* Length of the encoding of n bytes, without the terminating NUL; 0 with
 * *overflow set if it does not fit a size_t. */
size_t tsr_b64_encoded_length(size_t n, int *overflow);

/* Write the encoding of src[0..n) to dst (tsr_b64_encoded_length(n) bytes,
 * no NUL). */
void tsr_b64_encode(const unsigned char *src, size_t n, char *dst);

/* Number of bytes text[0..len) decodes to, or -1 with the cause (and the
 * position of the first bad character) in why when it is not valid base64. */
long long tsr_b64_decoded_length(const char *text, size_t len, char *why, size_t why_size);

/* Decode a text that tsr_b64_decoded_length accepted into dst. */
void tsr_b64_decode(const char *text, size_t len, unsigned char *dst);

#endif /* TESSERA_TRANSPORT_BASE64_H */
