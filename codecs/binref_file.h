/* SPDX-License-Identifier: MIT */
/*
 * Binref files: the bytes of arrays appended to .bin files and read back,
 * with io_uring (batched submissions) or, where io_uring is unavailable
 * (old kernel, /proc/sys/kernel/io_uring_disabled, seccomp), with
 * pwrite/pread. Used by the json+binref encoding and by workers that move
 * arrays through a spool directory instead of shared memory.
 *
 * A writer appends the arrays of one result to "<dir>/<prefix>-<k>.bin",
 * starting file k+1 when the next array would take file k past
 * max_file_bytes (an array larger than that gets a file of its own).
 * Files are created O_EXCL|O_NOFOLLOW beneath a descriptor of dir, with
 * mode 0600 unless told otherwise: a name planted in advance (a file, a
 * symlink, a FIFO) is never written through.
 *
 * Thread safety: a writer is used by one thread; reads are independent.
 */
#ifndef TESSERA_CODECS_BINREF_FILE_H
#define TESSERA_CODECS_BINREF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/tessera.h"

typedef enum binref_io {
    BINREF_IO_AUTO = 0,     /* io_uring when it works here, else pread/pwrite;
                               batches under 256 KiB take pread/pwrite always */
    BINREF_IO_URING = 1,    /* io_uring or an error */
    BINREF_IO_POSIX = 2     /* pread/pwrite */
} binref_io;

/* The path AUTO takes on this machine: BINREF_IO_URING or BINREF_IO_POSIX
 * (probed once, thread-safe, cached), and why when it is POSIX. */
binref_io binref_io_probe(const char **why_not_uring);
/* "io_uring" or "pread/pwrite". */
const char *binref_io_name(binref_io io);

typedef struct binref_writer binref_writer;

typedef struct binref_writer_opts {
    const char *dir;            /* where the files go (must exist) */
    const char *prefix;         /* file name prefix, no '/' */
    uint64_t max_file_bytes;    /* rollover limit; 0 = none */
    int mode;                   /* file mode, 0 = 0600 */
    binref_io io;
} binref_writer_opts;

int binref_writer_open(binref_writer **out, const binref_writer_opts *o, char *why, size_t n);
/*
 * Queue the bytes of one array (they must stay valid until the next
 * binref_writer_flush) and say where they will lie: *file is the file's
 * name relative to dir (valid until binref_writer_close) and *offset its
 * byte offset. Nothing is written until flush.
 */
int binref_writer_add(binref_writer *w, const void *data, size_t bytes, const char **file,
                      uint64_t *offset, char *why, size_t n);
/* Write everything queued (one batch of submissions per file) and wait. */
int binref_writer_flush(binref_writer *w, char *why, size_t n);
/* Close the files; with unlink_files, remove every file this writer made. */
void binref_writer_close(binref_writer *w, int unlink_files);

/*
 * One read of `bytes` at `offset` into dst, from the open file fd (with
 * has_fd: path then only names it in messages; the caller opened it, with
 * binref_open or binref_open_entry, and closes it), or from the file
 * at `path`, a path the caller trusts (opened here, symlinks followed,
 * without blocking on a FIFO; anything but a regular file refused).
 */
typedef struct binref_read {
    const char *path;
    uint64_t offset;
    size_t bytes;
    void *dst;
    const char *what;   /* named first in messages (e.g. the array's field); may be NULL */
    int fd;             /* with has_fd */
    bool has_fd;
} binref_read;

/* Perform the reads (batched with io_uring; files opened once each, each
 * descriptor checked once with fstat). A missing file, anything but a
 * regular file, a short file ("truncated: 100 of 800 bytes at offset
 * ...") or an offset past the end is an error naming the path. */
int binref_read_all(binref_read *reads, int n_reads, binref_io io, char *why, size_t n);

/* Open `name`, an entry of the directory dirfd (no '/'), for reading in
 * one step: a symlink there is not followed, a FIFO cannot block the
 * open, and only a regular file is accepted (fstat of *fd, the descriptor
 * to read; *size its size). For the spool, whose files are always plain
 * entries of one directory. Returns 0 or TSR_E_IO with why naming shown. */
int binref_open_entry(int dirfd, const char *name, const char *shown, int *fd, uint64_t *size,
                      char *why, size_t n);

#endif
