/* SPDX-License-Identifier: MIT */
/* The files transport in the worker: a request's inputs and seeds are
 * read from the spool into private buffers, its results written back to
 * the spool. The host removes both files after the call. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecs/binref_file.h"
#include "spool.h"
#include "worker.h"


typedef struct worker_files worker_files;

typedef struct files_buf {
    void *p;
    size_t cap;
} files_buf;

struct worker_files {
    char dir[PATH_MAX];
    int dirfd;                      /* the spool's: its files are opened beneath it */
    char tag[SPOOL_TAG_MAX];
    char in_path[PATH_MAX];         /* for messages */
    char in_entry[SPOOL_TAG_MAX + 16];
    char out_prefix[SPOOL_TAG_MAX + 8];
    binref_io io;
    files_buf *in, *out;            /* inputs then seeds; results */
    size_t cap_in, cap_out;
    uint64_t *sized;                /* bytes each result's buffer was given for */
    size_t cap_sized;
    binref_read *reads;
    int n_reads;
    size_t cap_reads;
};

int files_open(worker_state *ws, const char *dir, const char *tag, int file_io, char *why,
               size_t n) {
    worker_files *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    if ((size_t)snprintf(f->dir, sizeof f->dir, "%s", dir) >= sizeof f->dir ||
        (size_t)snprintf(f->tag, sizeof f->tag, "%s", tag) >= sizeof f->tag ||
        strchr(tag, '/') || spool_file(f->in_path, sizeof f->in_path, dir, tag, 0) != 0 ||
        spool_entry(f->in_entry, sizeof f->in_entry, tag, 0) != 0 ||
        spool_prefix(f->out_prefix, sizeof f->out_prefix, tag, 1) != 0) {
        snprintf(why, n, "the spool '%s' or its tag '%s' is too long or malformed", dir, tag);
        free(f);
        return TSR_E_ARGUMENT;
    }
    f->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (f->dirfd < 0) {
        snprintf(why, n, "cannot open the spool '%s': %s", dir, strerror(errno));
        free(f);
        return TSR_E_IO;
    }
    f->io = (binref_io)file_io;
    ws->files = f;
    return 0;
}

void files_close(worker_state *ws) {
    worker_files *f = ws->files;
    if (!f) return;
    for (size_t i = 0; i < f->cap_in; i++) free(f->in[i].p);
    for (size_t i = 0; i < f->cap_out; i++) free(f->out[i].p);
    free(f->in);
    free(f->out);
    free(f->sized);
    free(f->reads);
    close(f->dirfd);
    free(f);
    ws->files = NULL;
}

/* Grow a zero-filled array of `elem`-byte items to at least want. */
static int grow_zeroed(void *pp, size_t *cap, size_t want, size_t elem) {
    void **p = pp;
    if (want <= *cap) return 0;
    void *q = realloc(*p, want * elem);
    if (!q) return -1;
    memset((char *)q + *cap * elem, 0, (want - *cap) * elem);
    *p = q;
    *cap = want;
    return 0;
}

int files_begin(worker_state *ws, const tsr_args *args, char *why, size_t n) {
    worker_files *f = ws->files;
    size_t n_in = (size_t)args->n_inputs + (size_t)args->n_seeds, n_out = (size_t)args->n_results;
    if (grow_zeroed(&f->in, &f->cap_in, n_in, sizeof *f->in) ||
        grow_zeroed(&f->out, &f->cap_out, n_out, sizeof *f->out) ||
        grow_zeroed(&f->sized, &f->cap_sized, n_out, sizeof *f->sized) ||
        grow_zeroed(&f->reads, &f->cap_reads, n_in, sizeof *f->reads)) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    f->n_reads = 0;
    return 0;
}

/* b holding at least bytes (never NULL, even for none: NULL means "not
 * allocated" to plugins). */
static void *reserve(files_buf *b, uint64_t bytes, char *why, size_t n) {
    size_t want = bytes < TSR_ALIGNMENT ? TSR_ALIGNMENT : (size_t)bytes;
    if (bytes > SIZE_MAX - TSR_ALIGNMENT) {
        snprintf(why, n, "%llu bytes do not fit this address space", (unsigned long long)bytes);
        return NULL;
    }
    if (want <= b->cap) return b->p;
    want = (want + TSR_ALIGNMENT - 1) / TSR_ALIGNMENT * TSR_ALIGNMENT;
    void *p = aligned_alloc(TSR_ALIGNMENT, want);
    if (!p) {
        snprintf(why, n, "out of memory for %llu bytes", (unsigned long long)bytes);
        return NULL;
    }
    free(b->p);
    b->p = p;
    b->cap = want;
    return p;
}

