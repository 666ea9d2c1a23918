/* SPDX-License-Identifier: MIT */
/*
 * How long the library's waits take, where the tests check only that they
 * end (tests/test_channel.c, tests/test_worker_proc.c): a channel wait that
 * only looks (timeout 0) or times out (how late after 100 ms), a sleeping
 * waiter woken by a post, a waiter woken by a dead peer's pidfd, stopping
 * an idle worker, and a worker call that times out (the worker killed and
 * reaped). Every row has a baseline measured in the same run, its samples
 * interleaved with the row's: the bare system call the wait rests on.
 *
 *     bench_waits [--quick] [--csv PATH] [--worker PATH] [--plugin PATH]
 *
 * It prints a table, writes CSV and exits 0 whatever the figures; non-zero
 * only when it cannot measure (a wait ending otherwise than it should, no
 * worker). Internal functions: linked against the library's objects.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tessera/tessera.h>

#include "bench_util.h"
#include "shm/arena.h"
#include "shm/channel.h"
#include "backends/worker/worker_proc.h"

#ifndef TSR_BENCH_WORKER_EXE
#define TSR_BENCH_WORKER_EXE "bin/tessera-worker"
#endif
#ifndef TSR_BENCH_NOOP_PLUGIN
#define TSR_BENCH_NOOP_PLUGIN "plugins/noop.so"
#endif
#ifndef TSR_BENCH_CSV_DEFAULT
#define TSR_BENCH_CSV_DEFAULT "bench/results/waits.csv"
#endif

#define MAX_SAMPLES 64
#define BATCH 1000 /* timeout-0 waits per sample: one alone is below the clock's grain */

typedef struct row {
    const char *name, *what, *baseline;
    double bound_us; /* what a test asserted before the tests stopped timing (NAN: none) */
    int samples;
    double v[MAX_SAMPLES], b[MAX_SAMPLES]; /* microseconds: the row's, the baseline's */
} row;

static const char *worker_exe = TSR_BENCH_WORKER_EXE;
static const char *plugin = TSR_BENCH_NOOP_PLUGIN;
static char why[TSR_ERRMSG_MAX];
static arena *A;
static chan_end H;
static int efd = -1;
static _Atomic int64_t *stamp; /* shared with forked peers: when they acted */

static double us_since(int64_t t0) { return (double)(bench_now_ns() - t0) / 1e3; }

static int fail(const char *what) {
    fprintf(stderr, "bench_waits: %s%s%s\n", what, why[0] ? ": " : "", why);
    return -1;
}

/* A forked peer that waits ms, stamps the time and then acts (act may be
 * NULL: it exits, which is the act). Returns its pid, or -1. */
static pid_t peer(int ms, void (*act)(void)) {
    atomic_store(stamp, 0);
    pid_t pid = fork();
    if (pid == 0) {
        usleep((useconds_t)ms * 1000);
        atomic_store(stamp, bench_now_ns());
        if (act) act();
        _exit(0);
    }
    return pid;
}

static void act_post(void) {
    chan_end w;
    /* H's segment and bells, from the waiter's point of view reversed */
    if (chan_attach(&w, H.fd, H.peer_bell, H.my_bell, why, sizeof why) != 0) _exit(2);
    chan_post(&w, CHAN_DONE);
}

static void act_eventfd(void) {
    uint64_t one = 1;
    if (write(efd, &one, sizeof one) != sizeof one) _exit(2);
}

static void drain_eventfd(void) {
    uint64_t v;
    struct pollfd p = {.fd = efd, .events = POLLIN};
    while (poll(&p, 1, 0) == 1 && read(efd, &v, sizeof v) == sizeof v) {
    }
}

static int reap(pid_t pid) {
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return 0;
}

/* ---- channel waits ------------------------------------------------------- */

