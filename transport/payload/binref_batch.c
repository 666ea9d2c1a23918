/* SPDX-License-Identifier: MIT */
#include "binref_batch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lz4frame.h>

#include "array_buffer.h"
#include "binref_io.h"
#include "binref_path.h"

typedef struct entry {
    tsr_decoded *out;
    tsr_dtype want;
    char path[TSR_PATH_MAX];  /* the array's, for messages */
    char label[TSR_PATH_MAX + 16];
    char *written;            /* the file as the payload names it */
    char *file;               /* the file to open */
    uint64_t offset;
    uint64_t stored;          /* bytes in the file */
    size_t bytes;             /* bytes of the array */
    int64_t count;
    tsr_stored st;
    void *staging;            /* the lz4 frame, when compressed */
} entry;

struct tsr_binref_batch {
    char *base_dir;
    char *base_real; /* found at the first array */
    bool allow_escape;
    binref_io io;
    entry *e;
    int n, cap;
};

tsr_binref_batch *tsr_binref_batch_new(const char *base_dir, bool allow_escape, binref_io io) {
    tsr_binref_batch *b = calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    if (base_dir != NULL && (b->base_dir = strdup(base_dir)) == NULL) {
        free(b);
        return NULL;
    }
    b->allow_escape = allow_escape;
    b->io = io;
    return b;
}

void tsr_binref_batch_free(tsr_binref_batch *b) {
    if (b == NULL) return;
    for (int k = 0; k < b->n; k++) {
        free(b->e[k].written);
        free(b->e[k].file);
        free(b->e[k].staging);
    }
    free(b->e);
    free(b->base_dir);
    free(b->base_real);
    free(b);
}

/* The byte counts of the reference against shape x dtype. */
static int check_sizes(const tsr_binref_ref *ref, const tsr_stored *st, entry *e,
                       const tsr_payload_ctx *ctx, const char *path) {
    const tsr_array *a = &e->out->array;
    if (tsr_shape_bytes(a->shape, a->rank, a->dtype, &e->count, &e->bytes) != 0)
        return tsr_payload_fail(ctx, TSR_E_PAYLOAD, path, "shape is too large to allocate");
    if (!st->lz4) {
        if (ref->has_size && ref->size != e->bytes)
            return tsr_payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "the binref buffer gives %" PRIu64 " bytes but shape x %s "
                                    "needs %zu",
                                    ref->size, tsr_dtype_name(a->dtype), e->bytes);
        e->stored = e->bytes;
        return 0;
    }
    if (!ref->has_size)
        return tsr_payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "an lz4-compressed binref buffer must give its stored size: "
                                "\"<path>:<offset>:<size>\"");
    /* A frame of n bytes is never larger than its bound; refusing more
     * keeps a hostile size from allocating. */
    size_t bound = LZ4F_compressFrameBound(e->bytes, NULL) + 64;
    if (ref->size > bound)
        return tsr_payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "the binref buffer gives %" PRIu64 " stored bytes, more than an "
                                "lz4 frame of the %zu bytes of shape x %s can take",
                                ref->size, e->bytes, tsr_dtype_name(a->dtype));
    e->stored = ref->size;
    return 0;
}

int tsr_binref_batch_add(tsr_binref_batch *b, const char *text, const tsr_stored *st,
                         tsr_decoded *out, tsr_dtype want, const tsr_payload_ctx *ctx,
                         const char *path) {
    char why[512];
    int rc;
    if (b->base_real == NULL && (rc = tsr_binref_base(b->base_dir, &b->base_real, why, sizeof why)) != 0)
        return tsr_payload_fail(ctx, rc, path, "%s", why);
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 8;
        entry *e = realloc(b->e, (size_t)cap * sizeof *e);
        if (e == NULL) return tsr_payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
        b->e = e;
        b->cap = cap;
    }
    entry *e = &b->e[b->n];
    memset(e, 0, sizeof *e);
    e->out = out;
    e->want = want;
    e->st = *st;
    snprintf(e->path, sizeof e->path, "%s", path);
    if (path[0] != '\0') snprintf(e->label, sizeof e->label, "field '%s'", path);

    tsr_binref_ref ref;
    rc = tsr_binref_ref_parse(text, &ref, why, sizeof why);
    if (rc == 0) rc = check_sizes(&ref, st, e, ctx, path);
    else rc = tsr_payload_fail(ctx, rc, path, "%s", why);
    if (rc == 0) {
        rc = tsr_binref_resolve(b->base_real, ref.path, b->allow_escape, &e->file, why, sizeof why);
        if (rc != 0) rc = tsr_payload_fail(ctx, rc, path, "%s", why);
    }
    if (rc != 0) {
        free(ref.path);
        free(e->file);
        return rc;
    }
    e->written = ref.path;
    e->offset = ref.offset;
    out->pending = true;
    b->n++;
    return 0;
}

