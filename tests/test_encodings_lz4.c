/* SPDX-License-Identifier: MIT */
/*
 * Tesseract's array encodings through the public API (tessera/payload.h):
 * every dtype, ranks 0 to 3, empty arrays, in json, base64 and binref
 * (through files), with lz4 compression and checksums on and off, written
 * and read back bytewise exact; the exact form of what is written (keys,
 * "file:offset[:size]", lz4 frames as Python's lz4.frame writes them,
 * XXH3 of the raw bytes); frames made with other lz4 settings read too.
 */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <lz4frame.h>
#include <xxhash.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "temp_dir.h"
#include "test_util.h"

static char dir[256];

static void make_dir(void) {
    make_temp_dir(dir, sizeof dir, "tessera-enc");
}

static void remove_dir(void) {
    remove_tree(dir);
}

TestSuite(encodings, .init = make_dir, .fini = remove_dir);

static const tsr_dtype all_dtypes[] = {
    TSR_BOOL,    TSR_INT8,    TSR_INT16,   TSR_INT32,   TSR_INT64,     TSR_UINT8,      TSR_UINT16,
    TSR_UINT32,  TSR_UINT64,  TSR_FLOAT16, TSR_FLOAT32, TSR_FLOAT64,   TSR_COMPLEX64, TSR_COMPLEX128,
};
#define N_DTYPES (sizeof all_dtypes / sizeof all_dtypes[0])

typedef struct shape_case {
    int32_t rank;
    int64_t dims[3];
} shape_case;

static const shape_case shapes[] = {
    {0, {0}},       {1, {5}},       {1, {0}},       {2, {3, 4}},
    {2, {0, 3}},    {2, {3, 0}},    {3, {2, 3, 4}}, {3, {2, 0, 2}},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* Values every encoding can carry (json: no NaN, small integers). */
static void fill(void *data, tsr_dtype dt, int64_t n) {
    static const uint16_t halves[] = {0x0000, 0x3c00, 0x4000, 0x4200, 0xbc00, 0x3800};
    for (int64_t k = 0; k < n; k++) {
        int v = (int)(k % 7) - 3;
        switch (dt) {
        case TSR_BOOL: ((uint8_t *)data)[k] = (uint8_t)(k % 2); break;
        case TSR_INT8: ((int8_t *)data)[k] = (int8_t)v; break;
        case TSR_INT16: ((int16_t *)data)[k] = (int16_t)(v * 1000); break;
        case TSR_INT32: ((int32_t *)data)[k] = v * 100000; break;
        case TSR_INT64: ((int64_t *)data)[k] = (int64_t)v * 10000000000LL; break;
        case TSR_UINT8: ((uint8_t *)data)[k] = (uint8_t)(k % 251); break;
        case TSR_UINT16: ((uint16_t *)data)[k] = (uint16_t)(k * 997); break;
        case TSR_UINT32: ((uint32_t *)data)[k] = (uint32_t)(k * 99991); break;
        case TSR_UINT64: ((uint64_t *)data)[k] = (uint64_t)k * 1000000007ull; break;
        case TSR_FLOAT16: ((uint16_t *)data)[k] = halves[k % 6]; break;
        case TSR_FLOAT32: ((float *)data)[k] = (float)v * 0.25f; break;
        case TSR_FLOAT64: ((double *)data)[k] = v * 0.1 + (double)k; break;
        case TSR_COMPLEX64:
            ((float *)data)[2 * k] = (float)v;
            ((float *)data)[2 * k + 1] = -0.5f * (float)k;
            break;
        default:
            ((double *)data)[2 * k] = v * 1e-3;
            ((double *)data)[2 * k + 1] = (double)k;
            break;
        }
    }
}

static int64_t count_of(const shape_case *s) {
    int64_t n = 1;
    for (int32_t d = 0; d < s->rank; d++) n *= s->dims[d];
    return n;
}

static char *encode(const tsr_array *a, tsr_encoding enc, int lz4, int checksum) {
    tsr_output_options o = {.struct_size = sizeof o, .encoding = enc, .lz4 = lz4,
                            .checksum = checksum, .output_dir = dir};
    char *text = NULL;
    tsr_error err = {0};
    int rc = tsr_array_to_json_ex(a, &o, &text, &err);
    cr_assert_eq(rc, 0, "encoding %s %s lz4=%d checksum=%d: %s", tsr_dtype_name(a->dtype),
                 tsr_encoding_name(enc), lz4, checksum, err.message);
    return text;
}

static void decode(const char *text, tsr_array *a, void **buffer) {
    tsr_input_options in = {.struct_size = sizeof in, .base_dir = dir};
    tsr_error err = {0};
    int rc = tsr_array_from_json_ex(text, strlen(text), TSR_DTYPE_INVALID, &in, a, buffer, &err);
    cr_assert_eq(rc, 0, "decoding %s: %s", text, err.message);
}

/* The "data" object of an encoded array's text. */
static json_t *data_of(const char *text, json_t **root) {
    json_error_t jerr;
    *root = json_loads(text, 0, &jerr);
    cr_assert_not_null(*root, "%s", jerr.text);
    json_t *data = json_object_get(*root, "data");
    cr_assert(json_is_object(data));
    return data;
}

/* What the text must say, as Tesseract writes it. */
static void check_form(const char *text, tsr_encoding enc, int lz4, int checksum) {
    json_t *root;
    json_t *data = data_of(text, &root);
    const char *e = json_string_value(json_object_get(data, "encoding"));
    cr_assert_str_eq(e, tsr_encoding_name(enc));
    bool compressed = lz4 && enc != TSR_ENCODING_JSON, summed = checksum && enc != TSR_ENCODING_JSON;
    json_t *c = json_object_get(data, "compression");
    if (compressed) cr_assert_str_eq(json_string_value(c), "lz4");
    else cr_assert_null(c, "no compression key unless compressed: %s", text);
    json_t *cs = json_object_get(data, "checksum");
    if (summed) cr_assert(json_is_string(cs) && strncmp(json_string_value(cs), "xxh3:", 5) == 0 &&
                          strlen(json_string_value(cs)) == 21, "%s", text);
    else cr_assert_null(cs, "no checksum key unless asked (and never for json): %s", text);
    if (enc == TSR_ENCODING_BINREF) {
        const char *buf = json_string_value(json_object_get(data, "buffer"));
        cr_assert_not_null(buf);
        char file[200];
        unsigned long long off, size;
        int fields = sscanf(buf, "%199[^:]:%llu:%llu", file, &off, &size);
        cr_assert_eq(fields, compressed ? 3 : 2, "buffer \"%s\"", buf);
        cr_assert_null(strchr(file, '/'), "the file is named relative to the output dir");
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0, "%s", path);
        cr_assert_eq(st.st_mode & 0777, 0600, "files are 0600 (mode %o)", st.st_mode & 0777);
    }
    json_decref(root);
}

