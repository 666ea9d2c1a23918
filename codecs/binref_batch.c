/* SPDX-License-Identifier: MIT */
#include "binref_batch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4frame.h>

#include "array_buffer.h"
#include "binref_io.h"
#include "binref_path.h"
#include "lz4_frame.h"

typedef struct entry {
    decoded_array *out;
    tsr_dtype want;
    char path[PAYLOAD_PATH_MAX];  /* the array's, for messages */
    char label[PAYLOAD_PATH_MAX + 16];
    char *written;            /* the file as the payload names it */
    int file;                 /* its index in the batch's files */
    uint64_t offset;
    uint64_t stored;          /* bytes in the file */
    size_t bytes;             /* bytes of the array */
    int64_t count;
    stored_form st;
    void *staging;            /* the lz4 frame, when compressed */
} entry;

/* A file the payload names, opened once however many arrays it holds. */
typedef struct bfile {
    const char *written;      /* the first entry's */
    int fd;
    uint64_t size;
} bfile;

struct binref_batch {
    char *base_dir;
    binref_dir dir;       /* opened at the first array */
    bool dir_open;
    bool allow_escape;
    binref_io io;
    entry *e;
    int n, cap;
    bfile *f;
    int n_files, cap_files;
    int *slots;               /* file index + 1 by hash of the name; 0: free */
    size_t n_slots;           /* a power of two, at least twice n_files */
};

binref_batch *binref_batch_new(const char *base_dir, bool allow_escape, binref_io io) {
    binref_batch *b = calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    if (base_dir != NULL && (b->base_dir = strdup(base_dir)) == NULL) {
        free(b);
        return NULL;
    }
    b->dir.fd = -1;
    b->allow_escape = allow_escape;
    b->io = io;
    return b;
}

void binref_batch_free(binref_batch *b) {
    if (b == NULL) return;
    for (int k = 0; k < b->n; k++) {
        free(b->e[k].written);
        free(b->e[k].staging);
    }
    for (int k = 0; k < b->n_files; k++) close(b->f[k].fd);
    free(b->e);
    free(b->f);
    free(b->slots);
    free(b->base_dir);
    binref_dir_close(&b->dir);
    free(b);
}

static size_t name_hash(const char *s) {
    size_t h = 1469598103934665603u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot of name: its file's, or the free one where it would go. */
static size_t slot_of(const binref_batch *b, const char *name) {
    size_t mask = b->n_slots - 1, i = name_hash(name) & mask;
    while (b->slots[i] != 0 && strcmp(b->f[b->slots[i] - 1].written, name) != 0)
        i = (i + 1) & mask;
    return i;
}

/* Room for one more file in the table and the array. */
static int reserve_file(binref_batch *b) {
    if (b->n_files == b->cap_files) {
        int cap = b->cap_files ? b->cap_files * 2 : 4;
        bfile *f = realloc(b->f, (size_t)cap * sizeof *f);
        if (f == NULL) return -1;
        b->f = f;
        b->cap_files = cap;
    }
    if ((size_t)(b->n_files + 1) * 2 > b->n_slots) {
        size_t n = b->n_slots ? b->n_slots * 2 : 16;
        int *slots = calloc(n, sizeof *slots);
        if (slots == NULL) return -1;
        free(b->slots);
        b->slots = slots;
        b->n_slots = n;
        for (int k = 0; k < b->n_files; k++) b->slots[slot_of(b, b->f[k].written)] = k + 1;
    }
    return 0;
}

/* The file written as the payload names it, opened (resolved and checked
 * in the same step) the first time it is named. Returns 0 with *index, or
 * a failure with a message. */
static int file_of(binref_batch *b, const char *written, int *index,
                   const payload_ctx *ctx, const char *path) {
    if (reserve_file(b) != 0) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
    size_t slot = slot_of(b, written);
    if (b->slots[slot] != 0) {
        *index = b->slots[slot] - 1;
        return 0;
    }
    char why[768];
    bfile *f = &b->f[b->n_files];
    int rc = binref_open(&b->dir, written, b->allow_escape, &f->fd, &f->size, why, sizeof why);
    if (rc != 0) return payload_fail(ctx, rc, path, "%s", why);
    f->written = written;
    *index = b->n_files++;
    b->slots[slot] = *index + 1;
    return 0;
}

/* The byte counts of the reference against shape x dtype. */
static int check_sizes(const binref_ref *ref, const stored_form *st, entry *e,
                       const payload_ctx *ctx, const char *path) {
    const tsr_array *a = &e->out->array;
    if (array_shape_bytes(a->shape, a->rank, a->dtype, &e->count, &e->bytes) != 0)
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "shape is too large to allocate");
    if (!st->lz4) {
        if (ref->has_size && ref->size != e->bytes)
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "the binref buffer gives %" PRIu64 " bytes but shape x %s "
                                    "needs %zu",
                                    ref->size, tsr_dtype_name(a->dtype), e->bytes);
        e->stored = e->bytes;
        return 0;
    }
    if (!ref->has_size)
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "an lz4-compressed binref buffer must give its stored size: "
                                "\"<path>:<offset>:<size>\"");
    /* A frame of n bytes is never larger than its bound; refusing more
     * keeps a hostile size from allocating. */
    size_t bound = LZ4F_compressFrameBound(e->bytes, NULL) + 64;
    if (ref->size > bound)
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "the binref buffer gives %" PRIu64 " stored bytes, more than an "
                                "lz4 frame of the %zu bytes of shape x %s can take",
                                ref->size, e->bytes, tsr_dtype_name(a->dtype));
    if (e->bytes > lz4_frame_max_content(ref->size))
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "shape x %s needs %zu bytes, more than an lz4 frame of %" PRIu64
                                " stored bytes can hold",
                                tsr_dtype_name(a->dtype), e->bytes, ref->size);
    e->stored = ref->size;
    return 0;
}

