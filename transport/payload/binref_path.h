/* SPDX-License-Identifier: MIT */
/*
 * Binref buffer strings and where they point. A buffer reads
 * "<path>[:<offset>[:<size>]]" as Tesseract reads it: up to two trailing
 * ":<digits>" groups, the path everything before them (size: the stored,
 * compressed byte count; Tesseract writes it with lz4 only).
 *
 * Relative paths resolve against the input directory. Unless escaping is
 * allowed, the file's real path ('..' and symlinks followed) must lie
 * inside the input directory's real path, so a payload cannot make the
 * reader open /etc/shadow or ../../secret, directly or by a symlink.
 */
#ifndef TESSERA_TRANSPORT_BINREF_PATH_H
#define TESSERA_TRANSPORT_BINREF_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tsr_binref_ref {
    char *path; /* as written; free() */
    uint64_t offset;
    bool has_size;
    uint64_t size;
} tsr_binref_ref;

/* Returns 0, or TSR_E_PAYLOAD / TSR_E_NOMEM with the cause in why. */
int tsr_binref_ref_parse(const char *text, tsr_binref_ref *out, char *why, size_t why_size);

/* The real path of base_dir (NULL: the current directory); *out: free().
 * Returns 0 or TSR_E_IO / TSR_E_NOMEM with the cause in why. */
int tsr_binref_base(const char *base_dir, char **out, char *why, size_t why_size);

/* The file to open for path, given base_real from tsr_binref_base; *out:
 * free(). Returns 0, TSR_E_PAYLOAD for a path that leaves the input
 * directory (saying how: absolute, '..', a symlink), TSR_E_IO for a file
 * that cannot be found, TSR_E_NOMEM. */
int tsr_binref_resolve(const char *base_real, const char *path, bool allow_escape, char **out,
                       char *why, size_t why_size);

#endif /* TESSERA_TRANSPORT_BINREF_PATH_H */
