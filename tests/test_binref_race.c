/* SPDX-License-Identifier: MIT */
/*
 * Binref files while someone renames the entries of the directory under
 * the reader: a process loops renameat2(RENAME_EXCHANGE) between the file
 * a payload names and a FIFO, a symlink to a file outside the input
 * directory (absolute or relative), or (for a directory on the way) a
 * symlink to a directory outside, while the payload is decoded again and
 * again. No decode may hang (each loop runs in a child under a watchdog,
 * so a regression fails instead of hanging) and none may return bytes
 * from outside; the failures say why ("is not a regular file", "through a
 * symlink"). Each with openat2 and, under a seccomp filter that refuses
 * it, with the openat(O_NOFOLLOW) walk; reads alternate pread and io_uring
 * (where it works). Then the command line with --input-path, the spool's
 * plain entries (binref_open_entry), and outputs: a symlink or FIFO
 * planted where a binref file will be created is never written through.
 * Internal functions: linked against the library's objects.
 */
#define _GNU_SOURCE /* renameat2, nftw, asprintf */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "codecs/binref_file.h"
#include "child_verdict.h"
#include "cli_run.h"
#include "seccomp_util.h"
#include "temp_dir.h"

#define INSIDE "INSIDE!!"  /* the 8 bytes of the file inside */
#define SECRET "SECRET!!"  /* the 8 bytes of every file outside */

/* Decodes per loop (more while one end of the exchange is still unseen),
 * and the loop's time limit; the watchdog that kills a loop that hangs. */
#define MAX_DECODES 20000
#define LOOP_SECONDS 3.0
#define WATCHDOG_SECONDS 30

static char dir[256];   /* the input directory */
static char other[300]; /* a directory beside it: outside */
static pid_t swapper = -1;

static void make_dirs(void) {
    make_temp_dir(dir, sizeof dir, "tessera-race");
    snprintf(other, sizeof other, "%s-other", dir);
    cr_assert_eq(mkdir(other, 0700), 0);
}

static void stop_swapper(void) {
    if (swapper > 0) {
        kill(swapper, SIGKILL);
        waitpid(swapper, NULL, 0);
    }
    swapper = -1;
}

static void remove_dirs(void) {
    stop_swapper();
    remove_tree(dir);
    remove_tree(other);
}

TestSuite(binref_race, .init = make_dirs, .fini = remove_dirs);

/* ---- helpers ------------------------------------------------------------- */

static void path_in(char *buf, size_t n, const char *d, const char *name) {
    int w = snprintf(buf, n, "%s/%s", d, name);
    cr_assert(w > 0 && (size_t)w < n, "path %s/%s is too long", d, name);
}

