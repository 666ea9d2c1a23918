/* SPDX-License-Identifier: MIT */
/*
 * Checksums of array bytes: XXH3-64 of the raw little-endian C-order bytes
 * of an array (before compression), written into an encoded array's
 * "data" as "checksum": "xxh3:<16 lowercase hex digits>".
 */
#ifndef TESSERA_CODECS_CHECKSUM_H
#define TESSERA_CODECS_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#define CHECKSUM_TEXT_MAX 24 /* "xxh3:" + 16 hex + NUL, rounded up */

uint64_t checksum_xxh3(const void *data, size_t bytes);

/* "xxh3:0123456789abcdef" into text (CHECKSUM_TEXT_MAX bytes). */
void checksum_format(uint64_t sum, char text[CHECKSUM_TEXT_MAX]);

/* Parse a checksum text. Returns 0, or -1 with the cause in why (an
 * unknown algorithm, a malformed value). */
int checksum_parse(const char *text, uint64_t *sum, char *why, size_t why_size);

#endif /* TESSERA_CODECS_CHECKSUM_H */
