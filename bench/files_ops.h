/* SPDX-License-Identifier: MIT */
/*
 * The operations bench_files times, one function each, on one array of n
 * float64 values: baselines (memcpy, a plain sequential write and read of
 * the same bytes), the encodings through the public API, the base64 codec
 * and XXH3 alone, and binref files through each I/O path.
 */
#ifndef TSR_BENCH_FILES_OPS_H
#define TSR_BENCH_FILES_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What every operation of one size works on. */
typedef struct files_ctx {
    int64_t n;
    size_t bytes;
    double *src;        /* the array */
    void *dst;          /* a touched buffer of `bytes` */
    char *text;         /* a touched buffer for the base64 of the array */
    char *dir;          /* scratch directory (files to read live here) */
    char *write_dir;    /* dir/w: what write operations make, emptied after each batch */
    char *read_path;    /* dir/read.bin: the array's bytes, in the page cache */
    char *base64_text;  /* the array as json+base64 */
    const char *b64;    /* its buffer's characters, b64_len of them */
    size_t b64_len;
    char *lz4_text;     /* ... as json+base64 with lz4 */
    char *json_text;    /* ... as json (NULL above the json limit) */
    char *binref_text;  /* ... as json+binref pointing at read.bin */
    uint64_t sink;      /* results kept so nothing is optimised away */
    unsigned counter;   /* distinct names for files written */
    double lz4_ratio;   /* stored / raw bytes of the lz4 frame */
} files_ctx;

typedef int (*files_op)(files_ctx *c);

typedef struct files_variant {
    const char *name;
    const char *section;   /* "memory", "encoding" or "file" */
    files_op run;
    bool writes;           /* leaves files in write_dir */
    int64_t max_n;         /* 0: any size */
    const char *baseline;  /* the variant its ratio is taken against, or NULL */
    int budget;            /* BUDGET_* */
} files_variant;

enum { BUDGET_NONE, BUDGET_VS_PLAIN, BUDGET_GBPS };

extern const files_variant files_variants[];
extern const int n_files_variants;

/* Make everything a size needs; 0 or -1 with a message on stderr. */
int files_ctx_open(files_ctx *c, int64_t n, const char *dir);
void files_ctx_close(files_ctx *c);
/* Remove what write operations left in write_dir. */
void files_ctx_clear_writes(files_ctx *c);
/* Check that each decoding gives the array back. 0 or -1 (message). */
int files_ctx_verify(files_ctx *c);

/* Tuning of the io_uring path for the sweep (0: keep). */
void files_tune_uring(unsigned depth, size_t chunk);
void files_tune_uring_defaults(void);
/* Setting up and tearing down one io_uring, in microseconds (median of
 * `runs`), or -1 where io_uring does not work. */
double files_ring_setup_us(int runs);

#endif