static int sample_timeout0(row *r, int i) {
    H.spin_ns = 0;
    atomic_store(&H.blk->state, CHAN_IDLE);
    int64_t t0 = bench_now_ns();
    for (int k = 0; k < BATCH; k++)
        if (chan_wait(&H, CHAN_BIT(CHAN_DONE), NULL, 0, 0, NULL) != CHAN_WAIT_TIMEOUT)
            return fail("chan_wait with timeout 0 did not time out");
    r->v[i] = us_since(t0) / BATCH;
    struct pollfd p = {.fd = efd, .events = POLLIN};
    t0 = bench_now_ns();
    for (int k = 0; k < BATCH; k++)
        if (poll(&p, 1, 0) != 0) return fail("the eventfd is readable");
    r->b[i] = us_since(t0) / BATCH;
    return 0;
}

/* Lateness: how long after `ms` the wait returned. */
static int sample_timeout_late(row *r, int i, int ms) {
    H.spin_ns = 0;
    atomic_store(&H.blk->state, CHAN_IDLE);
    int64_t t0 = bench_now_ns();
    if (chan_wait(&H, CHAN_BIT(CHAN_DONE), NULL, 0, ms, NULL) != CHAN_WAIT_TIMEOUT)
        return fail("chan_wait did not time out");
    r->v[i] = us_since(t0) - ms * 1e3;
    struct pollfd p = {.fd = efd, .events = POLLIN};
    t0 = bench_now_ns();
    if (poll(&p, 1, ms) != 0) return fail("poll did not time out");
    r->b[i] = us_since(t0) - ms * 1e3;
    return 0;
}

static int sample_timeout100(row *r, int i) { return sample_timeout_late(r, i, 100); }

/* From the peer's post (or eventfd write) to the sleeping waiter's return. */
static int sample_post_wakes(row *r, int i) {
    H.spin_ns = 0;
    atomic_store(&H.blk->state, CHAN_IDLE);
    pid_t pid = peer(2, act_post);
    if (pid < 0) return fail("fork");
    int s = chan_wait(&H, CHAN_BIT(CHAN_DONE), NULL, 0, 10000, NULL);
    int64_t t = bench_now_ns();
    if (reap(pid) != 0 || s != CHAN_DONE) return fail("the post did not wake the waiter");
    r->v[i] = (double)(t - atomic_load(stamp)) / 1e3;

    drain_eventfd();
    pid = peer(2, act_eventfd);
    if (pid < 0) return fail("fork");
    struct pollfd p = {.fd = efd, .events = POLLIN};
    int n = poll(&p, 1, 10000);
    t = bench_now_ns();
    if (reap(pid) != 0 || n != 1) return fail("the eventfd write did not wake poll");
    r->b[i] = (double)(t - atomic_load(stamp)) / 1e3;
    drain_eventfd();
    return 0;
}

/* From the peer's last act before _exit to the waiter's return. */
static int sample_pidfd_wakes(row *r, int i) {
    H.spin_ns = 0;
    atomic_store(&H.blk->state, CHAN_IDLE);
    for (int base = 0; base < 2; base++) {
        pid_t pid = peer(2, NULL);
        if (pid < 0) return fail("fork");
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
            snprintf(why, sizeof why, "%s", strerror(errno));
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return fail("pidfd_open");
        }
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int ready = -1, ok;
        if (!base) ok = chan_wait(&H, CHAN_BIT(CHAN_DONE), &p, 1, 10000, &ready) == CHAN_WAIT_FD;
        else ok = poll(&p, 1, 10000) == 1;
        int64_t t = bench_now_ns();
        close(pidfd);
        if (reap(pid) != 0 || !ok) return fail("the death did not wake the waiter");
        (base ? r->b : r->v)[i] = (double)(t - atomic_load(stamp)) / 1e3;
    }
    return 0;
}

/* ---- workers ----------------------------------------------------------- */

/* The worker's output (its log lines) would interleave with the table. */
static void discard(void *user, const char *line) {
    (void)user;
    (void)line;
}

