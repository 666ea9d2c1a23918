/* SPDX-License-Identifier: MIT */
/*
 * What Tessera adds to a Model Exchange right-hand side call: the FMU
 * vanderpol.fmu opened as "#rhs" in-process and called through one reused
 * tsr_call (t, x and mu bound once; tsr_call_run; dx and y read), against
 * the same FMU's own functions called directly: its unpacked binary
 * dlopen'd, one instance made with fmi3InstantiateModelExchange and put in
 * Continuous-Time Mode, and per call fmi3SetTime + fmi3SetContinuousStates
 * + fmi3GetContinuousStateDerivatives + fmi3GetFloat64 (y), the four calls
 * the form makes. A third variant, `untimed`, is the library's call on a
 * component opened with call_timing=off (no clock read per call).
 *
 * Batches of consecutive calls of one variant give one per-call time each;
 * the variants' batches are interleaved and their order rotates every
 * round. Reported: p10, median and p90 over the batches (ns per call), the
 * overhead median(variant) - median(direct), the paired overhead (median of
 * the per-round differences), and the verdict on the budget: at most
 * 200 ns over the FMU's own calls. Idle, then beside --load N busy
 * processes (default: one per CPU; 0 for idle only). Before timing, the
 * library's dx and y are checked against the direct calls' (to the bit).
 * It exits 0 whatever the verdict; 1 when it cannot measure.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "bench_util.h"
#include "fmi3FunctionTypes.h"

#ifndef TSR_BENCH_FMU_DIR
#define TSR_BENCH_FMU_DIR "fmu"
#endif
#ifndef TSR_BENCH_CSV_DEFAULT
#define TSR_BENCH_CSV_DEFAULT "bench/results/fmu.csv"
#endif

#define BUDGET_NS 200.0
#define NX 2

enum { V_DIRECT, V_LIBRARY, V_UNTIMED, N_VARIANTS };
static const char *const variant_names[N_VARIANTS] = {"direct", "library", "untimed"};

/* The FMU's own functions, found by their standard names. */
typedef struct direct {
    void *dl;
    fmi3Instance inst;
    fmi3FreeInstanceTYPE *free_instance;
    fmi3SetTimeTYPE *set_time;
    fmi3SetContinuousStatesTYPE *set_states;
    fmi3GetContinuousStateDerivativesTYPE *get_derivatives;
    fmi3GetFloat64TYPE *get_float64;
    fmi3ValueReference y_vr;
} direct;

typedef struct point {
    double t, x[NX], mu;
    double dx[NX], y;
} point;

static void quiet_log(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                      fmi3String message) {
    (void)env, (void)status, (void)category, (void)message;
}

/* The file at path, NUL-terminated (malloc'd), or NULL. */
static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *more = realloc(buf, cap);
            if (!more) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = more;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

/* The value of attribute attr="..." (copied into out) inside the element
 * that holds needle, or inside the first element named tag when needle is
 * NULL. A benchmark's reading of its own FMU, not a parser. */
static int attribute(const char *xml, const char *needle, const char *attr, char *out, size_t n) {
    const char *at = strstr(xml, needle);
    if (!at) return -1;
    const char *open = at;
    while (open > xml && *open != '<') open--;
    const char *close = strchr(at, '>');
    char key[64];
    snprintf(key, sizeof key, " %s=\"", attr);
    const char *v = strstr(open, key);
    if (!v || !close || v > close) return -1;
    v += strlen(key);
    const char *end = strchr(v, '"');
    if (!end || (size_t)(end - v) >= n) return -1;
    memcpy(out, v, (size_t)(end - v));
    out[end - v] = '\0';
    return 0;
}

static void *find(direct *d, const char *name, int *missing) {
    void *f = dlsym(d->dl, name);
    if (!f) {
        fprintf(stderr, "bench_fmu: the FMU's binary does not export %s\n", name);
        *missing = 1;
    }
    return f;
}

static int ok(fmi3Status s, const char *fn) {
    if (s == fmi3OK || s == fmi3Warning) return 0;
    fprintf(stderr, "bench_fmu: %s returned status %d\n", fn, (int)s);
    return -1;
}

static void direct_close(direct *d) {
    if (d->inst && d->free_instance) d->free_instance(d->inst);
    if (d->dl) dlclose(d->dl);
    memset(d, 0, sizeof *d);
}

/* dir: the FMU's unpacked folder. Loads its binary, instantiates Model
 * Exchange with the description's token, sets mu, initialises at t and
 * enters Continuous-Time Mode. */
