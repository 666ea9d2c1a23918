/* SPDX-License-Identifier: MIT */
/*
 * In-process call overhead of `apply`, measured on the noop plugin (y = x).
 *
 * Ways of doing the same work, timed in interleaved batches:
 *   direct   the plugin's own apply, called through the pointer in its
 *            descriptor with pre-built tsr_args and a minimal tsr_ctx: the
 *            floor, with no host involved
 *   library  a reused tsr_call: tsr_call_set_input + tsr_call_run, the
 *            normal hot loop of a host (validation, dispatch, clearing the
 *            result before the plugin writes it, result checks)
 *   untimed  the same with option call_timing=off: the run reads no clock
 *            (tsr_stats' endpoint_ns stays 0), what the dispatch costs
 *   keep     the same with options unwritten=keep and call_timing=off:
 *            the result is not cleared and the run reads no clock (a host
 *            that trusts its plugin to write every result and needs no
 *            per-endpoint time in tsr_stats)
 *   memcpy   memcpy of the same bytes: what the noop's work costs alone
 *   memset   memset of the result's bytes: what clearing it costs alone
 *
 * The overhead of the library is median(library) - median(direct) -
 * median(memset) per call: what it adds beyond the plugin's work and the
 * clearing that keeps one call's bytes out of the next call's result (the
 * same for untimed); the keep row shows median(keep) - median(direct).
 * Budgets: 50 ns for untimed and keep (the dispatch, validation and result
 * checks), 100 ns for library, which also times each call for tsr_stats
 * (two CLOCK_MONOTONIC reads, the default).
 * Second order, on the rosenbrock plugin: vjp and hvp over x (value's
 * cotangent 1, a random tangent), each a reused tsr_call, in interleaved
 * batches at n = 10, 1 000 and 100 000. The hvp row's overhead is
 * median(hvp) - median(vjp) and its budget median(vjp): hvp <= 2 x vjp,
 * what a Hessian-vector product by one more adjoint-like pass costs.
 * It prints a table, writes CSV and always exits 0 once it has measured:
 * it is a report, not a test.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "bench_util.h"

#ifndef TSR_BENCH_NOOP_PLUGIN
#define TSR_BENCH_NOOP_PLUGIN "plugins/noop.so"
#endif
#ifndef TSR_BENCH_ROSENBROCK_PLUGIN
#define TSR_BENCH_ROSENBROCK_PLUGIN "plugins/rosenbrock.so"
#endif
#ifndef TSR_BENCH_CSV_DEFAULT
#define TSR_BENCH_CSV_DEFAULT "bench/results/inproc.csv"
#endif

/* The budget applies to arrays up to this many elements, where the
 * overhead is not hidden by the copy itself. */
#define BUDGET_NS 50.0
#define BUDGET_TIMED_NS 100.0
#define BUDGET_MAX_N 1000

enum { V_DIRECT, V_LIBRARY, V_UNTIMED, V_KEEP, V_MEMCPY, V_MEMSET, V_COUNT };
static const char *const variant_name[V_COUNT] = {"direct", "library", "untimed", "keep",
                                                  "memcpy", "memset"};
/* The variants that go through the library, each on its own component. */
#define IS_CALL(v) ((v) >= V_LIBRARY && (v) <= V_KEEP)

/* Calls per batch are chosen so that a batch lasts ~0.1-2 ms: long enough to
 * hide the clock, short enough that noise hits few batches. */
typedef struct plan {
    int64_t n;
    int calls;
    int batches;
} plan;

static const plan plans[] = {
    {1, 5000, 501},
    {1000, 500, 501},
    {1000000, 4, 101},
};
#define N_PLANS (sizeof plans / sizeof plans[0])

/* ---- the direct baseline: a host reduced to nothing --------------------- */

static void host_set_error(tsr_ctx *ctx, const char *message) {
    (void)ctx;
    fprintf(stderr, "bench_inproc: plugin error: %s\n", message);
}

/* noop's output shape follows from its input, so this is never needed. */
static void *host_alloc_result(tsr_ctx *ctx, int32_t index) {
    (void)ctx;
    (void)index;
    return NULL;
}

