/* SPDX-License-Identifier: MIT */
/* bench_gaps: what the measuring loop (bench_gaps.c) hands the report
 * (gaps_report.c): per-mode sums over a cell's batches, the rows, the
 * verdicts. */
#ifndef TSR_BENCH_GAPS_H
#define TSR_BENCH_GAPS_H

#include <stdint.h>

/* Budgets of issue 31 on worker / in-process step rate (judged on the
 * Python loop; the C rows are informative). */
#define GAPS_BUDGET_IDLE 0.8
#define GAPS_BUDGET_LOADED 0.5
/* A worker with nothing to do: at most this CPU per second of idle host. */
#define GAPS_IDLE_CPU_NS_PER_S 2e6

#define GAPS_MAX_BATCHES 64
#define GAPS_MAX_LOADS 65
#define GAPS_N_GAPS 4

typedef struct gaps_config {
    const char *plugin, *csv;
    int quick, batches, max_load;
    int64_t spin_ns;          /* -1: the library's waits */
    int64_t cell_ns, idle_ns; /* wall time per mode and cell; idle window */
} gaps_config;

/* One mode in one cell. */
typedef struct gaps_acc {
    int64_t calls, wall_ns;
    double host_ns, worker_ns; /* CPU over all batches (worker: NAN unknown) */
    double beyond[GAPS_MAX_BATCHES]; /* ns per call beyond the gap, per batch */
    int nb;
} gaps_acc;

void gaps_acc_init(gaps_acc *a);
void gaps_acc_add(gaps_acc *a, int64_t calls, int64_t wall_ns, double host_ns,
                  double worker_ns, int64_t gap_ns);

typedef struct gaps_row {
    int load;
    int64_t gap_ns;
    const char *mode;
    int64_t calls;
    int batches;
    double rate;           /* calls per second */
    double p10, median, p90; /* ns per call beyond the gap */
    double host_cpu, worker_cpu; /* CPU ns per call (host: beyond the gap) */
    double ratio;          /* worker rows: worker rate / in-process rate */
} gaps_row;

typedef struct gaps_report {
    const gaps_config *cfg;
    int cpus;
    gaps_row rows[GAPS_MAX_LOADS * GAPS_N_GAPS * 2];
    int n;
    double idle_cpu_ns[GAPS_MAX_LOADS]; /* worker CPU over the idle window */
    int n_idle;
} gaps_report;

void gaps_report_cell(gaps_report *r, int load, int64_t gap_ns, const gaps_acc *inproc,
                      const gaps_acc *worker);
void gaps_report_idle(gaps_report *r, int load, double worker_cpu_ns);

/* The budget on the ratio at this load (0 idle, cpus: one busy process per
 * CPU), NAN where none applies; "PASS"/"OVER"/"-" for a ratio. */
double gaps_budget(int load, int cpus);
const char *gaps_verdict(double ratio, double budget);

void gaps_print(const gaps_report *r);
int gaps_write_csv(const gaps_report *r, const char *path);

#endif
