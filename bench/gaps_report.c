/* SPDX-License-Identifier: MIT */
/* bench_gaps' report: sums of a cell's batches into rows, the table, the
 * verdicts and the CSV. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_gaps.h"
#include "bench_util.h"

void gaps_acc_init(gaps_acc *a) {
    memset(a, 0, sizeof *a);
}

void gaps_acc_add(gaps_acc *a, int64_t calls, int64_t wall_ns, double host_ns,
                  double worker_ns, int64_t gap_ns) {
    a->calls += calls;
    a->wall_ns += wall_ns;
    /* Host CPU beyond the gap: the gap's spin is the host's own work. */
    a->host_ns += host_ns - (double)calls * (double)gap_ns;
    a->worker_ns += worker_ns;
    if (a->nb < GAPS_MAX_BATCHES && calls > 0)
        a->beyond[a->nb++] = (double)wall_ns / (double)calls - (double)gap_ns;
}

static gaps_row row_of(int load, int64_t gap_ns, const char *mode, const gaps_acc *a) {
    gaps_acc c = *a; /* bench_quantile sorts */
    double calls = (double)(c.calls > 0 ? c.calls : 1);
    return (gaps_row){.load = load, .gap_ns = gap_ns, .mode = mode, .calls = c.calls,
                      .batches = c.nb,
                      .rate = c.wall_ns > 0 ? (double)c.calls * 1e9 / (double)c.wall_ns : NAN,
                      .p10 = bench_quantile(c.beyond, (size_t)c.nb, 0.1),
                      .median = bench_quantile(c.beyond, (size_t)c.nb, 0.5),
                      .p90 = bench_quantile(c.beyond, (size_t)c.nb, 0.9),
                      .host_cpu = c.host_ns / calls, .worker_cpu = c.worker_ns / calls,
                      .ratio = NAN};
}

void gaps_report_cell(gaps_report *r, int load, int64_t gap_ns, const gaps_acc *inproc,
                      const gaps_acc *worker) {
    if (r->n + 2 > (int)(sizeof r->rows / sizeof r->rows[0])) return;
    gaps_row in = row_of(load, gap_ns, "inproc", inproc);
    gaps_row w = row_of(load, gap_ns, "worker", worker);
    in.worker_cpu = NAN; /* no worker */
    w.ratio = w.rate / in.rate;
    r->rows[r->n++] = in;
    r->rows[r->n++] = w;
}

void gaps_report_idle(gaps_report *r, int load, double worker_cpu_ns) {
    if (load >= 0 && load < GAPS_MAX_LOADS) {
        r->idle_cpu_ns[load] = worker_cpu_ns;
        if (load + 1 > r->n_idle) r->n_idle = load + 1;
    }
}

double gaps_budget(int load, int cpus) {
    if (load == 0) return GAPS_BUDGET_IDLE;
    if (load == cpus) return GAPS_BUDGET_LOADED;
    return NAN;
}

const char *gaps_verdict(double ratio, double budget) {
    if (isnan(ratio) || isnan(budget)) return "-";
    return ratio >= budget ? "PASS" : "OVER";
}

static void num(double v, int width, int prec) {
    if (isnan(v)) printf(" %*s", width, "-");
    else printf(" %*.*f", width, prec, v);
}