static int direct_open(direct *d, const char *dir, const point *p) {
    memset(d, 0, sizeof *d);
    char path[4096], token[512], vr[32], mu_vr[32];
    if (snprintf(path, sizeof path, "%s/modelDescription.xml", dir) >= (int)sizeof path) {
        fprintf(stderr, "bench_fmu: %s: the path is too long\n", dir);
        return -1;
    }
    char *xml = read_text(path);
    if (!xml) {
        fprintf(stderr, "bench_fmu: cannot read %s (build the FMUs first)\n", path);
        return -1;
    }
    int rc = attribute(xml, "<fmiModelDescription", "instantiationToken", token, sizeof token);
    if (!rc) rc = attribute(xml, "name=\"y\"", "valueReference", vr, sizeof vr);
    if (!rc) rc = attribute(xml, "name=\"mu\"", "valueReference", mu_vr, sizeof mu_vr);
    free(xml);
    if (rc) {
        fprintf(stderr, "bench_fmu: %s: no instantiationToken, or no variable y or mu\n", path);
        return -1;
    }
    d->y_vr = (fmi3ValueReference)strtoul(vr, NULL, 10);
    fmi3ValueReference mu_ref = (fmi3ValueReference)strtoul(mu_vr, NULL, 10);
    if (snprintf(path, sizeof path, "%s/binaries/x86_64-linux/vanderpol.so", dir) >=
        (int)sizeof path)
        return -1;
    d->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!d->dl) {
        fprintf(stderr, "bench_fmu: %s\n", dlerror());
        return -1;
    }
    int missing = 0;
    fmi3InstantiateModelExchangeTYPE *instantiate =
        (fmi3InstantiateModelExchangeTYPE *)find(d, "fmi3InstantiateModelExchange", &missing);
    fmi3SetFloat64TYPE *set_float64 = (fmi3SetFloat64TYPE *)find(d, "fmi3SetFloat64", &missing);
    fmi3EnterInitializationModeTYPE *enter_init =
        (fmi3EnterInitializationModeTYPE *)find(d, "fmi3EnterInitializationMode", &missing);
    fmi3ExitInitializationModeTYPE *exit_init =
        (fmi3ExitInitializationModeTYPE *)find(d, "fmi3ExitInitializationMode", &missing);
    fmi3UpdateDiscreteStatesTYPE *update =
        (fmi3UpdateDiscreteStatesTYPE *)find(d, "fmi3UpdateDiscreteStates", &missing);
    fmi3EnterContinuousTimeModeTYPE *continuous =
        (fmi3EnterContinuousTimeModeTYPE *)find(d, "fmi3EnterContinuousTimeMode", &missing);
    d->free_instance = (fmi3FreeInstanceTYPE *)find(d, "fmi3FreeInstance", &missing);
    d->set_time = (fmi3SetTimeTYPE *)find(d, "fmi3SetTime", &missing);
    d->set_states = (fmi3SetContinuousStatesTYPE *)find(d, "fmi3SetContinuousStates", &missing);
    d->get_derivatives = (fmi3GetContinuousStateDerivativesTYPE *)find(
        d, "fmi3GetContinuousStateDerivatives", &missing);
    d->get_float64 = (fmi3GetFloat64TYPE *)find(d, "fmi3GetFloat64", &missing);
    if (missing) return -1;
    if (snprintf(path, sizeof path, "%s/resources", dir) >= (int)sizeof path) return -1;
    d->inst = instantiate("bench", token, path, fmi3False, fmi3False, NULL, quiet_log);
    if (!d->inst) {
        fprintf(stderr, "bench_fmu: fmi3InstantiateModelExchange failed\n");
        return -1;
    }
    fmi3Boolean again = fmi3True, terminate, nominals, values, next_defined;
    fmi3Float64 next_time;
    if (ok(set_float64(d->inst, &mu_ref, 1, &p->mu, 1), "fmi3SetFloat64 (mu)") ||
        ok(enter_init(d->inst, fmi3False, 0.0, p->t, fmi3False, 0.0),
           "fmi3EnterInitializationMode") ||
        ok(exit_init(d->inst), "fmi3ExitInitializationMode"))
        return -1;
    for (int i = 0; again && i < 100; i++)
        if (ok(update(d->inst, &again, &terminate, &nominals, &values, &next_defined,
                      &next_time),
               "fmi3UpdateDiscreteStates"))
            return -1;
    return ok(continuous(d->inst), "fmi3EnterContinuousTimeMode");
}

/* One right-hand side evaluation with the FMU's own functions. */
static int direct_call(direct *d, point *p) {
    if (d->set_time(d->inst, p->t) > fmi3Warning) return -1;
    if (d->set_states(d->inst, p->x, NX) > fmi3Warning) return -1;
    if (d->get_derivatives(d->inst, p->dx, NX) > fmi3Warning) return -1;
    return d->get_float64(d->inst, &d->y_vr, 1, &p->y, 1) > fmi3Warning ? -1 : 0;
}

