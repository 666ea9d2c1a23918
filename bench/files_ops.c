/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "files_ops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <liburing.h>

#include <tessera/payload.h>

#include "codecs/base64.h"
#include "codecs/binref_file.h"
#include "codecs/binref_io.h"
#include "bench_util.h"
#include "codecs/checksum.h"

/* Above these sizes a row takes seconds per sample and adds nothing new:
 * json (nested lists) and lz4 stop here, and so do many small arrays. */
#define JSON_MAX_N 100000
#define LZ4_MAX_N 10000000
#define PIECES_MAX_N 10000000

/* ---- baselines ------------------------------------------------------------ */

static int op_memcpy(files_ctx *c) {
    memcpy(c->dst, c->src, c->bytes);
    bench_clobber(c->dst);
    return 0;
}

/* Copying into a new buffer, first touch of its pages included, as every
 * decode that returns a fresh array pays (huge pages advised from 4 MiB,
 * as the library does). */
static int op_memcpy_new(files_ctx *c) {
    bool big = c->bytes >= ((size_t)4 << 20);
    void *p = NULL;
    if (posix_memalign(&p, big ? (size_t)2 << 20 : 64, c->bytes ? c->bytes : 64) != 0) return -1;
    if (big) (void)madvise(p, c->bytes & ~(size_t)4095, MADV_HUGEPAGE);
    memcpy(p, c->src, c->bytes);
    bench_clobber(p);
    free(p);
    return 0;
}

static int op_xxh3(files_ctx *c) {
    c->sink += checksum_xxh3(c->src, c->bytes);
    return 0;
}

/* open / write / close: what any program does to save the bytes. */
static int write_whole(const char *path, const void *data, size_t bytes) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    const char *p = data;
    size_t left = bytes;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    return close(fd);
}

static int op_plain_write(files_ctx *c) {
    char path[600];
    snprintf(path, sizeof path, "%s/plain-%u.bin", c->write_dir, c->counter++);
    return write_whole(path, c->src, c->bytes);
}

/* open / read / close of read.bin, which sits in the page cache. */
static int op_plain_read(files_ctx *c) {
    int fd = open(c->read_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char *p = c->dst;
    size_t left = c->bytes;
    while (left > 0) {
        ssize_t r = read(fd, p, left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            close(fd);
            return -1;
        }
        p += r;
        left -= (size_t)r;
    }
    bench_clobber(c->dst);
    return close(fd);
}

/* ---- the base64 codec alone ------------------------------------------------ */

/* Into a touched buffer: the codec's own speed, without first-touch page
 * faults (the API rows include those). */
static int op_b64_encode(files_ctx *c) {
    int overflow;
    size_t len = b64_encoded_length(c->bytes, &overflow);
    b64_encode((const unsigned char *)c->src, c->bytes, c->text);
    c->sink += (unsigned char)c->text[len / 2];
    return 0;
}

static int op_b64_decode(files_ctx *c) {
    char why[160];
    return b64_decode(c->b64, c->b64_len, c->dst, why, sizeof why);
}

/* ---- encodings through the public API ---------------------------------------- */

static tsr_array the_array(files_ctx *c) {
    return (tsr_array){.data = c->src, .dtype = TSR_FLOAT64, .rank = 1, .shape = {c->n}};
}

static int encode(files_ctx *c, tsr_encoding enc, int lz4, tsr_file_io io) {
    tsr_array a = the_array(c);
    tsr_output_options o = {.struct_size = sizeof o, .encoding = enc, .lz4 = lz4,
                            .output_dir = c->write_dir, .io = io};
    char *text = NULL;
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_array_to_json_ex(&a, &o, &text, &err) != 0) {
        fprintf(stderr, "bench_files: %s\n", err.message);
        return -1;
    }
    c->sink += (unsigned char)text[0];
    tsr_json_free(text);
    return 0;
}

