/* SPDX-License-Identifier: MIT */
/*
 * Arrays in files and compressed or checksummed arrays in payloads, seen
 * through the public API: whole requests and responses in json+binref
 * (one file per result, rolling over, removed on failure), and every
 * corrupted or hostile input refused with a message naming the array:
 * checksum mismatch, truncated file, offset past the end, sizes that
 * disagree with shape x dtype, bad lz4 frames, and paths that leave the
 * input directory through '..', an absolute path or a symlink (allowed
 * only when asked). Also: long base64 strings kept out of the JSON parser
 * without changing what is accepted or where errors are reported.
 */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "temp_dir.h"
#include "test_util.h"

static char dir[256];   /* the input directory */
static char other[300]; /* a directory beside it */

static void make_dirs(void) {
    make_temp_dir(dir, sizeof dir, "tessera-bp");
    snprintf(other, sizeof other, "%s-other", dir);
    cr_assert_eq(mkdir(other, 0700), 0);
}

static void remove_dirs(void) {
    remove_tree(dir);
    remove_tree(other);
}

TestSuite(binref_payload, .init = make_dirs, .fini = remove_dirs);

/* ---- helpers ------------------------------------------------------------- */

static void put_file(const char *in, const char *name, const void *bytes, size_t n) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", in, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

static char *array_text(const char *dtype, const char *shape, const char *data) {
    char *s = NULL;
    cr_assert(asprintf(&s, "{\"object_type\":\"array\",\"shape\":%s,\"dtype\":\"%s\",\"data\":%s}",
                       shape, dtype, data) > 0);
    return s;
}

static tsr_input_options inputs_from(const char *base, int allow_escape) {
    return (tsr_input_options){.struct_size = sizeof(tsr_input_options), .base_dir = base,
                               .allow_escape = allow_escape};
}

static void decode_ok(const char *text, const tsr_input_options *in, tsr_array *a, void **buf) {
    tsr_error err = {0};
    int rc = tsr_array_from_json_ex(text, strlen(text), TSR_DTYPE_INVALID, in, a, buf, &err);
    cr_assert_eq(rc, 0, "decoding %s: %s", text, err.message);
}

/* Refused with code and a message holding needle; a failure says which
 * case (name). */
static void refused_as(const char *name, const char *text, const tsr_input_options *in, int code,
                       const char *needle) {
    tsr_array a;
    void *buf = (void *)0x1;
    tsr_error err = {0};
    int rc = tsr_array_from_json_ex(text, strlen(text), TSR_DTYPE_INVALID, in, &a, &buf, &err);
    cr_assert_eq(rc, code, "%s: expected code %d (%s), got %d (%s): %s", name, code,
                 tsr_strerror(code), rc, tsr_strerror(rc), err.message);
    cr_assert_null(buf, "%s: refused but a buffer was handed back", name);
    cr_assert(strstr(err.message, needle) != NULL,
              "%s: expected the message to contain \"%s\", got \"%s\"", name, needle,
              err.message);
}

static void decode_fails(const char *text, const tsr_input_options *in, int code,
                         const char *needle) {
    refused_as(text, text, in, code, needle);
}

/* One array text that must be refused: its name, the array (dtype,
 * shape, data) and the code and words of the refusal. */
typedef struct refusal {
    const char *name, *dtype, *shape, *data;
    int code;
    const char *needle;
} refusal;

static void refuse_each(const refusal *cases, size_t n, const tsr_input_options *in) {
    for (size_t k = 0; k < n; k++) {
        char *t = array_text(cases[k].dtype, cases[k].shape, cases[k].data);
        refused_as(cases[k].name, t, in, cases[k].code, cases[k].needle);
        free(t);
    }
}

#define REFUSE_EACH(cases, in) refuse_each(cases, sizeof cases / sizeof cases[0], in)

/* The request parsed (binref files read from in; NULL: none), bound to
 * a new call and run; its payload in *p. */
static tsr_call *parsed_and_run(tsr_component *c, const char *request,
                                const tsr_input_options *in, tsr_payload **p) {
    tsr_error err = {0};
    *p = NULL;
    int rc = tsr_payload_parse_ex(c, TSR_EP_APPLY, request, strlen(request), in, p, &err);
    cr_assert_eq(rc, 0, "%s", err.message);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(tsr_payload_bind(*p, call, &err), 0, "%s", err.message);
    run_ok(call);
    return call;
}

/* The results of a call that ran, as a response text (to tsr_json_free). */
static char *formatted(const tsr_payload *p, tsr_call *call, const tsr_output_options *o) {
    char *out = NULL;
    tsr_error err = {0};
    int rc = tsr_payload_format_results_ex(p, call, o, &out, &err);
    cr_assert_eq(rc, 0, "%s", err.message);
    return out;
}

/* An encoded array, written with the library into dir. */
static char *encode_to(const tsr_array *a, tsr_encoding enc, int lz4, int checksum) {
    tsr_output_options o = {.struct_size = sizeof o, .encoding = enc, .lz4 = lz4,
                            .checksum = checksum, .output_dir = dir};
    char *text = NULL;
    tsr_error err = {0};
    int rc = tsr_array_to_json_ex(a, &o, &text, &err);
    cr_assert_eq(rc, 0, "%s", err.message);
    return text;
}

