/* SPDX-License-Identifier: MIT */
/* bench_worker: the sections (round trips, worker start, spin sweep, idle
 * and loaded) and
 * what they share. Each section appends rows to one report, which
 * bench_worker.c prints and writes as CSV. */
#ifndef TSR_BENCH_WORKER_H
#define TSR_BENCH_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <tessera/tessera.h>

/* Budgets (medians). */
#define BUDGET_SMALL_CALL_NS 2000.0   /* back-to-back call of <= 1 element */
#define BUDGET_ZERO_COPY_RATIO 2.0    /* 10^7 elements by reference vs 1 */
#define BUDGET_START_NS 5e6           /* tsr_open + first apply */
/* Back-to-back call beside one busy process per CPU. */
#define BUDGET_LOADED_MEDIAN_NS 30000.0
#define BUDGET_LOADED_P99_NS 200000.0

/* The library's longest spin (core/options.h, DEFAULT_SPIN_NS), which
 * its adaptive default never exceeds; the spin-then-futex baseline spins as
 * long. */
#define WB_DEFAULT_SPIN_NS 200000

typedef struct wb_row {
    const char *section;     /* "roundtrip", "start", "spin", "loaded" */
    const char *variant;
    int64_t n;               /* elements of x; -1: not applicable */
    int64_t spin_ns;         /* -1: the library's default */
    int64_t gap_ns;          /* host work between calls */
    int calls, batches;      /* calls per batch (1 for starts), batches (or starts) */
    double p10, median, p90; /* ns per call */
    double p99;              /* the loaded section (calls timed alone); NAN otherwise */
    double ratio;            /* median / median of ratio_to; NAN if none */
    const char *ratio_to;
    double minus_memcpy;     /* median - memcpy of the same bytes; NAN if none */
    double host_cpu, worker_cpu; /* CPU ns per call; NAN if not measured */
    double budget_ns;        /* NAN: no budget */
    const char *verdict;     /* "PASS", "OVER" or NULL */
} wb_row;

/* Fixed capacity, so that row pointers stay valid while rows are added. */
#define WB_MAX_ROWS 128
typedef struct wb_report {
    wb_row rows[WB_MAX_ROWS];
    size_t n;
} wb_report;

typedef struct wb_config {
    const char *noop, *peek, *csv;
    int quick;
} wb_config;

/* A zeroed row with NAN in every optional number; NULL when full. */
wb_row *report_add(wb_report *r, const char *section, const char *variant);
/* p10, median, p90 of t[0..n) (sorted in place). */
void row_stats(wb_row *row, double *t, size_t n);

/* Open path in worker mode; spawn NULL or "exec"/"fork", spin_ns < 0 for
 * the default. NULL with a message on stderr on failure. */
tsr_component *wb_open_worker(const char *path, const char *spawn, int64_t spin_ns);
/* Open a worker-mode component and find the pid of its worker (-1 when
 * /proc does not say), for reading its CPU clock. */
tsr_component *wb_open_worker_pid(const char *path, int64_t spin_ns, pid_t *worker);
/* CPU time of a process in ns (this one for pid 0); NAN when unknown. */
double wb_cpu_ns(pid_t pid);
/* Sleep long enough for every spinning waiter to have gone to sleep, so
 * that one variant's leftover spinning does not eat the next one's CPU. */
void wb_settle(void);
/* Busy-wait for ns: host work between two calls. */
void wb_busy(int64_t ns);
/* 64-byte aligned ordinary memory (never NULL for 0 bytes unless OOM). */
void *wb_alloc_plain(size_t bytes);

int section_roundtrip(const wb_config *cfg, wb_report *r);
int section_start(const wb_config *cfg, wb_report *r);
int section_spin(const wb_config *cfg, wb_report *r);
int section_loaded(const wb_config *cfg, wb_report *r);

#endif
