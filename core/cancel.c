/* SPDX-License-Identifier: MIT */
/* Cancelling a call (tsr_call_cancel, tsr_call_set_cancel_check,
 * tsr_ctx_cancelled): a request flag on the call the host runs, an eventfd
 * that wakes a backend sleeping on its behalf, and the host's own check,
 * run now and then by the thread that runs the call.
 *
 * The flag is the truth; the eventfd only wakes. tsr_call_cancel stores
 * the flag, then writes the eventfd; a run that ends consumes the flag,
 * then drains the eventfd. So a sleeper that sees the eventfd readable but
 * the flag clear (a request merged into the run that just ended) drains it
 * and looks at the flag again before it sleeps (worker_proc.c). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define CHECK_MS_DEFAULT 50
#define FD_NONE (-1)
#define FD_FAILED (-2) /* eventfd() failed once: not tried again for this call */

static void ring(int fd) {
    uint64_t one = 1;
    /* EAGAIN: the counter is full, the fd readable anyway. */
    while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
}

static void drain(int fd) {
    uint64_t v;
    while (read(fd, &v, sizeof v) < 0 && errno == EINTR) {
    }
}

void cancel_init(tsr_call *call) {
    call->cancel_root = call;
    atomic_init(&call->cancel_req, 0);
    atomic_init(&call->cancel_fd, FD_NONE);
}

void cancel_release(tsr_call *call) {
    int fd = atomic_load(&call->cancel_fd);
    if (fd >= 0) close(fd);
}

/* Async-signal-safe: atomics and write(2), errno preserved. */
TSR_API int tsr_call_cancel(tsr_call *call) {
    if (!call) return TSR_E_ARGUMENT;
    int saved = errno;
    tsr_call *root = call->cancel_root;
    atomic_store(&root->cancel_req, 1);
    int fd = atomic_load(&root->cancel_fd);
    if (fd >= 0) ring(fd);
    errno = saved;
    return 0;
}

TSR_API int tsr_call_set_cancel_check(tsr_call *call, tsr_cancel_check_fn check, void *user,
                                      int32_t interval_ms) {
    if (!call || interval_ms < 0) return TSR_E_ARGUMENT;
    call->check_fn = check;
    call->check_user = check ? user : NULL;
    call->check_ms = interval_ms > 0 ? interval_ms : CHECK_MS_DEFAULT;
    return 0;
}

int cancel_begin(tsr_call *call) {
    tsr_call *root = call->cancel_root;
    if (root == call && call->check_fn) {
        call->runner = pthread_self();
        call->check_next_ns = 0;
    }
    if (!atomic_load_explicit(&root->cancel_req, memory_order_relaxed)) return 0;
    call->results_valid = 0;
    return call_fail(call, TSR_E_CANCELLED, "cancelled before it ran");
}

int cancel_end(tsr_call *call, int rc) {
    if (!atomic_exchange(&call->cancel_req, 0)) return rc;
    int fd = atomic_load(&call->cancel_fd);
    if (fd >= 0) drain(fd);
    call->results_valid = 0;
    if (rc == TSR_E_CANCELLED) return rc;
    if (rc == 0)
        return call_fail(call, TSR_E_CANCELLED,
                         "cancelled; the run had finished meanwhile, its results are dropped");
    char cause[TSR_ERRMSG_MAX - 128];
    snprintf(cause, sizeof cause, "%s", call_cause(call));
    return call_fail(call, TSR_E_CANCELLED, "cancelled; meanwhile %s", cause);
}

/* The host's check, by the thread that runs the call only. */
static int runs_here(const tsr_call *root) {
    return root->check_fn && pthread_equal(pthread_self(), root->runner);
}

static int run_check(tsr_call *root) {
    if (!root->check_fn(root->check_user)) return 0;
    tsr_call_cancel(root);
    return 1;
}

int cancel_poll_check(tsr_call *call) {
    tsr_call *root = call->cancel_root;
    if (!runs_here(root)) return 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    uint64_t every = (uint64_t)root->check_ms * 1000000u;
    /* The first poll of a run only starts the clock: a run shorter than
     * the interval never calls the check. */
    if (root->check_next_ns == 0 || now < root->check_next_ns) {
        if (root->check_next_ns == 0) root->check_next_ns = now + every;
        return 0;
    }
    root->check_next_ns = now + every;
    return run_check(root);
}

/* ---- for backends (backend.h) ---------------------------------------------- */

const _Atomic uint32_t *call_cancel_flag(const tsr_call *call) {
    return &call->cancel_root->cancel_req;
}

int call_cancel_fd(tsr_call *call) {
    tsr_call *root = call->cancel_root;
    int fd = atomic_load_explicit(&root->cancel_fd, memory_order_acquire);
    if (fd != FD_NONE) return fd >= 0 ? fd : -1;
    int made = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int expected = FD_NONE;
    int mine = made >= 0 ? made : FD_FAILED;
    if (!atomic_compare_exchange_strong(&root->cancel_fd, &expected, mine)) {
        /* Another lane of a batch made one first. */
        if (made >= 0) close(made);
        return expected >= 0 ? expected : -1;
    }
    return made >= 0 ? made : -1;
}

int call_cancel_check_ms(const tsr_call *call) {
    const tsr_call *root = call->cancel_root;
    return runs_here(root) ? root->check_ms : 0;
}

int call_cancel_check(tsr_call *call) {
    tsr_call *root = call->cancel_root;
    if (atomic_load(&root->cancel_req)) return 1;
    return runs_here(root) ? run_check(root) : 0;
}