Test(encodings, every_dtype_and_rank_round_trips_in_every_encoding) {
    umask(022);
    int checked = 0;
    for (size_t d = 0; d < N_DTYPES; d++) {
        tsr_dtype dt = all_dtypes[d];
        for (size_t s = 0; s < N_SHAPES; s++) {
            int64_t n = count_of(&shapes[s]);
            size_t bytes = (size_t)n * tsr_dtype_size(dt);
            void *data = calloc(1, bytes ? bytes : 1);
            fill(data, dt, n);
            tsr_array a = make_array(data, dt, shapes[s].rank, shapes[s].dims);
            for (int enc = TSR_ENCODING_JSON; enc <= TSR_ENCODING_BINREF; enc++) {
                bool complex = dt == TSR_COMPLEX64 || dt == TSR_COMPLEX128;
                if (enc == TSR_ENCODING_JSON && complex && n > 0) continue; /* no json form */
                for (int lz4 = 0; lz4 <= 1; lz4++) {
                    for (int sum = 0; sum <= 1; sum++) {
                        char *text = encode(&a, (tsr_encoding)enc, lz4, sum);
                        check_form(text, (tsr_encoding)enc, lz4, sum);
                        tsr_array back;
                        void *buffer;
                        decode(text, &back, &buffer);
                        cr_assert_eq(back.dtype, dt, "%s", text);
                        cr_assert_eq(back.rank, a.rank, "%s", text);
                        for (int32_t k = 0; k < a.rank; k++)
                            cr_assert_eq(back.shape[k], a.shape[k], "%s", text);
                        cr_assert_eq(memcmp(back.data, data, bytes), 0,
                                     "%s %s lz4=%d checksum=%d: bytes differ", tsr_dtype_name(dt),
                                     tsr_encoding_name((tsr_encoding)enc), lz4, sum);
                        tsr_array_buffer_free(buffer);
                        tsr_json_free(text);
                        checked++;
                    }
                }
            }
            free(data);
        }
    }
    cr_assert_gt(checked, 1000);
}

/* ---- the exact bytes ------------------------------------------------------ */

