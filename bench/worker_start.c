/* SPDX-License-Identifier: MIT */
/*
 * Worker start to first result: tsr_open in worker mode plus the first
 * apply of noop on one element, for spawn=exec and spawn=fork, alternated
 * start by start. The close that follows is timed too (not budgeted).
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "bench_worker.h"

enum { S_EXEC, S_FORK, S_COUNT };
static const char *const spawn_name[S_COUNT] = {"exec", "fork"};
static const char *const close_name[S_COUNT] = {"exec-close", "fork-close"};

/* One start; 0 with the two durations, or -1. */
static int one_start(const char *path, const char *spawn, double *first, double *close) {
    double x = 1.0;
    tsr_array in = {.data = &x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {1}};
    int64_t t0 = bench_now_ns();
    tsr_component *c = wb_open_worker(path, spawn, -1);
    if (!c) return -1;
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    int bad = !call || tsr_call_set_input(call, "x", &in) != 0 || tsr_call_run(call) != 0;
    int64_t t1 = bench_now_ns();
    if (bad)
        fprintf(stderr, "bench_worker: first call (spawn=%s) failed: %s\n", spawn,
                call ? tsr_call_errmsg(call) : "out of memory");
    tsr_call_free(call);
    tsr_close(c);
    int64_t t2 = bench_now_ns();
    *first = (double)(t1 - t0);
    *close = (double)(t2 - t1);
    return bad ? -1 : 0;
}

int section_start(const wb_config *cfg, wb_report *r) {
    int starts = cfg->quick ? 5 : 20;
    double *first[S_COUNT], *close[S_COUNT];
    int usable[S_COUNT], rc = -1;
    for (int s = 0; s < S_COUNT; s++) {
        first[s] = calloc((size_t)starts, sizeof(double));
        close[s] = calloc((size_t)starts, sizeof(double));
        /* One untimed start each: page cache, the loader's caches. A spawn
         * that cannot start at all is left out, not fatal. */
        double a, b;
        usable[s] = one_start(cfg->noop, spawn_name[s], &a, &b) == 0;
    }
    for (int s = 0; s < S_COUNT; s++)
        if (!first[s] || !close[s]) goto done;
    for (int k = 0; k < starts; k++) {
        for (int j = 0; j < S_COUNT; j++) {
            int s = (k + j) % S_COUNT;
            if (usable[s] && one_start(cfg->noop, spawn_name[s], &first[s][k], &close[s][k]) != 0)
                goto done;
        }
    }
    for (int s = 0; s < S_COUNT; s++) {
        if (!usable[s]) continue;
        wb_row *row = report_add(r, "start", spawn_name[s]);
        wb_row *crow = report_add(r, "start", close_name[s]);
        if (!row || !crow) goto done;
        row->calls = crow->calls = 1;
        row->batches = crow->batches = starts;
        row->n = 1;
        row_stats(row, first[s], (size_t)starts);
        row_stats(crow, close[s], (size_t)starts);
    }
    rc = 0;
done:
    for (int s = 0; s < S_COUNT; s++) {
        free(first[s]);
        free(close[s]);
    }
    return rc;
}
