/* SPDX-License-Identifier: MIT */
/*
 * Binref files (codecs/binref_file.h): the writer and the reader over
 * both I/O paths, each forced (pread/pwrite always; io_uring where it
 * works here, skipped with a note where it does not), with arrays split
 * into many chunks, rolling over at the size limit, file modes, never
 * overwriting, removing what was written, and every way a read can fail:
 * a missing file, an offset past the end, a truncated file. Internal
 * functions: linked against the library's objects.
 */
#define _GNU_SOURCE /* nftw */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codecs/binref_file.h"
#include "codecs/binref_io.h"
#include "forked_leak_check.h"
#include "seccomp_util.h"
#include "temp_dir.h"

/* ---- helpers ------------------------------------------------------------- */

static char dir[256];

static void make_dir(void) {
    make_temp_dir(dir, sizeof dir, "tessera-binref");
}

static void remove_dir(void) {
    remove_tree(dir);
}

TestSuite(binref_file, .init = make_dir, .fini = remove_dir);

/* A skipped test does not reach .fini: clean up first. */
#define SKIP(...)                   \
    do {                            \
        remove_dir();               \
        cr_skip_test(__VA_ARGS__);  \
    } while (0)

static bool uring_works(void) {
    return binref_io_probe(NULL) == BINREF_IO_URING;
}

/* The forced paths under test: posix always, io_uring where it works. */
static int forced_paths(binref_io out[2]) {
    int n = 0;
    out[n++] = BINREF_IO_POSIX;
    if (uring_works()) out[n++] = BINREF_IO_URING;
    return n;
}

static unsigned char *pattern(size_t n, unsigned seed) {
    unsigned char *p = malloc(n ? n : 1);
    cr_assert_not_null(p);
    uint32_t s = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = (unsigned char)(s >> 24);
    }
    return p;
}

static binref_writer *open_writer(const char *prefix, uint64_t max, int mode, binref_io io) {
    binref_writer_opts o = {.dir = dir, .prefix = prefix, .max_file_bytes = max, .mode = mode,
                            .io = io};
    binref_writer *w = NULL;
    char why[512] = "";
    int rc = binref_writer_open(&w, &o, why, sizeof why);
    cr_assert_eq(rc, 0, "binref_writer_open: %s", why);
    return w;
}

static void add_ok(binref_writer *w, const void *data, size_t n, const char **file,
                   uint64_t *off) {
    char why[512] = "";
    int rc = binref_writer_add(w, data, n, file, off, why, sizeof why);
    cr_assert_eq(rc, 0, "binref_writer_add: %s", why);
}

static void flush_ok(binref_writer *w) {
    char why[512] = "";
    int rc = binref_writer_flush(w, why, sizeof why);
    cr_assert_eq(rc, 0, "binref_writer_flush: %s", why);
}

static void path_of(char *buf, size_t size, const char *file) {
    snprintf(buf, size, "%s/%s", dir, file);
}

static off_t size_of(const char *file) {
    char p[512];
    path_of(p, sizeof p, file);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0, "%s: %s", p, strerror(errno));
    return st.st_size;
}

/* ---- writing and reading back -------------------------------------------- */

/* Arrays of several sizes, one far larger than a chunk, to one file and
 * back through each path; offsets follow one another. */
static void round_trip(binref_io io, const char *prefix) {
    const size_t sizes[] = {8, 0, 1, 4096, (9u << 20) + 3, 1000};
    enum { N = sizeof sizes / sizeof sizes[0] };
    unsigned char *data[N], *back[N];
    const char *file[N];
    uint64_t off[N];
    binref_writer *w = open_writer(prefix, 0, 0, io);
    uint64_t expect = 0;
    for (int k = 0; k < N; k++) {
        data[k] = pattern(sizes[k], (unsigned)k + 1);
        add_ok(w, data[k], sizes[k], &file[k], &off[k]);
        cr_assert_eq(off[k], expect, "array %d at %llu, expected %llu", k,
                     (unsigned long long)off[k], (unsigned long long)expect);
        cr_assert_str_eq(file[k], file[0], "one result, one file");
        expect += sizes[k];
    }
    flush_ok(w);
    cr_assert_eq((uint64_t)size_of(file[0]), expect);

    char p[512];
    path_of(p, sizeof p, file[0]);
    binref_read reads[N];
    for (int k = 0; k < N; k++) {
        back[k] = malloc(sizes[k] ? sizes[k] : 1);
        reads[k] = (binref_read){.path = p, .offset = off[k], .bytes = sizes[k], .dst = back[k]};
    }
    char why[512] = "";
    int rc = binref_read_all(reads, N, io, why, sizeof why);
    cr_assert_eq(rc, 0, "binref_read_all (%s): %s", binref_io_name(io), why);
    for (int k = 0; k < N; k++) {
        cr_assert_eq(memcmp(back[k], data[k], sizes[k]), 0, "array %d differs (%s)", k,
                     binref_io_name(io));
        free(back[k]);
        free(data[k]);
    }
    binref_writer_close(w, 0);
}

