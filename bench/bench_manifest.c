/* SPDX-License-Identifier: MIT */
/*
 * Per-call overhead of a manifest component (a legacy routine called
 * through libffi, no glue code) against the same routine wrapped by a
 * compiled plugin, measured in the same run.
 *
 * The routine is z = a x + y of libbench_axpy.so, in two signatures:
 *   c        bench_axpy(int n, double a, const double *x, const double *y, double *z)
 *   fortran  bench_axpy_ref_(&n, &a, x, y, z, &info): all by address, plus INFO
 * Four ways of calling it, timed in interleaved batches:
 *   direct    the routine through its dlsym'd address: the floor
 *   ffi_call  libffi's call with a prepared interface and ready arguments:
 *             what libffi itself costs
 *   plugin    a reused tsr_call (3 x tsr_call_set_input + tsr_call_run) on
 *             a compiled plugin whose apply calls the routine
 *   manifest  the same loop on the manifest that names the routine
 * The overhead of the manifest is median(manifest) - median(plugin), per
 * call; budget 100 ns. Prints a table, writes CSV and exits 0 once it has
 * measured: it is a report, not a test.
 */
#include <dlfcn.h>
#include <errno.h>
#include <ffi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "bench_util.h"

#ifndef TSR_BENCH_AXPY_DIR
#define TSR_BENCH_AXPY_DIR "bench/plugins"
#endif
#ifndef TSR_BENCH_CSV_DEFAULT
#define TSR_BENCH_CSV_DEFAULT "bench/results/manifest.csv"
#endif

#define BUDGET_NS 100.0

enum { V_DIRECT, V_FFI, V_PLUGIN, V_MANIFEST, V_COUNT };
static const char *const variant_name[V_COUNT] = {"direct", "ffi_call", "plugin", "manifest"};

typedef struct flavour {
    const char *name;
    const char *plugin;     /* file in TSR_BENCH_AXPY_DIR */
    const char *manifest;
    const char *symbol;
    int by_reference;
} flavour;

static const flavour flavours[] = {
    {"c", "axpy_plugin.so", "axpy.json", "bench_axpy", 0},
    {"fortran", "axpy_ref_plugin.so", "axpy_ref.json", "bench_axpy_ref_", 1},
};
#define N_FLAVOURS (sizeof flavours / sizeof flavours[0])

typedef struct plan {
    int64_t n;
    int calls;
    int batches;
} plan;

static const plan plans[] = {{1, 4000, 401}, {100, 2000, 401}};
#define N_PLANS (sizeof plans / sizeof plans[0])

typedef void (*axpy_fn)(int32_t, double, const double *, const double *, double *);
typedef void (*axpy_ref_fn)(const int32_t *, const double *, const double *, const double *,
                            double *, int32_t *);

/* Everything one (flavour, n) case needs. */
typedef struct bench {
    const flavour *f;
    const plan *p;
    double *x, *y, *z[V_COUNT], a;
    int32_t n32, info;
    void (*routine)(void);
    /* ffi_call */
    ffi_cif cif;
    ffi_type *types[6];
    void *avalues[6];
    const double *px, *py, *pa;
    int32_t *pn, *pinfo;
    double *pz;
    /* plugin, manifest */
    tsr_call *call[V_COUNT];
    tsr_array ax, ay, aa;
} bench;

static int run_direct(bench *b, int calls) {
    if (b->f->by_reference) {
        axpy_ref_fn fn;
        memcpy(&fn, &b->routine, sizeof fn);
        for (int i = 0; i < calls; i++) {
            fn(&b->n32, &b->a, b->x, b->y, b->z[V_DIRECT], &b->info);
            bench_clobber(b->z[V_DIRECT]);
        }
        return b->info;
    }
    axpy_fn fn;
    memcpy(&fn, &b->routine, sizeof fn);
    for (int i = 0; i < calls; i++) {
        fn(b->n32, b->a, b->x, b->y, b->z[V_DIRECT]);
        bench_clobber(b->z[V_DIRECT]);
    }
    return 0;
}

