/* SPDX-License-Identifier: MIT */
/*
 * Worker mode against in-process with host work between calls, idle and
 * beside 1..nproc busy processes (issue 31, item 1; its budgets are on the
 * Python loop of bench_gaps.py, these C rows say the same without Python).
 *
 * noop on one float64 element in the arena, one component in-process and
 * one in worker mode (the library's own waits unless --spin NS), called in
 * a loop with a busy gap of 0, 2, 10 or 100 us of host work (spinning on the
 * clock) before each call. In each (load, gap) cell the two modes run in
 * alternating batches of a fixed wall time, so that drift hits both; per
 * mode: calls per second, time per call beyond the gap (median over the
 * batches), host CPU per call beyond the gap and the worker's CPU per call.
 * After each load's cells the host sleeps and the worker's CPU over that
 * window is reported: a worker with nothing to do must sleep.
 *
 * Prints a table, writes CSV and exits 0 whatever the verdicts; 1 only when
 * it cannot measure (a component does not open, a call fails).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_gaps.h"
#include "bench_util.h"
#include "bench_worker.h"

#ifndef TSR_BENCH_NOOP_PLUGIN
#define TSR_BENCH_NOOP_PLUGIN "plugins/noop.so"
#endif
#ifndef TSR_BENCH_CSV_DEFAULT
#define TSR_BENCH_CSV_DEFAULT "bench/results/gaps.csv"
#endif

static const int64_t gaps_ns[] = {0, 2000, 10000, 100000};
#define N_GAPS (int)(sizeof gaps_ns / sizeof gaps_ns[0])

/* After every batch the host sleeps this long before the worker's clock is
 * read, so that a waiter's spin after the last reply is charged to its own
 * batch and does not run beside the next one. */
#define SETTLE_NS 2000000L

typedef struct lane {
    const char *mode;
    tsr_component *c;
    pid_t worker; /* -1 in-process or unknown */
    tsr_call *call;
    double *x;
    tsr_array in;
} lane;

static void sleep_ns(long ns) {
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int lane_open(lane *l, const char *path, const char *mode, int64_t spin_ns) {
    *l = (lane){.mode = mode, .worker = -1};
    if (!strcmp(mode, "worker")) {
        l->c = wb_open_worker_pid(path, spin_ns, &l->worker);
    } else {
        tsr_error err = {0};
        if (tsr_open(path, NULL, &l->c, &err) != 0)
            fprintf(stderr, "bench_gaps: %s: %s\n", path, err.message);
    }
    if (!l->c) return -1;
    l->call = tsr_call_new(l->c, TSR_EP_APPLY);
    l->x = tsr_component_alloc(l->c, sizeof(double));
    if (!l->call || !l->x) {
        fprintf(stderr, "bench_gaps: out of memory (%s)\n", mode);
        return -1;
    }
    *l->x = 2.0;
    l->in = (tsr_array){.data = l->x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {1}};
    return 0;
}

static void lane_close(lane *l) {
    tsr_call_free(l->call);
    if (l->c && l->x) tsr_component_free_buffer(l->c, l->x);
    tsr_close(l->c);
}

static int call_once(lane *l) {
    return tsr_call_set_input(l->call, "x", &l->in) != 0 || tsr_call_run(l->call) != 0;
}

/* One batch of slice_ns wall time, then the settle; adds to a. */
static int batch(lane *l, int64_t gap, int64_t slice_ns, gaps_acc *a) {
    double w0 = l->worker > 0 ? wb_cpu_ns(l->worker) : NAN;
    double h0 = wb_cpu_ns(0);
    int64_t calls = 0, t0 = bench_now_ns(), t1 = t0;
    int bad = 0;
    while (t1 - t0 < slice_ns && !bad) {
        wb_busy(gap);
        bad = call_once(l);
        calls++;
        t1 = bench_now_ns();
    }
    double h1 = wb_cpu_ns(0);
    sleep_ns(SETTLE_NS);
    double w1 = l->worker > 0 ? wb_cpu_ns(l->worker) : NAN;
    if (bad) {
        fprintf(stderr, "bench_gaps: %s call failed: %s\n", l->mode, tsr_call_errmsg(l->call));
        return -1;
    }
    gaps_acc_add(a, calls, t1 - t0, h1 - h0, w1 - w0, gap);
    return 0;
}

/* One (load, gap) cell: batches alternate between the modes, the first
 * mode alternating too. */
static int cell(lane *lanes, int64_t gap, const gaps_config *cfg, gaps_acc *acc) {
    int64_t slice = cfg->cell_ns / cfg->batches;
    if (slice < 1) slice = 1;
    for (int m = 0; m < 2; m++) gaps_acc_init(&acc[m]);
    /* One untimed call each: the worker may have slept a long while. */
    for (int m = 0; m < 2; m++)
        if (call_once(&lanes[m])) return -1;
    for (int k = 0; k < cfg->batches; k++)
        for (int j = 0; j < 2; j++) {
            int m = (k + j) % 2;
            if (batch(&lanes[m], gap, slice, &acc[m]) != 0) return -1;
        }
    return 0;
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: bench_gaps [--plugin PATH] [--csv PATH] [--quick] [--cell-ms MS]\n"
            "                  [--max-load N] [--spin NS]\n"
            "  --plugin PATH  the noop plugin (default %s)\n"
            "  --csv PATH     where to write the results (default %s)\n"
            "  --quick        0.1 s per mode and cell, 5 batches (default 0.5 s, 10)\n"
            "  --cell-ms MS   wall time per mode and cell (a smoke run: 5)\n"
            "  --max-load N   loads 0..N busy processes (default: the CPUs online)\n"
            "  --spin NS      worker mode with spin_ns=NS (default: the library's waits)\n",
            TSR_BENCH_NOOP_PLUGIN, TSR_BENCH_CSV_DEFAULT);
}

