/* SPDX-License-Identifier: MIT */
/*
 * Cost of worker mode, against baselines measured in the same run:
 *   roundtrip  one apply of noop (and of peek, which reads one element) at
 *              0 to 10^7 float64 elements, x in the arena or in ordinary
 *              memory; a bare futex ping-pong between two processes; memcpy
 *   start      tsr_open in worker mode + first apply, spawn=exec and fork
 *   spin       the spin_ns sweep that chose the library's default
 *   loaded     back-to-back calls idle and beside one busy process per CPU,
 *              each call timed alone (p99), with the futex ping-pong
 * It prints a table, writes CSV and exits 0 whether or not the budgets are
 * met: it is a report, not a test.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "bench_worker.h"

#ifndef TSR_BENCH_NOOP_PLUGIN
#define TSR_BENCH_NOOP_PLUGIN "plugins/noop.so"
#endif
#ifndef TSR_BENCH_PEEK_PLUGIN
#define TSR_BENCH_PEEK_PLUGIN "bench/plugins/peek.so"
#endif
#ifndef TSR_BENCH_CSV_DEFAULT
#define TSR_BENCH_CSV_DEFAULT "bench/results/worker.csv"
#endif

static wb_row *find(wb_report *r, const char *section, const char *variant, int64_t n) {
    for (size_t i = 0; i < r->n; i++) {
        wb_row *row = &r->rows[i];
        if (!strcmp(row->section, section) && !strcmp(row->variant, variant) && row->n == n)
            return row;
    }
    return NULL;
}

static void judge(wb_row *row, double budget) {
    if (!row || isnan(budget)) return;
    row->budget_ns = budget;
    row->verdict = row->median <= budget ? "PASS" : "OVER";
}

static void judge_all(wb_report *r) {
    for (int64_t n = 0; n <= 1; n++) {
        judge(find(r, "roundtrip", "arena", n), BUDGET_SMALL_CALL_NS);
        judge(find(r, "roundtrip", "copy", n), BUDGET_SMALL_CALL_NS);
    }
    wb_row *one = find(r, "roundtrip", "peek-arena", 1);
    if (one)
        judge(find(r, "roundtrip", "peek-arena", 10000000),
              BUDGET_ZERO_COPY_RATIO * one->median);
    judge(find(r, "start", "exec", 1), BUDGET_START_NS);
    judge(find(r, "start", "fork", 1), BUDGET_START_NS);
    /* Loaded: the median and the tail both within their budgets. */
    wb_row *loaded = find(r, "loaded", "noop loaded", 1);
    if (loaded) {
        loaded->budget_ns = BUDGET_LOADED_MEDIAN_NS;
        loaded->verdict = loaded->median <= BUDGET_LOADED_MEDIAN_NS &&
                                  loaded->p99 <= BUDGET_LOADED_P99_NS
                              ? "PASS"
                              : "OVER";
    }
}

/* "%*.*f", or blanks for NAN. */
static void num(double v, int width, int prec) {
    if (isnan(v)) printf(" %*s", width, "-");
    else printf(" %*.*f", width, prec, v);
}

static void print_table(const wb_report *r) {
    const char *section = "";
    for (size_t i = 0; i < r->n; i++) {
        const wb_row *w = &r->rows[i];
        if (strcmp(w->section, section) != 0) {
            section = w->section;
            if (!strcmp(section, "roundtrip"))
                printf("\n== round trip of one apply in worker mode (ns per call)\n"
                       "%9s  %-11s %6s %7s %10s %10s %10s %9s %11s  %s\n", "n", "variant", "calls",
                       "batches", "p10", "median", "p90", "/futex-spin", "-memcpy", "budget");
            else if (!strcmp(section, "start"))
                printf("\n== worker start to first result: tsr_open + first apply (us)\n"
                       "%-11s %7s %10s %10s %10s  %s\n", "spawn", "starts", "p10", "median", "p90",
                       "budget");
            else if (!strcmp(section, "loaded"))
                printf("\n== back-to-back calls, idle and beside one busy process per CPU "
                       "(ns per call, each timed alone;\n   calls: how many completed in the "
                       "state's second, a quarter of it with --quick)\n"
                       "%-18s %8s %10s %10s %10s %10s  %s\n",
                       "variant", "calls", "p10", "median", "p90", "p99", "budget");
            else
                printf("\n== spin_ns sweep: noop, 1 element in the arena, host work (gap) "
                       "between calls\n   (ns per call beyond the gap; CPU ns per call: host "
                       "beyond the gap, worker)\n%8s %8s %-8s %6s %7s %9s %9s %9s %8s %9s %9s\n",
                       "gap", "spin", "", "calls", "batches", "p10", "median", "p90", "/spin 0",
                       "host cpu", "worker cpu");
        }
        if (!strcmp(section, "roundtrip")) {
            printf("%9lld  %-11s %6d %7d", (long long)w->n, w->variant, w->calls, w->batches);
            num(w->p10, 10, 1), num(w->median, 10, 1), num(w->p90, 10, 1);
            num(w->ratio, 10, 2), num(w->minus_memcpy, 11, 1);
        } else if (!strcmp(section, "loaded")) {
            printf("%-18s %8d", w->variant, w->batches);
            num(w->p10, 10, 1), num(w->median, 10, 1), num(w->p90, 10, 1), num(w->p99, 10, 1);
        } else if (!strcmp(section, "start")) {
            printf("%-11s %7d", w->variant, w->batches);
            num(w->p10 / 1e3, 10, 1), num(w->median / 1e3, 10, 1), num(w->p90 / 1e3, 10, 1);
        } else {
            char spin[24] = "adaptive";
            if (w->spin_ns >= 0) snprintf(spin, sizeof spin, "%lld", (long long)w->spin_ns);
            printf("%8lld %8s %-8s %6d %7d", (long long)w->gap_ns, spin,
                   strcmp(w->variant, "spin-default") ? "" : "default", w->calls, w->batches);
            num(w->p10, 9, 0), num(w->median, 9, 0), num(w->p90, 9, 0), num(w->ratio, 8, 2);
            num(w->host_cpu, 9, 0), num(w->worker_cpu, 9, 0);
        }
        if (w->verdict) printf("  %s", w->verdict);
        printf("\n");
    }
}

