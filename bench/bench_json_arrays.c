/* SPDX-License-Identifier: MIT */
/*
 * What a JSON-encoded array ("encoding": "json") costs to read and to
 * write through the public functions (tsr_array_from_json,
 * tsr_array_to_json) of this build's libtessera and, with --lib, of
 * another one (an older build: "today"), beside jansson's generic path on
 * the same list text (json_loads and a walk into doubles; json_dumps with
 * JSON_REAL_PRECISION(17)) and memcpy of the text's bytes. Every
 * implementation is timed in the same interleaved batches; medians of the
 * wall time (MB/s of JSON text, ns per value) and of the thread's CPU time
 * (the figure a busy machine disturbs least). Prints a table, writes CSV
 * (--csv PATH, default build/bench/results/json_arrays.csv).
 *
 * Both libraries are opened with dlopen, neither linked: each then binds
 * its own exported functions to itself (a linked one would take the
 * calls the other makes to its own tsr_ functions).
 *
 * Usage: bench_json_arrays [--lib OTHER_LIBTESSERA.so] [--quick] [--csv PATH]
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "bench_util.h"

typedef int (*to_json_fn)(const tsr_array *, tsr_encoding, char **, tsr_error *);
typedef int (*from_json_fn)(const char *, size_t, tsr_dtype, tsr_array *, void **, tsr_error *);
typedef void (*free_fn)(void *);

typedef struct lib {
    const char *name;
    to_json_fn to_json;
    from_json_fn from_json;
    void (*json_free)(char *);
    free_fn buffer_free;
} lib;

static int open_lib(lib *l, const char *name, const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "bench_json_arrays: %s\n", dlerror());
        return -1;
    }
    l->name = name;
    l->to_json = (to_json_fn)dlsym(h, "tsr_array_to_json");
    l->from_json = (from_json_fn)dlsym(h, "tsr_array_from_json");
    l->json_free = (void (*)(char *))dlsym(h, "tsr_json_free");
    l->buffer_free = (free_fn)dlsym(h, "tsr_array_buffer_free");
    if (!l->to_json || !l->from_json || !l->json_free || !l->buffer_free) {
        fprintf(stderr, "bench_json_arrays: %s lacks the array functions\n", path);
        return -1;
    }
    return 0;
}

static uint64_t rng = 0x243F6A8885A308D3u;
static uint64_t next_u64(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* One case: n values of a dtype, its encoded text and the bare list. */
typedef struct bcase {
    int64_t n;
    tsr_dtype dtype;
    void *data;
    char *encoded;      /* tessera's writer, this build */
    const char *list;   /* the "[...]" inside it */
    size_t list_len, encoded_len;
} bcase;

enum { IMPL_NEW, IMPL_OTHER, IMPL_JANSSON, IMPL_MEMCPY, IMPLS };
static const char *impl_name[IMPLS] = {"tessera", "tessera --lib", "jansson", "memcpy"};

/* CPU time of this thread: what a run costs whatever else the machine
 * runs (the wall time of a busy machine includes waiting for a CPU). */
static int64_t cpu_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu_spent; /* of the last timed operation */

static int64_t time_parse(int impl, const lib *libs, const bcase *c, char *scratch) {
    int64_t c0 = cpu_now_ns(), t0 = bench_now_ns();
    if (impl == IMPL_MEMCPY) {
        memcpy(scratch, c->encoded, c->encoded_len);
        bench_clobber(scratch);
    } else if (impl == IMPL_JANSSON) {
        json_error_t e;
        json_t *v = json_loadb(c->list, c->list_len, 0, &e);
        size_t count = json_array_size(v);
        double *out = malloc(count * sizeof *out);
        for (size_t k = 0; k < count; k++) out[k] = json_number_value(json_array_get(v, k));
        bench_clobber(out);
        free(out);
        json_decref(v);
    } else {
        const lib *l = &libs[impl];
        tsr_array a;
        void *buffer = NULL;
        tsr_error err;
        if (l->from_json(c->encoded, c->encoded_len, c->dtype, &a, &buffer, &err) != 0) {
            fprintf(stderr, "bench_json_arrays: %s: %s\n", l->name, err.message);
            exit(1);
        }
        l->buffer_free(buffer);
    }
    int64_t wall = bench_now_ns() - t0;
    cpu_spent = cpu_now_ns() - c0;
    return wall;
}