/* Decode the base64 buffer of text into a malloc'd block. */
static unsigned char *buffer_bytes(const char *text, size_t *n) {
    json_t *root;
    json_t *data = data_of(text, &root);
    const char *b64 = json_string_value(json_object_get(data, "buffer"));
    /* Decode it through the library: an uint8 array of the same bytes. */
    size_t len = strlen(b64);
    size_t raw = len / 4 * 3 - (len && b64[len - 1] == '=') - (len > 1 && b64[len - 2] == '=');
    char *wrapped = NULL;
    cr_assert(asprintf(&wrapped,
                       "{\"object_type\":\"array\",\"shape\":[%zu],\"dtype\":\"uint8\","
                       "\"data\":{\"buffer\":\"%s\",\"encoding\":\"base64\"}}",
                       raw, b64) > 0);
    json_decref(root);
    tsr_array a;
    void *buffer;
    decode(wrapped, &a, &buffer);
    free(wrapped);
    unsigned char *out = malloc(raw ? raw : 1);
    memcpy(out, buffer, raw);
    tsr_array_buffer_free(buffer);
    *n = raw;
    return out;
}

Test(encodings, lz4_frames_are_written_as_python_lz4_frame_writes_them) {
    double x[4096];
    for (int i = 0; i < 4096; i++) x[i] = (double)(i % 16);
    tsr_array a = f64_vec(x, 4096);
    char *text = encode(&a, TSR_ENCODING_BASE64, 1, 0);
    size_t n;
    unsigned char *frame = buffer_bytes(text, &n);
    cr_assert_lt(n, sizeof x / 4, "a repetitive array compresses (%zu of %zu bytes)", n, sizeof x);
    cr_assert_eq(frame[0] | frame[1] << 8 | frame[2] << 16 | (uint32_t)frame[3] << 24, 0x184D2204u,
                 "the lz4 frame magic number");
    cr_assert(frame[4] & 0x08, "the frame records its content size, as lz4.frame.compress does");
    uint64_t size = 0;
    for (int i = 0; i < 8; i++) size |= (uint64_t)frame[6 + i] << (8 * i);
    cr_assert_eq(size, sizeof x);
    /* liblz4 itself reads it back to the same bytes. */
    double back[4096];
    LZ4F_dctx *dctx;
    cr_assert(!LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)));
    size_t dst = sizeof back, src = n;
    size_t rc = LZ4F_decompress(dctx, back, &dst, frame, &src, NULL);
    cr_assert_eq(rc, 0, "one whole frame");
    cr_assert_eq(dst, sizeof back);
    cr_assert_eq(memcmp(back, x, sizeof x), 0);
    LZ4F_freeDecompressionContext(dctx);
    free(frame);
    tsr_json_free(text);
}

Test(encodings, the_checksum_is_xxh3_of_the_raw_bytes_before_compression) {
    int32_t v[1000];
    for (int i = 0; i < 1000; i++) v[i] = i * i;
    tsr_array a = make_array(v, TSR_INT32, 1, (int64_t[]){1000});
    char want[32];
    snprintf(want, sizeof want, "xxh3:%016" PRIx64, (uint64_t)XXH3_64bits(v, sizeof v));
    for (int enc = TSR_ENCODING_BASE64; enc <= TSR_ENCODING_BINREF; enc++) {
        for (int lz4 = 0; lz4 <= 1; lz4++) {
            char *text = encode(&a, (tsr_encoding)enc, lz4, 1);
            json_t *root;
            json_t *data = data_of(text, &root);
            cr_assert_str_eq(json_string_value(json_object_get(data, "checksum")), want);
            json_decref(root);
            tsr_json_free(text);
        }
    }
}

/* Frames other writers make (independent blocks, 4 MB blocks, no content
 * size, content and block checksums) are read too. */
Test(encodings, lz4_frames_with_other_settings_are_read) {
    enum { N = 300000 };
    double *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++) x[i] = (double)(i % 1000) * 0.5;
    LZ4F_preferences_t variants[4];
    memset(variants, 0, sizeof variants);
    variants[0].frameInfo.blockMode = LZ4F_blockIndependent;
    variants[1].frameInfo.blockSizeID = LZ4F_max4MB;
    variants[2].frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    variants[2].frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
    variants[3].compressionLevel = 9;
    variants[3].frameInfo.contentSize = N * sizeof *x;
    for (int v = 0; v < 4; v++) {
        size_t cap = LZ4F_compressFrameBound(N * sizeof *x, &variants[v]);
        unsigned char *frame = malloc(cap);
        size_t n = LZ4F_compressFrame(frame, cap, x, N * sizeof *x, &variants[v]);
        cr_assert(!LZ4F_isError(n));
        /* As a binref file: FILE:0:SIZE. */
        char path[512];
        snprintf(path, sizeof path, "%s/variant%d.bin", dir, v);
        FILE *f = fopen(path, "wb");
        cr_assert_eq(fwrite(frame, 1, n, f), n);
        fclose(f);
        char *text = NULL;
        cr_assert(asprintf(&text,
                           "{\"object_type\":\"array\",\"shape\":[%d],\"dtype\":\"float64\","
                           "\"data\":{\"buffer\":\"variant%d.bin:0:%zu\",\"encoding\":\"binref\","
                           "\"compression\":\"lz4\"}}",
                           N, v, n) > 0);
        tsr_array a;
        void *buffer;
        decode(text, &a, &buffer);
        cr_assert_eq(memcmp(a.data, x, N * sizeof *x), 0, "variant %d", v);
        tsr_array_buffer_free(buffer);
        free(text);
        free(frame);
    }
    free(x);
}

