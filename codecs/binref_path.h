/* SPDX-License-Identifier: MIT */
/*
 * Binref buffer strings and where they point. A buffer reads
 * "<path>[:<offset>[:<size>]]" as Tesseract reads it: up to two trailing
 * ":<digits>" groups, the path everything before them (size: the stored,
 * compressed byte count; Tesseract writes it with lz4 only).
 *
 * Relative paths resolve against the input directory. Unless escaping is
 * allowed, the file must lie inside the input directory once '..' and
 * symlinks are followed, so a payload cannot make the reader open
 * /etc/shadow or ../../secret, directly or by a symlink.
 *
 * The check and the open are one step: the path is resolved beneath a
 * descriptor of the input directory (openat2 with RESOLVE_BENEATH where
 * the kernel has it, else a walk of openat(O_NOFOLLOW) one component at a
 * time that follows only relative symlinks and never climbs above the
 * directory), the file is opened O_NONBLOCK (a FIFO cannot block the
 * open), and its type and size are taken with fstat of that descriptor,
 * the one that is then read. Renaming entries of the directory while a
 * read runs can make the read fail, never make it read a file outside or
 * hang.
 */
#ifndef TESSERA_CODECS_BINREF_PATH_H
#define TESSERA_CODECS_BINREF_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct binref_ref {
    char *path; /* as written; free() */
    uint64_t offset;
    bool has_size;
    uint64_t size;
} binref_ref;

/* Returns 0, or TSR_E_PAYLOAD / TSR_E_NOMEM with the cause in why. */
int binref_ref_parse(const char *text, binref_ref *out, char *why, size_t why_size);

/* The input directory: its real path (messages, absolute binref paths)
 * and a descriptor (O_PATH) that relative paths are resolved beneath. */
typedef struct binref_dir {
    char *real;
    int fd;
} binref_dir;

/* Open base_dir (NULL or "": the current directory). Returns 0, or
 * TSR_E_IO / TSR_E_NOMEM with the cause in why (out is then closed). */
int binref_dir_open(const char *base_dir, binref_dir *out, char *why, size_t why_size);
/* Accepts a closed or zeroed-then-failed directory (fd < 0, real NULL). */
void binref_dir_close(binref_dir *d);

/*
 * Resolve path against d and open it for reading, in one step. *fd: a
 * regular file, blocking, close-on-exec (the caller closes it); *size: its
 * size by fstat of *fd. Returns 0, TSR_E_PAYLOAD for a path that leaves
 * the input directory (saying how: absolute, '..', a symlink), TSR_E_IO
 * for a file that cannot be opened or is not a regular file (a FIFO, a
 * directory, a device: "is not a regular file"), TSR_E_NOMEM. With
 * allow_escape the path may lead anywhere (symlinks followed); the other
 * checks stay.
 */
int binref_open(const binref_dir *d, const char *path, bool allow_escape, int *fd,
                    uint64_t *size, char *why, size_t why_size);

#endif /* TESSERA_CODECS_BINREF_PATH_H */
