/* SPDX-License-Identifier: MIT */
/*
 * Writing one array as Tesseract writes it: an encoded array
 * {"object_type": "array", "shape", "dtype", "data": {"buffer", "encoding"
 * [, "compression"] [, "checksum"]}} with the values as nested lists
 * (json), little-endian bytes in base64, or a reference into a binref file
 * ("<file>:<offset>[:<stored size>]"); or, for abstract evaluation,
 * {"shape", "dtype"}.
 */
#ifndef TESSERA_CODECS_ARRAY_ENCODE_H
#define TESSERA_CODECS_ARRAY_ENCODE_H

#include <stdbool.h>

#include <tessera/payload.h>

#include "binref_sink.h"
#include "json_writer.h"
#include "payload_error.h"

/* How the arrays of one response are written. */
typedef struct array_out {
    tsr_encoding enc;
    bool lz4;              /* base64, binref */
    bool checksum;         /* base64, binref */
    binref_sink *sink; /* binref: where the bytes go */
} array_out;

/* Returns 0 or a TSR_E_* code with the message in ctx (path names the
 * array). On failure the writer's content is unusable. Binref bytes are
 * written when the sink is finished. */
int write_encoded_array(json_writer *w, const tsr_array *a, const array_out *o,
                            const payload_ctx *ctx, const char *path);

/* The values alone, as nested lists (a bare value for rank 0), as
 * numpy's tolist() gives them; fails for non-finite and complex values. */
int write_plain_values(json_writer *w, const tsr_array *a, const payload_ctx *ctx,
                           const char *path);

int write_shape_dtype(json_writer *w, const tsr_array *a, const payload_ctx *ctx,
                          const char *path);

#endif /* TESSERA_CODECS_ARRAY_ENCODE_H */
