/* SPDX-License-Identifier: MIT */
/*
 * Throughput of the array encodings and of binref files, for 10^3 to 10^8
 * float64 elements, against memcpy and a plain sequential write / read of
 * the same bytes (open, write or read, close) measured in the same run.
 *
 * Every size runs its variants in interleaved rounds, the order rotating,
 * so that drift and other processes' noise fall on all of them alike;
 * each sample times `inner` operations back to back (small sizes) and
 * reports seconds per operation. Files written are removed between
 * samples, untimed. Reads are of a file just written, so from the page
 * cache ("hot"), as a result handed from one process to the next is.
 *
 * Budgets: binref file write and read >= 0.8x the plain write and read;
 * base64 encode and decode (through the API, JSON text included) >= 1 GB/s.
 * It prints tables, writes CSV and exits 0 once it has measured: it is a
 * report, not a test. --sweep measures the io_uring queue depth and chunk
 * size instead (how the defaults were chosen).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <tessera/payload.h>

#include "bench_util.h"
#include "files_ops.h"

#ifndef TSR_BENCH_CSV_DEFAULT
#define TSR_BENCH_CSV_DEFAULT "bench/results/files.csv"
#endif
#ifndef TSR_BENCH_SWEEP_CSV_DEFAULT
#define TSR_BENCH_SWEEP_CSV_DEFAULT "bench/results/files_sweep.csv"
#endif
#ifndef TSR_BENCH_TMP_DEFAULT
#define TSR_BENCH_TMP_DEFAULT "bench/tmp"
#endif

#define RATIO_BUDGET 0.8
#define GBPS_BUDGET 1.0
#define MAX_VARIANTS 32

typedef struct plan {
    int64_t n;
    int inner;   /* operations per sample */
    int samples;
} plan;

static const plan plans[] = {
    {1000, 100, 15}, {10000, 20, 15}, {100000, 3, 15},
    {1000000, 1, 11}, {10000000, 1, 5}, {100000000, 1, 3},
};
#define N_PLANS (sizeof plans / sizeof plans[0])

typedef struct row {
    int64_t n;
    const files_variant *v;
    int samples;
    double p10, median, p90; /* seconds per operation */
    double gbps, vs_memcpy, vs_base;
    const char *budget; /* PASS, OVER or "-" */
} row;

/* ---- resources ------------------------------------------------------------ */

static double mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "re");
    if (f == NULL) return 0;
    char line[256];
    double kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

static double disk_free(const char *dir) {
    struct statvfs v;
    return statvfs(dir, &v) == 0 ? (double)v.f_bavail * (double)v.f_frsize : 0;
}

/* Enough memory (the array, its copies and texts: ~8x) and disk (3x)? */
static int room_for(int64_t n, const char *dir, char *why, size_t size) {
    double bytes = (double)n * 8, mem = mem_available(), disk = disk_free(dir);
    if (mem < 8 * bytes) {
        snprintf(why, size, "needs ~%.1f GB of memory, %.1f GB available", 8 * bytes / 1e9, mem / 1e9);
        return 0;
    }
    if (disk < 3 * bytes) {
        snprintf(why, size, "needs ~%.1f GB of disk in %s, %.1f GB free", 3 * bytes / 1e9, dir,
                 disk / 1e9);
        return 0;
    }
    return 1;
}

/* ---- measuring -------------------------------------------------------------- */

static int usable(const files_variant *v, int64_t n, int uring) {
    if (v->max_n != 0 && n > v->max_n) return 0;
    if (!uring && strstr(v->name, "uring") != NULL) return 0;
    return 1;
}

/* One sample: inner operations, seconds per operation; < 0 on failure. */
static double sample(files_ctx *c, const files_variant *v, int inner) {
    int64_t t0 = bench_now_ns();
    for (int i = 0; i < inner; i++)
        if (v->run(c) != 0) return -1;
    double s = (double)(bench_now_ns() - t0) / 1e9 / inner;
    if (v->writes) files_ctx_clear_writes(c);
    return s;
}

