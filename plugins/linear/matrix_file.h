/* SPDX-License-Identifier: MIT */
/*
 * Reading a dense matrix from a text file, for the linear plugin.
 *
 * Format: the dimensions "m n" (two positive integers), then m*n numbers
 * in row-major order. Numbers are separated by any whitespace, so rows may
 * be split or joined across lines freely; '#' starts a comment that runs
 * to the end of its line.
 */
#ifndef TESSERA_PLUGIN_LINEAR_MATRIX_FILE_H
#define TESSERA_PLUGIN_LINEAR_MATRIX_FILE_H

#include <stdint.h>

#include <tessera/plugin.h>

/* Largest matrix accepted: 2^27 entries, 1 GiB of float64. */
#define MATRIX_MAX_ENTRIES ((int64_t)1 << 27)

typedef struct dense_matrix {
    int64_t rows;
    int64_t cols;
    double *values; /* rows * cols entries, row-major; owned */
} dense_matrix;

/* Read the matrix at path into *out. Returns 0, or -1 after recording
 * through ctx an error that names the file, the line and the entry at
 * fault. On failure *out is left empty and nothing needs freeing. */
int matrix_file_read(tsr_ctx *ctx, const char *path, dense_matrix *out);

/* Release what matrix_file_read allocated; accepts an empty matrix. */
void dense_matrix_free(dense_matrix *m);

#endif /* TESSERA_PLUGIN_LINEAR_MATRIX_FILE_H */