static void host_log(tsr_ctx *ctx, tsr_log_level level, const char *message) {
    (void)ctx;
    (void)level;
    (void)message;
}

static const char *host_config(tsr_ctx *ctx, const char *key) {
    (void)ctx;
    (void)key;
    return NULL;
}

static const tsr_host_api min_host = {
    .struct_size = sizeof(tsr_host_api),
    .set_error = host_set_error,
    .alloc_result = host_alloc_result,
    .log = host_log,
    .config = host_config,
};

typedef struct direct {
    void *dl;
    const tsr_plugin *plugin;
    tsr_ctx ctx;
} direct;

static int direct_open(direct *d, const char *path) {
    memset(d, 0, sizeof *d);
    d->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!d->dl) {
        fprintf(stderr, "bench_inproc: %s\n", dlerror());
        return -1;
    }
    tsr_plugin_entry_fn entry;
    *(void **)&entry = dlsym(d->dl, TSR_PLUGIN_ENTRY_SYMBOL);
    const tsr_plugin *pl = entry ? entry(TSR_PLUGIN_ABI_VERSION) : NULL;
    if (!pl || !pl->apply || pl->n_inputs < 1 || pl->n_outputs < 1) {
        fprintf(stderr, "bench_inproc: %s: no usable descriptor\n", path);
        return -1;
    }
    d->plugin = pl;
    d->ctx = (tsr_ctx){.struct_size = sizeof(tsr_ctx), .host = &min_host};
    if (d->plugin->init && d->plugin->init(&d->ctx, &d->ctx.state) != 0) {
        fprintf(stderr, "bench_inproc: %s: init failed\n", path);
        d->plugin = NULL; /* no fini after a failed init */
        return -1;
    }
    return 0;
}

static void direct_close(direct *d) {
    if (d->plugin && d->plugin->fini) d->plugin->fini(d->ctx.state);
    if (d->dl) dlclose(d->dl);
}

/* ---- one size ------------------------------------------------------------- */

typedef struct bench {
    const plan *p;
    size_t bytes;
    /* direct */
    direct *d;
    tsr_array d_in, d_out;
    tsr_args d_args;
    /* library, untimed (call_timing=off), keep (unwritten=keep too) */
    tsr_call *calls[V_COUNT];
    const char *in_name;
    tsr_array l_in;
    /* memcpy */
    void *src, *dst;
} bench;

/* One batch of one variant; returns ns per call, or a negative value if a
 * call failed. */
static double run_batch(bench *b, int v) {
    int calls = b->p->calls, bad = 0;
    int64_t t0 = bench_now_ns();
    switch (v) {
    case V_DIRECT: {
        tsr_endpoint_fn apply = b->d->plugin->apply;
        for (int i = 0; i < calls; i++) bad |= apply(&b->d->ctx, &b->d_args);
        break;
    }
    case V_LIBRARY:
    case V_UNTIMED:
    case V_KEEP: {
        tsr_call *call = b->calls[v];
        for (int i = 0; i < calls; i++) {
            bad |= tsr_call_set_input(call, b->in_name, &b->l_in);
            bad |= tsr_call_run(call);
        }
        break;
    }
    case V_MEMSET:
        for (int i = 0; i < calls; i++) {
            memset(b->dst, 0, b->bytes);
            bench_clobber(b->dst);
        }
        break;
    default:
        for (int i = 0; i < calls; i++) {
            memcpy(b->dst, b->src, b->bytes);
            bench_clobber(b->dst);
        }
        break;
    }
    int64_t t1 = bench_now_ns();
    return bad ? -1.0 : (double)(t1 - t0) / calls;
}