static const row *find(const row *rows, int n_rows, int64_t n, const char *name) {
    for (int i = 0; i < n_rows; i++)
        if (rows[i].n == n && strcmp(rows[i].v->name, name) == 0) return &rows[i];
    return NULL;
}

/* Measure every usable variant at plan p; rows appended. */
static int measure(const plan *p, const char *dir, int uring, row *rows, int *n_rows) {
    files_ctx c;
    if (files_ctx_open(&c, p->n, dir) != 0 || files_ctx_verify(&c) != 0) {
        files_ctx_close(&c);
        return -1;
    }
    const files_variant *vs[MAX_VARIANTS];
    int nv = 0;
    for (int k = 0; k < n_files_variants; k++)
        if (usable(&files_variants[k], p->n, uring)) vs[nv++] = &files_variants[k];
    double *t[MAX_VARIANTS];
    for (int k = 0; k < nv; k++) {
        t[k] = calloc((size_t)p->samples, sizeof(double));
        if (t[k] == NULL || sample(&c, vs[k], 1) < 0) { /* warm-up */
            fprintf(stderr, "bench_files: %s failed at n=%lld\n", vs[k]->name, (long long)p->n);
            files_ctx_close(&c);
            return -1;
        }
    }
    for (int r = 0; r < p->samples; r++) {
        for (int j = 0; j < nv; j++) {
            int k = (r + j) % nv;
            double s = sample(&c, vs[k], p->inner);
            if (s < 0) {
                fprintf(stderr, "bench_files: %s failed at n=%lld\n", vs[k]->name, (long long)p->n);
                files_ctx_close(&c);
                return -1;
            }
            t[k][r] = s;
        }
    }
    int first = *n_rows;
    for (int k = 0; k < nv; k++) {
        row *w = &rows[(*n_rows)++];
        *w = (row){.n = p->n, .v = vs[k], .samples = p->samples};
        w->p10 = bench_quantile(t[k], (size_t)p->samples, 0.1);
        w->median = bench_quantile(t[k], (size_t)p->samples, 0.5);
        w->p90 = bench_quantile(t[k], (size_t)p->samples, 0.9);
        w->gbps = (double)c.bytes / w->median / 1e9;
        free(t[k]);
    }
    const row *mc = find(rows, *n_rows, p->n, "memcpy");
    for (int i = first; i < *n_rows; i++) {
        row *w = &rows[i];
        w->vs_memcpy = mc ? w->gbps / mc->gbps : 0;
        const row *base = w->v->baseline ? find(rows, *n_rows, p->n, w->v->baseline) : NULL;
        w->vs_base = base ? w->gbps / base->gbps : 0;
        w->budget = w->v->budget == BUDGET_VS_PLAIN ? (w->vs_base >= RATIO_BUDGET ? "PASS" : "OVER")
                    : w->v->budget == BUDGET_GBPS   ? (w->gbps >= GBPS_BUDGET ? "PASS" : "OVER")
                                                    : "-";
    }
    if (c.lz4_ratio > 0)
        printf("  n = %lld: the lz4 frame holds %.2f of the raw bytes\n", (long long)p->n, c.lz4_ratio);
    files_ctx_close(&c);
    return 0;
}

/* ---- report ----------------------------------------------------------------- */

static void print_rows(const row *rows, int n_rows) {
    printf("\n%-10s %-20s %11s %11s %11s %9s %9s %9s  %s\n", "n", "variant", "p10 ms", "median ms",
           "p90 ms", "GB/s", "/memcpy", "/plain", "budget");
    int64_t last = -1;
    for (int i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        if (r->n != last && last != -1) printf("\n");
        last = r->n;
        char base[16] = "-";
        if (r->v->baseline && strncmp(r->v->baseline, "plain", 5) == 0)
            snprintf(base, sizeof base, "%.2f", r->vs_base);
        printf("%-10lld %-20s %11.4f %11.4f %11.4f %9.2f %9.2f %9s  %s\n", (long long)r->n,
               r->v->name, r->p10 * 1e3, r->median * 1e3, r->p90 * 1e3, r->gbps, r->vs_memcpy,
               base, r->budget);
    }
}