Test(binref_file, round_trip_with_pread_pwrite_forced) {
    round_trip(BINREF_IO_POSIX, "posix");
}

Test(binref_file, round_trip_with_io_uring_forced) {
    if (!uring_works()) {
        const char *why;
        binref_io_probe(&why);
        SKIP("io_uring does not work here: %s", why);
    }
    round_trip(BINREF_IO_URING, "uring");
}

Test(binref_file, auto_takes_the_probed_path) {
    const char *why = "unset";
    binref_io io = binref_io_probe(&why);
    cr_assert(io == BINREF_IO_URING || io == BINREF_IO_POSIX);
    if (io == BINREF_IO_URING) cr_assert_null(why);
    else cr_assert(why != NULL && why[0] != '\0', "pread/pwrite is chosen with a reason");
    round_trip(BINREF_IO_AUTO, "auto");
    cr_assert_str_eq(binref_io_name(BINREF_IO_URING), "io_uring");
    cr_assert_str_eq(binref_io_name(BINREF_IO_POSIX), "pread/pwrite");
}

/* Tiny chunks and two in flight: hundreds of submissions, completions
 * arriving in any order, all bytes in place. */
Test(binref_file, many_small_chunks_through_a_shallow_queue) {
    if (!uring_works()) SKIP("io_uring does not work here");
    binref_uring_tune(2, 4096);
    size_t n = (1u << 20) + 17;
    unsigned char *data = pattern(n, 7), *back = malloc(n);
    binref_writer *w = open_writer("chunks", 0, 0, BINREF_IO_URING);
    const char *file;
    uint64_t off;
    add_ok(w, data, n, &file, &off);
    flush_ok(w);
    char p[512], why[512] = "";
    path_of(p, sizeof p, file);
    binref_read r = {.path = p, .offset = 0, .bytes = n, .dst = back};
    cr_assert_eq(binref_read_all(&r, 1, BINREF_IO_URING, why, sizeof why), 0, "%s", why);
    cr_assert_eq(memcmp(back, data, n), 0);
    binref_writer_close(w, 0);
    free(data);
    free(back);
}

/* A forked child must not share its parent's ring. */
Test(binref_file, a_forked_child_gets_its_own_ring) {
    if (!uring_works()) SKIP("io_uring does not work here");
    round_trip(BINREF_IO_URING, "parent1"); /* the parent's ring now exists */
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        unsigned char data[64], back[64];
        memset(data, 0x5a, sizeof data);
        binref_writer_opts o = {.dir = dir, .prefix = "child", .io = BINREF_IO_URING};
        binref_writer *w;
        char why[512], p[512];
        const char *file;
        uint64_t off;
        if (binref_writer_open(&w, &o, why, sizeof why) != 0 ||
            binref_writer_add(w, data, sizeof data, &file, &off, why, sizeof why) != 0 ||
            binref_writer_flush(w, why, sizeof why) != 0)
            _exit(1);
        path_of(p, sizeof p, file);
        binref_read r = {.path = p, .bytes = sizeof back, .dst = back};
        int rc = binref_read_all(&r, 1, BINREF_IO_URING, why, sizeof why);
        binref_writer_close(w, 1);
        forked_leak_check(); /* _exit skips LeakSanitizer's own */
        _exit(rc == 0 && memcmp(back, data, sizeof data) == 0 ? 0 : 2);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's transfers failed");
    round_trip(BINREF_IO_URING, "parent2"); /* and the parent's ring still works */
}

/* ---- files: rollover, modes, no overwriting, cleanup ---------------------- */