static int start_worker(worker_proc *w) {
    worker_spawn_opts o = {.worker_exe = worker_exe, .plugin_path = plugin,
                           .arena = A, .spin_ns = 20000,
                           .start_timeout_ms = 20000, .output = discard};
    char *schema = NULL;
    if (worker_start(w, &o, &schema, why, sizeof why) != 0) return fail("worker_start");
    free(schema);
    return 0;
}

/* A child that does nothing until it is killed. */
static pid_t idle_child(void) {
    pid_t pid = fork();
    if (pid == 0) {
        for (;;) pause();
    }
    return pid;
}

static int kill_and_reap(pid_t pid, double *us) {
    int64_t t0 = bench_now_ns();
    kill(pid, SIGKILL);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status)) return fail("kill and reap");
    *us = us_since(t0);
    return 0;
}

static int sample_worker_stop(row *r, int i) {
    worker_proc w;
    if (start_worker(&w) != 0) return -1;
    usleep(2000); /* past its spin: an idle worker sleeps */
    int64_t t0 = bench_now_ns();
    worker_stop(&w);
    r->v[i] = us_since(t0);
    pid_t pid = idle_child();
    if (pid < 0) return fail("fork");
    usleep(2000);
    return kill_and_reap(pid, &r->b[i]);
}

/* A stopped worker never answers: the round trip times out after 250 ms
 * and kills and reaps it; lateness as for the channel. */
static int sample_call_timeout(row *r, int i) {
    worker_proc w;
    if (start_worker(&w) != 0) return -1;
    kill(w.pid, SIGSTOP);
    int64_t t0 = bench_now_ns();
    int st = worker_roundtrip(&w, CHAN_REQUEST, 250, why, sizeof why);
    r->v[i] = us_since(t0) - 250e3;
    worker_stop(&w);
    if (st != TSR_E_TIMEOUT) return fail("the round trip did not time out");
    why[0] = '\0';
    struct pollfd p = {.fd = efd, .events = POLLIN};
    t0 = bench_now_ns();
    if (poll(&p, 1, 250) != 0) return fail("poll did not time out");
    r->b[i] = us_since(t0) - 250e3;
    return 0;
}

/* ---- report ------------------------------------------------------------ */

typedef struct stats3 {
    double p10, median, p90;
} stats3;

static stats3 stats_of(const double *v, int n) {
    double tmp[MAX_SAMPLES];
    memcpy(tmp, v, sizeof(double) * (size_t)n);
    return (stats3){bench_quantile(tmp, (size_t)n, 0.1), bench_quantile(tmp, (size_t)n, 0.5),
                    bench_quantile(tmp, (size_t)n, 0.9)};
}

static const char *verdict(const row *r, stats3 s) {
    if (isnan(r->bound_us)) return "-";
    return s.median <= r->bound_us ? "PASS" : "OVER";
}

static void print_row(const row *r) {
    stats3 s = stats_of(r->v, r->samples), b = stats_of(r->b, r->samples);
    double ratio = b.median > 0 ? s.median / b.median : NAN;
    printf("%-20s %7d %11.2f %11.2f %11.2f  %-14s %11.2f %7.2f %11.0f  %s\n", r->name,
           r->samples, s.p10, s.median, s.p90, r->baseline, b.median, ratio, r->bound_us,
           verdict(r, s));
}