/* The file and numbers of a binref text. */
static void binref_of(const char *text, char *file, size_t size, unsigned long long *off,
                      unsigned long long *stored) {
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    cr_assert_not_null(root);
    const char *buf = json_string_value(json_object_get(json_object_get(root, "data"), "buffer"));
    char f[256];
    *stored = 0;
    cr_assert(sscanf(buf, "%255[^:]:%llu:%llu", f, off, stored) >= 2, "%s", buf);
    snprintf(file, size, "%s", f);
    json_decref(root);
}

/* ---- payloads ------------------------------------------------------------ */

/* vectoradd: every input in one .bin file, read in one batch; the
 * response in json+binref; its arrays read back. */
Test(binref_payload, a_request_in_binref_gives_a_response_in_binref) {
    double a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, s = 2;
    double all[9];
    memcpy(all, a, sizeof a);
    memcpy(all + 4, b, sizeof b);
    all[8] = s;
    put_file(dir, "in.bin", all, sizeof all);
    const char *request =
        "{\"inputs\":{"
        "\"a\":{\"object_type\":\"array\",\"shape\":[4],\"dtype\":\"float64\","
        "\"data\":{\"buffer\":\"in.bin:0\",\"encoding\":\"binref\"}},"
        "\"b\":{\"object_type\":\"array\",\"shape\":[4],\"dtype\":\"float64\","
        "\"data\":{\"buffer\":\"in.bin:32\",\"encoding\":\"binref\"}},"
        "\"s\":{\"object_type\":\"array\",\"shape\":[],\"dtype\":\"float64\","
        "\"data\":{\"buffer\":\"in.bin:64\",\"encoding\":\"binref\"}}}}";
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_input_options in = inputs_from(dir, 0);
    tsr_payload *p;
    tsr_call *call = parsed_and_run(c, request, &in, &p);
    cr_assert_eq(((double *)tsr_payload_input(p, "b")->data)[3], 40);
    cr_assert_eq(*(double *)tsr_payload_input(p, "s")->data, 2);
    tsr_output_options o = {.struct_size = sizeof o, .encoding = TSR_ENCODING_BINREF,
                            .output_dir = other, .checksum = 1};
    char *out = formatted(p, call, &o);
    json_error_t jerr;
    json_t *root = json_loads(out, 0, &jerr);
    char *result = json_dumps(json_object_get(root, "result"), JSON_COMPACT);
    tsr_input_options back_in = inputs_from(other, 0);
    tsr_array r;
    void *buf;
    decode_ok(result, &back_in, &r, &buf);
    double want[4] = {12, 24, 36, 48};
    cr_assert_eq(memcmp(r.data, want, sizeof want), 0, "result = a * s + b");
    tsr_array_buffer_free(buf);
    free(result);
    json_decref(root);
    tsr_json_free(out);
    tsr_call_free(call);
    tsr_payload_free(p);
    tsr_close(c);
}

/* payload_fields: five outputs of five dtypes, one binref file each way
 * round, and a float64 scalar read into a float32 field (converted after
 * the batch read). */
Test(binref_payload, mixed_dtypes_round_trip_through_one_file_and_convert) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    const char *request =
        "{\"inputs\":{\"mesh\":{\"nodes\":[[1,2],[3,4],[5,6]],\"cells\":[[0,1,2]]},"
        "\"flags\":[true,false],\"scale\":0.5,\"z\":{\"object_type\":\"array\",\"shape\":[1],"
        "\"dtype\":\"complex128\",\"data\":{\"buffer\":\"AAAAAAAA8D8AAAAAAAAAQA==\","
        "\"encoding\":\"base64\"}}}}";
    tsr_payload *p;
    tsr_call *call = parsed_and_run(c, request, NULL, &p);
    tsr_output_options o = {.struct_size = sizeof o, .encoding = TSR_ENCODING_BINREF,
                            .output_dir = dir, .lz4 = 1, .checksum = 1};
    char *out = formatted(p, call, &o);
    /* Every array lands in the one file of this result. */
    DIR *d = opendir(dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) files += e->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(files, 1, "one result, one .bin file (%d)", files);

    /* Feed the outputs back as inputs. */
    json_error_t jerr;
    json_t *res = json_loads(out, 0, &jerr);
    json_t *moved = json_object_get(res, "moved");
    json_t *req = json_pack("{s:{s:{s:O,s:O},s:O,s:O,s:O}}", "inputs", "mesh", "nodes",
                            json_object_get(moved, "nodes"), "cells",
                            json_object_get(moved, "cells"), "flags", json_object_get(res, "flags"),
                            "scale", json_object_get(res, "total"), "z",
                            json_object_get(res, "z"));
    char *again = json_dumps(req, JSON_COMPACT);
    tsr_input_options in = inputs_from(dir, 0);
    tsr_payload *q = NULL;
    tsr_error err = {0};
    cr_assert_eq(tsr_payload_parse_ex(c, TSR_EP_APPLY, again, strlen(again), &in, &q, &err), 0,
                 "%s", err.message);
    const tsr_array *nodes = tsr_payload_input(q, "mesh.nodes");
    cr_assert_eq(((double *)nodes->data)[5], 3.0, "0.5 * 6");
    const tsr_array *scale = tsr_payload_input(q, "scale");
    cr_assert_eq(scale->dtype, TSR_FLOAT32, "total (float64) converted to the field's float32");
    cr_assert_eq(*(float *)scale->data, 10.5f, "0.5 * 21");
    const tsr_array *flags = tsr_payload_input(q, "flags");
    cr_assert_eq(((uint8_t *)flags->data)[0], 0);
    cr_assert_eq(((uint8_t *)flags->data)[1], 1);
    const tsr_array *z = tsr_payload_input(q, "z");
    cr_assert_eq(((double *)z->data)[1], -2.0, "conj");
    tsr_payload_free(q);
    free(again);
    json_decref(req);
    json_decref(res);
    tsr_json_free(out);
    tsr_call_free(call);
    tsr_payload_free(p);
    tsr_close(c);
}