static int decode(files_ctx *c, const char *text, tsr_file_io io) {
    tsr_input_options in = {.struct_size = sizeof in, .base_dir = c->dir, .io = io};
    tsr_array a;
    void *buffer;
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_array_from_json_ex(text, strlen(text), TSR_FLOAT64, &in, &a, &buffer, &err) != 0) {
        fprintf(stderr, "bench_files: %s\n", err.message);
        return -1;
    }
    c->sink += a.shape[0];
    tsr_array_buffer_free(buffer);
    return 0;
}

static int op_base64_enc(files_ctx *c) { return encode(c, TSR_ENCODING_BASE64, 0, TSR_FILE_IO_AUTO); }
static int op_base64_dec(files_ctx *c) { return decode(c, c->base64_text, TSR_FILE_IO_AUTO); }
static int op_lz4_enc(files_ctx *c) { return encode(c, TSR_ENCODING_BASE64, 1, TSR_FILE_IO_AUTO); }
static int op_lz4_dec(files_ctx *c) { return decode(c, c->lz4_text, TSR_FILE_IO_AUTO); }
static int op_json_enc(files_ctx *c) { return encode(c, TSR_ENCODING_JSON, 0, TSR_FILE_IO_AUTO); }
static int op_json_dec(files_ctx *c) { return decode(c, c->json_text, TSR_FILE_IO_AUTO); }
static int op_binref_enc(files_ctx *c) { return encode(c, TSR_ENCODING_BINREF, 0, TSR_FILE_IO_AUTO); }
static int op_binref_dec(files_ctx *c) { return decode(c, c->binref_text, TSR_FILE_IO_AUTO); }

/* ---- binref files alone ------------------------------------------------------- */

static int write_file(files_ctx *c, binref_io io) {
    char prefix[32], why[512];
    snprintf(prefix, sizeof prefix, "binref%u", c->counter++);
    binref_writer_opts o = {.dir = c->write_dir, .prefix = prefix, .io = io};
    binref_writer *w;
    if (binref_writer_open(&w, &o, why, sizeof why) != 0) {
        fprintf(stderr, "bench_files: %s\n", why);
        return -1;
    }
    const char *file;
    uint64_t off;
    int rc = binref_writer_add(w, c->src, c->bytes, &file, &off, why, sizeof why);
    if (rc == 0) rc = binref_writer_flush(w, why, sizeof why);
    if (rc != 0) fprintf(stderr, "bench_files: %s\n", why);
    binref_writer_close(w, 0);
    return rc;
}

static int read_file(files_ctx *c, binref_io io) {
    char why[512];
    binref_read r = {.path = c->read_path, .offset = 0, .bytes = c->bytes, .dst = c->dst};
    int rc = binref_read_all(&r, 1, io, why, sizeof why);
    if (rc != 0) fprintf(stderr, "bench_files: %s\n", why);
    bench_clobber(c->dst);
    return rc;
}

/* The same bytes as arrays of PIECE elements, all in one batch: what a
 * result of many small arrays costs. */
#define PIECE 1000

static int write_pieces(files_ctx *c, binref_io io) {
    char prefix[32], why[512];
    snprintf(prefix, sizeof prefix, "pieces%u", c->counter++);
    binref_writer_opts o = {.dir = c->write_dir, .prefix = prefix, .io = io};
    binref_writer *w;
    if (binref_writer_open(&w, &o, why, sizeof why) != 0) {
        fprintf(stderr, "bench_files: %s\n", why);
        return -1;
    }
    int rc = 0;
    for (int64_t i = 0; i < c->n && rc == 0; i += PIECE) {
        const char *file;
        uint64_t off;
        int64_t m = c->n - i < PIECE ? c->n - i : PIECE;
        rc = binref_writer_add(w, c->src + i, (size_t)m * sizeof(double), &file, &off, why, sizeof why);
    }
    if (rc == 0) rc = binref_writer_flush(w, why, sizeof why);
    if (rc != 0) fprintf(stderr, "bench_files: %s\n", why);
    binref_writer_close(w, 0);
    return rc;
}