void gaps_print(const gaps_report *r) {
    char spin[40] = "the library's waits";
    if (r->cfg->spin_ns >= 0)
        snprintf(spin, sizeof spin, "spin_ns=%lld", (long long)r->cfg->spin_ns);
    printf("== noop, 1 float64 in the arena, a busy gap of host work before each call; "
           "worker mode: %s\n"
           "   %.3f s per mode and cell in %d alternating batches; load: busy processes "
           "beside (%d CPUs)\n"
           "   rate: calls/s; beyond gap: ns per call over the gap (p10/median/p90 of the "
           "batches);\n   cpu: ns per call, host beyond the gap, worker all of its CPU\n",
           spin, (double)r->cfg->cell_ns / 1e9, r->cfg->batches, r->cpus);
    printf("%4s %7s %-6s %9s %10s %8s %8s %8s %9s %9s %7s  %s\n", "load", "gap_us", "mode",
           "calls", "rate", "p10", "median", "p90", "host cpu", "wrk cpu", "ratio", "budget");
    for (int i = 0; i < r->n; i++) {
        const gaps_row *w = &r->rows[i];
        printf("%4d %7.0f %-6s %9lld", w->load, (double)w->gap_ns / 1e3, w->mode,
               (long long)w->calls);
        num(w->rate, 10, 0), num(w->p10, 8, 0), num(w->median, 8, 0), num(w->p90, 8, 0);
        num(w->host_cpu, 9, 0), num(w->worker_cpu, 9, 0), num(w->ratio, 7, 2);
        double b = gaps_budget(w->load, r->cpus);
        if (!isnan(w->ratio) && !isnan(b))
            printf("  >= %.1f %s", b, gaps_verdict(w->ratio, b));
        printf("\n");
    }
    printf("\n== worker CPU while the host sleeps %.3f s after each load's calls\n",
           (double)r->cfg->idle_ns / 1e9);
    for (int l = 0; l < r->n_idle; l++)
        printf("  load %d: %.0f ns (%.2f%% of a CPU)\n", l, r->idle_cpu_ns[l],
               100.0 * r->idle_cpu_ns[l] / (double)r->cfg->idle_ns);
    printf("\n== verdicts (informative: the budgets of issue 31 are on the Python loop, "
           "bench_gaps.py)\n");
    for (int i = 0; i < r->n; i++) {
        const gaps_row *w = &r->rows[i];
        double b = gaps_budget(w->load, r->cpus);
        if (isnan(w->ratio) || isnan(b)) continue;
        printf("  C loop, gap %3.0f us, %s: worker/inproc rate %.2f >= %.1f  %s\n",
               (double)w->gap_ns / 1e3, w->load ? "beside nproc busy" : "idle", w->ratio, b,
               gaps_verdict(w->ratio, b));
    }
    for (int l = 0; l < r->n_idle; l++) {
        double per_s = r->idle_cpu_ns[l] / ((double)r->cfg->idle_ns / 1e9);
        printf("  idle worker at no CPU, load %d: %.0f ns/s <= %.0f ns/s  %s\n", l, per_s,
               GAPS_IDLE_CPU_NS_PER_S,
               isnan(per_s) ? "-" : per_s <= GAPS_IDLE_CPU_NS_PER_S ? "PASS" : "OVER");
    }
}

static void csv_num(FILE *f, double v, const char *sep) {
    if (isnan(v)) fprintf(f, "%s", sep);
    else fprintf(f, "%.2f%s", v, sep);
}

int gaps_write_csv(const gaps_report *r, const char *path) {
    FILE *f = bench_open_csv("bench_gaps", path);
    if (!f) return -1;
    fprintf(f, "kind,load,cpus,gap_ns,mode,spin_ns,calls,batches,calls_per_s,p10_ns,median_ns,"
               "p90_ns,host_cpu_ns,worker_cpu_ns,ratio,budget,verdict\n");
    for (int i = 0; i < r->n; i++) {
        const gaps_row *w = &r->rows[i];
        double b = gaps_budget(w->load, r->cpus);
        fprintf(f, "cell,%d,%d,%lld,%s,%lld,%lld,%d,", w->load, r->cpus, (long long)w->gap_ns,
                w->mode, (long long)r->cfg->spin_ns, (long long)w->calls, w->batches);
        csv_num(f, w->rate, ","), csv_num(f, w->p10, ","), csv_num(f, w->median, ",");
        csv_num(f, w->p90, ","), csv_num(f, w->host_cpu, ","), csv_num(f, w->worker_cpu, ",");
        csv_num(f, w->ratio, ",");
        if (isnan(w->ratio)) fprintf(f, ",\n");
        else csv_num(f, b, ","), fprintf(f, "%s\n", gaps_verdict(w->ratio, b));
    }
    /* The idle window: worker CPU ns over idle_ns, in worker_cpu_ns. */
    for (int l = 0; l < r->n_idle; l++) {
        fprintf(f, "idle,%d,%d,%lld,worker,%lld,0,0,,,,,,", l, r->cpus,
                (long long)r->cfg->idle_ns, (long long)r->cfg->spin_ns);
        csv_num(f, r->idle_cpu_ns[l], ",,,\n");
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_gaps: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}
