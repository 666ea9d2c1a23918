/* SPDX-License-Identifier: MIT */
/*
 * Error messages of payload decoding and encoding. Every message names
 * what is known of its context: component, endpoint, the field's path in
 * the payload (e.g. "inputs.mesh.nodes" or "tangent_vector.x"), then the
 * cause.
 */
#ifndef TESSERA_CODECS_ERROR_H
#define TESSERA_CODECS_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include <tessera/tessera.h>

/* Longest path kept for messages; longer ones are cut with "...". */
#define PAYLOAD_PATH_MAX 256

struct hoist_doc;
struct binref_batch;

/* The component's limits on the arrays a payload decodes (0: none), and
 * the bytes decoded so far; checked before each buffer is allocated. */
typedef struct payload_limits {
    uint64_t max_array_bytes;
    uint64_t max_call_bytes;
    uint64_t used;
} payload_limits;

typedef struct payload_ctx {
    const char *component; /* NULL when decoding a lone array */
    const char *endpoint;  /* NULL likewise */
    tsr_error *err;        /* may be NULL */
    /* Decoding only; both may be NULL. */
    const struct hoist_doc *hoist;      /* long strings cut out of the text */
    struct binref_batch *binrefs;   /* where binref arrays wait to be read;
                                           NULL: binref buffers are refused */
    payload_limits *limits;         /* NULL: none */
} payload_ctx;

/* Record code, message and loc in ctx->err; returns code. path may be
 * NULL. The loc is the path without what lies inside an array
 * ("inputs.x[3]" gives "inputs.x"), a top-level list's item as a dotted
 * index ("jvp_inputs[1]" gives "jvp_inputs.1"). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int payload_fail(const payload_ctx *ctx, int code, const char *path, const char *fmt, ...);

/* Clear ctx->err to "no error". */
void payload_ok(const payload_ctx *ctx);

/* dst = "parent.child" (or "child" when parent is empty), cut to fit. */
void path_join(char dst[PAYLOAD_PATH_MAX], const char *parent, const char *child);
/* dst = "parent[index]", cut to fit. */
void path_index(char dst[PAYLOAD_PATH_MAX], const char *parent, size_t index);

#endif /* TESSERA_CODECS_ERROR_H */