/* payload_fields with small arrays of every field. */
#define SMALL_FIELDS_REQUEST                                                                    \
    "{\"inputs\":{\"mesh\":{\"nodes\":[[1,2],[3,4]],\"cells\":[[0,1,2]]},\"flags\":[true],"      \
    "\"scale\":1,\"z\":[]}}"

Test(binref_payload, responses_roll_over_into_new_files) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    const char *request = SMALL_FIELDS_REQUEST;
    tsr_payload *p;
    tsr_call *call = parsed_and_run(c, request, NULL, &p);
    tsr_output_options o = {.struct_size = sizeof o, .encoding = TSR_ENCODING_BINREF,
                            .output_dir = dir, .max_file_bytes = 16};
    char *out = formatted(p, call, &o);
    /* With a 16-byte limit: nodes (32 B) alone in file 0; cells (12 B) and
     * flags (1 B) in file 1; total (8 B) would pass 16, so file 2; z
     * (empty) after it. */
    const char *where[] = {"\"nodes\"", "-0.bin:0\"", "\"cells\"", "-1.bin:0\"",
                           "\"flags\"", "-1.bin:12\"", "\"total\"", "-2.bin:0\"",
                           "\"z\"", "-2.bin:8\""};
    const char *at = out;
    for (size_t k = 0; k < sizeof where / sizeof where[0]; k++) {
        const char *next = strstr(at, where[k]);
        cr_assert_not_null(next, "expected %s after ...%.60s in %s", where[k], at, out);
        at = next;
    }
    tsr_json_free(out);
    tsr_call_free(call);
    tsr_payload_free(p);
    tsr_close(c);
}

/* A response that cannot be written leaves no file behind: the file size
 * limit makes the write of the first file fail after three files exist. */
Test(binref_payload, a_failed_response_removes_its_files) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    const char *request = SMALL_FIELDS_REQUEST;
    tsr_payload *p;
    tsr_call *call = parsed_and_run(c, request, NULL, &p);
    tsr_error err = {0};
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {.rlim_cur = 20, .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    tsr_file_io ios[2] = {TSR_FILE_IO_POSIX, TSR_FILE_IO_AUTO};
    for (int k = 0; k < 2; k++) {
        tsr_output_options o = {.struct_size = sizeof o, .encoding = TSR_ENCODING_BINREF,
                                .output_dir = dir, .max_file_bytes = 16, .io = ios[k]};
        char *out = (char *)0x1;
        int rc = tsr_payload_format_results_ex(p, call, &o, &out, &err);
        assert_code(rc, TSR_E_IO, err.message);
        cr_assert_null(out);
        assert_contains(err.message, "File too large");
        DIR *d = opendir(dir);
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            cr_assert(e->d_name[0] == '.', "left behind: %s", e->d_name);
        closedir(d);
    }
    /* Lifted again: the limit is this test's, not the rest of the process's
     * (the coverage files written at exit, in a TSR_COVERAGE build). */
    lim.rlim_cur = RLIM_INFINITY;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    tsr_call_free(call);
    tsr_payload_free(p);
    tsr_close(c);
}

/* ---- corrupted inputs ---------------------------------------------------- */