Test(binref_file, rolls_over_when_the_next_array_would_pass_the_limit) {
    binref_io paths[2];
    int np = forced_paths(paths);
    for (int i = 0; i < np; i++) {
        binref_writer *w = open_writer(i ? "roll-u" : "roll-p", 100, 0, paths[i]);
        unsigned char *big = pattern(300, 1), *small = pattern(60, 2);
        const char *f1, *f2, *f3, *f4, *f5;
        uint64_t o1, o2, o3, o4, o5;
        add_ok(w, small, 60, &f1, &o1);  /* file 0: 60 */
        add_ok(w, small, 40, &f2, &o2);  /* file 0: 100, exactly the limit */
        add_ok(w, small, 1, &f3, &o3);   /* would pass: file 1 */
        add_ok(w, big, 300, &f4, &o4);   /* larger than the limit: a file of its own */
        add_ok(w, small, 0, &f5, &o5);   /* empty: takes no room, stays in file 2 */
        flush_ok(w);
        cr_assert_str_eq(f1, f2);
        cr_assert_eq(o2, 60);
        cr_assert_str_neq(f2, f3);
        cr_assert_eq(o3, 0);
        cr_assert_str_neq(f3, f4);
        cr_assert_eq(o4, 0);
        cr_assert_str_eq(f4, f5);
        cr_assert_eq(o5, 300);
        cr_assert_eq(size_of(f1), 100);
        cr_assert_eq(size_of(f3), 1);
        cr_assert_eq(size_of(f4), 300);
        cr_assert(strstr(f1, "-0.bin") && strstr(f3, "-1.bin") && strstr(f4, "-2.bin"),
                  "files are <prefix>-<k>.bin: %s %s %s", f1, f3, f4);
        binref_writer_close(w, 0);
        free(big);
        free(small);
    }
}