/* Both paths must produce y == x before their timings mean anything. */
static int check_outputs(bench *b) {
    for (int v = V_LIBRARY; v <= V_KEEP; v++) {
        const tsr_array *y = tsr_call_result(b->calls[v], 0);
        if (!y || !y->data || memcmp(y->data, b->src, b->bytes) != 0) {
            fprintf(stderr, "bench_inproc: %s result differs from input (n=%lld)\n",
                    variant_name[v], (long long)b->p->n);
            return -1;
        }
    }
    if (memcmp(b->d_out.data, b->src, b->bytes) != 0) {
        fprintf(stderr, "bench_inproc: direct result differs from input (n=%lld)\n",
                (long long)b->p->n);
        return -1;
    }
    return 0;
}

typedef struct stats {
    double p10, median, p90;
} stats;

typedef struct row {
    int64_t n;
    int calls, batches;
    stats s[V_COUNT];
    double paired_overhead; /* median over rounds of library - direct - memset */
} row;

static void *alloc_aligned(size_t bytes) {
    size_t rounded = (bytes + 63) / 64 * 64;
    return aligned_alloc(64, rounded ? rounded : 64);
}

static int measure(const plan *p, direct *d, tsr_component *const comps[V_COUNT], row *out) {
    tsr_component *c = comps[V_LIBRARY];
    const tsr_field *fin = tsr_component_input(c, 0), *fout = tsr_component_output(c, 0);
    size_t esize = tsr_dtype_size(fin->dtype);
    bench b = {.p = p, .bytes = (size_t)p->n * esize, .d = d, .in_name = fin->name};
    void *d_dst = NULL;
    double *t[V_COUNT + 1] = {0};
    int rc = -1;

    b.src = alloc_aligned(b.bytes);
    b.dst = alloc_aligned(b.bytes);
    d_dst = alloc_aligned(b.bytes);
    for (int v = 0; v <= V_COUNT; v++) t[v] = calloc((size_t)p->batches, sizeof(double));
    int have = b.src && b.dst && d_dst;
    for (int v = V_LIBRARY; v <= V_KEEP; v++)
        have = have && (b.calls[v] = tsr_call_new(comps[v], TSR_EP_APPLY)) != NULL;
    for (int v = 0; v <= V_COUNT; v++) have = have && t[v];
    if (!have) {
        fprintf(stderr, "bench_inproc: out of memory (n=%lld)\n", (long long)p->n);
        goto done;
    }
    for (size_t i = 0; i < b.bytes; i++) ((unsigned char *)b.src)[i] = (unsigned char)(i * 7 + 1);
    memset(b.dst, 0, b.bytes);
    memset(d_dst, 0, b.bytes);

    b.l_in = (tsr_array){.data = b.src, .dtype = fin->dtype, .rank = 1, .shape = {p->n}};
    b.d_in = b.l_in;
    b.d_out = (tsr_array){.data = d_dst, .dtype = fout->dtype, .rank = 1, .shape = {p->n}};
    b.d_args = (tsr_args){
        .struct_size = sizeof(tsr_args),
        .endpoint = TSR_EP_APPLY,
        .inputs = &b.d_in,
        .n_inputs = 1,
        .results = &b.d_out,
        .n_results = 1,
    };

    /* Warm-up: fault the pages in, allocate the call's result buffer. */
    for (int v = 0; v < V_COUNT; v++) {
        if (run_batch(&b, v) < 0) {
            fprintf(stderr, "bench_inproc: %s call failed (n=%lld): %s\n", variant_name[v],
                    (long long)p->n,
                    IS_CALL(v) ? tsr_call_errmsg(b.calls[v]) : "see above");
            goto done;
        }
    }
    if (check_outputs(&b) != 0) goto done;

    /* Interleave the variants and rotate their order every round, so that
     * drift and neighbours' noise fall on all of them alike. */
    for (int r = 0; r < p->batches; r++) {
        for (int k = 0; k < V_COUNT; k++) {
            int v = (r + k) % V_COUNT;
            double ns = run_batch(&b, v);
            if (ns < 0) {
                fprintf(stderr, "bench_inproc: %s call failed (n=%lld)\n", variant_name[v],
                        (long long)p->n);
                goto done;
            }
            t[v][r] = ns;
        }
        t[V_COUNT][r] = t[V_LIBRARY][r] - t[V_DIRECT][r] - t[V_MEMSET][r];
    }

    out->n = p->n;
    out->calls = p->calls;
    out->batches = p->batches;
    for (int v = 0; v < V_COUNT; v++) {
        out->s[v].p10 = bench_quantile(t[v], (size_t)p->batches, 0.10);
        out->s[v].median = bench_quantile(t[v], (size_t)p->batches, 0.50);
        out->s[v].p90 = bench_quantile(t[v], (size_t)p->batches, 0.90);
    }
    out->paired_overhead = bench_quantile(t[V_COUNT], (size_t)p->batches, 0.50);
    rc = 0;
done:
    for (int v = V_LIBRARY; v <= V_KEEP; v++) tsr_call_free(b.calls[v]);
    for (int v = 0; v <= V_COUNT; v++) free(t[v]);
    free(b.src);
    free(b.dst);
    free(d_dst);
    return rc;
}

