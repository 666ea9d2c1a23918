/* SPDX-License-Identifier: MIT */
/*
 * Back-to-back calls on an idle machine and beside as many busy processes
 * as there are CPUs (started and stopped here, each killed at the latest
 * after LOAD_MAX_S): noop with 1 element in the arena, calls for a second
 * in each state, each timed on its own so that the tail shows (p99),
 * against the futex ping-pong between two processes measured the same way
 * in the same state.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "bench_worker.h"
#include "pingpong.h"

#define LOAD_MAX_S 120          /* a load process never outlives this */
/* Calls for this long in each state: long enough for the scheduler's time
 * slices (milliseconds) to show in the tail, which a few thousand
 * sub-microsecond calls would never meet. */
#define STATE_NS 1000000000LL
#define MAX_SAMPLES 4000000
#define WARMUP_CALLS 2000

static void add_row(wb_report *r, const char *variant, double *t, size_t n) {
    wb_row *row = report_add(r, "loaded", variant);
    if (!row) return;
    row->n = 1;
    row->calls = 1;
    row->batches = (int)n;
    row->p99 = bench_quantile(t, n, 0.99);
    row_stats(row, t, n);
}

/* noop's calls for `ns`, each timed alone: how many (at most cap), or -1
 * when a call failed. */
static int time_calls(tsr_call *call, const tsr_array *x, double *t, int cap, int64_t ns) {
    for (int i = 0; i < WARMUP_CALLS; i++)
        if (tsr_call_set_input(call, "x", x) != 0 || tsr_call_run(call) != 0) return -1;
    int64_t start = bench_now_ns(), t0 = start;
    int n = 0;
    while (n < cap && t0 - start < ns) {
        if (tsr_call_set_input(call, "x", x) != 0 || tsr_call_run(call) != 0) return -1;
        int64_t t1 = bench_now_ns();
        t[n++] = (double)(t1 - t0);
        t0 = t1;
    }
    return n;
}

static int time_pingpong(pingpong *pp, double *t, int cap, int64_t ns) {
    for (int i = 0; i < WARMUP_CALLS; i++) pingpong_roundtrip(pp);
    int64_t start = bench_now_ns(), t0 = start;
    int n = 0;
    while (n < cap && t0 - start < ns) {
        pingpong_roundtrip(pp);
        int64_t t1 = bench_now_ns();
        t[n++] = (double)(t1 - t0);
        t0 = t1;
    }
    return n;
}

int section_loaded(const wb_config *cfg, wb_report *r) {
    int64_t ns = cfg->quick ? STATE_NS / 4 : STATE_NS;
    double *t = malloc((size_t)MAX_SAMPLES * sizeof *t);
    tsr_component *c = wb_open_worker(cfg->noop, NULL, -1);
    pingpong pp;
    if (!t || !c || pingpong_start(&pp) != 0) {
        fprintf(stderr, "bench_worker: the loaded section could not start\n");
        free(t);
        tsr_close(c);
        return -1;
    }
    pingpong_set_spin(&pp, WB_DEFAULT_SPIN_NS);
    double *xs = tsr_component_alloc(c, sizeof(double));
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    int failed = !xs || !call;
    if (!failed) {
        xs[0] = 1.0;
        tsr_array x = {.data = xs, .dtype = TSR_FLOAT64, .rank = 1, .shape = {1}};
        static const char *const noop_row[2] = {"noop idle", "noop loaded"};
        static const char *const pp_row[2] = {"futex-spin idle", "futex-spin loaded"};
        for (int loaded = 0; loaded < 2 && !failed; loaded++) {
            bench_load l = {.n = 0};
            if (loaded) bench_load_start(&l, LOAD_MAX_S);
            int n = time_calls(call, &x, t, MAX_SAMPLES, ns);
            failed = n < 0;
            if (!failed) add_row(r, noop_row[loaded], t, (size_t)n);
            n = time_pingpong(&pp, t, MAX_SAMPLES, ns);
            add_row(r, pp_row[loaded], t, (size_t)n);
            if (loaded) bench_load_stop(&l);
        }
    }
    if (failed) fprintf(stderr, "bench_worker: a call failed in the loaded section\n");
    tsr_call_free(call);
    tsr_component_free_buffer(c, xs);
    tsr_close(c);
    pingpong_stop(&pp);
    free(t);
    return failed ? -1 : 0;
}
