/* SPDX-License-Identifier: MIT */
/*
 * Where the binref arrays of one response go: a binref writer opened at
 * the first array (so a response without arrays makes no file), and the
 * buffers (compressed or byte-swapped copies) that must live until the
 * bytes are written.
 */
#ifndef TESSERA_CODECS_BINREF_SINK_H
#define TESSERA_CODECS_BINREF_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binref_file.h"
#include "payload_error.h"

typedef struct binref_sink {
    const char *dir;          /* NULL: "." */
    uint64_t max_file_bytes;
    int mode;
    binref_io io;
    binref_writer *writer;    /* NULL until the first array */
    void **owned;
    int n_owned, cap_owned;
} binref_sink;

/* Append bytes (kept valid by the caller until finish; owned, which may
 * be NULL, is freed by the sink) and say where they lie. */
int binref_sink_add(binref_sink *s, const void *bytes, size_t n, void *owned,
                        const char **file, uint64_t *offset, const payload_ctx *ctx,
                        const char *path);

/* Write everything (when ok) and close; on failure, or when !ok, remove
 * the files. Returns 0 or the failure's code. */
int binref_sink_finish(binref_sink *s, bool ok, const payload_ctx *ctx);

#endif /* TESSERA_CODECS_BINREF_SINK_H */