static int write_csv(const char *path, const row *rows, int n) {
    FILE *f = bench_open_csv("bench_waits", path);
    if (!f) return -1;
    fprintf(f, "case,what,samples,p10_us,median_us,p90_us,baseline,baseline_p10_us,"
               "baseline_median_us,baseline_p90_us,ratio,bound_us,verdict\n");
    for (int k = 0; k < n; k++) {
        const row *r = &rows[k];
        stats3 s = stats_of(r->v, r->samples), b = stats_of(r->b, r->samples);
        fprintf(f, "%s,\"%s\",%d,%.3f,%.3f,%.3f,%s,%.3f,%.3f,%.3f,", r->name, r->what,
                r->samples, s.p10, s.median, s.p90, r->baseline, b.p10, b.median, b.p90);
        if (b.median > 0) fprintf(f, "%.3f", s.median / b.median);
        fprintf(f, ",%.0f,%s\n", r->bound_us, verdict(r, s));
    }
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    int quick = 0;
    const char *csv = TSR_BENCH_CSV_DEFAULT;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--worker") && i + 1 < argc) worker_exe = argv[++i];
        else if (!strcmp(argv[i], "--plugin") && i + 1 < argc) plugin = argv[++i];
        else {
            fprintf(stderr, "usage: bench_waits [--quick] [--csv PATH] [--worker PATH] "
                            "[--plugin PATH]\n");
            return 2;
        }
    }
    /* Bounds: what tests/test_channel.c and test_worker_proc.c asserted
     * before they stopped timing, for context. */
    static row rows[] = {
        {.name = "timeout-0", .what = "chan_wait with timeout 0, nothing posted (per wait)",
         .baseline = "poll-0", .bound_us = 50e3, .samples = 30},
        {.name = "timeout-100ms-late", .what = "chan_wait(100 ms) times out: how late",
         .baseline = "poll-100ms", .bound_us = 900e3, .samples = 10},
        {.name = "post-wakes-sleeper", .what = "a peer's post to the sleeping waiter's return",
         .baseline = "eventfd-write", .bound_us = 2000e3, .samples = 50},
        {.name = "pidfd-wakes-waiter", .what = "a peer's exit to chan_wait's return (its pidfd)",
         .baseline = "pidfd-poll", .bound_us = 1000e3, .samples = 50},
        {.name = "worker-stop", .what = "worker_stop of an idle worker", .baseline = "kill-reap",
         .bound_us = 150e3, .samples = 20},
        {.name = "call-timeout-250ms",
         .what = "worker_roundtrip(250 ms) of a stopped worker: how late",
         .baseline = "poll-250ms", .bound_us = 2750e3, .samples = 8},
    };
    int (*sample[])(row *, int) = {sample_timeout0,    sample_timeout100,   sample_post_wakes,
                                   sample_pidfd_wakes, sample_worker_stop, sample_call_timeout};
    int n_rows = (int)(sizeof rows / sizeof rows[0]);
    if (quick)
        for (int k = 0; k < n_rows; k++) rows[k].samples = (rows[k].samples + 3) / 4;

    stamp = mmap(NULL, sizeof *stamp, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    efd = eventfd(0, EFD_CLOEXEC);
    if (stamp == MAP_FAILED || efd < 0) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        fail("mmap or eventfd");
        return 1;
    }
    if (arena_create(&A, 0, why, sizeof why) != 0) {
        fail("arena_create");
        return 1;
    }
    int fd;
    if (chan_create(&H, &fd, why, sizeof why) != 0) {
        fail("chan_create");
        arena_destroy(A);
        return 1;
    }
    int rc = 0;
    for (int k = 0; k < n_rows && rc == 0; k++)
        for (int i = 0; i < rows[k].samples && rc == 0; i++) rc = sample[k](&rows[k], i);
    chan_close(&H);
    arena_destroy(A);
    close(efd);
    if (rc != 0) return 1;

    printf("== waits that tests check only for ending (us; lateness rows: beyond the timeout)\n"
           "%-20s %7s %11s %11s %11s  %-14s %11s %7s %11s  %s\n", "case", "samples", "p10",
           "median", "p90", "baseline", "median", "ratio", "bound", "");
    for (int k = 0; k < n_rows; k++) print_row(&rows[k]);
    printf("\nratio: median / the baseline's median, interleaved sample by sample in this "
           "run.\nbound: what a test used to assert (PASS/OVER on the median), for context.\n");
    if (write_csv(csv, rows, n_rows) != 0) return 1;
    printf("CSV: %s\n", csv);
    return 0;
}