int binref_batch_add(binref_batch *b, const char *text, const stored_form *st,
                         decoded_array *out, tsr_dtype want, const payload_ctx *ctx,
                         const char *path) {
    char why[512];
    int rc;
    if (!b->dir_open) {
        if ((rc = binref_dir_open(b->base_dir, &b->dir, why, sizeof why)) != 0)
            return payload_fail(ctx, rc, path, "%s", why);
        b->dir_open = true;
    }
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 8;
        entry *e = realloc(b->e, (size_t)cap * sizeof *e);
        if (e == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
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

    binref_ref ref;
    rc = binref_ref_parse(text, &ref, why, sizeof why);
    if (rc == 0) rc = check_sizes(&ref, st, e, ctx, path);
    else rc = payload_fail(ctx, rc, path, "%s", why);
    /* The entry owns the name from here: a new file borrows it. */
    e->written = ref.path;
    if (rc == 0) rc = file_of(b, ref.path, &e->file, ctx, path);
    if (rc != 0) {
        free(ref.path);
        e->written = NULL;
        return rc;
    }
    e->offset = ref.offset;
    out->pending = true;
    b->n++;
    return 0;
}

/* Sizes against the files (fstat of the descriptors that are read), before
 * anything is allocated. */
static int check_files(binref_batch *b, const payload_ctx *ctx) {
    char why[512];
    for (int k = 0; k < b->n_files; k++) {
        bfile *f = &b->f[k];
        if (binref_fd_regular(f->fd, f->written, NULL, &f->size, why, sizeof why) != 0)
            for (int i = 0; i < b->n; i++)
                if (b->e[i].file == k) return payload_fail(ctx, TSR_E_IO, b->e[i].path, "%s", why);
    }
    for (int k = 0; k < b->n; k++) {
        entry *e = &b->e[k];
        if (binref_check_range(e->written, b->f[e->file].size, e->offset, e->stored, NULL, why,
                               sizeof why) != 0)
            return payload_fail(ctx, TSR_E_IO, e->path, "%s", why);
    }
    return 0;
}

static int allocate(binref_batch *b, binref_read *reads, const payload_ctx *ctx) {
    for (int k = 0; k < b->n; k++) {
        entry *e = &b->e[k];
        e->out->buffer = aligned_buffer_unzeroed(e->bytes);
        if (e->out->buffer == NULL)
            return payload_fail(ctx, TSR_E_NOMEM, e->path, "out of memory for %zu bytes",
                                    e->bytes);
        void *dst = e->out->buffer;
        if (e->st.lz4) {
            dst = e->staging = malloc(e->stored ? e->stored : 1);
            if (dst == NULL)
                return payload_fail(ctx, TSR_E_NOMEM, e->path,
                                        "out of memory for %" PRIu64 " bytes", e->stored);
        }
        reads[k] = (binref_read){.path = e->written, .offset = e->offset, .bytes = e->stored,
                                 .dst = dst, .what = e->label[0] ? e->label : NULL,
                                 .fd = b->f[e->file].fd, .has_fd = true};
    }
    return 0;
}

int binref_batch_run(binref_batch *b, const payload_ctx *ctx) {
    if (b == NULL || b->n <= 0) return 0;
    size_t n = (size_t)b->n; /* before calls that gcc cannot see leave b->n alone */
    int rc = check_files(b, ctx);
    if (rc != 0) return rc;
    binref_read *reads = calloc(n, sizeof *reads);
    if (reads == NULL) return payload_fail(ctx, TSR_E_NOMEM, NULL, "out of memory");
    rc = allocate(b, reads, ctx);
    char why[768];
    if (rc == 0 && (rc = binref_read_all(reads, b->n, b->io, why, sizeof why)) != 0)
        rc = payload_fail(ctx, rc, NULL, "%s", why);
    free(reads);
    for (int k = 0; k < b->n && rc == 0; k++) {
        entry *e = &b->e[k];
        rc = stored_finish(&e->st, e->staging, e->stored, e->out->buffer, e->bytes, e->count,
                               e->out->array.dtype, ctx, e->path);
        free(e->staging);
        e->staging = NULL;
        if (rc != 0) break;
        e->out->pending = false;
        rc = decoded_convert(e->out, e->want, ctx, e->path);
        e->out->array.data = e->out->buffer;
    }
    return rc;
}