static int write_csv(const char *path, const row *rows, int n_rows, const char *backend) {
    FILE *f = bench_open_csv("bench_files", path);
    if (!f) return -1;
    fprintf(f, "section,variant,n,bytes,samples,p10_s,median_s,p90_s,gbps,ratio_memcpy,"
               "ratio_baseline,baseline,budget,file_io\n");
    for (int i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        fprintf(f, "%s,%s,%lld,%lld,%d,%.9f,%.9f,%.9f,%.4f,%.4f,%.4f,%s,%s,%s\n", r->v->section,
                r->v->name, (long long)r->n, (long long)r->n * 8, r->samples, r->p10, r->median,
                r->p90, r->gbps, r->vs_memcpy, r->vs_base, r->v->baseline ? r->v->baseline : "",
                r->budget, backend);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- the io_uring sweep ---------------------------------------------------------- */

static const unsigned depths[] = {1, 2, 4, 8, 16, 32, 64};
static const size_t chunks[] = {256 << 10, 1 << 20, 4 << 20};

static const files_variant *variant(const char *name) {
    for (int k = 0; k < n_files_variants; k++)
        if (strcmp(files_variants[k].name, name) == 0) return &files_variants[k];
    return NULL;
}

static double median_of(files_ctx *c, const files_variant *v, int samples) {
    double t[16];
    for (int s = 0; s < samples; s++)
        if ((t[s] = sample(c, v, 1)) < 0) return -1;
    return bench_quantile(t, (size_t)samples, 0.5);
}

static int sweep(int64_t n, const char *dir, int samples, FILE *csv) {
    files_ctx c;
    if (files_ctx_open(&c, n, dir) != 0) {
        files_ctx_close(&c);
        return -1;
    }
    const files_variant *pw = variant("plain-write"), *pr = variant("plain-read"),
                        *uw = variant("binref-write-uring"), *ur = variant("binref-read-uring");
    sample(&c, pw, 1);
    sample(&c, uw, 1);
    printf("\nio_uring sweep, n = %lld (%.0f MB): GB/s, median of %d; plain write/read measured "
           "before each cell\n",
           (long long)n, (double)c.bytes / 1e6, samples);
    printf("%8s %10s %10s %10s %10s %10s %9s %9s\n", "depth", "chunk KiB", "plain-w", "uring-w",
           "plain-r", "uring-r", "w ratio", "r ratio");
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        for (size_t j = 0; j < sizeof chunks / sizeof chunks[0]; j++) {
            files_tune_uring(depths[i], chunks[j]);
            double t_pw = median_of(&c, pw, samples), t_uw = median_of(&c, uw, samples);
            double t_pr = median_of(&c, pr, samples), t_ur = median_of(&c, ur, samples);
            if (t_pw < 0 || t_uw < 0 || t_pr < 0 || t_ur < 0) {
                files_ctx_close(&c);
                return -1;
            }
            double g = (double)c.bytes / 1e9;
            printf("%8u %10zu %10.2f %10.2f %10.2f %10.2f %9.2f %9.2f\n", depths[i], chunks[j] >> 10,
                   g / t_pw, g / t_uw, g / t_pr, g / t_ur, t_pw / t_uw, t_pr / t_ur);
            if (csv)
                fprintf(csv, "%lld,%u,%zu,%.4f,%.4f,%.4f,%.4f\n", (long long)n, depths[i], chunks[j],
                        g / t_pw, g / t_uw, g / t_pr, g / t_ur);
        }
    }
    files_tune_uring_defaults();
    files_ctx_close(&c);
    return 0;
}

/* ---- main --------------------------------------------------------------------------- */

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench_files [--quick] [--sweep] [--max-n N] [--dir DIR] [--csv PATH]\n"
            "  --quick    up to 10^7 elements, fewer samples (~10 s)\n"
            "  --sweep    io_uring queue depth x chunk size at 10^7 (and 10^8) elements\n"
            "  --max-n N  stop at N elements\n"
            "  --dir DIR  scratch directory for files (default %s)\n"
            "  --csv PATH results (default %s; the sweep: %s)\n",
            TSR_BENCH_TMP_DEFAULT, TSR_BENCH_CSV_DEFAULT, TSR_BENCH_SWEEP_CSV_DEFAULT);
}

