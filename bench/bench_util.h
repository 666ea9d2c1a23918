/* SPDX-License-Identifier: MIT */
/* Helpers shared by the benchmark programs: a clock, order statistics,
 * creating the folder of a results file, and a busy machine to measure
 * beside. */
#ifndef TSR_BENCH_UTIL_H
#define TSR_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

/* Monotonic time in nanoseconds. */
int64_t bench_now_ns(void);

/* Quantile q in [0, 1] of v[0..n) by nearest rank; v is sorted in place.
 * Returns 0 when n is 0. */
double bench_quantile(double *v, size_t n, double q);

/* Create every missing folder above path (like `mkdir -p $(dirname path)`).
 * Returns 0 or -1 with errno set. */
int bench_make_parent_dirs(const char *path);
/* Open path for writing a CSV, creating its folder first; NULL, with the
 * cause on stderr after "program: ", when either fails. */
FILE *bench_open_csv(const char *program, const char *path);

/* Busy processes (at most 64), each killed with this process or after
 * max_s seconds at the latest; bench_load_stop ends them.
 * bench_load_start starts one per CPU, bench_load_start_n starts n. */
typedef struct bench_load {
    pid_t pid[64];
    int n;
} bench_load;
void bench_load_start(bench_load *l, unsigned max_s);
void bench_load_start_n(bench_load *l, int n, unsigned max_s);
/* CPUs online (at least 1). */
int bench_cpus(void);
void bench_load_stop(bench_load *l);

/* Keep the compiler from assuming anything about the memory behind p, so
 * that a timed store is not removed as dead. */
static inline void bench_clobber(void *p) {
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

#endif