static int64_t time_print(int impl, const lib *libs, const bcase *c, char *scratch) {
    int64_t c0 = cpu_now_ns(), t0 = bench_now_ns();
    if (impl == IMPL_MEMCPY) {
        memcpy(scratch, c->encoded, c->encoded_len);
        bench_clobber(scratch);
    } else if (impl == IMPL_JANSSON) {
        json_t *v = json_array();
        for (int64_t k = 0; k < c->n; k++)
            json_array_append_new(v, c->dtype == TSR_FLOAT64 ? json_real(((double *)c->data)[k])
                                                             : json_integer(((int64_t *)c->data)[k]));
        char *text = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(17));
        bench_clobber(text);
        free(text);
        json_decref(v);
    } else {
        const lib *l = &libs[impl];
        tsr_array a = {.data = c->data, .dtype = c->dtype, .rank = 1, .shape = {c->n}};
        char *text = NULL;
        tsr_error err;
        if (l->to_json(&a, TSR_ENCODING_JSON, &text, &err) != 0) {
            fprintf(stderr, "bench_json_arrays: %s: %s\n", l->name, err.message);
            exit(1);
        }
        l->json_free(text);
    }
    int64_t wall = bench_now_ns() - t0;
    cpu_spent = cpu_now_ns() - c0;
    return wall;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *other = NULL, *csv_path = TSR_BENCH_CSV_DEFAULT;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc) other = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv_path = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else {
            fprintf(stderr, "usage: %s [--lib OTHER_LIBTESSERA.so] [--quick] [--csv PATH]\n", argv[0]);
            return 2;
        }
    }
    lib libs[2];
    if (open_lib(&libs[IMPL_NEW], "tessera", TSR_BENCH_LIBTESSERA) != 0) return 1;
    if (other != NULL && open_lib(&libs[IMPL_OTHER], "tessera --lib", other) != 0) return 1;

    struct { int64_t n; tsr_dtype dtype; int reps; } sizes[] = {
        {1000, TSR_FLOAT64, 201}, {100000, TSR_FLOAT64, 21}, {1000000, TSR_FLOAT64, 7},
        {1000000, TSR_INT64, 7}};
    size_t n_sizes = sizeof sizes / sizeof sizes[0];
    if (quick)
        for (size_t s = 0; s < n_sizes; s++) {
            sizes[s].n = sizes[s].n > 1000 ? 2000 : sizes[s].n / 10;
            sizes[s].reps = 3;
        }

    if (bench_make_parent_dirs(csv_path) != 0) perror(csv_path);
    FILE *csv = fopen(csv_path, "w");
    if (csv != NULL)
        fprintf(csv, "n,dtype,op,impl,median_ns,mb_per_s,ns_per_value,x_vs_lib,median_cpu_ns,"
                     "cpu_x_vs_lib\n");
    printf("%9s %-7s %-5s %-14s %10s %9s %9s %9s %10s %9s\n", "n", "dtype", "op", "impl",
           "median_ms", "MB/s", "ns/value", "x --lib", "cpu_ms", "cpu x");
    /* parse + print of the largest float64 case, wall and CPU */
    double new_1e6 = 0, other_1e6 = 0, new_cpu = 0, other_cpu = 0;
    for (size_t s = 0; s < n_sizes; s++) {
        bcase c = {.n = sizes[s].n, .dtype = sizes[s].dtype};
        c.data = malloc((size_t)c.n * 8);
        for (int64_t k = 0; k < c.n; k++) {
            if (c.dtype == TSR_FLOAT64) {
                /* uniform in [-1, 1): 16-17 significant digits, as measured data has */
                double v = (double)(next_u64() >> 11) * 0x1p-52 - 1.0;
                memcpy((char *)c.data + k * 8, &v, 8);
            } else {
                int64_t v = (int64_t)(next_u64() >> 20) - (INT64_C(1) << 43);
                memcpy((char *)c.data + k * 8, &v, 8);
            }
        }
        tsr_array a = {.data = c.data, .dtype = c.dtype, .rank = 1, .shape = {c.n}};
        tsr_error err;
        if (libs[IMPL_NEW].to_json(&a, TSR_ENCODING_JSON, &c.encoded, &err) != 0) {
            fprintf(stderr, "bench_json_arrays: %s\n", err.message);
            return 1;
        }
        c.encoded_len = strlen(c.encoded);
        c.list = strstr(c.encoded, "\"buffer\":") + 9;
        c.list_len = (size_t)(strchr(c.list, ']') + 1 - c.list);
        char *scratch = malloc(c.encoded_len);
        int reps = sizes[s].reps;
        int64_t *t[2][IMPLS], *cpu[2][IMPLS];
        for (int op = 0; op < 2; op++)
            for (int i = 0; i < IMPLS; i++) {
                t[op][i] = calloc((size_t)reps, sizeof(int64_t));
                cpu[op][i] = calloc((size_t)reps, sizeof(int64_t));
            }
        for (int r = 0; r < reps; r++)
            for (int op = 0; op < 2; op++)
                for (int i = 0; i < IMPLS; i++) {
                    if (i == IMPL_OTHER && other == NULL) continue;
                    t[op][i][r] = op == 0 ? time_parse(i, libs, &c, scratch)
                                          : time_print(i, libs, &c, scratch);
                    cpu[op][i][r] = cpu_spent;
                }
        for (int op = 0; op < 2; op++) {
            double med[IMPLS], med_cpu[IMPLS];
            for (int i = 0; i < IMPLS; i++) {
                qsort(t[op][i], (size_t)reps, sizeof(int64_t), cmp_i64);
                qsort(cpu[op][i], (size_t)reps, sizeof(int64_t), cmp_i64);
                med[i] = (double)t[op][i][reps / 2];
                med_cpu[i] = (double)cpu[op][i][reps / 2];
            }
            for (int i = 0; i < IMPLS; i++) {
                if (i == IMPL_OTHER && other == NULL) continue;
                double mbs = (double)c.encoded_len / (med[i] / 1e9) / 1e6;
                double per = med[i] / (double)c.n;
                double x = other != NULL && i != IMPL_OTHER ? med[IMPL_OTHER] / med[i] : NAN;
                double xc = other != NULL && i != IMPL_OTHER ? med_cpu[IMPL_OTHER] / med_cpu[i] : NAN;
                const char *dt = c.dtype == TSR_FLOAT64 ? "float64" : "int64";
                const char *opn = op == 0 ? "parse" : "print";
                printf("%9" PRId64 " %-7s %-5s %-14s %10.3f %9.1f %9.1f %9.2f %10.3f %9.2f\n", c.n,
                       dt, opn, impl_name[i], med[i] / 1e6, mbs, per, x, med_cpu[i] / 1e6, xc);
                if (csv != NULL)
                    fprintf(csv, "%" PRId64 ",%s,%s,%s,%.0f,%.1f,%.2f,%.3f,%.0f,%.3f\n", c.n, dt,
                            opn, impl_name[i], med[i], mbs, per, x, med_cpu[i], xc);
            }
            if (s == 2) {
                new_1e6 += med[IMPL_NEW];
                other_1e6 += med[IMPL_OTHER];
                new_cpu += med_cpu[IMPL_NEW];
                other_cpu += med_cpu[IMPL_OTHER];
            }
        }
        for (int op = 0; op < 2; op++)
            for (int i = 0; i < IMPLS; i++) {
                free(t[op][i]);
                free(cpu[op][i]);
            }
        free(scratch);
        free(c.data);
        libs[IMPL_NEW].json_free(c.encoded);
    }
    if (csv != NULL) fclose(csv);
    if (other != NULL)
        printf("largest float64 case, parse + print: %.1f ms against %.1f ms with --lib: %.1fx "
               "(budget >= 10x: %s)\n",
               new_1e6 / 1e6, other_1e6 / 1e6, other_1e6 / new_1e6,
               other_1e6 / new_1e6 >= 10 ? "met" : "NOT met");
    if (other != NULL)
        printf("the same in CPU time: %.1f ms against %.1f ms: %.1fx\n", new_cpu / 1e6,
               other_cpu / 1e6, other_cpu / new_cpu);
    printf("csv: %s\n", csv_path);
    return 0;
}