/* ---- report ------------------------------------------------------------- */

/* What variant v adds to the plugin's own work: for library and untimed,
 * beyond clearing the result too (memset); for keep, which clears nothing,
 * all of it. */
static double overhead_of(const row *r, int v) {
    double over = r->s[v].median - r->s[V_DIRECT].median;
    return v == V_KEEP ? over : over - r->s[V_MEMSET].median;
}

static double budget_of(int v) { return v == V_LIBRARY ? BUDGET_TIMED_NS : BUDGET_NS; }

static const char *verdict(const row *r, int v) {
    if (r->n > BUDGET_MAX_N) return "-";
    return overhead_of(r, v) <= budget_of(v) ? "PASS" : "OVER";
}

static void print_table(const row *rows, size_t n_rows) {
    printf("%9s  %-8s %7s %7s %10s %10s %10s %11s %8s  %s\n", "n", "variant", "calls", "batches",
           "p10 ns", "median ns", "p90 ns", "overhead ns", "ratio", "budget");
    for (size_t i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        for (int v = 0; v < V_COUNT; v++) {
            printf("%9lld  %-8s %7d %7d %10.1f %10.1f %10.1f", (long long)r->n, variant_name[v],
                   r->calls, r->batches, r->s[v].p10, r->s[v].median, r->s[v].p90);
            if (IS_CALL(v))
                printf(" %11.1f %7.2fx  %s", overhead_of(r, v), r->s[v].median / r->s[V_DIRECT].median,
                       verdict(r, v));
            printf("\n");
        }
    }
}