static int run_ffi(bench *b, int calls) {
    for (int i = 0; i < calls; i++) {
        ffi_call(&b->cif, b->routine, NULL, b->avalues);
        bench_clobber(b->z[V_FFI]);
    }
    return b->info;
}

static int run_component(bench *b, int v, int calls) {
    int bad = 0;
    tsr_call *call = b->call[v];
    for (int i = 0; i < calls; i++) {
        bad |= tsr_call_set_input(call, "x", &b->ax);
        bad |= tsr_call_set_input(call, "y", &b->ay);
        bad |= tsr_call_set_input(call, "a", &b->aa);
        bad |= tsr_call_run(call);
    }
    return bad;
}

/* One batch; ns per call, or a negative value if a call failed. */
static double run_batch(bench *b, int v) {
    int calls = b->p->calls, bad;
    int64_t t0 = bench_now_ns();
    switch (v) {
    case V_DIRECT: bad = run_direct(b, calls); break;
    case V_FFI: bad = run_ffi(b, calls); break;
    default: bad = run_component(b, v, calls); break;
    }
    int64_t t1 = bench_now_ns();
    return bad ? -1.0 : (double)(t1 - t0) / calls;
}

static int prepare_ffi(bench *b) {
    b->pn = &b->n32;
    b->pa = &b->a;
    b->px = b->x;
    b->py = b->y;
    b->pz = b->z[V_FFI];
    b->pinfo = &b->info;
    int nargs;
    if (b->f->by_reference) {
        for (int i = 0; i < 6; i++) b->types[i] = &ffi_type_pointer;
        void *values[6] = {&b->pn, &b->pa, &b->px, &b->py, &b->pz, &b->pinfo};
        memcpy(b->avalues, values, sizeof values);
        nargs = 6;
    } else {
        ffi_type *types[5] = {&ffi_type_sint32, &ffi_type_double, &ffi_type_pointer,
                              &ffi_type_pointer, &ffi_type_pointer};
        void *values[5] = {&b->n32, &b->a, &b->px, &b->py, &b->pz};
        memcpy(b->types, types, sizeof types);
        memcpy(b->avalues, values, sizeof values);
        nargs = 5;
    }
    return ffi_prep_cif(&b->cif, FFI_DEFAULT_ABI, (unsigned)nargs, &ffi_type_void, b->types) ==
                   FFI_OK
               ? 0
               : -1;
}

/* Every way must produce the same z before its timings mean anything. */
static int check_outputs(bench *b) {
    size_t bytes = (size_t)b->p->n * sizeof(double);
    for (int v = V_PLUGIN; v < V_COUNT; v++) {
        const tsr_array *z = tsr_call_result(b->call[v], 0);
        if (!z || memcmp(z->data, b->z[V_DIRECT], bytes) != 0) return -1;
    }
    if (memcmp(b->z[V_FFI], b->z[V_DIRECT], bytes) != 0) return -1;
    for (int64_t i = 0; i < b->p->n; i++)
        if (b->z[V_DIRECT][i] != b->a * b->x[i] + b->y[i]) return -1;
    return 0;
}

typedef struct stats {
    double p10, median, p90;
} stats;

typedef struct row {
    const flavour *f;
    int64_t n;
    int calls, batches;
    stats s[V_COUNT];
    double paired; /* median over rounds of manifest - plugin */
} row;

static double overhead(const row *r) { return r->s[V_MANIFEST].median - r->s[V_PLUGIN].median; }

