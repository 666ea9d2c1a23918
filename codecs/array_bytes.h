/* SPDX-License-Identifier: MIT */
/*
 * The bytes of an encoded array as stored (in a base64 string or a binref
 * file) and as the array holds them: compression, checksum and byte order,
 * shared by the base64 and binref encodings in both directions.
 */
#ifndef TESSERA_CODECS_ARRAY_BYTES_H
#define TESSERA_CODECS_ARRAY_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <tessera/plugin.h>

#include "payload_error.h"

/* What "data" says about the stored bytes besides the buffer. */
typedef struct stored_form {
    bool lz4;           /* "compression": "lz4" */
    bool has_checksum;  /* "checksum": "xxh3:..." */
    uint64_t checksum;
} stored_form;

/* Read "compression" and "checksum" of data (either may be absent). */
int stored_read(json_t *data, stored_form *st, const payload_ctx *ctx, const char *path);

/*
 * Make dst (bytes long, count elements of dtype) the array: decompress the
 * lz4 frame src[0..src_len) into it, or, uncompressed, take dst as it is
 * (src NULL); verify the checksum; bring the bytes to native order.
 */
int stored_finish(const stored_form *st, const void *src, size_t src_len, void *dst,
                      size_t bytes, int64_t count, tsr_dtype dtype, const payload_ctx *ctx,
                      const char *path);

/* The bytes to store for array a (bytes long): little-endian, then
 * compressed when lz4. *stored points at a->data or at *owned (free()),
 * which holds a copy when one was needed. When checksum is not NULL it
 * receives the checksum of the little-endian bytes. */
int stored_make(const tsr_array *a, int64_t count, size_t bytes, bool lz4,
                    uint64_t *checksum, const void **stored, size_t *stored_len, void **owned,
                    const payload_ctx *ctx, const char *path);

#endif /* TESSERA_CODECS_ARRAY_BYTES_H */