static int write_csv(const char *path, const row *rows, size_t n_rows, const char *dtype) {
    FILE *f = bench_open_csv("bench_inproc", path);
    if (!f) return -1;
    fprintf(f, "n,dtype,bytes,variant,calls_per_batch,batches,p10_ns,median_ns,p90_ns,"
               "overhead_ns,paired_overhead_ns,ratio,budget_ns,budget\n");
    for (size_t i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        size_t bytes = (size_t)r->n * tsr_dtype_size((tsr_dtype)tsr_dtype_from_name(dtype));
        for (int v = 0; v < V_COUNT; v++) {
            fprintf(f, "%lld,%s,%zu,%s,%d,%d,%.2f,%.2f,%.2f,", (long long)r->n, dtype, bytes,
                    variant_name[v], r->calls, r->batches, r->s[v].p10, r->s[v].median,
                    r->s[v].p90);
            if (IS_CALL(v))
                fprintf(f, "%.2f,%.2f,%.3f,%.0f,%s\n", overhead_of(r, v),
                        v == V_LIBRARY ? r->paired_overhead : overhead_of(r, v),
                        r->s[v].median / r->s[V_DIRECT].median, budget_of(v), verdict(r, v));
            else
                fprintf(f, ",,,,\n");
        }
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_inproc: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- second order: rosenbrock's hvp against its vjp ---------------------- */

enum { S_VJP, S_HVP, S_COUNT };
static const char *const second_name[S_COUNT] = {"vjp", "hvp"};

typedef struct second_row {
    int64_t n;
    int calls, batches;
    stats s[S_COUNT];
} second_row;

static const plan second_plans[] = {
    {10, 5000, 201},
    {1000, 500, 201},
    {100000, 5, 101},
};
#define N_SECOND (sizeof second_plans / sizeof second_plans[0])

static double run_second(tsr_call *call, int calls) {
    int bad = 0;
    int64_t t0 = bench_now_ns();
    for (int i = 0; i < calls; i++) bad |= tsr_call_run(call);
    int64_t t1 = bench_now_ns();
    return bad ? -1.0 : (double)(t1 - t0) / calls;
}

/* One size: both calls set up at x (a random point), timed in rotating
 * interleaved batches. */
static int measure_second(tsr_component *c, const plan *p, second_row *out) {
    int64_t n = p->n;
    double *x = malloc((size_t)n * sizeof *x), *t = malloc((size_t)n * sizeof *t);
    double a = 1, b = 100, w = 1;
    double *times[S_COUNT] = {calloc((size_t)p->batches, sizeof(double)),
                              calloc((size_t)p->batches, sizeof(double))};
    tsr_call *calls[S_COUNT] = {tsr_call_new(c, TSR_EP_VJP), tsr_call_new(c, TSR_EP_HVP)};
    int rc = -1;
    if (!x || !t || !times[0] || !times[1] || !calls[0] || !calls[1]) {
        fprintf(stderr, "bench_inproc: out of memory (rosenbrock, n=%lld)\n", (long long)n);
        goto done;
    }
    uint64_t s = 12345;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (double)(s >> 11) * 0x1.0p-53 * 2 - 1;
        t[i] = (double)((s >> 7) & 0xffff) / 65536.0 - 0.5;
    }
    tsr_array ax = {.data = x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {n}};
    tsr_array aa = {.data = &a, .dtype = TSR_FLOAT64}, ab = {.data = &b, .dtype = TSR_FLOAT64};
    tsr_array aw = {.data = &w, .dtype = TSR_FLOAT64};
    tsr_array at = {.data = t, .dtype = TSR_FLOAT64, .rank = 1, .shape = {n}};
    const char *in[] = {"x"}, *outs[] = {"value"};
    for (int k = 0; k < S_COUNT; k++) {
        int bad = tsr_call_set_input(calls[k], "x", &ax) || tsr_call_set_input(calls[k], "a", &aa) ||
                  tsr_call_set_input(calls[k], "b", &ab) ||
                  tsr_call_set_wrt(calls[k], in, 1, outs, 1) ||
                  tsr_call_set_seed(calls[k], "value", &aw) ||
                  (k == S_HVP && tsr_call_set_tangent(calls[k], "x", &at));
        if (bad || run_second(calls[k], 1) < 0) {   /* warm-up: results allocated */
            fprintf(stderr, "bench_inproc: rosenbrock %s failed (n=%lld): %s\n", second_name[k],
                    (long long)n, tsr_call_errmsg(calls[k]));
            goto done;
        }
    }
    for (int r = 0; r < p->batches; r++)
        for (int k = 0; k < S_COUNT; k++) {
            int v = (r + k) % S_COUNT;
            double ns = run_second(calls[v], p->calls);
            if (ns < 0) {
                fprintf(stderr, "bench_inproc: rosenbrock %s failed (n=%lld)\n", second_name[v],
                        (long long)n);
                goto done;
            }
            times[v][r] = ns;
        }
    out->n = n;
    out->calls = p->calls;
    out->batches = p->batches;
    for (int v = 0; v < S_COUNT; v++) {
        out->s[v].p10 = bench_quantile(times[v], (size_t)p->batches, 0.10);
        out->s[v].median = bench_quantile(times[v], (size_t)p->batches, 0.50);
        out->s[v].p90 = bench_quantile(times[v], (size_t)p->batches, 0.90);
    }
    rc = 0;
done:
    for (int k = 0; k < S_COUNT; k++) {
        tsr_call_free(calls[k]);
        free(times[k]);
    }
    free(x);
    free(t);
    return rc;
}

/* hvp's overhead over vjp and its budget: one more vjp. */
static double second_overhead(const second_row *r) { return r->s[S_HVP].median - r->s[S_VJP].median; }
static const char *second_verdict(const second_row *r) {
    return second_overhead(r) <= r->s[S_VJP].median ? "PASS" : "OVER";
}

static void print_second(const second_row *rows, size_t n_rows) {
    printf("\nrosenbrock (n coordinates), hvp against vjp; budget: hvp <= 2 x vjp (overhead = "
           "median(hvp) - median(vjp) <= median(vjp))\n");
    printf("%9s  %-8s %7s %7s %10s %10s %10s %11s %8s  %s\n", "n", "variant", "calls", "batches",
           "p10 ns", "median ns", "p90 ns", "overhead ns", "ratio", "budget");
    for (size_t i = 0; i < n_rows; i++) {
        const second_row *r = &rows[i];
        for (int v = 0; v < S_COUNT; v++) {
            printf("%9lld  %-8s %7d %7d %10.1f %10.1f %10.1f", (long long)r->n, second_name[v],
                   r->calls, r->batches, r->s[v].p10, r->s[v].median, r->s[v].p90);
            if (v == S_HVP)
                printf(" %11.1f %7.2fx  %s", second_overhead(r),
                       r->s[S_HVP].median / r->s[S_VJP].median, second_verdict(r));
            printf("\n");
        }
    }
}

/* Appended to the CSV in its columns: variant rosenbrock_vjp /
 * rosenbrock_hvp; the hvp row's budget_ns is median(vjp). */
static int append_second_csv(const char *path, const second_row *rows, size_t n_rows) {
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "bench_inproc: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < n_rows; i++) {
        const second_row *r = &rows[i];
        for (int v = 0; v < S_COUNT; v++) {
            fprintf(f, "%lld,float64,%zu,rosenbrock_%s,%d,%d,%.2f,%.2f,%.2f,", (long long)r->n,
                    (size_t)r->n * sizeof(double), second_name[v], r->calls, r->batches,
                    r->s[v].p10, r->s[v].median, r->s[v].p90);
            if (v == S_HVP)
                fprintf(f, "%.2f,%.2f,%.3f,%.0f,%s\n", second_overhead(r), second_overhead(r),
                        r->s[S_HVP].median / r->s[S_VJP].median, r->s[S_VJP].median,
                        second_verdict(r));
            else
                fprintf(f, ",,,,\n");
        }
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_inproc: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The second-order rows; 0 when rosenbrock is not there to measure. */
static int run_second_order(const char *path, const char *csv_path, int csv_ok, int quick) {
    tsr_component *c = NULL;
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_open(path, NULL, &c, &err) != 0) {
        fprintf(stderr, "bench_inproc: no second-order rows: %s\n", err.message);
        return 0;
    }
    second_row rows[N_SECOND];
    size_t n_rows = 0;
    int rc = 0;
    for (size_t i = 0; i < N_SECOND; i++) {
        plan p = second_plans[i];
        if (quick) p.batches = p.batches / 5 + 1;
        if (measure_second(c, &p, &rows[n_rows]) != 0) {
            rc = 1;
            break;
        }
        n_rows++;
    }
    if (n_rows > 0) {
        print_second(rows, n_rows);
        if (csv_ok && append_second_csv(csv_path, rows, n_rows) == 0)
            printf("\nappended the rosenbrock rows to %s\n", csv_path);
    }
    tsr_close(c);
    return rc;
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: bench_inproc [--plugin PATH] [--rosenbrock PATH] [--csv PATH] [--quick]\n"
            "  --plugin PATH  the noop plugin (default %s)\n"
            "  --rosenbrock PATH  the rosenbrock plugin, for hvp against vjp (default %s)\n"
            "  --csv PATH     where to write the results (default %s)\n"
            "  --quick        a fifth of the batches, for a smoke run\n",
            TSR_BENCH_NOOP_PLUGIN, TSR_BENCH_ROSENBROCK_PLUGIN, TSR_BENCH_CSV_DEFAULT);
}