Test(binref_file, files_are_0600_unless_told_otherwise) {
    mode_t old = umask(022);
    const char *f;
    uint64_t o;
    unsigned char b[4] = {1, 2, 3, 4};
    binref_writer *w = open_writer("mode", 0, 0, BINREF_IO_POSIX);
    add_ok(w, b, 4, &f, &o);
    flush_ok(w);
    char p[512];
    path_of(p, sizeof p, f);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
    binref_writer_close(w, 0);

    w = open_writer("mode644", 0, 0644, BINREF_IO_POSIX);
    add_ok(w, b, 4, &f, &o);
    path_of(p, sizeof p, f);
    cr_assert_eq(stat(p, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);
    binref_writer_close(w, 0);
    umask(old);
}

Test(binref_file, never_overwrites_an_existing_file) {
    char p[512];
    path_of(p, sizeof p, "taken-0.bin");
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs("keep me", f);
    fclose(f);
    binref_writer *w = open_writer("taken", 0, 0, BINREF_IO_POSIX);
    const char *file;
    uint64_t off;
    char why[512] = "";
    unsigned char b[4] = {0};
    int rc = binref_writer_add(w, b, 4, &file, &off, why, sizeof why);
    cr_assert_eq(rc, TSR_E_IO);
    cr_assert(strstr(why, "taken-0.bin") && strstr(why, "File exists"), "message: %s", why);
    binref_writer_close(w, 1);
    cr_assert_eq(access(p, F_OK), 0, "closing must not remove a file it did not make");
}

Test(binref_file, close_can_remove_every_file_it_made) {
    binref_writer *w = open_writer("gone", 10, 0, BINREF_IO_POSIX);
    unsigned char b[8] = {0};
    const char *f1, *f2;
    uint64_t o;
    add_ok(w, b, 8, &f1, &o);
    add_ok(w, b, 8, &f2, &o);
    flush_ok(w);
    char p1[512], p2[512];
    path_of(p1, sizeof p1, f1);
    path_of(p2, sizeof p2, f2);
    cr_assert_eq(access(p1, F_OK), 0);
    cr_assert_eq(access(p2, F_OK), 0);
    binref_writer_close(w, 1);
    cr_assert_neq(access(p1, F_OK), 0);
    cr_assert_neq(access(p2, F_OK), 0);
}

Test(binref_file, refuses_a_missing_directory_and_a_bad_prefix) {
    binref_writer *w = (binref_writer *)0x1;
    char why[512] = "";
    binref_writer_opts o = {.dir = "/nonexistent/tessera", .prefix = "x"};
    cr_assert_eq(binref_writer_open(&w, &o, why, sizeof why), TSR_E_IO);
    cr_assert_null(w);
    cr_assert(strstr(why, "/nonexistent/tessera") != NULL, "%s", why);
    o = (binref_writer_opts){.dir = dir, .prefix = "a/b"};
    cr_assert_eq(binref_writer_open(&w, &o, why, sizeof why), TSR_E_ARGUMENT);
}

/* ---- reading: every way it fails ------------------------------------------ */

static void write_bytes(const char *name, size_t n) {
    char p[512];
    path_of(p, sizeof p, name);
    unsigned char *b = pattern(n, 3);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
}

static void read_fails(binref_io io, const char *name, uint64_t off, size_t n, const char *needle) {
    char p[512], why[512] = "";
    path_of(p, sizeof p, name);
    unsigned char *dst = malloc(n ? n : 1);
    binref_read r = {.path = p, .offset = off, .bytes = n, .dst = dst, .what = "field 'x'"};
    int rc = binref_read_all(&r, 1, io, why, sizeof why);
    cr_assert_eq(rc, TSR_E_IO, "reading %zu bytes at %llu of %s should fail", n,
                 (unsigned long long)off, name);
    cr_assert(strstr(why, needle) != NULL, "expected \"%s\" in \"%s\"", needle, why);
    cr_assert(strstr(why, "field 'x'") != NULL, "the message names the array: %s", why);
    cr_assert(strstr(why, name) != NULL, "the message names the file: %s", why);
    free(dst);
}

Test(binref_file, every_bad_read_is_an_error_naming_array_and_file) {
    write_bytes("short.bin", 100);
    binref_io paths[2];
    int np = forced_paths(paths);
    for (int i = 0; i < np; i++) {
        read_fails(paths[i], "missing.bin", 0, 8, "cannot open binref file");
        read_fails(paths[i], "short.bin", 0, 800, "is truncated: it holds 100 of the 800 bytes at offset 0");
        read_fails(paths[i], "short.bin", 96, 8, "is truncated: it holds 4 of the 8 bytes at offset 96");
        read_fails(paths[i], "short.bin", 101, 0, "offset 101 is past the end");
        read_fails(paths[i], "short.bin", 4096, 8, "offset 4096 is past the end");
    }
    /* The last byte and an empty read at the very end are fine. */
    char p[512], why[512] = "";
    path_of(p, sizeof p, "short.bin");
    unsigned char one;
    binref_read r[2] = {{.path = p, .offset = 99, .bytes = 1, .dst = &one},
                        {.path = p, .offset = 100, .bytes = 0, .dst = &one}};
    cr_assert_eq(binref_read_all(r, 2, BINREF_IO_POSIX, why, sizeof why), 0, "%s", why);
}

Test(binref_file, a_directory_is_not_a_binref_file) {
    char why[512] = "";
    unsigned char b[8];
    binref_read r = {.path = dir, .bytes = 8, .dst = b};
    cr_assert_eq(binref_read_all(&r, 1, BINREF_IO_POSIX, why, sizeof why), TSR_E_IO);
    cr_assert(strstr(why, "not a regular file") != NULL, "%s", why);
}

/* Reads of several files in any order: each file opened once, each
 * range in place. */
Test(binref_file, reads_across_files_in_any_order) {
    write_bytes("a.bin", 1000);
    write_bytes("b.bin", 3000);
    unsigned char *ref = pattern(3000, 3);
    char pa[512], pb[512];
    path_of(pa, sizeof pa, "a.bin");
    path_of(pb, sizeof pb, "b.bin");
    unsigned char d[5][500];
    binref_read r[5] = {
        {.path = pb, .offset = 2500, .bytes = 500, .dst = d[0]},
        {.path = pa, .offset = 500, .bytes = 500, .dst = d[1]},
        {.path = pb, .offset = 0, .bytes = 500, .dst = d[2]},
        {.path = pa, .offset = 0, .bytes = 500, .dst = d[3]},
        {.path = pb, .offset = 1000, .bytes = 500, .dst = d[4]},
    };
    binref_io paths[2];
    int np = forced_paths(paths);
    for (int i = 0; i < np; i++) {
        memset(d, 0, sizeof d);
        char why[512] = "";
        cr_assert_eq(binref_read_all(r, 5, paths[i], why, sizeof why), 0, "%s", why);
        for (int k = 0; k < 5; k++)
            cr_assert_eq(memcmp(d[k], ref + r[k].offset, 500), 0, "read %d (%s)", k,
                         binref_io_name(paths[i]));
    }
    free(ref);
}

Test(binref_file, forcing_io_uring_where_it_does_not_work_says_why) {
    if (uring_works()) SKIP("io_uring works here; the refusal is tested by test_cli_files under seccomp");
    char why[512] = "";
    binref_writer *w = NULL;
    binref_writer_opts o = {.dir = dir, .prefix = "x", .io = BINREF_IO_URING};
    cr_assert_eq(binref_writer_open(&w, &o, why, sizeof why), TSR_E_IO);
    cr_assert(strstr(why, "io_uring was asked for but does not work here") != NULL, "%s", why);
}

/* Once io_uring_enter is forbidden, what still works shows which path ran:
 * AUTO moves a small batch with pread/pwrite and a large one through the
 * ring; forced io_uring uses the ring even for a small one. */
Test(binref_file, auto_takes_pread_pwrite_for_small_batches_only) {
    if (!uring_works()) SKIP("io_uring does not work here");
#ifndef TEST_SECCOMP_ARCH
    SKIP("the seccomp filter of this test knows x86_64 and aarch64 only");
#endif
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (forbid_syscall(__NR_io_uring_enter) != 0) _exit(10);
        size_t small = BINREF_AUTO_URING_MIN - 1, large = BINREF_AUTO_URING_MIN;
        unsigned char *data = calloc(1, large);
        const char *file;
        uint64_t off;
        char why[512];
        int rc[3];
        const size_t sizes[3] = {small, large, 8};
        const binref_io ios[3] = {BINREF_IO_AUTO, BINREF_IO_AUTO, BINREF_IO_URING};
        for (int k = 0; k < 3; k++) {
            char prefix[16];
            snprintf(prefix, sizeof prefix, "p%d", k);
            binref_writer_opts o = {.dir = dir, .prefix = prefix, .io = ios[k]};
            binref_writer *w;
            rc[k] = binref_writer_open(&w, &o, why, sizeof why);
            if (rc[k] == 0) rc[k] = binref_writer_add(w, data, sizes[k], &file, &off, why, sizeof why);
            if (rc[k] == 0) rc[k] = binref_writer_flush(w, why, sizeof why);
            if (w) binref_writer_close(w, 1);
        }
        forked_leak_check(); /* _exit skips LeakSanitizer's own */
        _exit(rc[0] == 0 && rc[1] == TSR_E_IO && rc[2] == TSR_E_IO && strstr(why, "io_uring_enter") ? 0 : 1);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "the child did not exit");
    cr_assert_neq(WEXITSTATUS(status), 10, "could not install the seccomp filter");
    cr_assert_eq(WEXITSTATUS(status), 0,
                 "expected: small AUTO batch written, large AUTO and forced io_uring refused");
}

