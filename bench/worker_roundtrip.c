/* SPDX-License-Identifier: MIT */
/*
 * Round trips of one apply in worker mode, against baselines measured in
 * the same rounds:
 *   arena        noop, x allocated with tsr_component_alloc: only a binref crosses
 *   copy         noop, x in ordinary memory: copied into the arena per call
 *   peek-arena   peek (reads x[0] only), x from tsr_component_alloc: the transport
 *                alone, whatever the size
 *   peek-copy    peek, x in ordinary memory: the transport plus the copy
 *   futex-spin   a bare futex ping-pong between two processes, spinning
 *                as long as the library does before sleeping
 *   futex-sleep  the same, always sleeping (spin 0)
 *   memcpy       memcpy of x's bytes between two arena buffers: noop's own
 *                work (its apply is one memcpy)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "bench_worker.h"
#include "pingpong.h"

enum { V_ARENA, V_COPY, V_PEEK_ARENA, V_PEEK_COPY, V_FUTEX_SPIN, V_FUTEX_SLEEP, V_MEMCPY,
       V_COUNT };
static const char *const vname[V_COUNT] = {"arena", "copy", "peek-arena", "peek-copy",
                                           "futex-spin", "futex-sleep", "memcpy"};

typedef struct plan {
    int64_t n;
    int calls, batches;
} plan;

/* A batch lasts ~0.2-10 ms; 10^7 elements (80 MB) take ~10 ms a copy. */
static const plan plans[] = {
    {0, 200, 101}, {1, 200, 101}, {1000, 200, 101}, {100000, 20, 51}, {10000000, 1, 21},
};
#define N_PLANS (sizeof plans / sizeof plans[0])
#define BASELINE_CALLS 200 /* per batch at every size: futex round trips, peek-arena */

typedef struct rt {
    int64_t n;
    size_t bytes;
    int calls[V_COUNT];
    tsr_component *noop, *peek;
    tsr_call *noop_call, *peek_call;
    void *xa, *xp, *xo, *mdst; /* x in noop's arena, in peek's, in plain memory; memcpy's target */
    tsr_array in_a, in_p, in_o;
    pingpong *pp;
} rt;

static int run(tsr_call *call, const tsr_array *x) {
    return tsr_call_set_input(call, "x", x) != 0 || tsr_call_run(call) != 0;
}

static int one(rt *b, int v) {
    switch (v) {
    case V_ARENA: return run(b->noop_call, &b->in_a);
    case V_COPY: return run(b->noop_call, &b->in_o);
    case V_PEEK_ARENA: return run(b->peek_call, &b->in_p);
    case V_PEEK_COPY: return run(b->peek_call, &b->in_o);
    case V_FUTEX_SPIN:
    case V_FUTEX_SLEEP: pingpong_roundtrip(b->pp); return 0;
    default:
        memcpy(b->mdst, b->xa, b->bytes);
        bench_clobber(b->mdst);
        return 0;
    }
}

/* ns per call, or -1 when a call failed. The untimed first call wakes the
 * peer, which the settle before it put to sleep. */
static double batch(rt *b, int v) {
    if (v == V_FUTEX_SPIN || v == V_FUTEX_SLEEP)
        pingpong_set_spin(b->pp, v == V_FUTEX_SPIN ? WB_DEFAULT_SPIN_NS : 0);
    wb_settle();
    if (one(b, v)) return -1;
    int bad = 0, calls = b->calls[v];
    int64_t t0 = bench_now_ns();
    for (int i = 0; i < calls; i++) bad |= one(b, v);
    int64_t t1 = bench_now_ns();
    return bad ? -1.0 : (double)(t1 - t0) / calls;
}

/* Results must be right, and the counters must show what was copied. */
static int check(rt *b) {
    for (int v = V_ARENA; v <= V_PEEK_COPY; v++) {
        tsr_component *c = v <= V_COPY ? b->noop : b->peek;
        tsr_call *call = v <= V_COPY ? b->noop_call : b->peek_call;
        tsr_stats s0 = TSR_STATS_INIT, s1 = TSR_STATS_INIT;
        tsr_component_stats(c, &s0);
        if (one(b, v)) {
            fprintf(stderr, "bench_worker: %s call failed (n=%lld): %s\n", vname[v],
                    (long long)b->n, tsr_call_errmsg(call));
            return -1;
        }
        tsr_component_stats(c, &s1);
        const tsr_array *y = tsr_call_result(call, 0);
        int ok = y && y->data &&
                 (v <= V_COPY ? memcmp(y->data, b->xo, b->bytes) == 0
                              : *(const double *)y->data == (b->n ? ((double *)b->xo)[0] : 0.0));
        if (!ok) {
            fprintf(stderr, "bench_worker: %s gave a wrong result (n=%lld)\n", vname[v],
                    (long long)b->n);
            return -1;
        }
        int by_ref = v == V_ARENA || v == V_PEEK_ARENA;
        uint64_t copied = s1.bytes_copied - s0.bytes_copied;
        uint64_t ref = s1.bytes_by_ref - s0.bytes_by_ref;
        if (copied != (by_ref ? 0 : b->bytes) || ref != (by_ref ? b->bytes : 0))
            fprintf(stderr, "bench_worker: warning: %s (n=%lld) counted %llu bytes copied and %llu "
                    "by reference; expected %zu %s\n", vname[v], (long long)b->n,
                    (unsigned long long)copied, (unsigned long long)ref, b->bytes,
                    by_ref ? "by reference" : "copied");
    }
    return 0;
}

