/* SPDX-License-Identifier: MIT */
/* The futex ping-pong baseline (see pingpong.h). Waking follows the
 * channel's rule: the poster stores the value, then wakes the peer only if
 * it said it sleeps; the sleeper says so, then checks again. The futex
 * compares the value atomically, so a post between the two is not lost. */
#define _GNU_SOURCE
#include "pingpong.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

struct pp_page {
    _Atomic uint32_t req, resp;            /* the counter, each way */
    _Atomic uint32_t req_sleeping, resp_sleeping;
    _Atomic int64_t spin_ns;
    _Atomic uint32_t stop;
};

static void futex_wait(_Atomic uint32_t *addr, uint32_t seen) {
    syscall(SYS_futex, addr, FUTEX_WAIT, seen, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr) {
    syscall(SYS_futex, addr, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Wait until *word != seen; returns the new value. */
static uint32_t wait_change(struct pp_page *pg, _Atomic uint32_t *word,
                            _Atomic uint32_t *sleeping, uint32_t seen) {
    int64_t spin = atomic_load(&pg->spin_ns);
    if (spin > 0) {
        int64_t until = bench_now_ns() + spin;
        do {
            for (int i = 0; i < 32; i++) {
                uint32_t v = atomic_load(word);
                if (v != seen) return v;
                cpu_relax();
            }
        } while (bench_now_ns() < until);
    }
    uint32_t v;
    while ((v = atomic_load(word)) == seen) {
        atomic_store(sleeping, 1);
        if ((v = atomic_load(word)) != seen) break;
        futex_wait(word, seen);
    }
    atomic_store(sleeping, 0);
    return v;
}

static void post(_Atomic uint32_t *word, _Atomic uint32_t *sleeping, uint32_t v) {
    atomic_store(word, v);
    if (atomic_load(sleeping)) futex_wake(word);
}

static void serve(struct pp_page *pg) {
    uint32_t seen = 0;
    for (;;) {
        seen = wait_change(pg, &pg->req, &pg->req_sleeping, seen);
        if (atomic_load(&pg->stop)) _exit(0);
        post(&pg->resp, &pg->resp_sleeping, seen);
    }
}

int pingpong_start(pingpong *pp) {
    pp->child = -1;
    pp->page = mmap(NULL, sizeof(struct pp_page), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (pp->page == MAP_FAILED) {
        pp->page = NULL;
        return -1;
    }
    pp->child = fork();
    if (pp->child < 0) return -1;
    if (pp->child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the benchmark */
        if (getppid() == 1) _exit(0);
        serve(pp->page);
    }
    return 0;
}

void pingpong_set_spin(pingpong *pp, int64_t spin_ns) {
    atomic_store(&pp->page->spin_ns, spin_ns);
}

void pingpong_roundtrip(pingpong *pp) {
    struct pp_page *pg = pp->page;
    uint32_t next = atomic_load(&pg->req) + 1;
    post(&pg->req, &pg->req_sleeping, next);
    wait_change(pg, &pg->resp, &pg->resp_sleeping, next - 1);
}

void pingpong_stop(pingpong *pp) {
    if (pp->child > 0) {
        atomic_store(&pp->page->stop, 1);
        post(&pp->page->req, &pp->page->req_sleeping, atomic_load(&pp->page->req) + 1);
        while (waitpid(pp->child, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    if (pp->page) munmap(pp->page, sizeof(struct pp_page));
    pp->page = NULL;
    pp->child = -1;
}