static int read_pieces(files_ctx *c, binref_io io) {
    int64_t k = (c->n + PIECE - 1) / PIECE;
    binref_read *r = malloc((size_t)k * sizeof *r);
    if (r == NULL) return -1;
    for (int64_t j = 0; j < k; j++) {
        int64_t i = j * PIECE, m = c->n - i < PIECE ? c->n - i : PIECE;
        r[j] = (binref_read){.path = c->read_path, .offset = (uint64_t)i * sizeof(double),
                             .bytes = (size_t)m * sizeof(double), .dst = (double *)c->dst + i};
    }
    char why[512];
    int rc = binref_read_all(r, (int)k, io, why, sizeof why);
    if (rc != 0) fprintf(stderr, "bench_files: %s\n", why);
    free(r);
    bench_clobber(c->dst);
    return rc;
}

static int op_pieces_write_uring(files_ctx *c) { return write_pieces(c, BINREF_IO_URING); }
static int op_pieces_write_posix(files_ctx *c) { return write_pieces(c, BINREF_IO_POSIX); }
static int op_pieces_read_uring(files_ctx *c) { return read_pieces(c, BINREF_IO_URING); }
static int op_pieces_read_posix(files_ctx *c) { return read_pieces(c, BINREF_IO_POSIX); }

static int op_write_auto(files_ctx *c) { return write_file(c, BINREF_IO_AUTO); }
static int op_read_auto(files_ctx *c) { return read_file(c, BINREF_IO_AUTO); }
static int op_write_uring(files_ctx *c) { return write_file(c, BINREF_IO_URING); }
static int op_write_posix(files_ctx *c) { return write_file(c, BINREF_IO_POSIX); }
static int op_read_uring(files_ctx *c) { return read_file(c, BINREF_IO_URING); }
static int op_read_posix(files_ctx *c) { return read_file(c, BINREF_IO_POSIX); }

const files_variant files_variants[] = {
    {"memcpy", "memory", op_memcpy, false, 0, NULL, BUDGET_NONE},
    {"memcpy-new", "memory", op_memcpy_new, false, 0, "memcpy", BUDGET_NONE},
    {"xxh3", "memory", op_xxh3, false, 0, "memcpy", BUDGET_NONE},
    {"b64-codec-enc", "encoding", op_b64_encode, false, 0, "memcpy", BUDGET_NONE},
    {"b64-codec-dec", "encoding", op_b64_decode, false, 0, "memcpy", BUDGET_NONE},
    {"base64-enc", "encoding", op_base64_enc, false, 0, "memcpy", BUDGET_GBPS},
    {"base64-dec", "encoding", op_base64_dec, false, 0, "memcpy", BUDGET_GBPS},
    {"base64+lz4-enc", "encoding", op_lz4_enc, false, LZ4_MAX_N, "memcpy", BUDGET_NONE},
    {"base64+lz4-dec", "encoding", op_lz4_dec, false, LZ4_MAX_N, "memcpy", BUDGET_NONE},
    {"json-enc", "encoding", op_json_enc, false, JSON_MAX_N, "memcpy", BUDGET_NONE},
    {"json-dec", "encoding", op_json_dec, false, JSON_MAX_N, "memcpy", BUDGET_NONE},
    {"plain-write", "file", op_plain_write, true, 0, NULL, BUDGET_NONE},
    {"plain-read", "file", op_plain_read, false, 0, NULL, BUDGET_NONE},
    {"binref-write-auto", "file", op_write_auto, true, 0, "plain-write", BUDGET_VS_PLAIN},
    {"binref-write-uring", "file", op_write_uring, true, 0, "plain-write", BUDGET_NONE},
    {"binref-write-posix", "file", op_write_posix, true, 0, "plain-write", BUDGET_VS_PLAIN},
    {"binref-read-auto", "file", op_read_auto, false, 0, "plain-read", BUDGET_VS_PLAIN},
    {"binref-read-uring", "file", op_read_uring, false, 0, "plain-read", BUDGET_NONE},
    {"binref-read-posix", "file", op_read_posix, false, 0, "plain-read", BUDGET_VS_PLAIN},
    {"pieces-write-uring", "file", op_pieces_write_uring, true, PIECES_MAX_N, "plain-write", BUDGET_NONE},
    {"pieces-write-posix", "file", op_pieces_write_posix, true, PIECES_MAX_N, "plain-write", BUDGET_NONE},
    {"pieces-read-uring", "file", op_pieces_read_uring, false, PIECES_MAX_N, "plain-read", BUDGET_NONE},
    {"pieces-read-posix", "file", op_pieces_read_posix, false, PIECES_MAX_N, "plain-read", BUDGET_NONE},
    {"binref-enc", "file", op_binref_enc, true, 0, "plain-write", BUDGET_NONE},
    {"binref-dec", "file", op_binref_dec, false, 0, "plain-read", BUDGET_NONE},
};
const int n_files_variants = sizeof files_variants / sizeof files_variants[0];

