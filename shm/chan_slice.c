/* SPDX-License-Identifier: MIT */
/* A short time slice for the threads that wait on a channel.
 *
 * Linux's fair scheduler (EEVDF, 6.6 on) runs a thread that wakes up, or
 * that a yielding thread hands the CPU to, only when it is due by its
 * virtual deadline, and a thread's deadline is its slice away: with the
 * default slice (0.7-3 ms) a woken worker, or a host whose worker yielded,
 * waits behind a busy process for most of a slice. From 6.12 a thread may
 * ask for a shorter slice (sched_setattr, sched_runtime, 0.1 to 100 ms, no
 * privilege needed): its deadlines come sooner, so it is run soon after it
 * wakes, while its share of the CPU stays what its weight gives. Beside
 * two busy processes on two CPUs, calls with 100 us of host work between
 * them, whose waits sleep there (chan_wait.c), ran at 1k a second with the
 * default slice and at 4-6k with 100 us slices on both sides, against
 * 6-7k in-process (bench_gaps, load 2).
 *
 * So with the library's own waits (spin_ns left to adapt) the worker's
 * thread and every host thread that waits on a worker ask for 100 us once;
 * a thread that runs under another policy, or already has a slice at least
 * as short, is left as it is, and a kernel that refuses is no error. */
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "channel.h"

#define SHORT_SLICE_NS 100000u

/* struct sched_attr as the system calls take it (linux/sched/types.h
 * cannot be included beside <sched.h>). */
typedef struct slice_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
} slice_attr;

void chan_short_slice(void) {
    static _Thread_local int done;
    if (done) return;
    done = 1;
#if defined(SYS_sched_getattr) && defined(SYS_sched_setattr)
    slice_attr a;
    memset(&a, 0, sizeof a);
    if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0) != 0) return;
    if (a.sched_policy != SCHED_OTHER) return;
    if (a.sched_runtime != 0 && a.sched_runtime <= SHORT_SLICE_NS) return;
    a.size = sizeof a;
    a.sched_runtime = SHORT_SLICE_NS;
    a.sched_flags = 0; /* keep nice and policy as read; reset nothing else */
    (void)syscall(SYS_sched_setattr, 0, &a, 0);
#endif
}
