/* SPDX-License-Identifier: MIT */
/* Joining the thread of a lane (a batch's items, batch.c; finite
 * differences' evaluations on a pool, fd_fallback.c) while the host's
 * cancel check keeps its rhythm in the joining thread. */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "internal.h"

void lane_join(tsr_call *call, pthread_t thread) {
    int ms = call_cancel_check_ms(call);
    while (ms > 0) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += ms / 1000;
        until.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        int r = pthread_timedjoin_np(thread, NULL, &until);
        if (r == 0) return;
        if (r != ETIMEDOUT || call_cancel_check(call)) break;
    }
    pthread_join(thread, NULL);
}