int main(int argc, char **argv) {
    const char *plugin_path = TSR_BENCH_NOOP_PLUGIN, *csv_path = TSR_BENCH_CSV_DEFAULT;
    const char *rosen_path = TSR_BENCH_ROSENBROCK_PLUGIN;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) {
            plugin_path = argv[++i];
        } else if (strcmp(argv[i], "--rosenbrock") == 0 && i + 1 < argc) {
            rosen_path = argv[++i];
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv_path = argv[++i];
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }

    /* One component per way of calling: defaults; call_timing=off; and
     * unwritten=keep with call_timing=off. */
    static const char *const opts_of[V_COUNT][2][2] = {
        [V_UNTIMED] = {{"call_timing", "off"}},
        [V_KEEP] = {{"unwritten", "keep"}, {"call_timing", "off"}},
    };
    tsr_component *comps[V_COUNT] = {0};
    tsr_error err = TSR_ERROR_INIT;
    int opened = 0;
    for (int v = V_LIBRARY; v <= V_KEEP; v++) {
        tsr_options *o = tsr_options_new();
        int ok = o != NULL;
        for (int k = 0; ok && k < 2 && opts_of[v][k][0]; k++)
            ok = tsr_options_set(o, opts_of[v][k][0], opts_of[v][k][1], &err) == 0;
        ok = ok && tsr_open(plugin_path, o, &comps[v], &err) == 0;
        int had_options = o != NULL;
        tsr_options_free(o);
        if (!ok) {
            fprintf(stderr, "bench_inproc: %s\n", had_options ? err.message : "out of memory");
            break;
        }
        opened++;
    }
    tsr_component *c = comps[V_LIBRARY];
    /* The direct baseline builds its arguments by hand for y = f(x). */
    const tsr_field *fx = c ? tsr_component_input(c, 0) : NULL,
                    *fy = c ? tsr_component_output(c, 0) : NULL;
    direct d = {0};
    int ready = opened == V_KEEP - V_LIBRARY + 1;
    if (ready && (tsr_component_n_inputs(c) != 1 || tsr_component_n_outputs(c) != 1 ||
                  fx->rank != 1 || fy->rank != 1 || fx->dtype != fy->dtype)) {
        fprintf(stderr, "bench_inproc: %s: need a plugin shaped like noop "
                "(one rank-1 input, one rank-1 output of the same dtype)\n", plugin_path);
        ready = 0;
    }
    if (ready && direct_open(&d, plugin_path) != 0) {
        direct_close(&d);
        ready = 0;
    }
    if (!ready) {
        for (int v = 0; v < V_COUNT; v++) tsr_close(comps[v]);
        return 1;
    }

    const char *dtype = tsr_dtype_name(tsr_component_input(c, 0)->dtype);
    printf("tessera in-process apply overhead: plugin %s (%s), %s\n", tsr_component_name(c),
           plugin_path, dtype);
    printf("per-call times from interleaved batches; budgets (medians, n <= %d): "
           "library - direct - memset <= %.0f ns (each call timed, the default),\n"
           "untimed (call_timing=off) the same <= %.0f ns, keep (unwritten=keep, call_timing=off: "
           "no clearing nor clock) - direct <= %.0f ns\n\n",
           BUDGET_MAX_N, BUDGET_TIMED_NS, BUDGET_NS, BUDGET_NS);

    row rows[N_PLANS];
    size_t n_rows = 0;
    int rc = 0;
    for (size_t i = 0; i < N_PLANS; i++) {
        plan p = plans[i];
        if (quick) p.batches = p.batches / 5 + 1;
        if (measure(&p, &d, comps, &rows[n_rows]) != 0) {
            rc = 1;
            break;
        }
        n_rows++;
    }
    int csv_ok = 0;
    if (n_rows > 0) {
        print_table(rows, n_rows);
        csv_ok = write_csv(csv_path, rows, n_rows, dtype) == 0;
        if (csv_ok) printf("\nwrote %s\n", csv_path);
    }
    if (!rc) rc = run_second_order(rosen_path, csv_path, csv_ok, quick);
    direct_close(&d);
    for (int v = 0; v < V_COUNT; v++) tsr_close(comps[v]);
    return rc;
}
