/* SPDX-License-Identifier: MIT */
/* Posting a state and waiting for one: spin, then sleep on the doorbell.
 *
 * The spin adapts. Its length follows the waits seen lately (twice their
 * moving average, at least 20 us, at most spin_ns; the least when they
 * last longer than spin_ns: the sleep comes anyway), a lone long wait
 * being a pause between bursts that the average leaves out (note_wait). Past its first 20 us it
 * yields the CPU between checks: on a busy machine the peer may be waiting
 * for this very CPU, and a spinner that keeps it delays the answer it
 * waits for (both sides spinning on two busy cores made 1 us calls take
 * 400 us). Not sooner: yielding while the peer answers within
 * microseconds kept host and worker on one CPU, 8 us a call instead of
 * 0.6 us on an idle machine. Unless the peer last ran on this very CPU
 * (each side posts its CPU with its state) wait after wait, the scheduler
 * not moving either to another CPU (together()): then it cannot answer
 * while this spins, and the spin yields from its first microsecond. That is the
 * common case beside one busy process on two CPUs, where host and worker
 * share the CPU the busy one leaves them: a call with 3 us of host work
 * before it took 16-19 us with the plain spin, 6 us with the yield
 * (bench_gaps, load 1).
 *
 * A yield to another process, though, costs that process's whole time
 * slice (the scheduler runs it until its deadline): beside two busy
 * processes, calls with 100 us of host work between them took 1 ms each.
 * So a yield that kept this thread away for more than YIELD_LOST_NS marks
 * the CPUs crowded, and for CROWDED_NS the spin goes to sleep where it
 * would have yielded: a ring wakes a sleeper soon, since both sides ask
 * for short time slices (chan_slice.c): 4-6k calls/s instead of 1k there,
 * against 6-7k in-process. The first yield after that window is the probe
 * that tells whether they still are.
 *
 * No wake-up is lost: the poster stores the state, then reads whether the
 * peer sleeps; the waiter stores that it sleeps, then reads the state. All
 * four accesses are sequentially consistent, so at least one side sees the
 * other's store: either the waiter sees the state and does not sleep, or
 * the poster sees the flag and rings. A ring that finds nobody asleep only
 * causes one spurious wake-up later, which the loop absorbs. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"

#define CHAN_MAX_EXTRA 8
/* Pure spinning this long first: a peer that runs answers within it, and
 * host and worker stay on CPUs of their own. */
#define SPIN_PLAIN_NS 20000u
/* The least an adaptive spin lasts. */
#define SPIN_MIN_NS 20000u
/* A yield that kept this thread off its CPU this long gave it to another
 * process: the CPUs are crowded. Then, for CROWDED_NS, the spin sleeps
 * where it would have yielded. */
#define YIELD_LOST_NS 50000u
#define CROWDED_NS 100000000u
/* Waits in a row that find the peer on this CPU before the two count as
 * kept together (together()). */
#define TOGETHER_WAITS 256u

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail with a valid clock and pointer */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void chan_post(chan_end *e, uint32_t state) {
    /* sched_getcpu reads the kernel's per-thread rseq area: nanoseconds.
     * Ordered before the state by the state's sequentially consistent
     * store, so the peer that sees the state sees where it came from. */
    atomic_store_explicit(e->my_cpu, sched_getcpu(), memory_order_relaxed);
    atomic_store(&e->blk->state, state);
    if (atomic_load(e->peer_sleeping)) {
        uint64_t one = 1;
        /* Read by the peer after the ring wakes it (note_wait); a clock
         * read is nothing beside the write below. */
        atomic_store_explicit(e->my_rang_ns, now_ns(), memory_order_release);
        /* EAGAIN means the counter is saturated: the peer wakes anyway. */
        while (write(e->peer_bell, &one, sizeof one) < 0 && errno == EINTR) {
        }
    }
}

static int wanted(chan_end *e, uint32_t mask) {
    uint32_t s = atomic_load_explicit(&e->blk->state, memory_order_acquire);
    return (s < 32 && (mask & CHAN_BIT(s))) ? (int)s : -1;
}

/* How long this wait spins: spin_ns as set, or (adaptive) twice the
 * recent waits, within [SPIN_MIN_NS, spin_ns]. */
static uint64_t spin_budget(const chan_end *e) {
    if (!e->spin_adaptive || e->spin_ns <= SPIN_MIN_NS) return e->spin_ns;
    uint64_t est = e->wait_est_ns;
    if (est > e->spin_ns) return SPIN_MIN_NS; /* long waits: sleep soon */
    uint64_t b = 2 * est;
    return b < SPIN_MIN_NS ? SPIN_MIN_NS : b > e->spin_ns ? e->spin_ns : b;
}

/* The peer last ran on this CPU at the start of a wait: are the two kept
 * together (the other CPUs busy), so that the spin should yield at once?
 * Not at first: on an idle machine the plain spin keeps this side
 * runnable, and the scheduler soon moves one of the two to an idle CPU,
 * where both spin and a call costs 0.6 us; yielding at once there kept
 * them on one CPU for good, 6 us a call. Only after TOGETHER_WAITS waits
 * in a row found the peer here (a few milliseconds of the scheduler not
 * separating them) are they together, for CROWDED_NS. */
static int together(chan_end *e, uint64_t start) {
    if (start < e->together_until) return 1;
    if (++e->same_cpu_waits < TOGETHER_WAITS) return 0;
    e->same_cpu_waits = 0;
    e->together_until = start + CROWDED_NS;
    return 1;
}

/* Spin for the budget (bounded by the deadline); the clock is read only
 * every few iterations, since it costs more than a check of the state. */