Test(binref_payload, a_checksum_mismatch_names_the_array) {
    double x[64];
    for (int i = 0; i < 64; i++) x[i] = i;
    tsr_array a = f64_vec(x, 64);
    tsr_input_options in = inputs_from(dir, 0);
    for (int lz4 = 0; lz4 <= 1; lz4++) {
        /* binref: one byte of the file flipped (past the lz4 header). */
        char *text = encode_to(&a, TSR_ENCODING_BINREF, lz4, 1);
        char file[256], path[600];
        unsigned long long off, stored;
        binref_of(text, file, sizeof file, &off, &stored);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        FILE *f = fopen(path, "r+b");
        if (lz4) {
            /* Change a literal, keep the frame valid: decompress, flip,
             * compress again would need liblz4; instead flip the
             * checksum in the text below. */
            fclose(f);
            char *bad = strdup(text);
            char *cs = strstr(bad, "xxh3:") + 5;
            cs[0] = cs[0] == '0' ? '1' : '0';
            decode_fails(bad, &in, TSR_E_PAYLOAD, "checksum mismatch");
            free(bad);
        } else {
            fseek(f, 8 * 10, SEEK_SET);
            fputc(0x7f, f);
            fclose(f);
            decode_fails(text, &in, TSR_E_PAYLOAD, "checksum mismatch: the 512 bytes of the array hash to xxh3:");
        }
        tsr_json_free(text);
        /* base64: the checksum of another array. */
        text = encode_to(&a, TSR_ENCODING_BASE64, lz4, 1);
        char *cs = strstr(text, "xxh3:") + 5;
        cs[15] = cs[15] == 'a' ? 'b' : 'a';
        decode_fails(text, &in, TSR_E_PAYLOAD, "the payload says xxh3:");
        tsr_json_free(text);
    }
}