int main(int argc, char **argv) {
    const char *dir = TSR_BENCH_TMP_DEFAULT, *csv_path = NULL;
    int quick = 0, do_sweep = 0;
    int64_t max_n = 100000000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--sweep") == 0) do_sweep = 1;
        else if (strcmp(argv[i], "--max-n") == 0 && i + 1 < argc) max_n = atoll(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv_path = argv[++i];
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    char marker[600];
    snprintf(marker, sizeof marker, "%s/.keep", dir);
    if (bench_make_parent_dirs(marker) != 0) {
        fprintf(stderr, "bench_files: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    const char *why_not = NULL;
    const char *backend = tsr_file_io_backend(&why_not);
    int uring = strcmp(backend, "io_uring") == 0;
    printf("tessera encodings and binref files, float64 arrays; scratch files in %s\n", dir);
    printf("file I/O: %s%s%s\n", backend, why_not ? " (io_uring unavailable: " : "",
           why_not ? why_not : "");
    if (why_not) printf("%s", ")\n");
    double setup = files_ring_setup_us(200);
    if (setup >= 0)
        printf("one io_uring set up and torn down: %.1f us (why each thread keeps its ring)\n", setup);

    if (do_sweep) {
        if (!uring) {
            printf("no io_uring here: nothing to sweep\n");
            return 0;
        }
        const char *path = csv_path ? csv_path : TSR_BENCH_SWEEP_CSV_DEFAULT;
        FILE *csv = bench_make_parent_dirs(path) == 0 ? fopen(path, "w") : NULL;
        if (csv) fprintf(csv, "n,depth,chunk,plain_write_gbps,uring_write_gbps,plain_read_gbps,uring_read_gbps\n");
        int64_t sizes[2] = {10000000, 100000000};
        for (int k = 0; k < 2; k++) {
            char why[200];
            if (sizes[k] > max_n) continue;
            if (!room_for(sizes[k], dir, why, sizeof why)) {
                printf("\nn = %lld skipped: %s\n", (long long)sizes[k], why);
                continue;
            }
            if (sweep(sizes[k], dir, quick ? 3 : 5, csv) != 0) return 1;
        }
        if (csv && fclose(csv) == 0) printf("\nwrote %s\n", path);
        return 0;
    }

    static row rows[N_PLANS * MAX_VARIANTS];
    int n_rows = 0;
    for (size_t i = 0; i < N_PLANS; i++) {
        plan p = plans[i];
        if (p.n > max_n || (quick && p.n > 10000000)) continue;
        if (quick) p.samples = p.samples / 2 > 3 ? p.samples / 2 : 3;
        char why[200];
        if (!room_for(p.n, dir, why, sizeof why)) {
            printf("  n = %lld skipped: %s\n", (long long)p.n, why);
            continue;
        }
        if (measure(&p, dir, uring, rows, &n_rows) != 0) return 1;
    }
    print_rows(rows, n_rows);
    int over = 0, judged = 0;
    for (int i = 0; i < n_rows; i++) {
        if (strcmp(rows[i].budget, "-") == 0) continue;
        judged++;
        over += strcmp(rows[i].budget, "OVER") == 0;
    }
    printf("\nbudgets: binref write/read >= %.1fx plain write/read, base64 enc/dec >= %.1f GB/s: "
           "%d of %d rows within\n",
           RATIO_BUDGET, GBPS_BUDGET, judged - over, judged);
    const char *path = csv_path ? csv_path : TSR_BENCH_CSV_DEFAULT;
    if (n_rows > 0 && write_csv(path, rows, n_rows, backend) == 0) printf("wrote %s\n", path);
    return 0;
}