typedef struct library {
    tsr_component *c;
    tsr_call *call;
} library;

static void library_close(library *l) {
    tsr_call_free(l->call);
    tsr_close(l->c);
    memset(l, 0, sizeof *l);
}

static int library_open(library *l, const char *fmu, int timed, point *p) {
    memset(l, 0, sizeof *l);
    tsr_error err = TSR_ERROR_INIT;
    tsr_options *opts = tsr_options_new();
    if (!opts || tsr_options_set(opts, "mode", "inproc", &err) ||
        (!timed && tsr_options_set(opts, "call_timing", "off", &err))) {
        fprintf(stderr, "bench_fmu: cannot set options: %s\n", err.message);
        tsr_options_free(opts);
        return -1;
    }
    int rc = tsr_open(fmu, opts, &l->c, &err);
    tsr_options_free(opts);
    if (rc) {
        fprintf(stderr, "bench_fmu: %s\n", err.message);
        return -1;
    }
    l->call = tsr_call_new(l->c, TSR_EP_APPLY);
    tsr_array t = {.data = &p->t, .dtype = TSR_FLOAT64, .rank = 0};
    tsr_array x = {.data = p->x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {NX}};
    tsr_array mu = {.data = &p->mu, .dtype = TSR_FLOAT64, .rank = 0};
    if (!l->call || tsr_call_set_input(l->call, "t", &t) ||
        tsr_call_set_input(l->call, "x", &x) || tsr_call_set_input(l->call, "mu", &mu)) {
        fprintf(stderr, "bench_fmu: %s: %s\n", fmu,
                l->call ? tsr_call_errmsg(l->call) : "out of memory");
        library_close(l);
        return -1;
    }
    return 0;
}

static int library_call(library *l) { return tsr_call_run(l->call); }

typedef struct bench {
    direct d;
    library lib[2]; /* timed, untimed */
    point p;
} bench;

/* One batch of `calls` calls of variant v: ns per call, or a negative
 * number when a call failed. */
static double batch(bench *b, int v, long calls) {
    int64_t t0 = bench_now_ns();
    for (long i = 0; i < calls; i++) {
        int rc = v == V_DIRECT ? direct_call(&b->d, &b->p) : library_call(&b->lib[v - 1]);
        if (rc) return -1.0;
    }
    bench_clobber(&b->p);
    return (double)(bench_now_ns() - t0) / (double)calls;
}

/* The library's dx and y against the direct calls' at the same point. */
static int check_agree(bench *b) {
    point want = b->p;
    if (direct_call(&b->d, &want)) {
        fprintf(stderr, "bench_fmu: the direct call failed\n");
        return -1;
    }
    for (int k = 0; k < 2; k++) {
        if (library_call(&b->lib[k])) {
            fprintf(stderr, "bench_fmu: %s\n", tsr_call_errmsg(b->lib[k].call));
            return -1;
        }
        const tsr_array *dx = tsr_call_output(b->lib[k].call, "dx");
        const tsr_array *y = tsr_call_output(b->lib[k].call, "y");
        if (!dx || !y || memcmp(dx->data, want.dx, sizeof want.dx) ||
            memcmp(y->data, &want.y, sizeof want.y)) {
            fprintf(stderr, "bench_fmu: the library's dx or y differs from the FMU's own\n");
            return -1;
        }
    }
    return 0;
}

typedef struct result {
    double p10, median, p90, overhead, paired;
} result;

static int measure(bench *b, int rounds, long calls, result out[N_VARIANTS]) {
    double *ns = malloc((size_t)rounds * N_VARIANTS * sizeof *ns);
    double *diff = malloc((size_t)rounds * sizeof *diff);
    if (!ns || !diff) {
        free(ns);
        free(diff);
        fprintf(stderr, "bench_fmu: out of memory\n");
        return -1;
    }
    for (int v = 0; v < N_VARIANTS; v++) batch(b, v, calls); /* warm */
    for (int r = 0; r < rounds; r++)
        for (int j = 0; j < N_VARIANTS; j++) {
            int v = (r + j) % N_VARIANTS;
            double t = batch(b, v, calls);
            if (t < 0) {
                fprintf(stderr, "bench_fmu: a %s call failed\n", variant_names[v]);
                free(ns);
                free(diff);
                return -1;
            }
            ns[v * rounds + r] = t;
        }
    for (int v = 0; v < N_VARIANTS; v++) {
        for (int r = 0; r < rounds; r++) diff[r] = ns[v * rounds + r] - ns[r];
        out[v].paired = bench_quantile(diff, (size_t)rounds, 0.5);
        double *mine = ns + v * rounds;
        out[v].p10 = bench_quantile(mine, (size_t)rounds, 0.1);
        out[v].median = bench_quantile(mine, (size_t)rounds, 0.5);
        out[v].p90 = bench_quantile(mine, (size_t)rounds, 0.9);
    }
    for (int v = 0; v < N_VARIANTS; v++) out[v].overhead = out[v].median - out[V_DIRECT].median;
    free(ns);
    free(diff);
    return 0;
}