static int spin(chan_end *e, uint32_t mask, uint64_t start, uint64_t deadline) {
    uint64_t budget = spin_budget(e);
    if (budget == 0) return wanted(e, mask);
    uint64_t until = start + budget;
    if (until > deadline) until = deadline;
    /* A peer that last ran on this CPU cannot answer while this spins. */
    int32_t peer = atomic_load_explicit(e->peer_cpu, memory_order_relaxed);
    int same = peer >= 0 && peer == sched_getcpu();
    uint64_t plain = same && together(e, start) ? 0 : SPIN_PLAIN_NS;
    if (!same) e->same_cpu_waits = 0;
    int crowded = e->spin_adaptive && start < e->crowded_until;
    for (;;) {
        for (int i = 0; i < 32; i++) {
            int s = wanted(e, mask);
            if (s >= 0) return s;
            cpu_relax();
        }
        uint64_t t = now_ns();
        if (t >= until) return wanted(e, mask);
        if (t - start < plain) continue;
        if (crowded) return wanted(e, mask);
        sched_yield();
        uint64_t back = now_ns();
        if (e->spin_adaptive && back - t > YIELD_LOST_NS) {
            /* A yield that brought the answer went to the peer itself
             * (sharing this CPU, or just woken onto it): not crowded. */
            int s = wanted(e, mask);
            if (s >= 0 || same) return s;
            e->crowded_until = back + CROWDED_NS;
            return s;
        }
    }
}

/* The moving average of waits (1/8 of each new one), for the next budget.
 * A wait longer than the longest spin is most often a pause between bursts
 * of calls (the host thinking, a benchmark settling), not the rhythm of
 * the calls: taken in, one such pause held the average above the spin for
 * the dozen calls after it, which then slept where spinning answers in a
 * microsecond (100 us gaps between calls cost 40-260 us instead of 1-2).
 * So a long wait is left out, unless PAUSES_TO_LEARN come in a row: then
 * the rhythm itself is slow and sleeping soon is right. */
#define PAUSES_TO_LEARN 4u
static void note_wait(chan_end *e, uint64_t start) {
    uint64_t now = now_ns(), w = now - start;
    if (e->slept) {
        /* Its peer's time is until it rang: what came after is this side's
         * own wake-up, which on a busy machine can last milliseconds. Taken
         * in, those made the waits look long, the spin shrink, every wait
         * sleep and every wake-up be late: a loop fell into 0.7 ms steps
         * from 5 us and stayed there (bench_gaps.py, two busy processes). */
        uint64_t rang = atomic_load_explicit(e->peer_rang_ns, memory_order_acquire);
        if (rang > start && rang <= now) w = rang - start;
    }
    if (w > e->spin_ns) {
        if (e->long_waits < PAUSES_TO_LEARN) {
            e->long_waits++;
            return;
        }
    } else {
        e->long_waits = 0;
    }
    e->wait_est_ns = e->wait_est_ns - e->wait_est_ns / 8 + w / 8;
}

static void drain_bell(int fd) {
    uint64_t v;
    while (read(fd, &v, sizeof v) < 0 && errno == EINTR) {
    }
}

int chan_wait(chan_end *e, uint32_t want_mask, struct pollfd *extra, int n_extra, int timeout_ms,
              int *ready) {
    if (e->spin_adaptive) chan_short_slice();
    uint64_t start = now_ns();
    uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : start + (uint64_t)timeout_ms * 1000000u;
    e->slept = 0;
    int s = spin(e, want_mask, start, deadline);
    if (s >= 0) {
        note_wait(e, start);
        return s;
    }
    e->slept = 1;
    if (n_extra < 0 || n_extra > CHAN_MAX_EXTRA) n_extra = 0;
    struct pollfd fds[1 + CHAN_MAX_EXTRA];
    fds[0] = (struct pollfd){.fd = e->my_bell, .events = POLLIN};
    for (int i = 0; i < n_extra; i++)
        fds[1 + i] = (struct pollfd){.fd = extra[i].fd, .events = POLLIN};
    for (;;) {
        atomic_store(e->my_sleeping, 1);
        if ((s = wanted(e, want_mask)) >= 0) break;
        int wait_ms = -1;
        if (deadline != UINT64_MAX) {
            uint64_t t = now_ns();
            if (t >= deadline) {
                s = CHAN_WAIT_TIMEOUT;
                break;
            }
            uint64_t left = (deadline - t + 999999u) / 1000000u; /* round up: never wake early */
            wait_ms = left > 0x7fffffff ? 0x7fffffff : (int)left;
        }
        int r = poll(fds, (nfds_t)(1 + n_extra), wait_ms);
        if (r < 0) {
            if (errno == EINTR && !e->return_on_signal) continue;
            if (errno == EINTR && (s = wanted(e, want_mask)) >= 0) break;
            s = errno == EINTR ? CHAN_WAIT_SIGNAL : CHAN_WAIT_ERROR;
            break;
        }
        if (r == 0) continue; /* the deadline check above decides */
        if (fds[0].revents & (POLLERR | POLLNVAL)) {
            s = CHAN_WAIT_ERROR;
            break;
        }
        if (fds[0].revents & POLLIN) drain_bell(e->my_bell);
        int fd_ready = -1;
        for (int i = 0; i < n_extra; i++) {
            extra[i].revents = fds[1 + i].revents;
            if (fds[1 + i].revents && fd_ready < 0) fd_ready = i;
        }
        if (fd_ready >= 0) {
            /* A state reached meanwhile wins; the fd stays readable. */
            if ((s = wanted(e, want_mask)) < 0) {
                s = CHAN_WAIT_FD;
                if (ready) *ready = fd_ready;
            }
            break;
        }
    }
    atomic_store_explicit(e->my_sleeping, 0, memory_order_relaxed);
    if (s >= 0) note_wait(e, start);
    return s;
}