/* d/name holding text (8 bytes). Returns 0 or -1. */
static int put(const char *d, const char *name, const char *text) {
    char p[600];
    path_in(p, sizeof p, d, name);
    FILE *f = fopen(p, "wb");
    if (f == NULL) return -1;
    int ok = fwrite(text, 1, 8, f) == 8;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Whether a loop goes on after i tries: until MAX_DECODES and both ends of
 * the exchange seen, or the time is up. On a busy machine the swapping
 * process may not have run yet: yield so that it does. */
static bool keep_going(int i, int limit, int read_ok, int refused, double end) {
    bool both = read_ok > 0 && refused > 0;
    if (!both && i > 0 && i % 256 == 0) sched_yield();
    return now() < end && (i < limit || !both);
}

/* Start a process exchanging dir/a and dir/b for ever (killed with its
 * parent). Returns 0, or -1 when this file system cannot exchange. */
static int start_swapper(const char *a, const char *b) {
    char pa[600], pb[600];
    path_in(pa, sizeof pa, dir, a);
    path_in(pb, sizeof pb, dir, b);
    if (renameat2(AT_FDCWD, pa, AT_FDCWD, pb, RENAME_EXCHANGE) != 0 ||
        renameat2(AT_FDCWD, pa, AT_FDCWD, pb, RENAME_EXCHANGE) != 0)
        return -1;
    pid_t parent = getpid();
    swapper = fork();
    if (swapper < 0) return -1;
    if (swapper == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        for (;;) (void)renameat2(AT_FDCWD, pa, AT_FDCWD, pb, RENAME_EXCHANGE);
    }
    return 0;
}

/* ---- running a loop in a child under a watchdog ---------------------------- */

/* The loop, then the end of the swapping process it started. */
static const char *(*watched_loop)(void);
static const char *watched_body(void) {
    const char *v = watched_loop();
    stop_swapper();
    return v;
}

/* Run fn in a child killed after WATCHDOG_SECONDS (a child the watchdog
 * killed hung: the regression this file is about); its verdict is "ok",
 * "skip" or what went wrong. */
static void run_watched(const char *(*fn)(void), const char *what) {
    cr_log_info("%s", what);
    watched_loop = fn;
    char skip_why[256];
    snprintf(skip_why, sizeof skip_why,
             "%s: cannot run here (no RENAME_EXCHANGE, or no seccomp filter)", what);
    run_in_child_watched(watched_body, skip_why, WATCHDOG_SECONDS);
}

/* ---- decoding payloads while the names move -------------------------------- */

typedef enum partner {
    A_FIFO,      /* x.bin <-> a FIFO */
    A_LINK_ABS,  /* x.bin <-> a symlink to /…/other/secret.bin */
    A_LINK_REL,  /* x.bin <-> a symlink to ../other/secret.bin */
    A_DIR_LINK   /* d <-> a symlink to other, the payload naming d/x.bin */
} partner;

static partner scenario;
static bool without_openat2;

static const char *expected_failure(partner p) {
    return p == A_FIFO ? "is not a regular file" : "through a symlink";
}

/* The input directory for scenario: x.bin (or d/x.bin) inside, "swap" the
 * other half of the exchange. Returns the binref buffer, or NULL. */
static const char *set_up(partner p) {
    char path[600], target[700];
    if (put(other, "secret.bin", SECRET) != 0 || put(other, "x.bin", SECRET) != 0) return NULL;
    path_in(path, sizeof path, dir, "swap");
    switch (p) {
    case A_FIFO:
        if (put(dir, "x.bin", INSIDE) != 0 || mkfifo(path, 0600) != 0) return NULL;
        return "x.bin:0";
    case A_LINK_ABS:
        path_in(target, sizeof target, other, "secret.bin");
        if (put(dir, "x.bin", INSIDE) != 0 || symlink(target, path) != 0) return NULL;
        return "x.bin:0";
    case A_LINK_REL:
        snprintf(target, sizeof target, "../%s/secret.bin", strrchr(other, '/') + 1);
        if (put(dir, "x.bin", INSIDE) != 0 || symlink(target, path) != 0) return NULL;
        return "x.bin:0";
    case A_DIR_LINK: {
        char d[600];
        path_in(d, sizeof d, dir, "d");
        if (mkdir(d, 0700) != 0 || put(d, "x.bin", INSIDE) != 0 || symlink(other, path) != 0)
            return NULL;
        return "d/x.bin:0";
    }
    }
    return NULL;
}

static const char *decode_loop(void) {
    const char *buffer = set_up(scenario);
    CHECK(buffer != NULL, "cannot set up the input directory: %s", strerror(errno));
    if (without_openat2 && forbid_syscall(SYS_openat2) != 0) return "skip";
    if (start_swapper(scenario == A_DIR_LINK ? "d" : "x.bin", "swap") != 0) return "skip";
    char text[256];
    snprintf(text, sizeof text,
             "{\"object_type\":\"array\",\"shape\":[8],\"dtype\":\"uint8\","
             "\"data\":{\"buffer\":\"%s\",\"encoding\":\"binref\"}}",
             buffer);
    bool uring = strcmp(tsr_file_io_backend(NULL), "io_uring") == 0;
    int read_ok = 0, refused = 0;
    double end = now() + LOOP_SECONDS;
    for (int i = 0; keep_going(i, MAX_DECODES, read_ok, refused, end); i++) {
        tsr_input_options in = {.struct_size = sizeof in, .base_dir = dir,
                                .io = uring && (i & 1) ? TSR_FILE_IO_URING : TSR_FILE_IO_POSIX};
        tsr_array a;
        void *buf = NULL;
        tsr_error err = {0};
        int rc = tsr_array_from_json_ex(text, strlen(text), TSR_DTYPE_INVALID, &in, &a, &buf,
                                        &err);
        if (rc == 0) {
            bool inside = memcmp(a.data, INSIDE, 8) == 0;
            char got[9] = "";
            memcpy(got, a.data, 8);
            tsr_array_buffer_free(buf);
            CHECK(inside, "decode %d read \"%s\" from outside the input directory", i, got);
            read_ok++;
        } else {
            CHECK((rc == TSR_E_IO || rc == TSR_E_PAYLOAD) &&
                      strstr(err.message, expected_failure(scenario)) != NULL,
                  "decode %d failed with %d (%s), not saying \"%s\"", i, rc, err.message,
                  expected_failure(scenario));
            refused++;
        }
    }
    /* Both ends of the exchange were met, or the loop proved nothing. */
    CHECK(read_ok > 0 && refused > 0, "the names never moved: %d decodes read, %d refused",
          read_ok, refused);
    return "ok";
}

static void race(partner p, bool no_openat2, const char *what) {
    scenario = p;
    without_openat2 = no_openat2;
    run_watched(decode_loop, what);
}

Test(binref_race, a_fifo_swapped_in_never_hangs_a_read) {
    race(A_FIFO, false, "x.bin <-> FIFO");
}

Test(binref_race, a_symlink_out_swapped_in_is_never_followed) {
    race(A_LINK_ABS, false, "x.bin <-> symlink to an absolute path outside");
}

Test(binref_race, a_relative_symlink_out_swapped_in_is_never_followed) {
    race(A_LINK_REL, false, "x.bin <-> symlink to ../other");
}

Test(binref_race, a_directory_swapped_for_a_symlink_out_is_never_followed) {
    race(A_DIR_LINK, false, "d <-> symlink to a directory outside");
}

Test(binref_race, without_openat2_a_fifo_swapped_in_never_hangs_a_read) {
    race(A_FIFO, true, "x.bin <-> FIFO, openat2 refused");
}

Test(binref_race, without_openat2_a_symlink_out_swapped_in_is_never_followed) {
    race(A_LINK_ABS, true, "x.bin <-> symlink out, openat2 refused");
}

Test(binref_race, without_openat2_a_relative_symlink_out_swapped_in_is_never_followed) {
    race(A_LINK_REL, true, "x.bin <-> symlink to ../other, openat2 refused");
}

Test(binref_race, without_openat2_a_directory_swapped_for_a_symlink_out_is_never_followed) {
    race(A_DIR_LINK, true, "d <-> symlink to a directory outside, openat2 refused");
}

/* ---- what stays allowed, and the messages, without a race ------------------ */

static const char *still_allowed(void) {
    char link[600], target[600];
    CHECK(put(dir, "mine.bin", INSIDE) == 0 && put(other, "secret.bin", SECRET) == 0, "set up");
    path_in(link, sizeof link, dir, "rel.bin");
    CHECK(symlink("mine.bin", link) == 0, "symlink");
    path_in(link, sizeof link, dir, "abs.bin");
    path_in(target, sizeof target, dir, "mine.bin");
    CHECK(symlink(target, link) == 0, "symlink");
    path_in(link, sizeof link, dir, "sub");
    CHECK(mkdir(link, 0700) == 0, "mkdir");
    path_in(link, sizeof link, dir, "sub/up");
    CHECK(symlink("..", link) == 0, "symlink");
    path_in(link, sizeof link, dir, "fifo");
    CHECK(mkfifo(link, 0600) == 0, "mkfifo");
    path_in(link, sizeof link, dir, "out.bin");
    path_in(target, sizeof target, other, "secret.bin");
    CHECK(symlink(target, link) == 0, "symlink");
    if (without_openat2 && forbid_syscall(SYS_openat2) != 0) return "skip";
    char abs_inside[700];
    snprintf(abs_inside, sizeof abs_inside, "%s/./sub/../mine.bin", dir);
    struct { const char *path; const char *fails; } cases[] = {
        {"mine.bin", NULL},
        {"rel.bin", NULL},          /* a relative symlink that stays inside */
        {"abs.bin", NULL},          /* an absolute one that stays inside */
        {"sub/up/mine.bin", NULL},  /* through a symlink to the directory itself */
        {"sub/../mine.bin", NULL},
        {abs_inside, NULL},
        {"fifo", "binref file 'fifo' is not a regular file"},
        {"sub", "binref file 'sub' is not a regular file"},
        {"out.bin", "through a symlink"},
        {"sub/up/../x", "through a symlink"},
        {"../x.bin", "through '..'"},
        {"missing.bin", "cannot open binref file 'missing.bin'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"object_type\":\"array\",\"shape\":[8],\"dtype\":\"uint8\","
                 "\"data\":{\"buffer\":\"%s:0\",\"encoding\":\"binref\"}}",
                 cases[k].path);
        tsr_input_options in = {.struct_size = sizeof in, .base_dir = dir};
        tsr_array a;
        void *buf = NULL;
        tsr_error err = {0};
        int rc = tsr_array_from_json_ex(text, strlen(text), TSR_DTYPE_INVALID, &in, &a, &buf,
                                        &err);
        if (cases[k].fails == NULL) {
            CHECK(rc == 0, "'%s' should be read: %s", cases[k].path, err.message);
            CHECK(memcmp(a.data, INSIDE, 8) == 0, "'%s' read other bytes", cases[k].path);
            tsr_array_buffer_free(buf);
        } else {
            CHECK(rc != 0 && strstr(err.message, cases[k].fails) != NULL,
                  "'%s' should fail saying \"%s\": %d %s", cases[k].path, cases[k].fails, rc,
                  err.message);
        }
    }
    /* --allow-escape keeps its meaning: the symlink out is followed, a
     * FIFO still refused without waiting for a writer. */
    tsr_input_options open_in = {.struct_size = sizeof open_in, .base_dir = dir,
                                 .allow_escape = 1};
    const char *out = "{\"object_type\":\"array\",\"shape\":[8],\"dtype\":\"uint8\","
                      "\"data\":{\"buffer\":\"out.bin:0\",\"encoding\":\"binref\"}}";
    tsr_array a;
    void *buf = NULL;
    tsr_error err = {0};
    int rc = tsr_array_from_json_ex(out, strlen(out), TSR_DTYPE_INVALID, &open_in, &a, &buf, &err);
    CHECK(rc == 0 && memcmp(a.data, SECRET, 8) == 0, "allowed to escape: %s", err.message);
    tsr_array_buffer_free(buf);
    const char *fifo = "{\"object_type\":\"array\",\"shape\":[8],\"dtype\":\"uint8\","
                       "\"data\":{\"buffer\":\"fifo:0\",\"encoding\":\"binref\"}}";
    rc = tsr_array_from_json_ex(fifo, strlen(fifo), TSR_DTYPE_INVALID, &open_in, &a, &buf, &err);
    CHECK(rc == TSR_E_IO && strstr(err.message, "is not a regular file"),
          "a FIFO with escaping allowed: %d %s", rc, err.message);
    return "ok";
}

Test(binref_race, symlinks_that_stay_inside_still_work_and_refusals_say_why) {
    without_openat2 = false;
    run_watched(still_allowed, "paths with openat2");
}

Test(binref_race, without_openat2_the_walk_allows_and_refuses_the_same_paths) {
    without_openat2 = true;
    run_watched(still_allowed, "paths with openat2 refused");
}

/* ---- the command line -------------------------------------------------------- */

static void watchdog_before_exec(void) {
    alarm(WATCHDOG_SECONDS);
}

/* `tessera apply --input-path dir noop` on x.bin while it is exchanged
 * with partner: every run ends (none killed by the watchdog), with 1.5 or
 * exit 4 saying why, never with the 666 of the file outside. */
static void cli_race(partner p) {
    double inside = 1.5, secret = 666;
    char path[600], target[700];
    path_in(path, sizeof path, dir, "x.bin");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(&inside, sizeof inside, 1, f), 1);
    fclose(f);
    path_in(target, sizeof target, other, "secret.bin");
    f = fopen(target, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(&secret, sizeof secret, 1, f), 1);
    fclose(f);
    path_in(path, sizeof path, dir, "swap");
    cr_assert_eq(p == A_FIFO ? mkfifo(path, 0600) : symlink(target, path), 0);
    if (start_swapper("x.bin", "swap") != 0) cr_skip_test("no RENAME_EXCHANGE here");
    const char *request =
        "{\"inputs\":{\"x\":{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
        "\"data\":{\"buffer\":\"x.bin:0\",\"encoding\":\"binref\"}}}}";
    int runs = 0, read_ok = 0, refused = 0;
    double end = now() + 2 * LOOP_SECONDS;
    const char *args[] = {"apply", "--input-path", dir, BUNDLED_PLUGIN("noop"), request, NULL};
    for (; keep_going(runs, 100, read_ok, refused, end); runs++) {
        cli_run r = run_cli_with(NULL, watchdog_before_exec, args);
        cr_assert_neq(r.status, -1, "run %d: the command hung or crashed; stderr: %s", runs,
                      r.err);
        cr_assert(strstr(r.out, "666") == NULL, "run %d read the file outside: %s", runs, r.out);
        if (r.status == 0) {
            assert_contains(r.out, "[1.5]");
            read_ok++;
        } else {
            cr_assert_eq(r.status, EXIT_PAYLOAD, "run %d: exit %d: %s", runs, r.status, r.err);
            assert_contains(r.err, expected_failure(p));
            refused++;
        }
        run_free(&r);
    }
    stop_swapper();
    cr_assert(read_ok > 0 && refused > 0, "the names never moved: %d runs read, %d refused",
              read_ok, refused);
}