static const char *verdict(int v, double overhead) {
    if (v == V_DIRECT) return "";
    return overhead <= BUDGET_NS ? "PASS" : "OVER";
}

static void usage(void) {
    fprintf(stderr,
            "usage: bench_fmu [--fmu-dir DIR] [--csv PATH] [--quick] [--load N]\n"
            "  --fmu-dir DIR  where vanderpol.fmu and its unpacked folder vanderpol/ are\n"
            "                 (default " TSR_BENCH_FMU_DIR ")\n"
            "  --csv PATH     default " TSR_BENCH_CSV_DEFAULT "\n"
            "  --quick        a twentieth of the rounds, for a smoke run\n"
            "  --load N       also beside N busy processes (default: one per CPU; 0: idle only)\n");
}

int main(int argc, char **argv) {
    const char *dir = TSR_BENCH_FMU_DIR, *csv = TSR_BENCH_CSV_DEFAULT;
    int quick = 0, load = bench_cpus();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fmu-dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--load") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || v < 0 || v > 64) {
                fprintf(stderr, "bench_fmu: --load takes 0..64, not '%s'\n", argv[i]);
                usage();
                return 2;
            }
            load = (int)v;
        } else {
            usage();
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    /* short batches (about 0.2 ms): beside busy processes most of them
     * run within one time slice, so preemption moves the tail, not the
     * median */
    int rounds = quick ? 100 : 2000;
    long calls = 2000;
    char fmu[4096], unpacked[4096];
    snprintf(fmu, sizeof fmu, "%s/vanderpol.fmu#rhs", dir);
    snprintf(unpacked, sizeof unpacked, "%s/vanderpol", dir);

    bench b;
    memset(&b, 0, sizeof b);
    b.p = (point){.t = 0.25, .x = {0.7, -1.3}, .mu = 1.5};
    int rc = direct_open(&b.d, unpacked, &b.p);
    if (!rc) rc = library_open(&b.lib[0], fmu, 1, &b.p);
    if (!rc) rc = library_open(&b.lib[1], fmu, 0, &b.p);
    if (!rc) rc = check_agree(&b);
    FILE *f = rc ? NULL : bench_open_csv("bench_fmu", csv);
    if (!rc && !f) rc = -1;
    if (f)
        fprintf(f, "load,cpus,variant,calls_per_batch,batches,p10_ns,median_ns,p90_ns,"
                   "overhead_ns,paired_overhead_ns,budget_ns,verdict\n");
    if (!rc) {
        printf("== vanderpol.fmu#rhs in-process through tsr_call_run against the FMU's own\n"
               "   fmi3SetTime + fmi3SetContinuousStates + fmi3GetContinuousStateDerivatives +\n"
               "   fmi3GetFloat64; %d rounds of %ld calls per variant, interleaved; %d CPUs;\n"
               "   budget: overhead <= %.0f ns per call\n",
               rounds, calls, bench_cpus(), BUDGET_NS);
        printf("%4s %-8s %9s %9s %9s %9s %9s  %s\n", "load", "variant", "p10", "median", "p90",
               "overhead", "paired", "budget");
    }
    for (int pass = 0; !rc && pass < (load ? 2 : 1); pass++) {
        int n = pass ? load : 0;
        bench_load l = {.n = 0};
        if (n) bench_load_start_n(&l, n, 600);
        result res[N_VARIANTS];
        rc = measure(&b, rounds, calls, res);
        bench_load_stop(&l);
        for (int v = 0; !rc && v < N_VARIANTS; v++) {
            const char *vd = verdict(v, res[v].overhead);
            printf("%4d %-8s %9.1f %9.1f %9.1f %9.1f %9.1f  %s\n", n, variant_names[v],
                   res[v].p10, res[v].median, res[v].p90, res[v].overhead, res[v].paired, vd);
            fprintf(f, "%d,%d,%s,%ld,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.0f,%s\n", n, bench_cpus(),
                    variant_names[v], calls, rounds, res[v].p10, res[v].median, res[v].p90,
                    res[v].overhead, res[v].paired, v == V_DIRECT ? 0.0 : BUDGET_NS, vd);
        }
    }
    if (f && fclose(f) && !rc) {
        fprintf(stderr, "bench_fmu: cannot write %s\n", csv);
        rc = -1;
    }
    if (!rc) printf("CSV: %s\n", csv);
    library_close(&b.lib[0]);
    library_close(&b.lib[1]);
    direct_close(&b.d);
    return rc ? 1 : 0;
}
