/* SPDX-License-Identifier: MIT */
/* A remote component's lanes: as many HTTP clients, each with its own
 * kept-alive connection, as the option "workers" asks (core splits a
 * batch over them; threads of the host share them). A call takes a free
 * lane, starting with the one core suggests, or waits for one. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "remote.h"

/* How often a call waiting for a lane looks for a cancel. */
#define WAIT_SLICE_MS 50

int remote_lanes_start(remote_backend *rb, int32_t n, char *why, size_t wn) {
    pthread_condattr_t attr;
    int made = pthread_condattr_init(&attr) == 0;
    if (made) pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (!made || pthread_mutex_init(&rb->lock, NULL) != 0) {
        if (made) pthread_condattr_destroy(&attr);
        snprintf(why, wn, "cannot make a lock");
        return TSR_E_NOMEM;
    }
    if (pthread_cond_init(&rb->freed, &attr) != 0) {
        pthread_condattr_destroy(&attr);
        pthread_mutex_destroy(&rb->lock);
        snprintf(why, wn, "cannot make a condition variable");
        return TSR_E_NOMEM;
    }
    pthread_condattr_destroy(&attr);
    rb->locks_made = 1;
    rb->lanes = calloc((size_t)n, sizeof *rb->lanes);
    if (!rb->lanes) {
        snprintf(why, wn, "out of memory");
        return TSR_E_NOMEM;
    }
    for (; rb->n_lanes < n; rb->n_lanes++) {
        int rc = http_lane_init(&rb->lanes[rb->n_lanes].http, why, wn);
        if (rc) return rc;
    }
    return 0;
}

void remote_lanes_stop(remote_backend *rb) {
    for (int32_t k = 0; k < rb->n_lanes; k++) http_lane_free(&rb->lanes[k].http);
    free(rb->lanes);
    rb->lanes = NULL;
    rb->n_lanes = 0;
    if (rb->locks_made) {
        pthread_cond_destroy(&rb->freed);
        pthread_mutex_destroy(&rb->lock);
        rb->locks_made = 0;
    }
}

static struct timespec slice_from_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += WAIT_SLICE_MS * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static int cancelled(const http_cancel *cx) {
    if (!cx) return 0;
    if (cx->flag && atomic_load_explicit(cx->flag, memory_order_relaxed)) return 1;
    return cx->check && cx->check(cx->user);
}

remote_lane *remote_lane_take(remote_backend *rb, int32_t first, const http_cancel *cx) {
    if (first < 0) first = 0;
    pthread_mutex_lock(&rb->lock);
    for (;;) {
        for (int32_t k = 0; k < rb->n_lanes; k++) {
            remote_lane *l = &rb->lanes[(first + k) % rb->n_lanes];
            if (l->busy) continue;
            l->busy = 1;
            pthread_mutex_unlock(&rb->lock);
            return l;
        }
        struct timespec until = slice_from_now();
        pthread_cond_timedwait(&rb->freed, &rb->lock, &until);
        /* The host's check may take its time: not under the lock. */
        pthread_mutex_unlock(&rb->lock);
        int stop = cancelled(cx);
        pthread_mutex_lock(&rb->lock);
        if (stop) break;
    }
    pthread_mutex_unlock(&rb->lock);
    return NULL;
}

void remote_lane_give(remote_backend *rb, remote_lane *l) {
    pthread_mutex_lock(&rb->lock);
    l->busy = 0;
    pthread_cond_signal(&rb->freed);
    pthread_mutex_unlock(&rb->lock);
}