Test(binref_race, the_cli_never_hangs_on_a_fifo_swapped_in) {
    cli_race(A_FIFO);
}

Test(binref_race, the_cli_never_reads_through_a_symlink_swapped_in) {
    cli_race(A_LINK_ABS);
}

/* ---- the spool's plain entries --------------------------------------------- */

static int dir_fd(void) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cr_assert_geq(fd, 0);
    return fd;
}

Test(binref_race, spool_entries_open_only_as_regular_files) {
    int d = dir_fd();
    char path[600], target[700], why[512];
    cr_assert_eq(put(dir, "w0-out-0.bin", INSIDE), 0);
    cr_assert_eq(put(other, "secret.bin", SECRET), 0);
    path_in(path, sizeof path, dir, "w1-out-0.bin");
    path_in(target, sizeof target, other, "secret.bin");
    cr_assert_eq(symlink(target, path), 0);
    path_in(path, sizeof path, dir, "w2-out-0.bin");
    cr_assert_eq(mkfifo(path, 0600), 0);
    int fd;
    uint64_t size;
    cr_assert_eq(binref_open_entry(d, "w0-out-0.bin", "w0", &fd, &size, why, sizeof why), 0,
                 "%s", why);
    cr_assert_eq(size, 8);
    char back[8];
    binref_read r = {.path = "w0", .bytes = 8, .dst = back, .fd = fd, .has_fd = true};
    cr_assert_eq(binref_read_all(&r, 1, BINREF_IO_POSIX, why, sizeof why), 0, "%s", why);
    cr_assert_eq(memcmp(back, INSIDE, 8), 0);
    cr_assert_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0, "the descriptor read is blocking again");
    close(fd);
    cr_assert_eq(binref_open_entry(d, "w1-out-0.bin", "w1", &fd, &size, why, sizeof why),
                 TSR_E_IO);
    assert_contains(why, "binref file 'w1' is a symlink, which is not followed");
    cr_assert_eq(fd, -1);
    cr_assert_eq(binref_open_entry(d, "w2-out-0.bin", "w2", &fd, &size, why, sizeof why),
                 TSR_E_IO);
    assert_contains(why, "binref file 'w2' is not a regular file");
    close(d);
}

