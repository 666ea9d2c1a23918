/* SPDX-License-Identifier: MIT */
/*
 * The two ways binref files move bytes, shared by the writer and the
 * reader: positioned transfers split into chunks and run through
 * io_uring (several chunks in flight) or through pread/pwrite.
 */
#ifndef TESSERA_CODECS_BINREF_IO_H
#define TESSERA_CODECS_BINREF_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binref_file.h"

/* One transfer: len bytes between memory and offset off of the open file
 * fd: read into dst, or written from src. */
typedef struct binref_op {
    int fd;
    unsigned char *dst;        /* reads */
    const unsigned char *src;  /* writes */
    size_t len;
    uint64_t off;
    const char *file;  /* for messages */
    const char *what;  /* for messages; may be NULL */
} binref_op;

/* Chunks in flight and chunk size, from `bench_files --sweep` (80 MB and
 * 800 MB arrays to ext4's page cache): the depth (1 to 64) changes
 * nothing beyond noise, 256 KiB chunks write ~15% slower than 1-4 MiB
 * ones, 4 MiB chunks keep pace with a plain write and read. */
#define BINREF_URING_DEPTH 4
#define BINREF_URING_CHUNK ((size_t)4 << 20)

/*
 * Perform every op (all reads or all writes). Short transfers continue
 * where they stopped and -EINTR / -EAGAIN are retried; a read that meets
 * the end of the file early is reported as truncated. Returns 0, or
 * TSR_E_IO with the file, the array (what) and the cause in why. On
 * failure nothing is left in flight. binref_uring_run returns
 * BINREF_NO_RING, having moved nothing, when this thread cannot set up a
 * ring (io_uring forbidden since the probe, say).
 */
#define BINREF_NO_RING 1
int binref_uring_run(const binref_op *ops, int n_ops, bool write, char *why, size_t why_size);
int binref_posix_run(const binref_op *ops, int n_ops, bool write, char *why, size_t why_size);

/* The io an op list takes: AUTO resolved by the probe, URING refused with
 * the probe's reason where io_uring does not work. Returns 0 or TSR_E_IO. */
int binref_io_resolve(binref_io asked, binref_io *used, char *why, size_t why_size);

/* Below this many bytes in one batch, AUTO takes pread/pwrite even where
 * io_uring works: one system call moves them either way, and a ring
 * submission costs ~1 us more (bench_files: 0.63-0.73x a plain read at
 * 8-80 KB through the ring, parity from 800 KB). */
#define BINREF_AUTO_URING_MIN ((size_t)256 << 10)

/* Run ops with `used` (URING or POSIX, from binref_io_resolve(asked)). */
int binref_io_run(binref_io asked, binref_io used, const binref_op *ops, int n_ops, bool write,
                  char *why, size_t why_size);

/* Benchmark knobs: chunks in flight (1..256) and chunk size (>= 4 KiB) of
 * the io_uring path, for the calling thread's later runs. 0 keeps a value. */
void binref_uring_tune(unsigned depth, size_t chunk);

/* Whether `bytes` at `offset` lie within a file of file_size bytes.
 * Returns 0, or TSR_E_IO with why: "offset ... is past the end of 'path'
 * (... bytes)" or "'path' is truncated: ... of the ... bytes at offset ...". */
int binref_check_range(const char *path, uint64_t file_size, uint64_t offset, uint64_t bytes,
                       const char *what, char *why, size_t why_size);

/* The checks of a descriptor opened for reading a binref file, made on
 * the descriptor that is then read: fstat says a regular file ("binref
 * file 'shown' is not a regular file": a FIFO, a directory, a device),
 * *size its size; O_NONBLOCK, which the open took so that a FIFO could not
 * block it, is cleared. Returns 0, or TSR_E_IO with why (what named first,
 * may be NULL). */
int binref_fd_regular(int fd, const char *shown, const char *what, uint64_t *size, char *why,
                      size_t why_size);

/* "what: " or "" for messages. */
void binref_what_prefix(char *buf, size_t size, const char *what);

#endif /* TESSERA_CODECS_BINREF_IO_H */
