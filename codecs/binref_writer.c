/* SPDX-License-Identifier: MIT */
/* Appending arrays to "<dir>/<prefix>-<k>.bin" files: offsets are handed
 * out at once, the bytes are written together at flush. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binref_io.h"

typedef struct out_file {
    char *name; /* relative to dir */
    int fd;
    uint64_t size;
} out_file;

struct binref_writer {
    char *dir;
    int dirfd;
    char *prefix;
    uint64_t max_file_bytes;
    int mode;
    binref_io asked;
    binref_io io; /* resolved: URING or POSIX */
    out_file *files;
    int n_files, cap_files;
    binref_op *queue;
    int n_queue, cap_queue;
};

int binref_writer_open(binref_writer **out, const binref_writer_opts *o, char *why, size_t n) {
    *out = NULL;
    if (o == NULL || o->dir == NULL || o->prefix == NULL || o->prefix[0] == '\0' ||
        strchr(o->prefix, '/') != NULL) {
        snprintf(why, n, "binref files need a directory and a file name prefix without '/'");
        return TSR_E_ARGUMENT;
    }
    binref_io io;
    int rc = binref_io_resolve(o->io, &io, why, n);
    if (rc != 0) return rc;
    binref_writer *w = calloc(1, sizeof *w);
    if (w != NULL) w->dirfd = -1;
    if (w == NULL || (w->dir = strdup(o->dir)) == NULL || (w->prefix = strdup(o->prefix)) == NULL) {
        binref_writer_close(w, 0);
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    w->dirfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (w->dirfd < 0) {
        snprintf(why, n, "binref directory '%s': %s", o->dir,
                 errno == ENOTDIR ? "not a directory" : strerror(errno));
        binref_writer_close(w, 0);
        return TSR_E_IO;
    }
    w->max_file_bytes = o->max_file_bytes;
    w->mode = o->mode ? o->mode : 0600;
    w->asked = o->io;
    w->io = io;
    *out = w;
    return 0;
}

static int grow(void **p, int *cap, int need, size_t item) {
    if (need <= *cap) return 0;
    int c = *cap ? *cap * 2 : 8;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * item);
    if (q == NULL) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Create file k beneath the directory's descriptor; O_EXCL so that an
 * existing file is never overwritten, O_NOFOLLOW to say it outright: a
 * symlink planted under the name is refused, never written through. */
static int new_file(binref_writer *w, char *why, size_t n) {
    if (grow((void **)&w->files, &w->cap_files, w->n_files + 1, sizeof *w->files) != 0) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    out_file *f = &w->files[w->n_files];
    if (asprintf(&f->name, "%s-%d.bin", w->prefix, w->n_files) < 0) {
        f->name = NULL;
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    f->fd = openat(w->dirfd, f->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   w->mode);
    if (f->fd < 0) {
        snprintf(why, n, "cannot create binref file '%s/%s': %s", w->dir, f->name, strerror(errno));
        free(f->name);
        return TSR_E_IO;
    }
    f->size = 0;
    w->n_files++;
    return 0;
}

int binref_writer_add(binref_writer *w, const void *data, size_t bytes, const char **file,
                      uint64_t *offset, char *why, size_t n) {
    out_file *cur = w->n_files ? &w->files[w->n_files - 1] : NULL;
    /* An empty array takes no room, so it never starts a file. */
    bool roll = cur != NULL && w->max_file_bytes != 0 && cur->size > 0 && bytes > 0 &&
                (bytes > w->max_file_bytes || cur->size > w->max_file_bytes - bytes);
    if (cur == NULL || roll) {
        int rc = new_file(w, why, n);
        if (rc != 0) return rc;
        cur = &w->files[w->n_files - 1];
    }
    if (bytes > UINT64_MAX - cur->size) {
        snprintf(why, n, "binref file '%s' would pass 2^64 bytes", cur->name);
        return TSR_E_IO;
    }
    if (bytes > 0) {
        if (grow((void **)&w->queue, &w->cap_queue, w->n_queue + 1, sizeof *w->queue) != 0) {
            snprintf(why, n, "out of memory");
            return TSR_E_NOMEM;
        }
        w->queue[w->n_queue++] = (binref_op){.fd = cur->fd, .src = data,
                                             .len = bytes, .off = cur->size, .file = cur->name};
    }
    *file = cur->name;
    *offset = cur->size;
    cur->size += bytes;
    return 0;
}

int binref_writer_flush(binref_writer *w, char *why, size_t n) {
    int rc = binref_io_run(w->asked, w->io, w->queue, w->n_queue, true, why, n);
    w->n_queue = 0;
    return rc;
}

void binref_writer_close(binref_writer *w, int unlink_files) {
    if (w == NULL) return;
    for (int k = 0; k < w->n_files; k++) {
        close(w->files[k].fd);
        /* Best effort: a file that is already gone is what was wanted. */
        if (unlink_files) (void)unlinkat(w->dirfd, w->files[k].name, 0);
        free(w->files[k].name);
    }
    if (w->dirfd >= 0) close(w->dirfd);
    free(w->files);
    free(w->queue);
    free(w->dir);
    free(w->prefix);
    free(w);
}
