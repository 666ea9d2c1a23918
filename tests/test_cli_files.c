/* SPDX-License-Identifier: MIT */
/*
 * The command line with arrays in files and compressed or checksummed
 * arrays: -f json+binref with --output-path (and its default, the current
 * directory), --input-path (and its default), --compression lz4,
 * --checksum, --io forced either way, --allow-escape; `tessera info`; the
 * fallback to pread/pwrite when a seccomp filter forbids io_uring; every
 * corrupted input and usage error with its exit status and message.
 */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "cli_run.h"
#include "seccomp_util.h"
#include "temp_dir.h"

#define NOOP BUNDLED_PLUGIN("noop")
#define X123 "{\"inputs\":{\"x\":[1.5,2.5,-3]}}"
#define Y123 "[1.5,2.5,-3.0]"

static char dir[256];

static void make_dir(void) {
    make_temp_dir(dir, sizeof dir, "tessera-clif");
}

static void remove_dir(void) {
    remove_tree(dir);
}

TestSuite(cli_files, .init = make_dir, .fini = remove_dir);

static char *sub(const char *name) {
    char *p = NULL;
    cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

/* The names of the files in d (not . and ..), counted. */
static int count_files(const char *d) {
    DIR *h = opendir(d);
    cr_assert_not_null(h, "%s: %s", d, strerror(errno));
    int n = 0;
    for (struct dirent *e; (e = readdir(h)) != NULL;) n += e->d_name[0] != '.';
    closedir(h);
    return n;
}

/* noop's response {"y": A} as the request {"inputs": {"x": A}}, in a file. */
static char *response_as_request(const char *response) {
    json_error_t jerr;
    json_t *r = json_loads(response, 0, &jerr);
    cr_assert_not_null(r, "%s: %s", jerr.text, response);
    json_t *req = json_pack("{s:{s:O}}", "inputs", "x", json_object_get(r, "y"));
    char *path = sub("request.json");
    cr_assert_eq(json_dump_file(req, path, JSON_COMPACT), 0);
    json_decref(req);
    json_decref(r);
    char *arg = NULL;
    cr_assert(asprintf(&arg, "@%s", path) > 0);
    free(path);
    return arg;
}

/* The "data" of the response's y. */
static json_t *y_data(const char *response, json_t **root) {
    json_error_t jerr;
    *root = json_loads(response, 0, &jerr);
    cr_assert_not_null(*root, "%s", response);
    json_t *data = json_object_get(json_object_get(*root, "y"), "data");
    cr_assert(json_is_object(data), "%s", response);
    return data;
}

static void assert_y_is_x(const char *response) {
    assert_contains(response, "\"buffer\":" Y123 ",\"encoding\":\"json\"");
}

static bool uring_here(void) {
    return strcmp(tsr_file_io_backend(NULL), "io_uring") == 0;
}

/* ---- json+binref ---------------------------------------------------------- */

Test(cli_files, binref_output_goes_to_output_path_and_reads_back_with_input_path) {
    char *out = sub("out/nested");
    cli_run r = run_cli(NULL, "apply", "-f", "json+binref", "--output-path", out, NOOP, X123);
    assert_ok(&r);
    json_t *root;
    json_t *data = y_data(r.out, &root);
    cr_assert_str_eq(json_string_value(json_object_get(data, "encoding")), "binref");
    const char *buffer = json_string_value(json_object_get(data, "buffer"));
    cr_assert(buffer && strchr(buffer, '/') == NULL && strstr(buffer, ".bin:0"),
              "the file is named relative to the output path: %s", buffer);
    cr_assert_eq(count_files(out), 1, "one .bin file, made with the missing directories");
    char file[300];
    snprintf(file, sizeof file, "%s/%.*s", out, (int)(strstr(buffer, ".bin") + 4 - buffer), buffer);
    struct stat st;
    cr_assert_eq(stat(file, &st), 0, "%s", file);
    cr_assert_eq(st.st_mode & 0777, 0600, "binref files are 0600 (mode %o)", st.st_mode & 0777);
    cr_assert_eq(st.st_size, 24);
    json_decref(root);

    char *request = response_as_request(r.out);
    cli_run back = run_cli(NULL, "apply", "--input-path", out, NOOP, request);
    assert_ok(&back);
    assert_y_is_x(back.out);
    /* Without --input-path, relative paths resolve in the current directory. */
    cli_run lost = run_cli(NULL, "apply", NOOP, request);
    assert_fails(&lost, EXIT_PAYLOAD, "field 'inputs.x': cannot open binref file");
    run_free(&lost);
    run_free(&back);
    run_free(&r);
    free(request);
    free(out);
}

Test(cli_files, both_paths_default_to_the_current_directory) {
    cr_assert_eq(chdir(dir), 0);
    cli_run r = run_cli(NULL, "apply", "-f", "json+binref", NOOP, X123);
    assert_ok(&r);
    cr_assert_eq(count_files(dir), 1);
    char *request = response_as_request(r.out);
    cli_run back = run_cli(NULL, "apply", NOOP, request);
    assert_ok(&back);
    assert_y_is_x(back.out);
    run_free(&back);
    run_free(&r);
    free(request);
}

Test(cli_files, lz4_and_checksums_in_both_byte_encodings) {
    const char *formats[] = {"json+base64", "json+binref"};
    for (int f = 0; f < 2; f++) {
        cli_run r = run_cli(NULL, "apply", "-f", formats[f], "--compression", "lz4", "--checksum",
                            "--output-path", dir, NOOP, X123);
        assert_ok(&r);
        json_t *root;
        json_t *data = y_data(r.out, &root);
        cr_assert_str_eq(json_string_value(json_object_get(data, "compression")), "lz4");
        cr_assert(strncmp(json_string_value(json_object_get(data, "checksum")), "xxh3:", 5) == 0);
        if (f == 1) {
            unsigned long long off, size;
            cr_assert_eq(sscanf(strstr(json_string_value(json_object_get(data, "buffer")), ".bin:"),
                                ".bin:%llu:%llu", &off, &size), 2, "FILE:OFFSET:SIZE when compressed");
        }
        json_decref(root);
        char *request = response_as_request(r.out);
        cli_run back = run_cli(NULL, "apply", "--input-path", dir, NOOP, request);
        assert_ok(&back);
        assert_y_is_x(back.out);
        run_free(&back);
        run_free(&r);
        free(request);
    }
    /* json ignores both, as Tesseract does. */
    cli_run r = run_cli(NULL, "apply", "--compression", "lz4", "--checksum", NOOP, X123);
    assert_ok(&r);
    assert_y_is_x(r.out);
    cr_assert_null(strstr(r.out, "compression"));
    cr_assert_null(strstr(r.out, "checksum"));
    run_free(&r);
}

Test(cli_files, io_forced_either_way_gives_the_same_arrays) {
    const char *ios[] = {"posix", "io_uring", "auto"};
    for (int w = 0; w < 3; w++) {
        if (w == 1 && !uring_here()) continue;
        for (int rd = 0; rd < 3; rd++) {
            if (rd == 1 && !uring_here()) continue;
            cli_run r = run_cli(NULL, "apply", "-f", "json+binref", "--io", ios[w],
                                "--output-path", dir, NOOP, X123);
            assert_ok(&r);
            char *request = response_as_request(r.out);
            cli_run back = run_cli(NULL, "apply", "--io", ios[rd], "--input-path", dir, NOOP, request);
            assert_ok(&back);
            assert_y_is_x(back.out);
            run_free(&back);
            run_free(&r);
            free(request);
        }
    }
}

/* ---- tessera info ----------------------------------------------------------- */

Test(cli_files, info_reports_version_abi_file_io_shm_and_kernel) {
    cli_run r = run_cli(NULL, "info");
    assert_ok(&r);
    char line[160];
    snprintf(line, sizeof line, "tessera: %d.%d.%d\n", TSR_VERSION_MAJOR, TSR_VERSION_MINOR,
             TSR_VERSION_PATCH);
    assert_contains(r.out, line);
    snprintf(line, sizeof line, "plugin ABI: %u\n", TSR_PLUGIN_ABI_VERSION);
    assert_contains(r.out, line);
    const char *why = NULL;
    const char *backend = tsr_file_io_backend(&why);
    snprintf(line, sizeof line, "file I/O: %s", backend);
    assert_contains(r.out, line);
    if (why != NULL) assert_contains(r.out, why);
    assert_contains(r.out, "shm: usable (memfd");
    assert_contains(r.out, "kernel: Linux ");
    run_free(&r);
    cli_run bad = run_cli(NULL, "info", "extra");
    assert_fails(&bad, EXIT_USAGE, "takes no arguments");
    run_free(&bad);
    cli_run help = run_cli(NULL, "--help");
    assert_contains(help.out, "  info ");
    run_free(&help);
}

/* ---- io_uring forbidden: the fallback --------------------------------------- */

/* io_uring_setup fails with EPERM, as under Docker's default profile or
 * with io_uring_disabled; everything else is allowed. */
static void forbid_io_uring(void) {
    if (forbid_syscall(__NR_io_uring_setup) != 0) _exit(126);
}

#define run_forbidden(...) run_cli_with(NULL, forbid_io_uring, (const char *const[]){__VA_ARGS__, NULL})

Test(cli_files, without_io_uring_files_fall_back_to_pread_pwrite) {
#ifndef TEST_SECCOMP_ARCH
    remove_dir(); /* a skipped test does not reach .fini */
    cr_skip_test("the seccomp filter of this test knows x86_64 and aarch64 only");
#endif
    cli_run info = run_forbidden("info");
    assert_ok(&info);
    assert_contains(info.out, "file I/O: pread/pwrite (io_uring unavailable: io_uring_setup refused (EPERM)");
    run_free(&info);

    cli_run r = run_forbidden("apply", "-f", "json+binref", "--checksum", "--output-path", dir, NOOP, X123);
    assert_ok(&r);
    char *request = response_as_request(r.out);
    cli_run back = run_forbidden("apply", "--input-path", dir, NOOP, request);
    assert_ok(&back);
    assert_y_is_x(back.out);
    run_free(&back);

    /* Forcing io_uring then fails, saying why, for writing and reading. */
    cli_run w = run_forbidden("apply", "-f", "json+binref", "--io", "io_uring", "--output-path", dir, NOOP, X123);
    assert_fails(&w, EXIT_OUTPUT, "io_uring was asked for but does not work here: io_uring_setup refused (EPERM)");
    run_free(&w);
    cli_run rd = run_forbidden("apply", "--io", "io_uring", "--input-path", dir, NOOP, request);
    assert_fails(&rd, EXIT_PAYLOAD, "io_uring was asked for but does not work here");
    run_free(&rd);
    run_free(&r);
    free(request);
}

/* ---- corrupted inputs and escapes ------------------------------------------ */

static char *binref_request(const char *buffer, const char *extra) {
    char *s = NULL;
    cr_assert(asprintf(&s,
                       "{\"inputs\":{\"x\":{\"object_type\":\"array\",\"shape\":[3],"
                       "\"dtype\":\"float64\",\"data\":{\"buffer\":\"%s\",\"encoding\":\"binref\"%s}}}}",
                       buffer, extra) > 0);
    return s;
}

static void put(const char *name, const void *bytes, size_t n) {
    char *p = sub(name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
    free(p);
}

Test(cli_files, corrupted_inputs_exit_4_naming_the_field) {
    double x[3] = {1.5, 2.5, -3};
    put("x.bin", x, sizeof x);
    put("short.bin", x, 20);
    struct { const char *buffer, *extra, *needle; } cases[] = {
        {"short.bin:0", "", "field 'inputs.x': 'short.bin' is truncated: it holds 20 of the 24 bytes"},
        {"x.bin:32", "", "field 'inputs.x': offset 32 is past the end of 'x.bin' (24 bytes)"},
        {"x.bin:0:16", "", "field 'inputs.x': the binref buffer gives 16 bytes but shape x float64 needs 24"},
        {"x.bin:0", ",\"checksum\":\"xxh3:0000000000000000\"", "field 'inputs.x': checksum mismatch"},
        {"x.bin:0:24", ",\"compression\":\"lz4\"", "field 'inputs.x': not an lz4 frame (24 bytes)"},
        {"../x.bin:0", "", "leads outside the input directory"},
        {"/etc/hostname:0", "", "is absolute and lies outside the input directory"},
        {"missing.bin:0", "", "field 'inputs.x': cannot open binref file 'missing.bin'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *req = binref_request(cases[k].buffer, cases[k].extra);
        cli_run r = run_cli(NULL, "apply", "--input-path", dir, NOOP, req);
        assert_fails(&r, EXIT_PAYLOAD, cases[k].needle);
        assert_contains(r.err, "component 'noop', endpoint 'apply', field 'inputs.x': ");
        run_free(&r);
        free(req);
    }
    /* A symlink out, refused, then allowed when asked. */
    char *inner = sub("inner");
    cr_assert_eq(mkdir(inner, 0700), 0);
    char *link = sub("inner/link.bin");
    char *target = sub("x.bin");
    cr_assert_eq(symlink(target, link), 0);
    char *req = binref_request("link.bin:0", "");
    cli_run r = run_cli(NULL, "apply", "--input-path", inner, NOOP, req);
    assert_fails(&r, EXIT_PAYLOAD, "through a symlink");
    assert_contains(r.err, "field 'inputs.x': ");
    run_free(&r);
    r = run_cli(NULL, "apply", "--allow-escape", "--input-path", inner, NOOP, req);
    assert_ok(&r);
    assert_y_is_x(r.out);
    run_free(&r);
    free(req);
    req = binref_request("../x.bin:0", "");
    r = run_cli(NULL, "apply", "--allow-escape", "--input-path", inner, NOOP, req);
    assert_ok(&r);
    run_free(&r);
    free(req);
    free(inner);
    free(link);
    free(target);
}

Test(cli_files, unwritable_output_path_exits_5) {
    char *file = sub("plain-file");
    put("plain-file", "x", 1);
    char *below = sub("plain-file/out");
    cli_run r = run_cli(NULL, "apply", "-f", "json+binref", "--output-path", below, NOOP, X123);
    assert_fails(&r, EXIT_OUTPUT, "cannot create output path");
    run_free(&r);
    r = run_cli(NULL, "apply", "-f", "json+binref", "--output-path", file, NOOP, X123);
    assert_fails(&r, EXIT_OUTPUT, "not a directory");
    run_free(&r);
    free(file);
    free(below);
}

Test(cli_files, usage_errors_exit_2) {
    struct { const char *a, *b, *needle; } cases[] = {
        {"-f", "json+xml", "unsupported format 'json+xml' (json, json+base64 or json+binref)"},
        {"--compression", "zstd", "unsupported compression 'zstd' (lz4 or none)"},
        {"--io", "aio", "unknown --io 'aio' (io_uring, posix or auto)"},
        {"--output-path", "", "--output-path needs a directory"},
        {"--input-path", "", "--input-path needs a directory"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cli_run r = run_cli(NULL, "apply", cases[k].a, cases[k].b, NOOP, X123);
        assert_fails(&r, EXIT_USAGE, cases[k].needle);
        run_free(&r);
    }
    cli_run r = run_cli(NULL, "schema", "--input-path", dir, NOOP);
    assert_fails(&r, EXIT_USAGE, "unknown option '--input-path'");
    run_free(&r);
    r = run_cli(NULL, "apply", "--help");
    assert_ok(&r);
    const char *documented[] = {"json+binref", "--output-path DIR", "--input-path DIR",
                                "--compression lz4", "--checksum", "--io IO", "--allow-escape"};
    for (size_t k = 0; k < sizeof documented / sizeof documented[0]; k++)
        assert_contains(r.out, documented[k]);
    run_free(&r);
}
