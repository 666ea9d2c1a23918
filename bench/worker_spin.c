/* SPDX-License-Identifier: MIT */
/*
 * How long a waiting side should spin before it sleeps (option spin_ns).
 * noop on one element in the arena, called in a loop with some host work
 * (a busy gap) between calls; one component per spin value, all open,
 * batches interleaved. A spin shorter than the time from a reply to the
 * next request sends the worker to sleep, and the next call pays a
 * wake-up; a longer one burns the worker's CPU while the host works. So
 * the table gives, per call: time beyond the gap, and the CPU time of the
 * host (beyond the gap) and of the worker (approximate, see batch()).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "bench_worker.h"

/* -1: the option left unset, the library's adaptive default (20 to 200 us,
 * from the recent waits, yielding the CPU past 20 us). */
static const int64_t spins[] = {0, 1000, 10000, 50000, WB_DEFAULT_SPIN_NS, -1};
#define N_SPINS (int)(sizeof spins / sizeof spins[0])

static const struct {
    int64_t gap_ns;
    int calls;
} gaps[] = {{0, 200}, {10000, 100}, {100000, 30}};
#define N_GAPS (int)(sizeof gaps / sizeof gaps[0])

typedef struct lane {
    tsr_component *c;
    pid_t worker;
    tsr_call *call;
    double *x;
    tsr_array in;
    double *t, *host, *wcpu;
} lane;

static int call_once(lane *l) {
    return tsr_call_set_input(l->call, "x", &l->in) != 0 || tsr_call_run(l->call) != 0;
}

/* One batch: per-call time and CPU beyond the gap. The kernel brings
 * another process's CPU clock up to date only at ticks and when it stops
 * running, so the worker's clock is read while it sleeps: after a settle,
 * before the untimed first call and after the batch. What that adds, the
 * spin after the last reply and one wake-up per batch, is taken out or
 * small against the calls. */
static int batch(lane *l, int64_t spin, int64_t gap, int calls, int k) {
    wb_settle();
    double w0 = wb_cpu_ns(l->worker);
    if (call_once(l)) return -1;
    double h0 = wb_cpu_ns(0);
    int bad = 0;
    int64_t t0 = bench_now_ns();
    for (int i = 0; i < calls; i++) {
        wb_busy(gap);
        bad |= call_once(l);
    }
    int64_t t1 = bench_now_ns();
    double h1 = wb_cpu_ns(0);
    wb_settle();
    double w1 = wb_cpu_ns(l->worker);
    l->t[k] = (double)(t1 - t0) / calls - (double)gap;
    l->host[k] = (h1 - h0) / calls - (double)gap;
    l->wcpu[k] = (w1 - w0 - (double)(spin > 0 ? spin : 0)) / calls;
    return bad ? -1 : 0;
}

static double median_of(double *v, int n) {
    return isnan(v[0]) ? NAN : bench_quantile(v, (size_t)n, 0.5);
}

int section_spin(const wb_config *cfg, wb_report *r) {
    int batches = cfg->quick ? 7 : 41, rc = -1;
    lane lanes[N_SPINS] = {0};
    for (int s = 0; s < N_SPINS; s++) {
        lane *l = &lanes[s];
        if (!(l->c = wb_open_worker_pid(cfg->noop, spins[s], &l->worker))) goto done;
        l->call = tsr_call_new(l->c, TSR_EP_APPLY);
        l->x = tsr_component_alloc(l->c, sizeof(double));
        l->t = calloc((size_t)batches, sizeof(double));
        l->host = calloc((size_t)batches, sizeof(double));
        l->wcpu = calloc((size_t)batches, sizeof(double));
        if (!l->call || !l->x || !l->t || !l->host || !l->wcpu) {
            fprintf(stderr, "bench_worker: out of memory (spin sweep)\n");
            goto done;
        }
        *l->x = 2.0;
        l->in = (tsr_array){.data = l->x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {1}};
    }
    for (int g = 0; g < N_GAPS; g++) {
        for (int k = 0; k < batches; k++) {
            for (int j = 0; j < N_SPINS; j++) {
                lane *l = &lanes[(k + j) % N_SPINS];
                if (batch(l, spins[(k + j) % N_SPINS], gaps[g].gap_ns, gaps[g].calls, k) != 0) {
                    fprintf(stderr, "bench_worker: spin sweep call failed: %s\n",
                            tsr_call_errmsg(l->call));
                    goto done;
                }
            }
        }
        wb_row *first = NULL;
        for (int s = 0; s < N_SPINS; s++) {
            int dflt = spins[s] < 0;
            wb_row *row = report_add(r, "spin", dflt ? "spin-default" : "spin");
            if (!row) goto done;
            if (!first) first = row;
            row->n = 1;
            row->spin_ns = spins[s];
            row->gap_ns = gaps[g].gap_ns;
            row->calls = gaps[g].calls;
            row->batches = batches;
            row_stats(row, lanes[s].t, (size_t)batches);
            row->host_cpu = median_of(lanes[s].host, batches);
            row->worker_cpu = median_of(lanes[s].wcpu, batches);
            if (s > 0) {
                row->ratio = row->median / first->median;
                row->ratio_to = "spin 0";
            }
        }
    }
    rc = 0;
done:
    for (int s = 0; s < N_SPINS; s++) {
        lane *l = &lanes[s];
        tsr_call_free(l->call);
        if (l->c) tsr_component_free_buffer(l->c, l->x);
        tsr_close(l->c);
        free(l->t);
        free(l->host);
        free(l->wcpu);
    }
    return rc;
}