void *files_input(worker_state *ws, int32_t slot, const binref *ref, const char *what, char *why,
                  size_t n) {
    worker_files *f = ws->files;
    /* Only one input file is ever written: its index is 0. */
    if (ref->seg != 0 || ref->reserved != 0) {
        snprintf(why, n, "file %u of the request does not exist", (unsigned)ref->seg);
        return NULL;
    }
    if (slot < 0 || (size_t)slot >= f->cap_in || (size_t)f->n_reads >= f->cap_reads) {
        snprintf(why, n, "array %d is not part of the request", (int)slot);
        return NULL;
    }
    void *p = reserve(&f->in[slot], ref->bytes, why, n);
    if (p && ref->bytes > 0)
        f->reads[f->n_reads++] = (binref_read){.path = f->in_path, .offset = ref->offset,
                                               .bytes = (size_t)ref->bytes, .dst = p,
                                               .what = what};
    return p;
}

void *files_result(worker_state *ws, int32_t k, uint64_t bytes, char *why, size_t n) {
    worker_files *f = ws->files;
    if (k < 0 || (size_t)k >= f->cap_out || (size_t)k >= f->cap_sized) {
        snprintf(why, n, "result %d is not part of the request", (int)k);
        return NULL;
    }
    /* One byte more, a NUL: text results are C strings (plugin.h). */
    if (bytes > SIZE_MAX - 2 * TSR_ALIGNMENT) {
        snprintf(why, n, "%llu bytes do not fit this address space", (unsigned long long)bytes);
        return NULL;
    }
    char *p = reserve(&f->out[k], bytes + 1, why, n);
    if (p) {
        p[bytes] = '\0';
        f->sized[k] = bytes;
    }
    return p;
}

int files_read_inputs(worker_state *ws, char *why, size_t n) {
    worker_files *f = ws->files;
    int rc = 0, fd = -1;
    if (f->n_reads > 0) {
        /* A plain entry of the spool, opened beneath its descriptor: not a
         * symlink followed nor a FIFO waited on. */
        uint64_t size;
        rc = binref_open_entry(f->dirfd, f->in_entry, f->in_path, &fd, &size, why, n);
        for (int k = 0; k < f->n_reads; k++) {
            f->reads[k].fd = fd;
            f->reads[k].has_fd = true;
        }
    }
    if (rc == 0) rc = binref_read_all(f->reads, f->n_reads, f->io, why, n);
    if (fd >= 0) close(fd);
    f->n_reads = 0;
    return rc;
}

int files_write_results(worker_state *ws, const tsr_args *args, char *why, size_t n) {
    worker_files *f = ws->files;
    if (ws->ep == TSR_EP_ABSTRACT_EVAL) return 0;
    binref_writer *w = NULL;
    int rc = 0;
    for (int32_t k = 0; !rc && k < args->n_results; k++) {
        wire_array *wa = &ws->v.results[k];
        memset(&wa->ref, 0, sizeof wa->ref);
        /* Never produced (the host reports it), or empty: nothing to write. */
        if (!ws->results[k].data || f->sized[k] == 0) continue;
        if (!w) {
            binref_writer_opts o = {.dir = f->dir, .prefix = f->out_prefix, .io = f->io};
            if ((rc = binref_writer_open(&w, &o, why, n)) != 0) break;
        }
        /* The bytes the buffer was given for: a plugin that changed the
         * shape is refused by the host, and is never read past. */
        const char *file;
        uint64_t offset = 0;
        rc = binref_writer_add(w, ws->results[k].data, (size_t)f->sized[k], &file, &offset, why,
                               n);
        wa->ref.offset = offset;
        wa->ref.bytes = f->sized[k];
    }
    if (!rc && w) rc = binref_writer_flush(w, why, n);
    binref_writer_close(w, rc != 0);
    return rc;
}