static int parse(int argc, char **argv, gaps_config *cfg) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--quick")) {
            cfg->quick = 1;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!v) return -1; /* an unknown flag or one without its value */
        i++;
        if (!strcmp(a, "--plugin")) cfg->plugin = v;
        else if (!strcmp(a, "--csv")) cfg->csv = v;
        else if (!strcmp(a, "--cell-ms")) {
            cfg->cell_ns = (int64_t)(strtod(v, &end) * 1e6);
            if (cfg->cell_ns <= 0) cfg->cell_ns = -1;
        }
        else if (!strcmp(a, "--max-load")) cfg->max_load = (int)strtol(v, &end, 10);
        else if (!strcmp(a, "--spin")) cfg->spin_ns = strtoll(v, &end, 10);
        else return -1;
        if (end && (*end || end == v)) {
            fprintf(stderr, "bench_gaps: %s: not a number: %s\n", a, v);
            return -1;
        }
    }
    if (cfg->cell_ns < 0 || cfg->max_load < 0 || cfg->max_load >= GAPS_MAX_LOADS) return -1;
    return 0;
}

int main(int argc, char **argv) {
    gaps_config cfg = {.plugin = TSR_BENCH_NOOP_PLUGIN, .csv = TSR_BENCH_CSV_DEFAULT,
                       .spin_ns = -1, .max_load = bench_cpus()};
    if (parse(argc, argv, &cfg) != 0) {
        usage(stderr);
        return 2;
    }
    /* Defaults that depend on --quick; cell_ns 0: --cell-ms not given. */
    int cell_arg = cfg.cell_ns > 0;
    if (!cell_arg) cfg.cell_ns = cfg.quick ? 100000000 : 500000000;
    cfg.batches = cfg.quick || cell_arg ? 5 : 10;
    /* The idle window after the calls: 0.5 s, or the cell's time when shorter runs were asked. */
    cfg.idle_ns = cell_arg ? cfg.cell_ns : cfg.quick ? 200000000 : 500000000;

    lane lanes[2];
    memset(lanes, 0, sizeof lanes);
    int rc = 1;
    if (lane_open(&lanes[0], cfg.plugin, "inproc", -1) != 0 ||
        lane_open(&lanes[1], cfg.plugin, "worker", cfg.spin_ns) != 0)
        goto done;
    if (lanes[1].worker < 0)
        fprintf(stderr, "bench_gaps: the worker's pid is unknown: no worker CPU figures\n");

    gaps_report rep = {.cfg = &cfg, .cpus = bench_cpus()};
    /* Each load's busy processes live at most its cells' time, plenty over. */
    unsigned max_s = (unsigned)(2.0 * N_GAPS * (2.0 * (double)cfg.cell_ns + cfg.batches * 2.0 *
                                                SETTLE_NS) / 1e9 + (double)cfg.idle_ns / 1e9) + 30;
    for (int load = 0; load <= cfg.max_load; load++) {
        bench_load bl;
        bench_load_start_n(&bl, load, max_s);
        int failed = 0;
        for (int g = 0; g < N_GAPS && !failed; g++) {
            gaps_acc acc[2];
            failed = cell(lanes, gaps_ns[g], &cfg, acc) != 0;
            if (!failed) gaps_report_cell(&rep, load, gaps_ns[g], &acc[0], &acc[1]);
        }
        if (!failed) {
            /* The worker's CPU while the host sleeps, right after the calls. */
            double w0 = lanes[1].worker > 0 ? wb_cpu_ns(lanes[1].worker) : NAN;
            sleep_ns((long)cfg.idle_ns);
            double w1 = lanes[1].worker > 0 ? wb_cpu_ns(lanes[1].worker) : NAN;
            gaps_report_idle(&rep, load, w1 - w0);
        }
        bench_load_stop(&bl);
        if (failed) goto done;
    }
    gaps_print(&rep);
    rc = gaps_write_csv(&rep, cfg.csv) == 0 ? 0 : 1;
done:
    for (int m = 0; m < 2; m++) lane_close(&lanes[m]);
    return rc;
}