/* io_uring forbidden after the probe (a seccomp filter installed later):
 * AUTO carries on with pread/pwrite, forced io_uring says why. */
Test(binref_file, auto_carries_on_when_no_ring_can_be_set_up) {
    if (!uring_works()) SKIP("io_uring does not work here");
#ifndef TEST_SECCOMP_ARCH
    SKIP("the seccomp filter of this test knows x86_64 and aarch64 only");
#endif
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (forbid_syscall(__NR_io_uring_setup) != 0) _exit(10);
        size_t n = BINREF_AUTO_URING_MIN * 2;
        unsigned char *data = pattern(n, 5), *back = malloc(n);
        const char *file;
        uint64_t off;
        char why[512] = "", p[512];
        binref_writer_opts o = {.dir = dir, .prefix = "noring", .io = BINREF_IO_AUTO};
        binref_writer *w;
        int rc = binref_writer_open(&w, &o, why, sizeof why);
        if (rc == 0) rc = binref_writer_add(w, data, n, &file, &off, why, sizeof why);
        if (rc == 0) rc = binref_writer_flush(w, why, sizeof why);
        if (rc != 0) _exit(1);
        path_of(p, sizeof p, file);
        binref_read r = {.path = p, .bytes = n, .dst = back};
        if (binref_read_all(&r, 1, BINREF_IO_AUTO, why, sizeof why) != 0 || memcmp(back, data, n) != 0)
            _exit(2);
        rc = binref_read_all(&r, 1, BINREF_IO_URING, why, sizeof why);
        binref_writer_close(w, 1);
        free(data);
        free(back);
        forked_leak_check(); /* _exit skips LeakSanitizer's own */
        _exit(rc == TSR_E_IO && strstr(why, "io_uring_setup failed: Operation not permitted") ? 0 : 3);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "the child did not exit");
    cr_assert_neq(WEXITSTATUS(status), 10, "could not install the seccomp filter");
    cr_assert_eq(WEXITSTATUS(status), 0, "step %d failed", WEXITSTATUS(status));
}
