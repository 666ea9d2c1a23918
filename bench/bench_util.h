/* SPDX-License-Identifier: MIT */
/* Helpers shared by the benchmark programs: a clock, order statistics and
 * creating the folder of a results file. */
#ifndef TSR_BENCH_UTIL_H
#define TSR_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic time in nanoseconds. */
int64_t bench_now_ns(void);

/* Quantile q in [0, 1] of v[0..n) by nearest rank; v is sorted in place.
 * Returns 0 when n is 0. */
double bench_quantile(double *v, size_t n, double q);

/* Create every missing folder above path (like `mkdir -p $(dirname path)`).
 * Returns 0 or -1 with errno set. */
int bench_make_parent_dirs(const char *path);

/* Keep the compiler from assuming anything about the memory behind p, so
 * that a timed store is not removed as dead. */
static inline void bench_clobber(void *p) {
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

#endif