static const char *spool_loop(void) {
    char path[600], target[700], why[512];
    CHECK(put(dir, "w0-out-0.bin", INSIDE) == 0 && put(other, "secret.bin", SECRET) == 0,
          "set up");
    path_in(path, sizeof path, dir, "swap");
    path_in(target, sizeof target, other, "secret.bin");
    CHECK((scenario == A_FIFO ? mkfifo(path, 0600) : symlink(target, path)) == 0, "set up");
    if (start_swapper("w0-out-0.bin", "swap") != 0) return "skip";
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(d >= 0, "open %s", dir);
    int read_ok = 0, refused = 0;
    double end = now() + LOOP_SECONDS;
    for (int i = 0; keep_going(i, MAX_DECODES, read_ok, refused, end); i++) {
        int fd;
        uint64_t size;
        if (binref_open_entry(d, "w0-out-0.bin", "w0-out-0.bin", &fd, &size, why, sizeof why) !=
            0) {
            CHECK(strstr(why, scenario == A_FIFO ? "is not a regular file" : "is a symlink"),
                  "open %d: %s", i, why);
            refused++;
            continue;
        }
        read_ok++;
        char back[9] = "";
        binref_read r = {.path = "w0-out-0.bin", .bytes = 8, .dst = back, .fd = fd,
                         .has_fd = true};
        int rc = binref_read_all(&r, 1, BINREF_IO_POSIX, why, sizeof why);
        close(fd);
        CHECK(rc == 0, "read %d: %s", i, why);
        CHECK(memcmp(back, INSIDE, 8) == 0, "read %d got \"%s\"", i, back);
    }
    close(d);
    CHECK(read_ok > 0 && refused > 0, "the names never moved: %d opened, %d refused", read_ok,
          refused);
    return "ok";
}