static int measure(bench *b, row *out) {
    const plan *p = b->p;
    double *t[V_COUNT + 1];
    int rc = -1;
    for (int v = 0; v <= V_COUNT; v++) t[v] = calloc((size_t)p->batches, sizeof(double));
    for (int v = 0; v <= V_COUNT; v++)
        if (!t[v]) goto done;
    for (int v = 0; v < V_COUNT; v++)   /* warm-up: caches, result buffers */
        if (run_batch(b, v) < 0) {
            fprintf(stderr, "bench_manifest: %s/%s failed: %s\n", b->f->name, variant_name[v],
                    v >= V_PLUGIN ? tsr_call_errmsg(b->call[v]) : "the routine's status");
            goto done;
        }
    if (check_outputs(b) != 0) {
        fprintf(stderr, "bench_manifest: %s (n=%lld): the variants disagree on z\n", b->f->name,
                (long long)p->n);
        goto done;
    }
    /* Interleave the variants and rotate their order every round, so that
     * drift and neighbours' noise fall on all of them alike. */
    for (int r = 0; r < p->batches; r++) {
        for (int k = 0; k < V_COUNT; k++) {
            int v = (r + k) % V_COUNT;
            if ((t[v][r] = run_batch(b, v)) < 0) {
                fprintf(stderr, "bench_manifest: %s/%s failed\n", b->f->name, variant_name[v]);
                goto done;
            }
        }
        t[V_COUNT][r] = t[V_MANIFEST][r] - t[V_PLUGIN][r];
    }
    *out = (row){.f = b->f, .n = p->n, .calls = p->calls, .batches = p->batches};
    for (int v = 0; v < V_COUNT; v++) {
        out->s[v].p10 = bench_quantile(t[v], (size_t)p->batches, 0.10);
        out->s[v].median = bench_quantile(t[v], (size_t)p->batches, 0.50);
        out->s[v].p90 = bench_quantile(t[v], (size_t)p->batches, 0.90);
    }
    out->paired = bench_quantile(t[V_COUNT], (size_t)p->batches, 0.50);
    rc = 0;
done:
    for (int v = 0; v <= V_COUNT; v++) free(t[v]);
    return rc;
}

static tsr_component *open_component(const char *file) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TSR_BENCH_AXPY_DIR, file);
    tsr_error err = TSR_ERROR_INIT;
    tsr_component *c = NULL;
    if (tsr_open(path, NULL, &c, &err) != 0) fprintf(stderr, "bench_manifest: %s\n", err.message);
    return c;
}

/* One flavour at one size: set up, measure, tear down. */
static int run_case(const flavour *f, const plan *p, void *lib, row *out) {
    bench b = {.f = f, .p = p, .a = 0.75, .n32 = (int32_t)p->n};
    tsr_component *plugin = open_component(f->plugin), *manifest = open_component(f->manifest);
    int rc = -1;
    void *sym = dlsym(lib, f->symbol);
    b.x = calloc((size_t)p->n, sizeof(double));
    b.y = calloc((size_t)p->n, sizeof(double));
    for (int v = 0; v < V_COUNT; v++) b.z[v] = calloc((size_t)p->n, sizeof(double));
    if (!plugin || !manifest || !sym || !b.x || !b.y || !b.z[0] || !b.z[1] || !b.z[2] ||
        !b.z[3]) {
        if (!sym) fprintf(stderr, "bench_manifest: %s: %s\n", f->symbol, dlerror());
        goto done;
    }
    memcpy(&b.routine, &sym, sizeof b.routine);
    for (int64_t i = 0; i < p->n; i++) {
        b.x[i] = 0.5 + (double)i;
        b.y[i] = 1.0 - 0.25 * (double)i;
    }
    b.ax = (tsr_array){.data = b.x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {p->n}};
    b.ay = (tsr_array){.data = b.y, .dtype = TSR_FLOAT64, .rank = 1, .shape = {p->n}};
    b.aa = (tsr_array){.data = &b.a, .dtype = TSR_FLOAT64, .rank = 0};
    b.call[V_PLUGIN] = tsr_call_new(plugin, TSR_EP_APPLY);
    b.call[V_MANIFEST] = tsr_call_new(manifest, TSR_EP_APPLY);
    if (!b.call[V_PLUGIN] || !b.call[V_MANIFEST] || prepare_ffi(&b) != 0) {
        fprintf(stderr, "bench_manifest: cannot set up %s (n=%lld)\n", f->name, (long long)p->n);
        goto done;
    }
    rc = measure(&b, out);
done:
    tsr_call_free(b.call[V_PLUGIN]);
    tsr_call_free(b.call[V_MANIFEST]);
    tsr_close(plugin);
    tsr_close(manifest);
    free(b.x);
    free(b.y);
    for (int v = 0; v < V_COUNT; v++) free(b.z[v]);
    return rc;
}

