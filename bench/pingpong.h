/* SPDX-License-Identifier: MIT */
/*
 * Baseline for a cross-process round trip: two processes hand a counter
 * back and forth over one shared page, each waiting the way the library's
 * channel does (spin for spin_ns, then sleep) but with a bare futex. No
 * data moves: this is the floor under any worker-mode call.
 */
#ifndef TSR_BENCH_PINGPONG_H
#define TSR_BENCH_PINGPONG_H

#include <stdint.h>
#include <sys/types.h>

typedef struct pingpong {
    struct pp_page *page;
    pid_t child;
} pingpong;

/* Fork the answering process. Returns 0 or -1 with errno set. */
int pingpong_start(pingpong *pp);
/* Set how long both sides spin before they sleep (0: always sleep). */
void pingpong_set_spin(pingpong *pp, int64_t spin_ns);
/* One round trip: post a request, wait for the answer. */
void pingpong_roundtrip(pingpong *pp);
/* Stop and reap the child. Accepts a pingpong that failed to start. */
void pingpong_stop(pingpong *pp);

#endif
