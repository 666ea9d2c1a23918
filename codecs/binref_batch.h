/* SPDX-License-Identifier: MIT */
/*
 * Binref arrays of one payload: queued while the payload is decoded (each
 * file resolved beneath the input directory and opened in one step, at
 * once, once per name: binref_path.h), then read together in one batch
 * through those descriptors, decompressed, verified and converted.
 */
#ifndef TESSERA_CODECS_BINREF_BATCH_H
#define TESSERA_CODECS_BINREF_BATCH_H

#include <stdbool.h>

#include "array_bytes.h"
#include "array_decode.h"
#include "binref_file.h"

typedef struct binref_batch binref_batch;

/* base_dir NULL: the current directory. NULL when out of memory. */
binref_batch *binref_batch_new(const char *base_dir, bool allow_escape, binref_io io);
void binref_batch_free(binref_batch *b);

/*
 * Queue the array whose "buffer" is text, whose shape and dtype out->array
 * already holds, to be read into out and converted to dtype want
 * (TSR_DTYPE_INVALID: keep its own). Marks out pending. out must stay
 * where it is until binref_batch_run.
 */
int binref_batch_add(binref_batch *b, const char *text, const stored_form *st,
                         decoded_array *out, tsr_dtype want, const payload_ctx *ctx,
                         const char *path);

/* Read everything queued. On failure the outs keep what they hold; their
 * owners free them. */
int binref_batch_run(binref_batch *b, const payload_ctx *ctx);

#endif /* TESSERA_CODECS_BINREF_BATCH_H */