static void fill(double *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = 0.5 * (double)i + 1.0;
}

static int measure(const plan *p, rt *b, wb_report *r) {
    b->n = p->n;
    b->bytes = (size_t)p->n * sizeof(double);
    for (int v = 0; v < V_COUNT; v++) b->calls[v] = p->calls;
    /* What does not grow with n gets as many calls at every size. */
    b->calls[V_FUTEX_SPIN] = b->calls[V_FUTEX_SLEEP] = b->calls[V_PEEK_ARENA] = BASELINE_CALLS;
    b->calls[V_MEMCPY] = p->n <= 1000 ? 10 * p->calls : p->calls; /* tiny copies: more per batch */
    b->xa = tsr_component_alloc(b->noop, b->bytes);
    b->mdst = tsr_component_alloc(b->noop, b->bytes);
    b->xp = tsr_component_alloc(b->peek, b->bytes);
    b->xo = wb_alloc_plain(b->bytes);
    double *t[V_COUNT] = {0};
    int rc = -1, ok = b->xa && b->mdst && b->xp && b->xo;
    for (int v = 0; v < V_COUNT; v++)
        ok = ok && (t[v] = calloc((size_t)p->batches, sizeof(double)));
    if (!ok) {
        fprintf(stderr, "bench_worker: out of memory (n=%lld)\n", (long long)p->n);
        goto done;
    }
    fill(b->xa, p->n);
    fill(b->xp, p->n);
    fill(b->xo, p->n);
    memset(b->mdst, 0, b->bytes);
    b->in_a = (tsr_array){.data = b->xa, .dtype = TSR_FLOAT64, .rank = 1, .shape = {p->n}};
    b->in_p = b->in_a;
    b->in_p.data = b->xp;
    b->in_o = b->in_a;
    b->in_o.data = b->xo;
    if (check(b) != 0) goto done;

    /* Interleave the variants and rotate their order every round. */
    for (int k = 0; k < p->batches; k++) {
        for (int j = 0; j < V_COUNT; j++) {
            int v = (k + j) % V_COUNT;
            if ((t[v][k] = batch(b, v)) < 0) {
                fprintf(stderr, "bench_worker: %s call failed (n=%lld)\n", vname[v],
                        (long long)p->n);
                goto done;
            }
        }
    }
    wb_row *rows[V_COUNT];
    for (int v = 0; v < V_COUNT; v++) {
        if (!(rows[v] = report_add(r, "roundtrip", vname[v]))) goto done;
        rows[v]->n = p->n;
        rows[v]->calls = b->calls[v];
        rows[v]->batches = p->batches;
        row_stats(rows[v], t[v], (size_t)p->batches);
    }
    for (int v = 0; v < V_COUNT; v++) {
        if (v == V_FUTEX_SPIN || v == V_MEMCPY) continue;
        rows[v]->ratio = rows[v]->median / rows[V_FUTEX_SPIN]->median;
        rows[v]->ratio_to = "futex-spin";
    }
    for (int v = V_ARENA; v <= V_COPY; v++)
        rows[v]->minus_memcpy = rows[v]->median - rows[V_MEMCPY]->median;
    rc = 0;
done:
    for (int v = 0; v < V_COUNT; v++) free(t[v]);
    tsr_component_free_buffer(b->noop, b->xa);
    tsr_component_free_buffer(b->noop, b->mdst);
    tsr_component_free_buffer(b->peek, b->xp);
    free(b->xo);
    return rc;
}

int section_roundtrip(const wb_config *cfg, wb_report *r) {
    pingpong pp;
    /* Forked before any worker exists, so the child holds none of their fds. */
    if (pingpong_start(&pp) != 0) {
        perror("bench_worker: cannot start the futex ping-pong");
        pingpong_stop(&pp);
        return -1;
    }
    rt b = {.pp = &pp};
    int rc = -1;
    b.noop = wb_open_worker(cfg->noop, NULL, -1);
    b.peek = b.noop ? wb_open_worker(cfg->peek, NULL, -1) : NULL;
    if (b.peek) {
        b.noop_call = tsr_call_new(b.noop, TSR_EP_APPLY);
        b.peek_call = tsr_call_new(b.peek, TSR_EP_APPLY);
    }
    if (b.noop_call && b.peek_call) {
        rc = 0;
        for (size_t i = 0; i < N_PLANS && rc == 0; i++) {
            plan p = plans[i];
            if (cfg->quick) p.batches = p.batches / 5 + 1;
            rc = measure(&p, &b, r);
        }
    }
    tsr_call_free(b.noop_call);
    tsr_call_free(b.peek_call);
    tsr_close(b.noop);
    tsr_close(b.peek);
    pingpong_stop(&pp);
    return rc;
}
