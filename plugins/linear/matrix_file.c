/* SPDX-License-Identifier: MIT */
/*
 * Text matrix reader: a whitespace tokenizer over getline() that skips
 * comments and keeps the line number for error messages, and a parser
 * that reads the dimensions and then the entries.
 */
#include "matrix_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tokens are shown in messages up to this many characters. */
#define TOKEN_SHOWN 40

typedef struct token_reader {
    FILE *file;
    const char *path;
    char *line;        /* getline's buffer */
    size_t line_cap;
    char *cursor;      /* strtok_r position in line; NULL: read the next line */
    long long line_no;
} token_reader;

/* Next whitespace-separated token. Returns 1 with *token set, 0 at end of
 * file, -1 after recording a read error. */
static int next_token(tsr_ctx *ctx, token_reader *r, char **token) {
    static const char separators[] = " \t\r\n\v\f";
    for (;;) {
        if (r->cursor != NULL) {
            char *t = strtok_r(NULL, separators, &r->cursor);
            if (t != NULL) {
                *token = t;
                return 1;
            }
            r->cursor = NULL;
        }
        errno = 0;
        if (getline(&r->line, &r->line_cap, r->file) < 0) {
            if (feof(r->file)) return 0;
            tsr_ctx_errorf(ctx, "matrix file '%s': cannot read line %lld: %s", r->path,
                           r->line_no + 1, strerror(errno ? errno : EIO));
            return -1;
        }
        r->line_no++;
        char *comment = strchr(r->line, '#');
        if (comment != NULL) *comment = '\0';
        char *t = strtok_r(r->line, separators, &r->cursor);
        if (t != NULL) {
            *token = t;
            return 1;
        }
        r->cursor = NULL;
    }
}

/* Parse one dimension (m or n): a positive integer. */
static int read_dimension(tsr_ctx *ctx, token_reader *r, const char *what, int64_t *out) {
    char *token;
    int got = next_token(ctx, r, &token);
    if (got < 0) return -1;
    if (got == 0) {
        return tsr_ctx_errorf(ctx,
                              "matrix file '%s': ends before the %s; the file must start "
                              "with the dimensions 'm n'",
                              r->path, what);
    }
    char *end;
    errno = 0;
    long long v = strtoll(token, &end, 10);
    if (end == token || *end != '\0' || errno == ERANGE || v <= 0) {
        return tsr_ctx_errorf(ctx,
                              "matrix file '%s' line %lld: the %s must be a positive "
                              "integer, got '%.*s'",
                              r->path, r->line_no, what, TOKEN_SHOWN, token);
    }
    *out = (int64_t)v;
    return 0;
}

/* Parse entry `index` (0-based, row-major) of a matrix with `cols` columns. */
static int parse_entry(tsr_ctx *ctx, const token_reader *r, const char *token, int64_t index,
                       int64_t cols, double *out) {
    char *end;
    errno = 0;
    double v = strtod(token, &end);
    long long row = (long long)(index / cols) + 1, col = (long long)(index % cols) + 1;
    if (end == token || *end != '\0') {
        return tsr_ctx_errorf(ctx,
                              "matrix file '%s' line %lld: entry %lld (row %lld, column %lld) "
                              "is not a number: '%.*s'",
                              r->path, r->line_no, (long long)index + 1, row, col, TOKEN_SHOWN,
                              token);
    }
    /* Underflow to a tiny value is harmless; overflow, inf and nan are not. */
    if (!isfinite(v)) {
        return tsr_ctx_errorf(ctx,
                              "matrix file '%s' line %lld: entry %lld (row %lld, column %lld) "
                              "is not a finite number: '%.*s'",
                              r->path, r->line_no, (long long)index + 1, row, col, TOKEN_SHOWN,
                              token);
    }
    *out = v;
    return 0;
}

/* Make room for entry `needed` - 1, growing geometrically up to `total`,
 * so that a header promising a huge matrix costs nothing until the
 * entries are really there. */
