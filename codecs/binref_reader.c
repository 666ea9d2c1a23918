/* SPDX-License-Identifier: MIT */
/* Reading binref arrays: every file opened once (or given open), checked
 * with fstat on the descriptor that is read, every range checked against
 * the file's size before any byte moves, then one batch. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binref_io.h"

int binref_check_range(const char *path, uint64_t file_size, uint64_t offset, uint64_t bytes,
                       const char *what, char *why, size_t why_size) {
    char w[160];
    binref_what_prefix(w, sizeof w, what);
    if (offset > file_size) {
        snprintf(why, why_size, "%soffset %llu is past the end of '%s' (%llu bytes)", w,
                 (unsigned long long)offset, path, (unsigned long long)file_size);
        return TSR_E_IO;
    }
    if (bytes > file_size - offset) {
        snprintf(why, why_size,
                 "%s'%s' is truncated: it holds %llu of the %llu bytes at offset %llu", w, path,
                 (unsigned long long)(file_size - offset), (unsigned long long)bytes,
                 (unsigned long long)offset);
        return TSR_E_IO;
    }
    return 0;
}

int binref_fd_regular(int fd, const char *shown, const char *what, uint64_t *size, char *why,
                      size_t why_size) {
    char w[160];
    binref_what_prefix(w, sizeof w, what);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "%scannot stat binref file '%s': %s", w, shown, strerror(errno));
        return TSR_E_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "%sbinref file '%s' is not a regular file", w, shown);
        return TSR_E_IO;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        snprintf(why, why_size, "%scannot read binref file '%s': %s", w, shown, strerror(errno));
        return TSR_E_IO;
    }
    *size = (uint64_t)st.st_size;
    return 0;
}

int binref_open_entry(int dirfd, const char *name, const char *shown, int *fd, uint64_t *size,
                      char *why, size_t n) {
    *fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (*fd < 0) {
        int e = errno;
        if (e == ELOOP)
            snprintf(why, n, "binref file '%s' is a symlink, which is not followed", shown);
        else
            snprintf(why, n, "cannot open binref file '%s': %s", shown, strerror(e));
        return TSR_E_IO;
    }
    int rc = binref_fd_regular(*fd, shown, NULL, size, why, n);
    if (rc != 0) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

/* Reads of open descriptors first, by descriptor, then those by path. */
static int by_file(const binref_read *x, const binref_read *y) {
    if (x->has_fd != y->has_fd) return x->has_fd ? -1 : 1;
    if (x->has_fd) return x->fd < y->fd ? -1 : x->fd > y->fd;
    return strcmp(x->path, y->path);
}

static int by_place(const void *a, const void *b) {
    const binref_read *const *x = a, *const *y = b;
    int c = by_file(*x, *y);
    if (c != 0) return c;
    /* Ascending offsets: the file is read front to back. */
    return (*x)->offset < (*y)->offset ? -1 : (*x)->offset > (*y)->offset;
}

/* Open the files (once each, in path order) and fill ops; fds[k] is a
 * descriptor opened here, to close. */
static int open_all(binref_read *reads, int n_reads, binref_read **sorted, binref_op *ops,
                    int *n_ops, int *fds, int *n_fds, char *why, size_t n) {
    for (int i = 0; i < n_reads; i++) sorted[i] = &reads[i];
    qsort(sorted, (size_t)n_reads, sizeof *sorted, by_place);
    int fd = -1;
    uint64_t size = 0;
    for (int i = 0; i < n_reads; i++) {
        binref_read *r = sorted[i];
        if (i == 0 || by_file(r, sorted[i - 1]) != 0) {
            if (r->has_fd) {
                fd = r->fd;
            } else {
                fd = open(r->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd < 0) {
                    char w[160];
                    binref_what_prefix(w, sizeof w, r->what);
                    snprintf(why, n, "%scannot open binref file '%s': %s", w, r->path,
                             strerror(errno));
                    return TSR_E_IO;
                }
                fds[(*n_fds)++] = fd;
            }
            int rc = binref_fd_regular(fd, r->path, r->what, &size, why, n);
            if (rc != 0) return rc;
        }
        int rc = binref_check_range(r->path, size, r->offset, r->bytes, r->what, why, n);
        if (rc != 0) return rc;
        if (r->bytes > 0)
            ops[(*n_ops)++] = (binref_op){.fd = fd, .dst = r->dst, .len = r->bytes,
                                          .off = r->offset, .file = r->path, .what = r->what};
    }
    return 0;
}

int binref_read_all(binref_read *reads, int n_reads, binref_io io, char *why, size_t n) {
    if (n_reads <= 0) return 0;
    binref_io used;
    int rc = binref_io_resolve(io, &used, why, n);
    if (rc != 0) return rc;
    /* A few reads (the usual case) need no allocation. */
    enum { FEW = 8 };
    binref_read *sorted_few[FEW];
    binref_op ops_few[FEW];
    int fds_few[FEW];
    bool few = n_reads <= FEW;
    binref_read **sorted = few ? sorted_few : malloc((size_t)n_reads * sizeof *sorted);
    binref_op *ops = few ? ops_few : malloc((size_t)n_reads * sizeof *ops);
    int *fds = few ? fds_few : malloc((size_t)n_reads * sizeof *fds);
    int n_ops = 0, n_fds = 0;
    if (sorted == NULL || ops == NULL || fds == NULL) {
        snprintf(why, n, "out of memory");
        rc = TSR_E_NOMEM;
    } else {
        rc = open_all(reads, n_reads, sorted, ops, &n_ops, fds, &n_fds, why, n);
        if (rc == 0) rc = binref_io_run(io, used, ops, n_ops, false, why, n);
    }
    for (int k = 0; k < n_fds; k++) close(fds[k]);
    if (!few) {
        free(sorted);
        free(ops);
        free(fds);
    }
    return rc;
}
