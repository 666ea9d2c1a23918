/* SPDX-License-Identifier: MIT */
/* What bench_worker's sections share: the report, opening components,
 * finding a worker's pid and CPU clock, settling between batches. */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "bench_worker.h"

/* Longer than the longest spin any section sets (200 us). */
#define SETTLE_NS 300000

wb_row *report_add(wb_report *r, const char *section, const char *variant) {
    if (r->n == WB_MAX_ROWS) {
        fprintf(stderr, "bench_worker: more than %d rows\n", WB_MAX_ROWS);
        return NULL;
    }
    wb_row *row = &r->rows[r->n++];
    *row = (wb_row){.section = section, .variant = variant, .n = -1, .spin_ns = -1,
                    .ratio = NAN, .minus_memcpy = NAN, .host_cpu = NAN, .worker_cpu = NAN,
                    .budget_ns = NAN, .p99 = NAN};
    return row;
}

void row_stats(wb_row *row, double *t, size_t n) {
    row->p10 = bench_quantile(t, n, 0.10);
    row->median = bench_quantile(t, n, 0.50);
    row->p90 = bench_quantile(t, n, 0.90);
}

tsr_component *wb_open_worker(const char *path, const char *spawn, int64_t spin_ns) {
    tsr_options *o = tsr_options_new();
    tsr_error err = {0};
    tsr_component *c = NULL;
    char spin[32];
    snprintf(spin, sizeof spin, "%lld", (long long)spin_ns);
    if (!o || tsr_options_set(o, "mode", "worker", &err) != 0 ||
        (spawn && tsr_options_set(o, "spawn", spawn, &err) != 0) ||
        (spin_ns >= 0 && tsr_options_set(o, "spin_ns", spin, &err) != 0) ||
        tsr_open(path, o, &c, &err) != 0)
        fprintf(stderr, "bench_worker: %s\n", o ? err.message : "out of memory");
    tsr_options_free(o);
    return c;
}

/* Children of every thread of this process, as a set of pids. */
static int list_children(pid_t *out, int cap) {
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        long pid;
        while (n < cap && fscanf(f, "%ld", &pid) == 1) out[n++] = (pid_t)pid;
        fclose(f);
    }
    closedir(d);
    return n;
}

tsr_component *wb_open_worker_pid(const char *path, int64_t spin_ns, pid_t *worker) {
    pid_t before[256], after[256];
    int nb = list_children(before, 256);
    tsr_component *c = wb_open_worker(path, NULL, spin_ns);
    int na = list_children(after, 256), found = 0;
    *worker = -1;
    for (int i = 0; i < na; i++) {
        int old = 0;
        for (int j = 0; j < nb && !old; j++) old = after[i] == before[j];
        if (!old) {
            *worker = after[i];
            found++;
        }
    }
    if (found != 1) *worker = -1; /* several new children: cannot tell which */
    return c;
}

double wb_cpu_ns(pid_t pid) {
    clockid_t clk = CLOCK_PROCESS_CPUTIME_ID;
    if (pid < 0 || (pid > 0 && clock_getcpuclockid(pid, &clk) != 0)) return NAN;
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0) return NAN;
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void wb_settle(void) {
    struct timespec ts = {0, SETTLE_NS};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

void wb_busy(int64_t ns) {
    if (ns <= 0) return;
    int64_t until = bench_now_ns() + ns;
    while (bench_now_ns() < until) {
    }
}

void *wb_alloc_plain(size_t bytes) {
    size_t rounded = (bytes + 63) / 64 * 64;
    return aligned_alloc(64, rounded ? rounded : 64);
}