Test(encodings, json_ignores_compression_and_checksum_as_tesseract_does) {
    double x[3] = {1, 2, 3};
    tsr_array a = f64_vec(x, 3);
    char *text = encode(&a, TSR_ENCODING_JSON, 1, 1);
    cr_assert_str_eq(text, "{\"object_type\":\"array\",\"shape\":[3],\"dtype\":\"float64\","
                           "\"data\":{\"buffer\":[1.0,2.0,3.0],\"encoding\":\"json\"}}");
    tsr_json_free(text);
}

Test(encodings, encoding_and_io_names) {
    cr_assert_eq(tsr_encoding_from_name("json+binref"), TSR_ENCODING_BINREF);
    cr_assert_eq(tsr_encoding_from_name("binref"), TSR_ENCODING_BINREF);
    cr_assert_str_eq(tsr_encoding_name(TSR_ENCODING_BINREF), "binref");
    cr_assert_eq(tsr_file_io_from_name("posix"), TSR_FILE_IO_POSIX);
    cr_assert_eq(tsr_file_io_from_name("io_uring"), TSR_FILE_IO_URING);
    cr_assert_eq(tsr_file_io_from_name("auto"), TSR_FILE_IO_AUTO);
    cr_assert_eq(tsr_file_io_from_name("aio"), -1);
    cr_assert_null(tsr_file_io_name((tsr_file_io)7));
    const char *why = "unset";
    const char *backend = tsr_file_io_backend(&why);
    cr_assert(strcmp(backend, "io_uring") == 0 || strcmp(backend, "pread/pwrite") == 0, "%s", backend);
    if (strcmp(backend, "io_uring") == 0) cr_assert_null(why);
    else cr_assert(why && *why);
}

Test(encodings, options_are_checked) {
    double x = 1;
    tsr_array a = f64_scalar(&x);
    char *text = (char *)0x1;
    tsr_error err = {0};
    tsr_output_options o = {.struct_size = 2};
    assert_code(tsr_array_to_json_ex(&a, &o, &text, &err), TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "struct_size");
    cr_assert_null(text);
    o = (tsr_output_options){.struct_size = sizeof o, .encoding = (tsr_encoding)9};
    assert_code(tsr_array_to_json_ex(&a, &o, &text, &err), TSR_E_ARGUMENT, err.message);
    o = (tsr_output_options){.struct_size = sizeof o, .io = (tsr_file_io)9};
    assert_code(tsr_array_to_json_ex(&a, &o, &text, &err), TSR_E_ARGUMENT, err.message);
    o = (tsr_output_options){.struct_size = sizeof o, .encoding = TSR_ENCODING_BINREF,
                             .output_dir = "/nonexistent/tessera-out"};
    assert_code(tsr_array_to_json_ex(&a, &o, &text, &err), TSR_E_IO, err.message);
    assert_contains(err.message, "/nonexistent/tessera-out");
    /* NULL options: json, as tsr_array_to_json(TSR_ENCODING_JSON). */
    cr_assert_eq(tsr_array_to_json_ex(&a, NULL, &text, &err), 0);
    assert_contains(text, "\"encoding\":\"json\"");
    tsr_json_free(text);
}

/* The base64 codec works in steps of several groups: every length, so
 * that each way a buffer can end is decoded back exactly. */
Test(encodings, base64_of_every_length_up_to_300_bytes) {
    unsigned char bytes[300];
    for (int i = 0; i < 300; i++) bytes[i] = (unsigned char)(i * 37 + 11);
    for (int64_t n = 0; n <= 300; n++) {
        tsr_array a = make_array(bytes, TSR_UINT8, 1, &n);
        char *text = encode(&a, TSR_ENCODING_BASE64, 0, 1);
        tsr_array back;
        void *buffer;
        decode(text, &back, &buffer);
        cr_assert_eq(back.shape[0], n);
        cr_assert_eq(memcmp(back.data, bytes, (size_t)n), 0, "%lld bytes", (long long)n);
        tsr_array_buffer_free(buffer);
        tsr_json_free(text);
    }
}