/* Sizes against the files, before anything is allocated. */
static int check_files(tsr_binref_batch *b, const tsr_payload_ctx *ctx) {
    uint64_t size = 0;
    for (int k = 0; k < b->n; k++) {
        entry *e = &b->e[k];
        if (k == 0 || strcmp(e->file, b->e[k - 1].file) != 0) {
            struct stat st;
            if (stat(e->file, &st) != 0)
                return tsr_payload_fail(ctx, TSR_E_IO, e->path, "cannot open binref file '%s': %s",
                                        e->written, strerror(errno));
            if (!S_ISREG(st.st_mode))
                return tsr_payload_fail(ctx, TSR_E_IO, e->path,
                                        "binref file '%s' is not a regular file", e->written);
            size = (uint64_t)st.st_size;
        }
        char why[512];
        if (binref_check_range(e->written, size, e->offset, e->stored, NULL, why, sizeof why) != 0)
            return tsr_payload_fail(ctx, TSR_E_IO, e->path, "%s", why);
    }
    return 0;
}

static int allocate(tsr_binref_batch *b, binref_read *reads, const tsr_payload_ctx *ctx) {
    for (int k = 0; k < b->n; k++) {
        entry *e = &b->e[k];
        e->out->buffer = tsr_aligned_buffer_unzeroed(e->bytes);
        if (e->out->buffer == NULL)
            return tsr_payload_fail(ctx, TSR_E_NOMEM, e->path, "out of memory for %zu bytes",
                                    e->bytes);
        void *dst = e->out->buffer;
        if (e->st.lz4) {
            dst = e->staging = malloc(e->stored ? e->stored : 1);
            if (dst == NULL)
                return tsr_payload_fail(ctx, TSR_E_NOMEM, e->path,
                                        "out of memory for %" PRIu64 " bytes", e->stored);
        }
        reads[k] = (binref_read){.path = e->file, .offset = e->offset, .bytes = e->stored,
                                 .dst = dst, .what = e->label[0] ? e->label : NULL};
    }
    return 0;
}

int tsr_binref_batch_run(tsr_binref_batch *b, const tsr_payload_ctx *ctx) {
    if (b == NULL || b->n <= 0) return 0;
    int rc = check_files(b, ctx);
    if (rc != 0) return rc;
    binref_read *reads = calloc((size_t)b->n, sizeof *reads);
    if (reads == NULL) return tsr_payload_fail(ctx, TSR_E_NOMEM, NULL, "out of memory");
    rc = allocate(b, reads, ctx);
    char why[768];
    if (rc == 0 && (rc = binref_read_all(reads, b->n, b->io, why, sizeof why)) != 0)
        rc = tsr_payload_fail(ctx, rc, NULL, "%s", why);
    free(reads);
    for (int k = 0; k < b->n && rc == 0; k++) {
        entry *e = &b->e[k];
        rc = tsr_stored_finish(&e->st, e->staging, e->stored, e->out->buffer, e->bytes, e->count,
                               e->out->array.dtype, ctx, e->path);
        free(e->staging);
        e->staging = NULL;
        if (rc != 0) break;
        e->out->pending = false;
        rc = tsr_decoded_convert(e->out, e->want, ctx, e->path);
        e->out->array.data = e->out->buffer;
    }
    return rc;
}
