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
 * Files are created O_EXCL with mode 0600 unless told otherwise.
 *
 * Thread safety: a writer is used by one thread; reads are independent.
 */
#ifndef TESSERA_TRANSPORT_BINREF_FILE_H
#define TESSERA_TRANSPORT_BINREF_FILE_H

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

/* One read of `bytes` at `offset` of the file at `path` into dst. */
typedef struct binref_read {
    const char *path;
    uint64_t offset;
    size_t bytes;
    void *dst;
    const char *what;   /* named first in messages (e.g. the array's field); may be NULL */
} binref_read;

/* Perform the reads (batched with io_uring; files opened once each). A
 * missing file, a short file ("truncated: 100 of 800 bytes at offset
 * ...") or an offset past the end is an error naming the path. */
int binref_read_all(binref_read *reads, int n_reads, binref_io io, char *why, size_t n);

#endif