Test(binref_race, a_spool_entry_swapped_with_a_fifo_or_a_symlink_is_refused) {
    scenario = A_FIFO;
    run_watched(spool_loop, "spool entry <-> FIFO");
    stop_swapper();
    remove_tree(dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    remove_tree(other);
    cr_assert_eq(mkdir(other, 0700), 0);
    scenario = A_LINK_ABS;
    run_watched(spool_loop, "spool entry <-> symlink out");
}

/* ---- outputs ------------------------------------------------------------------ */

static binref_writer *writer(const char *prefix, char *why, size_t n, int *rc) {
    binref_writer_opts o = {.dir = dir, .prefix = prefix, .io = BINREF_IO_POSIX};
    binref_writer *w = NULL;
    *rc = binref_writer_open(&w, &o, why, n);
    return w;
}

/* What the file outside holds (or "" when it does not exist). */
static void outside_holds(const char *name, char out[9]) {
    char p[600];
    path_in(p, sizeof p, other, name);
    memset(out, 0, 9);
    FILE *f = fopen(p, "rb");
    if (f == NULL) return;
    size_t n = fread(out, 1, 8, f);
    (void)n;
    fclose(f);
}

Test(binref_race, a_symlink_or_fifo_planted_at_an_output_name_is_never_written_through) {
    char link[600], target[700], why[512], held[9];
    cr_assert_eq(put(other, "secret.bin", SECRET), 0);
    path_in(link, sizeof link, dir, "planted-0.bin");
    path_in(target, sizeof target, other, "secret.bin");
    cr_assert_eq(symlink(target, link), 0);
    path_in(link, sizeof link, dir, "dangling-0.bin");
    path_in(target, sizeof target, other, "new.bin");
    cr_assert_eq(symlink(target, link), 0);
    path_in(link, sizeof link, dir, "fifo-0.bin");
    cr_assert_eq(mkfifo(link, 0600), 0);
    const char *prefixes[] = {"planted", "dangling", "fifo"};
    for (int k = 0; k < 3; k++) {
        int rc;
        binref_writer *w = writer(prefixes[k], why, sizeof why, &rc);
        cr_assert_eq(rc, 0, "%s", why);
        const char *file;
        uint64_t off;
        rc = binref_writer_add(w, "WRITTEN!", 8, &file, &off, why, sizeof why);
        if (rc == 0) rc = binref_writer_flush(w, why, sizeof why);
        binref_writer_close(w, 1);
        cr_assert_eq(rc, TSR_E_IO, "%s: a planted name must be refused", prefixes[k]);
        assert_contains(why, "cannot create binref file");
        assert_contains(why, "File exists");
    }
    outside_holds("secret.bin", held);
    cr_assert_str_eq(held, SECRET, "the file outside was written through the symlink");
    outside_holds("new.bin", held);
    cr_assert_str_eq(held, "", "a file was created outside through the dangling symlink");
}

Test(binref_race, a_symlink_planted_in_a_loop_at_an_output_name_is_never_written_through) {
    char link[600], target[700], why[512], held[9];
    cr_assert_eq(put(other, "secret.bin", SECRET), 0);
    path_in(link, sizeof link, dir, "race-0.bin");
    path_in(target, sizeof target, other, "secret.bin");
    pid_t parent = getpid();
    swapper = fork();
    cr_assert_geq(swapper, 0);
    if (swapper == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        for (;;) {
            (void)symlink(target, link);
            (void)unlink(link);
        }
    }
    double end = now() + LOOP_SECONDS;
    for (int i = 0; i < MAX_DECODES && now() < end; i++) {
        int rc;
        binref_writer *w = writer("race", why, sizeof why, &rc);
        cr_assert_eq(rc, 0, "%s", why);
        const char *file;
        uint64_t off;
        rc = binref_writer_add(w, "WRITTEN!", 8, &file, &off, why, sizeof why);
        if (rc == 0) rc = binref_writer_flush(w, why, sizeof why);
        binref_writer_close(w, 1);
        if (rc != 0) assert_contains(why, "File exists");
    }
    stop_swapper();
    outside_holds("secret.bin", held);
    cr_assert_str_eq(held, SECRET, "the file outside was written through a planted symlink");
}
