/* SPDX-License-Identifier: MIT */
/* After answering the only client there is, the request thread waits for
 * its next request awake, polling the socket, instead of going to sleep
 * in libmicrohttpd's epoll_wait at once.
 *
 * On a VM an idle vCPU halts, and waking it for the next request's
 * packet costs more than the whole request: a loopback round trip of 300
 * bytes took 60 us (median) between two sleeping processes on an idle
 * 2-core VM and 23 us with the answering side polling for 200 us
 * (bench/README.md, "Where a request's time goes"). A lone client on a
 * kept-alive connection (a sampler, an optimiser) asks again within tens
 * of microseconds; the thread sees the request when it lands, and
 * libmicrohttpd's next epoll_wait returns at once (the socket is ready).
 *
 * Only with one connection open: with more, this thread may serve others
 * that must not wait behind it, and a busy server does not sleep between
 * requests anyway. The wait is bounded (budget_ns), yields the CPU past
 * its first 20 us (another process may need it), and stops being tried
 * while it keeps missing (a client that comes back slower than the
 * budget), but for one try in PROBE_EVERY answers. */
#include "linger.h"

#include <poll.h>
#include <sched.h>
#include <time.h>

#define YIELD_AFTER_NS 20000u
#define MISSES_TO_PAUSE 4u
#define PROBE_EVERY 32u

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void linger_init(serve_linger *l, uint32_t linger_us) {
    l->budget_ns = (uint64_t)linger_us * 1000u;
    atomic_init(&l->open, 0);
    atomic_init(&l->misses, 0);
    atomic_init(&l->skipped, 0);
}

void linger_opened(serve_linger *l) { atomic_fetch_add(&l->open, 1); }

void linger_closed(serve_linger *l) { atomic_fetch_sub(&l->open, 1); }

void linger_after_answer(serve_linger *l, int fd) {
    if (l->budget_ns == 0 || fd < 0 || atomic_load(&l->open) != 1) return;
    if (atomic_load(&l->misses) >= MISSES_TO_PAUSE &&
        atomic_fetch_add(&l->skipped, 1) + 1 < PROBE_EVERY)
        return;
    atomic_store(&l->skipped, 0);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    uint64_t start = now_ns();
    for (;;) {
        /* Readable, or hung up, or an error: libmicrohttpd takes it from here. */
        if (poll(&p, 1, 0) != 0) {
            atomic_store(&l->misses, 0);
            return;
        }
        uint64_t t = now_ns();
        if (t - start >= l->budget_ns || atomic_load(&l->open) != 1) break;
        if (t - start >= YIELD_AFTER_NS) sched_yield();
    }
    atomic_fetch_add(&l->misses, 1);
}