static int reserve_entries(tsr_ctx *ctx, const char *path, double **values, int64_t *capacity,
                           int64_t needed, int64_t total) {
    if (needed <= *capacity) return 0;
    int64_t grown = *capacity > 0 ? *capacity * 2 : 4096;
    if (grown > total) grown = total;
    double *bigger = realloc(*values, (size_t)grown * sizeof(double));
    if (bigger == NULL) {
        return tsr_ctx_errorf(ctx, "matrix file '%s': out of memory for %lld entries", path,
                              (long long)grown);
    }
    *values = bigger;
    *capacity = grown;
    return 0;
}

/* Read entry i of a rows x cols matrix into the growing values array. */
static int read_entry(tsr_ctx *ctx, token_reader *r, int64_t i, int64_t rows, int64_t cols,
                      double **values, int64_t *capacity) {
    char *token;
    int got = next_token(ctx, r, &token);
    if (got < 0) return -1;
    if (got == 0) {
        return tsr_ctx_errorf(ctx,
                              "matrix file '%s': truncated: a %lld x %lld matrix needs %lld "
                              "entries, found %lld",
                              r->path, (long long)rows, (long long)cols,
                              (long long)(rows * cols), (long long)i);
    }
    if (reserve_entries(ctx, r->path, values, capacity, i + 1, rows * cols) != 0) return -1;
    return parse_entry(ctx, r, token, i, cols, &(*values)[i]);
}

/* Read the dimensions and every entry, then make sure nothing follows. */
static int parse_matrix(tsr_ctx *ctx, token_reader *r, dense_matrix *out) {
    int64_t rows, cols;
    if (read_dimension(ctx, r, "number of rows m", &rows) != 0) return -1;
    if (read_dimension(ctx, r, "number of columns n", &cols) != 0) return -1;
    if (rows > MATRIX_MAX_ENTRIES / cols) {
        return tsr_ctx_errorf(ctx,
                              "matrix file '%s': a %lld x %lld matrix is too large (at most "
                              "%lld entries)",
                              r->path, (long long)rows, (long long)cols,
                              (long long)MATRIX_MAX_ENTRIES);
    }
    int64_t total = rows * cols, capacity = 0;
    double *values = NULL;
    for (int64_t i = 0; i < total; i++) {
        if (read_entry(ctx, r, i, rows, cols, &values, &capacity) != 0) {
            free(values);
            return -1;
        }
    }
    char *extra;
    int got = next_token(ctx, r, &extra);
    if (got != 0) {
        if (got > 0) {
            tsr_ctx_errorf(ctx,
                           "matrix file '%s' line %lld: unexpected '%.*s' after the last "
                           "entry of a %lld x %lld matrix",
                           r->path, r->line_no, TOKEN_SHOWN, extra, (long long)rows,
                           (long long)cols);
        }
        free(values);
        return -1;
    }
    out->rows = rows;
    out->cols = cols;
    out->values = values;
    return 0;
}

int matrix_file_read(tsr_ctx *ctx, const char *path, dense_matrix *out) {
    *out = (dense_matrix){0, 0, NULL};
    token_reader r = {.path = path};
    /* "e": close-on-exec, so that processes the host starts do not inherit it. */
    r.file = fopen(path, "re");
    if (r.file == NULL) {
        return tsr_ctx_errorf(ctx, "matrix file '%s': cannot open: %s", path, strerror(errno));
    }
    int rc = parse_matrix(ctx, &r, out);
    free(r.line);
    if (fclose(r.file) != 0 && rc == 0) {
        rc = tsr_ctx_errorf(ctx, "matrix file '%s': close failed: %s", path, strerror(errno));
        dense_matrix_free(out);
    }
    return rc;
}

void dense_matrix_free(dense_matrix *m) {
    free(m->values);
    *m = (dense_matrix){0, 0, NULL};
}