Test(binref_payload, malformed_checksums_are_refused) {
    tsr_input_options in = inputs_from(dir, 0);
    const char *bad[][2] = {
        {"\"sha256:00\"", "unknown checksum algorithm \"sha256\""},
        {"\"xxh3:123\"", "\"xxh3:<16 hex digits>\""},
        {"\"xxh3:0123456789abcdefg\"", "\"xxh3:<16 hex digits>\""},
        {"\"xxh3:012345678zabcdef\"", "\"xxh3:<16 hex digits>\""},
        {"12", "\"checksum\" must be a string"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char *data = NULL;
        cr_assert(asprintf(&data, "{\"buffer\":\"AAAAAAAA8D8=\",\"encoding\":\"base64\",\"checksum\":%s}",
                           bad[k][0]) > 0);
        char *text = array_text("float64", "[1]", data);
        decode_fails(text, &in, TSR_E_PAYLOAD, bad[k][1]);
        free(text);
        free(data);
    }
    char *text = array_text("float64", "[1]",
                            "{\"buffer\":[1.0],\"encoding\":\"json\",\"checksum\":\"xxh3:0000000000000000\"}");
    decode_fails(text, &in, TSR_E_PAYLOAD, "json buffers carry no checksum");
    free(text);
}

Test(binref_payload, truncated_files_and_offsets_past_the_end) {
    double x[100] = {0};
    put_file(dir, "short.bin", x, 100); /* 100 bytes, fewer than 100 doubles */
    tsr_input_options in = inputs_from(dir, 0);
    static const refusal cases[] = {
        {"the whole array", "float64", "[100]", "{\"buffer\":\"short.bin:0\",\"encoding\":\"binref\"}",
         TSR_E_IO, "'short.bin' is truncated: it holds 100 of the 800 bytes at offset 0"},
        {"its last bytes", "float64", "[2]", "{\"buffer\":\"short.bin:96\",\"encoding\":\"binref\"}",
         TSR_E_IO, "is truncated: it holds 4 of the 16 bytes at offset 96"},
        {"an offset past the end", "float64", "[0]",
         "{\"buffer\":\"short.bin:101\",\"encoding\":\"binref\"}", TSR_E_IO,
         "offset 101 is past the end of 'short.bin' (100 bytes)"},
        {"the largest offset", "float64", "[1]",
         "{\"buffer\":\"short.bin:18446744073709551615\",\"encoding\":\"binref\"}", TSR_E_IO,
         "is past the end"},
        {"an offset past 64 bits", "float64", "[1]",
         "{\"buffer\":\"short.bin:18446744073709551616\",\"encoding\":\"binref\"}", TSR_E_PAYLOAD,
         "binref offset in \"short.bin:18446744073709551616\" is too large"},
        /* Compressed: the stored size runs past the end. */
        {"a stored size past the end", "float64", "[10]",
         "{\"buffer\":\"short.bin:90:20\",\"encoding\":\"binref\",\"compression\":\"lz4\"}", TSR_E_IO,
         "is truncated: it holds 10 of the 20 bytes at offset 90"},
    };
    REFUSE_EACH(cases, &in);
    /* An empty array at the very end is fine. */
    char *t = array_text("float64", "[0]", "{\"buffer\":\"short.bin:100\",\"encoding\":\"binref\"}");
    tsr_array a;
    void *buf;
    decode_ok(t, &in, &a, &buf);
    cr_assert_eq(a.shape[0], 0);
    tsr_array_buffer_free(buf);
    free(t);
}

/* A signed number where a byte count belongs is an invalid offset or
 * size, not a part of the file's name. */
Test(binref_payload, a_negative_offset_or_size_is_invalid) {
    double x[2] = {1, 2};
    put_file(dir, "x.bin", x, sizeof x);
    tsr_input_options in = inputs_from(dir, 0);
    static const refusal cases[] = {
        {"a negative offset", "float64", "[1]", "{\"buffer\":\"x.bin:-8\",\"encoding\":\"binref\"}",
         TSR_E_PAYLOAD,
         "binref offset in \"x.bin:-8\" is invalid: it must be a whole number of bytes, 0 or more"},
        {"a negative offset with a size", "float64", "[1]",
         "{\"buffer\":\"x.bin:-8:8\",\"encoding\":\"binref\"}", TSR_E_PAYLOAD,
         "binref offset in \"x.bin:-8:8\" is invalid"},
        {"a signed offset", "float64", "[1]", "{\"buffer\":\"x.bin:+8\",\"encoding\":\"binref\"}",
         TSR_E_PAYLOAD, "binref offset in \"x.bin:+8\" is invalid"},
        {"a negative size", "float64", "[1]", "{\"buffer\":\"x.bin:0:-8\",\"encoding\":\"binref\"}",
         TSR_E_PAYLOAD, "binref size in \"x.bin:0:-8\" is invalid"},
    };
    REFUSE_EACH(cases, &in);
}

/* Every error of a request names the field whose array it is. */
Test(binref_payload, errors_in_requests_name_the_field) {
    double x[2] = {1, 2};
    put_file(dir, "x.bin", x, sizeof x);
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    const char *request =
        "{\"inputs\":{"
        "\"a\":{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"float64\","
        "\"data\":{\"buffer\":\"x.bin:0\",\"encoding\":\"binref\"}},"
        "\"b\":{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"float64\","
        "\"data\":{\"buffer\":\"x.bin:8\",\"encoding\":\"binref\"}},"
        "\"s\":1}}";
    tsr_input_options in = inputs_from(dir, 0);
    tsr_payload *p = (tsr_payload *)0x1;
    tsr_error err = {0};
    int rc = tsr_payload_parse_ex(c, TSR_EP_APPLY, request, strlen(request), &in, &p, &err);
    assert_code(rc, TSR_E_IO, err.message);
    cr_assert_null(p);
    assert_contains(err.message, "component 'vectoradd', endpoint 'apply', field 'inputs.b'");
    assert_contains(err.message, "'x.bin' is truncated: it holds 8 of the 16 bytes at offset 8");
    tsr_close(c);
}

Test(binref_payload, sizes_that_disagree_with_shape_and_dtype) {
    double x[4] = {1, 2, 3, 4};
    put_file(dir, "x.bin", x, sizeof x);
    tsr_input_options in = inputs_from(dir, 0);
    static const refusal cases[] = {
        {"a size short of the shape", "float64", "[4]",
         "{\"buffer\":\"x.bin:0:16\",\"encoding\":\"binref\"}", TSR_E_PAYLOAD,
         "the binref buffer gives 16 bytes but shape x float64 needs 32"},
        /* lz4 without its stored size, as Tesseract requires it. */
        {"lz4 without a stored size", "float64", "[4]",
         "{\"buffer\":\"x.bin:0\",\"encoding\":\"binref\",\"compression\":\"lz4\"}", TSR_E_PAYLOAD,
         "must give its stored size"},
        /* A stored size no frame of 32 bytes can have. */
        {"a stored size too large for the frame", "float64", "[4]",
         "{\"buffer\":\"x.bin:0:100000\",\"encoding\":\"binref\",\"compression\":\"lz4\"}",
         TSR_E_PAYLOAD, "more than an lz4 frame of the 32 bytes"},
        /* Uncompressed base64 of the wrong length. */
        {"base64 of the wrong length", "float64", "[2]",
         "{\"buffer\":\"AAAAAAAA8D8=\",\"encoding\":\"base64\"}", TSR_E_PAYLOAD,
         "needs 16 bytes but the base64 buffer holds 8"},
    };
    REFUSE_EACH(cases, &in);
    /* A frame of 4 doubles read as 3 or 5. */
    tsr_array a = f64_vec(x, 4);
    for (int enc = TSR_ENCODING_BASE64; enc <= TSR_ENCODING_BINREF; enc++) {
        char *text = encode_to(&a, (tsr_encoding)enc, 1, 0);
        char *three = strdup(text), *five = strdup(text);
        strstr(three, "\"shape\":[4]")[9] = '3';
        strstr(five, "\"shape\":[4]")[9] = '5';
        decode_fails(three, &in, TSR_E_PAYLOAD, "the lz4 frame holds 32 bytes where shape x dtype need 24");
        decode_fails(five, &in, TSR_E_PAYLOAD, "the lz4 frame holds 32 bytes where shape x dtype need 40");
        free(three);
        free(five);
        tsr_json_free(text);
    }
}

Test(binref_payload, bad_lz4_frames) {
    double x[512];
    for (int i = 0; i < 512; i++) x[i] = i % 7;
    tsr_array a = f64_vec(x, 512);
    tsr_input_options in = inputs_from(dir, 0);
    char *text = encode_to(&a, TSR_ENCODING_BINREF, 1, 0);
    char file[256], path[600];
    unsigned long long off, stored;
    binref_of(text, file, sizeof file, &off, &stored);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    unsigned char frame[8192];
    FILE *f = fopen(path, "rb");
    size_t n = fread(frame, 1, sizeof frame, f);
    fclose(f);
    cr_assert_eq(n, stored);

    /* Not a frame at all. */
    unsigned char junk[64];
    memset(junk, 0x42, sizeof junk);
    put_file(dir, "junk.bin", junk, sizeof junk);
    char *t = array_text("float64", "[512]",
                         "{\"buffer\":\"junk.bin:0:64\",\"encoding\":\"binref\",\"compression\":\"lz4\"}");
    decode_fails(t, &in, TSR_E_PAYLOAD, "not an lz4 frame (64 bytes)");
    free(t);
    /* A shape far beyond what 64 stored bytes can decompress to. */
    t = array_text("float64", "[1000000, 1000000]",
                   "{\"buffer\":\"junk.bin:0:64\",\"encoding\":\"binref\",\"compression\":\"lz4\"}");
    decode_fails(t, &in, TSR_E_PAYLOAD, "more than an lz4 frame of 64 stored bytes can hold");
    free(t);
    /* Cut short: the frame ends before its end mark. */
    char *data = NULL;
    cr_assert(asprintf(&data, "{\"buffer\":\"%s:0:%llu\",\"encoding\":\"binref\",\"compression\":\"lz4\"}",
                       file, stored - 6) > 0);
    t = array_text("float64", "[512]", data);
    decode_fails(t, &in, TSR_E_PAYLOAD, "truncated lz4 frame");
    free(t);
    free(data);
    /* A damaged block. */
    unsigned char broken[8192];
    memcpy(broken, frame, n);
    broken[19] ^= 0xff; /* the first block's data, past the 7..19-byte header */
    broken[20] ^= 0xff;
    broken[21] ^= 0xff;
    put_file(dir, "broken.bin", broken, n);
    cr_assert(asprintf(&data, "{\"buffer\":\"broken.bin:0:%zu\",\"encoding\":\"binref\",\"compression\":\"lz4\"}",
                       n) > 0);
    t = array_text("float64", "[512]", data);
    {
        tsr_array b;
        void *buf = NULL;
        tsr_error err = {0};
        int rc = tsr_array_from_json_ex(t, strlen(t), TSR_DTYPE_INVALID, &in, &b, &buf, &err);
        /* lz4 has no checksum here: damage is an error or different bytes. */
        if (rc == 0) {
            cr_assert_neq(memcmp(b.data, x, sizeof x), 0, "damaged frame gave the original?");
            tsr_array_buffer_free(buf);
        } else {
            assert_code(rc, TSR_E_PAYLOAD, err.message);
            assert_contains(err.message, "lz4 frame");
        }
    }
    free(t);
    free(data);
    /* Bytes after the frame. */
    memcpy(broken, frame, n);
    memset(broken + n, 0, 8);
    put_file(dir, "trailing.bin", broken, n + 8);
    cr_assert(asprintf(&data, "{\"buffer\":\"trailing.bin:0:%zu\",\"encoding\":\"binref\",\"compression\":\"lz4\"}",
                       n + 8) > 0);
    t = array_text("float64", "[512]", data);
    decode_fails(t, &in, TSR_E_PAYLOAD, "8 bytes follow the end of the lz4 frame");
    free(t);
    free(data);
    /* base64 of a non-frame. */
    t = array_text("float64", "[1]",
                   "{\"buffer\":\"AAAAAAAA8D8=\",\"encoding\":\"base64\",\"compression\":\"lz4\"}");
    decode_fails(t, &in, TSR_E_PAYLOAD, "not an lz4 frame");
    free(t);
    tsr_json_free(text);
}

/* ---- paths ---------------------------------------------------------------- */

Test(binref_payload, paths_may_not_leave_the_input_directory) {
    double v = 42;
    put_file(other, "secret.bin", &v, sizeof v);
    char *secret_abs = NULL, *data = NULL, *t;
    cr_assert(asprintf(&secret_abs, "%s/secret.bin", other) > 0);
    const char *other_name = strrchr(other, '/') + 1;
    tsr_input_options in = inputs_from(dir, 0), open_in = inputs_from(dir, 1);

    /* '..' */
    cr_assert(asprintf(&data, "{\"buffer\":\"../%s/secret.bin:0\",\"encoding\":\"binref\"}", other_name) > 0);
    t = array_text("float64", "[]", data);
    decode_fails(t, &in, TSR_E_PAYLOAD, "leads outside the input directory");
    decode_fails(t, &in, TSR_E_PAYLOAD, "through '..'");
    tsr_array a;
    void *buf;
    decode_ok(t, &open_in, &a, &buf);
    cr_assert_eq(*(double *)a.data, 42, "allowed when asked");
    tsr_array_buffer_free(buf);
    free(t);
    free(data);

    /* an absolute path elsewhere */
    cr_assert(asprintf(&data, "{\"buffer\":\"%s:0\",\"encoding\":\"binref\"}", secret_abs) > 0);
    t = array_text("float64", "[]", data);
    decode_fails(t, &in, TSR_E_PAYLOAD, "is absolute and lies outside the input directory");
    decode_ok(t, &open_in, &a, &buf);
    tsr_array_buffer_free(buf);
    free(t);
    free(data);
    t = array_text("uint8", "[4]", "{\"buffer\":\"/etc/passwd:0\",\"encoding\":\"binref\"}");
    decode_fails(t, &in, TSR_E_PAYLOAD, "binref path '/etc/passwd' is absolute");
    free(t);

    /* a symlink inside pointing out */
    char link[600];
    snprintf(link, sizeof link, "%s/innocent.bin", dir);
    cr_assert_eq(symlink(secret_abs, link), 0, "%s", strerror(errno));
    t = array_text("float64", "[]", "{\"buffer\":\"innocent.bin:0\",\"encoding\":\"binref\"}");
    decode_fails(t, &in, TSR_E_PAYLOAD, "through a symlink");
    decode_ok(t, &open_in, &a, &buf);
    tsr_array_buffer_free(buf);
    free(t);
    /* a symlinked directory on the way out */
    snprintf(link, sizeof link, "%s/sub", dir);
    cr_assert_eq(symlink(other, link), 0);
    t = array_text("float64", "[]", "{\"buffer\":\"sub/secret.bin:0\",\"encoding\":\"binref\"}");
    decode_fails(t, &in, TSR_E_PAYLOAD, "through a symlink");
    free(t);

    /* Inside stays fine: '..' that comes back, an absolute path inside, a
     * symlink to a file inside. */
    put_file(dir, "mine.bin", &v, sizeof v);
    cr_assert_eq(mkdir(strcat(strcpy(link, dir), "/d"), 0700), 0);
    t = array_text("float64", "[]", "{\"buffer\":\"d/../mine.bin:0\",\"encoding\":\"binref\"}");
    decode_ok(t, &in, &a, &buf);
    tsr_array_buffer_free(buf);
    free(t);
    cr_assert(asprintf(&data, "{\"buffer\":\"%s/mine.bin:0\",\"encoding\":\"binref\"}", dir) > 0);
    t = array_text("float64", "[]", data);
    decode_ok(t, &in, &a, &buf);
    tsr_array_buffer_free(buf);
    free(t);
    free(data);
    snprintf(link, sizeof link, "%s/alias.bin", dir);
    cr_assert_eq(symlink("mine.bin", link), 0);
    t = array_text("float64", "[]", "{\"buffer\":\"alias.bin:0\",\"encoding\":\"binref\"}");
    decode_ok(t, &in, &a, &buf);
    cr_assert_eq(*(double *)a.data, 42);
    tsr_array_buffer_free(buf);
    free(t);
    free(secret_abs);
}

Test(binref_payload, binref_buffers_are_read_as_tesseract_reads_them) {
    double x[3] = {1, 2, 3};
    put_file(dir, "a:b.bin", x, sizeof x); /* a colon in the name */
    put_file(dir, "plain.bin", x, sizeof x);
    tsr_input_options in = inputs_from(dir, 0);
    struct { const char *buffer; double first; } ok[] = {
        {"plain.bin", 1},        /* no offset: 0 */
        {"plain.bin:8", 2},
        {"a:b.bin:16", 3},       /* the path keeps what is not a trailing number */
        {"plain.bin:16:8", 3},   /* uncompressed with the right size */
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        char *data = NULL;
        cr_assert(asprintf(&data, "{\"buffer\":\"%s\",\"encoding\":\"binref\"}", ok[k].buffer) > 0);
        char *t = array_text("float64", "[1]", data);
        tsr_array a;
        void *buf;
        decode_ok(t, &in, &a, &buf);
        cr_assert_eq(*(double *)a.data, ok[k].first, "%s", ok[k].buffer);
        tsr_array_buffer_free(buf);
        free(t);
        free(data);
    }
    static const refusal cases[] = {
        {"an offset and no name", "float64", "[1]", "{\"buffer\":\":8\",\"encoding\":\"binref\"}",
         TSR_E_IO, "cannot open binref file ':8'"},
        {"an empty buffer", "float64", "[1]", "{\"buffer\":\"\",\"encoding\":\"binref\"}",
         TSR_E_PAYLOAD, "names no file"},
        {"a number for a buffer", "float64", "[1]", "{\"buffer\":8,\"encoding\":\"binref\"}",
         TSR_E_PAYLOAD, "a binref buffer must be a string"},
    };
    REFUSE_EACH(cases, &in);
    char *t;
    /* The default input directory is the current one, as in Tesseract. */
    cr_assert_eq(chdir(dir), 0);
    t = array_text("float64", "[1]", "{\"buffer\":\"plain.bin:16\",\"encoding\":\"binref\"}");
    tsr_array a;
    void *buf;
    decode_ok(t, NULL, &a, &buf);
    cr_assert_eq(*(double *)a.data, 3);
    tsr_array_buffer_free(buf);
    free(t);
    /* A missing input directory is named. */
    tsr_input_options gone = inputs_from("/nonexistent/tessera-in", 0);
    t = array_text("float64", "[1]", "{\"buffer\":\"plain.bin\",\"encoding\":\"binref\"}");
    decode_fails(t, &gone, TSR_E_IO, "input directory '/nonexistent/tessera-in'");
    free(t);
}

/* Forced pread/pwrite and forced io_uring read and write the same bytes. */
Test(binref_payload, both_io_paths_through_the_api) {
    const char *why = NULL;
    bool uring = strcmp(tsr_file_io_backend(&why), "io_uring") == 0;
    double x[10000];
    for (int i = 0; i < 10000; i++) x[i] = i * 0.5;
    tsr_array a = f64_vec(x, 10000);
    tsr_file_io ios[2] = {TSR_FILE_IO_POSIX, TSR_FILE_IO_URING};
    for (int w = 0; w < 2; w++) {
        for (int r = 0; r < 2; r++) {
            if ((w == 1 || r == 1) && !uring) continue;
            tsr_output_options o = {.struct_size = sizeof o, .encoding = TSR_ENCODING_BINREF,
                                    .output_dir = dir, .io = ios[w]};
            char *text = NULL;
            tsr_error err = {0};
            cr_assert_eq(tsr_array_to_json_ex(&a, &o, &text, &err), 0, "%s", err.message);
            tsr_input_options in = {.struct_size = sizeof in, .base_dir = dir, .io = ios[r]};
            tsr_array b;
            void *buf;
            cr_assert_eq(tsr_array_from_json_ex(text, strlen(text), TSR_FLOAT64, &in, &b, &buf, &err),
                         0, "%s", err.message);
            cr_assert_eq(memcmp(b.data, x, sizeof x), 0);
            tsr_array_buffer_free(buf);
            tsr_json_free(text);
        }
    }
    if (!uring) {
        /* Forcing io_uring where it does not work is an error that says why. */
        tsr_output_options o = {.struct_size = sizeof o, .encoding = TSR_ENCODING_BINREF,
                                .output_dir = dir, .io = TSR_FILE_IO_URING};
        char *text = NULL;
        tsr_error err = {0};
        assert_code(tsr_array_to_json_ex(&a, &o, &text, &err), TSR_E_IO, err.message);
        assert_contains(err.message, why);
    }
}

/* ---- long strings kept out of the parser ----------------------------------- */

Test(binref_payload, long_base64_strings_decode_and_errors_keep_their_place) {
    enum { N = 5000 };
    double *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++) x[i] = i;
    tsr_array a = f64_vec(x, N);
    char *text = encode_to(&a, TSR_ENCODING_BASE64, 0, 1);
    tsr_input_options in = inputs_from(dir, 0);
    tsr_array b;
    void *buf;
    decode_ok(text, &in, &b, &buf);
    cr_assert_eq(memcmp(b.data, x, N * sizeof *x), 0);
    tsr_array_buffer_free(buf);

    /* A syntax error after the long string is reported where it is in
     * the text (one line: its column). */
    size_t len = strlen(text);
    char *bad = malloc(len + 2);
    memcpy(bad, text, len - 1);
    bad[len - 1] = ',';
    bad[len] = '}';
    bad[len + 1] = '\0';
    tsr_error err = {0};
    void *nothing;
    int rc = tsr_array_from_json_ex(bad, len + 1, TSR_DTYPE_INVALID, &in, &b, &nothing, &err);
    assert_code(rc, TSR_E_PAYLOAD, err.message);
    char where[64];
    snprintf(where, sizeof where, "line 1, column %zu", len + 1);
    assert_contains(err.message, where);
    free(bad);

    /* A bad character deep inside is found and placed. */
    char *damaged = strdup(text);
    char *buffer = strstr(damaged, "\"buffer\":\"") + 10;
    buffer[4321] = '*';
    decode_fails(damaged, &in, TSR_E_PAYLOAD, "invalid base64: character '*' at position 4321");
    free(damaged);

    /* A long string where a key belongs is not cut out: the error names it. */
    char *keyed = NULL;
    cr_assert(asprintf(&keyed, "{\"%0*d\":1}", 2000, 0) > 0);
    decode_fails(keyed, &in, TSR_E_PAYLOAD, "expected an array");
    free(keyed);
    /* A text holding "\u0000" is parsed as it was (and refused, as before). */
    char *nul = NULL;
    cr_assert(asprintf(&nul, "{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                             "\"data\":{\"buffer\":\"AAAAAAAA8D8=\",\"encoding\":\"base64\","
                             "\"checksum\":\"\\u0000%02000d\"}}", 0) > 0);
    rc = tsr_array_from_json_ex(nul, strlen(nul), TSR_DTYPE_INVALID, &in, &b, &nothing, &err);
    assert_code(rc, TSR_E_PAYLOAD, err.message);
    assert_contains(err.message, "malformed JSON");
    free(nul);
    tsr_json_free(text);
    free(x);
}