/* ---- report ------------------------------------------------------------- */

static const char *verdict(const row *r) { return overhead(r) <= BUDGET_NS ? "PASS" : "OVER"; }

static void print_table(const row *rows, size_t n_rows) {
    printf("%-8s %5s  %-9s %7s %7s %9s %10s %9s %13s %8s  %s\n", "routine", "n", "variant",
           "calls", "batches", "p10 ns", "median ns", "p90 ns", "vs plugin ns", "ratio",
           "budget");
    for (size_t i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        for (int v = 0; v < V_COUNT; v++) {
            printf("%-8s %5lld  %-9s %7d %7d %9.1f %10.1f %9.1f", r->f->name, (long long)r->n,
                   variant_name[v], r->calls, r->batches, r->s[v].p10, r->s[v].median,
                   r->s[v].p90);
            if (v == V_MANIFEST)
                printf(" %13.1f %7.2fx  %s", overhead(r),
                       r->s[V_MANIFEST].median / r->s[V_PLUGIN].median, verdict(r));
            printf("\n");
        }
    }
}

static int write_csv(const char *path, const row *rows, size_t n_rows) {
    FILE *f = bench_open_csv("bench_manifest", path);
    if (!f) return -1;
    fprintf(f, "routine,n,variant,calls_per_batch,batches,p10_ns,median_ns,p90_ns,"
               "overhead_vs_plugin_ns,paired_overhead_ns,ratio_vs_plugin,budget_ns,budget\n");
    for (size_t i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        for (int v = 0; v < V_COUNT; v++) {
            fprintf(f, "%s,%lld,%s,%d,%d,%.2f,%.2f,%.2f,", r->f->name, (long long)r->n,
                    variant_name[v], r->calls, r->batches, r->s[v].p10, r->s[v].median,
                    r->s[v].p90);
            if (v == V_MANIFEST)
                fprintf(f, "%.2f,%.2f,%.3f,%.0f,%s\n", overhead(r), r->paired,
                        r->s[V_MANIFEST].median / r->s[V_PLUGIN].median, BUDGET_NS, verdict(r));
            else
                fprintf(f, ",,,,\n");
        }
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_manifest: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: bench_manifest [--csv PATH] [--quick]\n"
            "  --csv PATH  where to write the results (default %s)\n"
            "  --quick     a fifth of the batches, for a smoke run\n",
            TSR_BENCH_CSV_DEFAULT);
}

int main(int argc, char **argv) {
    const char *csv_path = TSR_BENCH_CSV_DEFAULT;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
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
    void *lib = dlopen(TSR_BENCH_AXPY_DIR "/libbench_axpy.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "bench_manifest: %s\n", dlerror());
        return 1;
    }
    printf("tessera manifest call overhead: z = a x + y (libbench_axpy.so), in-process apply\n");
    printf("per-call times from interleaved batches; budget: manifest - plugin <= %.0f ns "
           "(median)\n\n",
           BUDGET_NS);
    row rows[N_FLAVOURS * N_PLANS];
    size_t n_rows = 0;
    int rc = 0;
    for (size_t f = 0; f < N_FLAVOURS && !rc; f++)
        for (size_t i = 0; i < N_PLANS && !rc; i++) {
            plan p = plans[i];
            if (quick) p.batches = p.batches / 5 + 1;
            if (run_case(&flavours[f], &p, lib, &rows[n_rows]) != 0) rc = 1;
            else n_rows++;
        }
    if (n_rows > 0) {
        print_table(rows, n_rows);
        if (write_csv(csv_path, rows, n_rows) == 0) printf("\nwrote %s\n", csv_path);
    }
    dlclose(lib);
    return rc;
}