/* ---- set-up ------------------------------------------------------------------- */

static char *encoded(files_ctx *c, tsr_encoding enc, int lz4) {
    tsr_array a = the_array(c);
    tsr_output_options o = {.struct_size = sizeof o, .encoding = enc, .lz4 = lz4};
    char *text = NULL;
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_array_to_json_ex(&a, &o, &text, &err) != 0)
        fprintf(stderr, "bench_files: %s\n", err.message);
    return text;
}

int files_ctx_open(files_ctx *c, int64_t n, const char *dir) {
    memset(c, 0, sizeof *c);
    c->n = n;
    c->bytes = (size_t)n * sizeof(double);
    c->src = aligned_alloc(64, (c->bytes + 63) / 64 * 64);
    c->dst = aligned_alloc(64, (c->bytes + 63) / 64 * 64);
    c->text = malloc(c->bytes / 3 * 4 + 8);
    if (c->src == NULL || c->dst == NULL || c->text == NULL || asprintf(&c->dir, "%s", dir) < 0 ||
        asprintf(&c->write_dir, "%s/w", dir) < 0 || asprintf(&c->read_path, "%s/read.bin", dir) < 0) {
        fprintf(stderr, "bench_files: out of memory for n=%lld\n", (long long)n);
        return -1;
    }
    /* A smooth field: doubles whose low mantissa bits vary, as simulation
     * output does (lz4 finds little to take out of them). */
    for (int64_t i = 0; i < n; i++) c->src[i] = sin((double)i * 1e-3) * 1e3 + (double)i;
    memset(c->dst, 0, c->bytes);
    memset(c->text, 0, c->bytes / 3 * 4 + 8);
    if (mkdir(c->write_dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_files: %s: %s\n", c->write_dir, strerror(errno));
        return -1;
    }
    /* read.bin: written once, then read from the page cache. */
    unlink(c->read_path);
    if (write_whole(c->read_path, c->src, c->bytes) != 0) {
        fprintf(stderr, "bench_files: cannot write %s: %s\n", c->read_path, strerror(errno));
        return -1;
    }
    c->base64_text = encoded(c, TSR_ENCODING_BASE64, 0);
    if (n <= LZ4_MAX_N) c->lz4_text = encoded(c, TSR_ENCODING_BASE64, 1);
    if (n <= JSON_MAX_N) c->json_text = encoded(c, TSR_ENCODING_JSON, 0);
    if (asprintf(&c->binref_text,
                 "{\"object_type\":\"array\",\"shape\":[%lld],\"dtype\":\"float64\","
                 "\"data\":{\"buffer\":\"read.bin:0\",\"encoding\":\"binref\"}}",
                 (long long)n) < 0)
        c->binref_text = NULL;
    if (c->base64_text == NULL || (n <= LZ4_MAX_N && c->lz4_text == NULL) ||
        c->binref_text == NULL || (n <= JSON_MAX_N && c->json_text == NULL))
        return -1;
    c->b64 = strstr(c->base64_text, "\"buffer\":\"") + 10;
    c->b64_len = (size_t)(strchr(c->b64, '"') - c->b64);
    /* The frame's share of the raw bytes: base64 text length x 3/4. */
    c->lz4_ratio = 0;
    if (c->lz4_text != NULL && c->bytes > 0) {
        const char *b = strstr(c->lz4_text, "\"buffer\":\"") + 10;
        c->lz4_ratio = (double)(strchr(b, '"') - b) * 0.75 / (double)c->bytes;
    }
    return 0;
}

void files_ctx_clear_writes(files_ctx *c) {
    DIR *d = opendir(c->write_dir);
    if (d == NULL) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') (void)unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

void files_ctx_close(files_ctx *c) {
    if (c->write_dir != NULL) {
        files_ctx_clear_writes(c);
        rmdir(c->write_dir);
    }
    if (c->read_path != NULL) unlink(c->read_path);
    free(c->src);
    free(c->dst);
    free(c->text);
    free(c->dir);
    free(c->write_dir);
    free(c->read_path);
    tsr_json_free(c->base64_text);
    tsr_json_free(c->lz4_text);
    tsr_json_free(c->json_text);
    free(c->binref_text);
    memset(c, 0, sizeof *c);
}

/* Decode text through the API and compare with src. */
static int same_array(files_ctx *c, const char *text, const char *what) {
    tsr_input_options in = {.struct_size = sizeof in, .base_dir = c->dir};
    tsr_array a;
    void *buffer;
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_array_from_json_ex(text, strlen(text), TSR_FLOAT64, &in, &a, &buffer, &err) != 0) {
        fprintf(stderr, "bench_files: %s: %s\n", what, err.message);
        return -1;
    }
    int same = a.shape[0] == c->n && memcmp(a.data, c->src, c->bytes) == 0;
    tsr_array_buffer_free(buffer);
    if (!same) fprintf(stderr, "bench_files: %s does not give the array back\n", what);
    return same ? 0 : -1;
}

int files_ctx_verify(files_ctx *c) {
    if (same_array(c, c->base64_text, "base64") != 0 ||
        (c->lz4_text != NULL && same_array(c, c->lz4_text, "base64+lz4") != 0) ||
        same_array(c, c->binref_text, "binref") != 0 ||
        (c->json_text != NULL && same_array(c, c->json_text, "json") != 0))
        return -1;
    binref_io ios[2] = {BINREF_IO_POSIX, BINREF_IO_URING};
    for (int k = 0; k < 2; k++) {
        if (ios[k] == BINREF_IO_URING && binref_io_probe(NULL) != BINREF_IO_URING) continue;
        memset(c->dst, 0, c->bytes);
        if (read_file(c, ios[k]) != 0 || memcmp(c->dst, c->src, c->bytes) != 0) {
            fprintf(stderr, "bench_files: binref read (%s) differs\n", binref_io_name(ios[k]));
            return -1;
        }
    }
    return 0;
}

void files_tune_uring(unsigned depth, size_t chunk) {
    binref_uring_tune(depth, chunk);
}

void files_tune_uring_defaults(void) {
    binref_uring_tune(BINREF_URING_DEPTH, BINREF_URING_CHUNK);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double files_ring_setup_us(int runs) {
    if (binref_io_probe(NULL) != BINREF_IO_URING || runs <= 0) return -1;
    double *t = malloc((size_t)runs * sizeof *t);
    if (t == NULL) return -1;
    for (int i = 0; i < runs; i++) {
        struct io_uring ring;
        int64_t t0 = bench_now_ns();
        if (io_uring_queue_init(BINREF_URING_DEPTH, &ring, 0) != 0) {
            free(t);
            return -1;
        }
        io_uring_queue_exit(&ring);
        t[i] = (double)(bench_now_ns() - t0) / 1e3;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    double median = t[runs / 2];
    free(t);
    return median;
}