static void print_budgets(const wb_report *r) {
    printf("\n== budgets (medians)\n");
    for (size_t i = 0; i < r->n; i++) {
        const wb_row *w = &r->rows[i];
        if (!w->verdict) continue;
        if (!strcmp(w->section, "start"))
            printf("  worker start to first result, spawn=%-4s   %9.1f us <= %7.1f us  %s\n",
                   w->variant, w->median / 1e3, w->budget_ns / 1e3, w->verdict);
        else if (!strcmp(w->section, "loaded"))
            printf("  back-to-back call beside busy CPUs      %9.1f ns <= %7.1f ns, p99 %.1f ns "
                   "<= %.1f ns  %s\n",
                   w->median, w->budget_ns, w->p99, BUDGET_LOADED_P99_NS, w->verdict);
        else if (!strcmp(w->variant, "peek-arena"))
            printf("  %lld elements by reference (peek)        %9.1f ns <= %7.1f ns  %s "
                   "(2 x the 1-element call)\n", (long long)w->n, w->median, w->budget_ns,
                   w->verdict);
        else
            printf("  back-to-back call, n=%lld, x %-5s          %9.1f ns <= %7.1f ns  %s\n",
                   (long long)w->n, !strcmp(w->variant, "arena") ? "arena" : "plain", w->median,
                   w->budget_ns, w->verdict);
    }
}

static void csv_num(FILE *f, double v, const char *sep) {
    if (isnan(v)) fprintf(f, "%s", sep);
    else fprintf(f, "%.2f%s", v, sep);
}

static int write_csv(const char *path, const wb_report *r) {
    FILE *f = bench_open_csv("bench_worker", path);
    if (!f) return -1;
    fprintf(f, "section,variant,n,dtype,bytes,spin_ns,gap_ns,calls_per_batch,batches,p10_ns,"
               "median_ns,p90_ns,ratio,ratio_to,minus_memcpy_ns,host_cpu_ns,worker_cpu_ns,"
               "budget_ns,budget,p99_ns\n");
    for (size_t i = 0; i < r->n; i++) {
        const wb_row *w = &r->rows[i];
        fprintf(f, "%s,%s,", w->section, w->variant);
        if (w->n >= 0) fprintf(f, "%lld,float64,%lld,", (long long)w->n, (long long)w->n * 8);
        else fprintf(f, ",,,");
        if (w->spin_ns >= 0) fprintf(f, "%lld,", (long long)w->spin_ns);
        else fprintf(f, ",");
        fprintf(f, "%lld,%d,%d,", (long long)w->gap_ns, w->calls, w->batches);
        csv_num(f, w->p10, ","), csv_num(f, w->median, ","), csv_num(f, w->p90, ",");
        csv_num(f, w->ratio, ",");
        fprintf(f, "%s,", w->ratio_to ? w->ratio_to : "");
        csv_num(f, w->minus_memcpy, ","), csv_num(f, w->host_cpu, ",");
        csv_num(f, w->worker_cpu, ","), csv_num(f, w->budget_ns, ",");
        fprintf(f, "%s,", w->verdict ? w->verdict : "");
        csv_num(f, w->p99, "\n");
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_worker: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: bench_worker [--plugin PATH] [--peek PATH] [--csv PATH] [--quick]\n"
            "  --plugin PATH  the noop plugin (default %s)\n"
            "  --peek PATH    the peek plugin (default %s)\n"
            "  --csv PATH     where to write the results (default %s)\n"
            "  --quick        a fifth of the batches and fewer starts, for a smoke run\n",
            TSR_BENCH_NOOP_PLUGIN, TSR_BENCH_PEEK_PLUGIN, TSR_BENCH_CSV_DEFAULT);
}

int main(int argc, char **argv) {
    wb_config cfg = {TSR_BENCH_NOOP_PLUGIN, TSR_BENCH_PEEK_PLUGIN, TSR_BENCH_CSV_DEFAULT, 0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) cfg.noop = argv[++i];
        else if (strcmp(argv[i], "--peek") == 0 && i + 1 < argc) cfg.peek = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) cfg.csv = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0) cfg.quick = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    printf("tessera worker mode: noop %s, peek %s, float64%s\n", cfg.noop, cfg.peek,
           cfg.quick ? " (quick)" : "");
    printf("medians of interleaved batches; the machine's noise moves them by tens of percent\n");
    fflush(stdout);

    static wb_report report;
    /* Start first: spawn=fork is refused once the host has threads, and
     * nothing else here needs any, but keep it out of harm's way. */
    int failed = 0;
    if (section_start(&cfg, &report) != 0) failed = 1;
    if (section_roundtrip(&cfg, &report) != 0) failed = 1;
    if (section_spin(&cfg, &report) != 0) failed = 1;
    if (section_loaded(&cfg, &report) != 0) failed = 1;
    judge_all(&report);
    print_table(&report);
    print_budgets(&report);
    if (report.n > 0 && write_csv(cfg.csv, &report) == 0) printf("\nwrote %s\n", cfg.csv);
    if (failed) fprintf(stderr, "bench_worker: some sections could not be measured (see above)\n");
    return failed;
}
