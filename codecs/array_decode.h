/* SPDX-License-Identifier: MIT */
/*
 * Decoding one array from a parsed JSON value: Tesseract's encoded arrays
 * (json, base64 and binref buffers, lz4-compressed or not, with or without
 * a checksum), plain numbers, booleans and nested lists, and for abstract
 * evaluation {"shape": [...], "dtype": "..."} descriptions.
 */
#ifndef TESSERA_CODECS_ARRAY_DECODE_H
#define TESSERA_CODECS_ARRAY_DECODE_H

#include <stdbool.h>

#include <jansson.h>

#include <tessera/plugin.h>

#include "payload_error.h"

typedef struct decoded_array {
    tsr_array array; /* data points into buffer; NULL for abstract arrays */
    void *buffer;    /* owned; free() */
    bool pending;    /* a binref array queued in ctx->binrefs: its buffer is
                        filled (and converted) by binref_batch_run */
} decoded_array;

/*
 * Decode value, found at path, as an array of dtype want (converted under
 * same_kind casting with every value checked), or, when want is
 * TSR_DTYPE_INVALID, of its own dtype (plain values: bool, int64 or
 * float64 after their contents). abstract: only shape and dtype matter,
 * no buffer is kept, and {"shape", "dtype"} objects are accepted.
 * Returns 0 or a TSR_E_* code with the message in ctx.
 */
int decode_array_value(json_t *value, tsr_dtype want, bool abstract,
                           const payload_ctx *ctx, const char *path, decoded_array *out);

/* Convert a decoded buffer to dtype want, value by value (same_kind
 * casts, every value checked); TSR_DTYPE_INVALID keeps it. */
int decoded_convert(decoded_array *out, tsr_dtype want, const payload_ctx *ctx,
                        const char *path);

/* Take bytes for a buffer about to be allocated from the payload's limits
 * (max_array_bytes, max_call_bytes); released: bytes given back first.
 * 0, or TSR_E_LIMIT naming path and the option to raise (array_convert.c,
 * like decoded_convert). */
int array_take_bytes(const payload_ctx *ctx, const char *path, size_t bytes,
                         size_t released);

#endif /* TESSERA_CODECS_ARRAY_DECODE_H */
