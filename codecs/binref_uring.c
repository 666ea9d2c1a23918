/* SPDX-License-Identifier: MIT */
/*
 * Binref transfers with io_uring: every op is cut into chunks and up to
 * `depth` chunks are in flight at once, submitted in batches. Each thread
 * keeps one ring (setting one up costs 20-40 us, more than writing a small
 * array), released when the thread exits; a forked child makes its own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

/* Memcheck cannot see the kernel fill a buffer through the ring: say so
 * (a no-op outside valgrind, and where its header is missing). */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_DEFINED
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void)(p), (void)(n))
#endif

#include "binref_io.h"

#define MAX_DEPTH 256

typedef struct cached_ring {
    struct io_uring ring;
    unsigned entries;
    pid_t pid;
} cached_ring;

static __thread cached_ring *thread_ring;
static __thread unsigned tuned_depth;
static __thread size_t tuned_chunk;

static pthread_key_t ring_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

static void release_ring(void *p) {
    cached_ring *r = p;
    if (r == NULL) return;
    io_uring_queue_exit(&r->ring);
    free(r);
}

static void make_key(void) {
    key_ok = pthread_key_create(&ring_key, release_ring) == 0;
}

/* Unloading the library must not leave a destructor pointing into it. */
__attribute__((destructor)) static void drop_key(void) {
    if (key_ok) pthread_key_delete(ring_key);
}

void binref_uring_tune(unsigned depth, size_t chunk) {
    if (depth > 0) tuned_depth = depth > MAX_DEPTH ? MAX_DEPTH : depth;
    if (chunk > 0) tuned_chunk = chunk < 4096 ? 4096 : chunk;
}

/* This thread's ring with at least `entries` entries, or NULL with why. */
static struct io_uring *get_ring(unsigned entries, char *why, size_t why_size) {
    (void)pthread_once(&key_once, make_key);
    cached_ring *r = thread_ring;
    if (r != NULL && (r->pid != getpid() || r->entries < entries)) {
        /* In a forked child the ring is the parent's: drop our copy. */
        release_ring(r);
        thread_ring = r = NULL;
        if (key_ok) pthread_setspecific(ring_key, NULL);
    }
    if (r != NULL) return &r->ring;
    r = calloc(1, sizeof *r);
    if (r == NULL) {
        snprintf(why, why_size, "out of memory for an io_uring");
        return NULL;
    }
    int rc = io_uring_queue_init(entries, &r->ring, 0);
    if (rc < 0) {
        free(r);
        snprintf(why, why_size, "io_uring_setup failed: %s", strerror(-rc));
        return NULL;
    }
    r->entries = entries;
    r->pid = getpid();
    thread_ring = r;
    if (key_ok) pthread_setspecific(ring_key, r);
    return &r->ring;
}

/* A chunk: op index, position within the op, bytes left, and whether it
 * waits for a submission or is in the kernel's hands. */
enum { IDLE, PENDING, FLYING };

typedef struct slot {
    int op;
    size_t pos;
    size_t len;
    int state;
} slot;

typedef struct run_state {
    const binref_op *ops;
    int n_ops;
    bool write;
    size_t chunk;
    int next_op; /* where the next chunk starts */
    size_t next_pos;
    int failed;  /* TSR_E_IO once something failed: no new chunks */
    char *why;
    size_t why_size;
} run_state;

static void prep(const run_state *s, struct io_uring_sqe *sqe, int k, const slot *sl) {
    const binref_op *op = &s->ops[sl->op];
    unsigned len = (unsigned)sl->len;
    if (s->write)
        io_uring_prep_write(sqe, op->fd, op->src + sl->pos, len, op->off + sl->pos);
    else
        io_uring_prep_read(sqe, op->fd, op->dst + sl->pos, len, op->off + sl->pos);
    io_uring_sqe_set_data64(sqe, (uint64_t)k);
}

/* The next chunk into sl, skipping empty ops; false when none is left. */
static bool next_chunk(run_state *s, slot *sl) {
    while (s->next_op < s->n_ops && s->next_pos >= s->ops[s->next_op].len) {
        s->next_op++;
        s->next_pos = 0;
    }
    if (s->next_op >= s->n_ops) return false;
    size_t left = s->ops[s->next_op].len - s->next_pos;
    *sl = (slot){.op = s->next_op, .pos = s->next_pos, .len = left < s->chunk ? left : s->chunk,
                 .state = PENDING};
    s->next_pos += sl->len;
    return true;
}

static void fail_op(run_state *s, const slot *sl, int err, bool eof) {
    if (s->failed) return;
    s->failed = TSR_E_IO;
    const binref_op *op = &s->ops[sl->op];
    char what[160];
    binref_what_prefix(what, sizeof what, op->what);
    unsigned long long at = (unsigned long long)(op->off + sl->pos);
    if (eof && !s->write)
        snprintf(s->why, s->why_size,
                 "%s'%s' is truncated: it ended at byte %llu, before the %zu bytes at offset %llu",
                 what, op->file, at, op->len, (unsigned long long)op->off);
    else if (eof)
        snprintf(s->why, s->why_size, "%scannot write '%s' at offset %llu: nothing was written",
                 what, op->file, at);
    else
        snprintf(s->why, s->why_size, "%scannot %s '%s' at offset %llu: %s", what,
                 s->write ? "write" : "read", op->file, at, strerror(err));
}

/* One completion: done, failed, or (partial, interrupted) back to PENDING. */
static void complete(run_state *s, slot *sl, int res) {
    if (res == -EINTR || res == -EAGAIN) {
        sl->state = s->failed ? IDLE : PENDING;
        return;
    }
    if (res <= 0) {
        fail_op(s, sl, -res, res == 0);
        sl->state = IDLE;
        return;
    }
    size_t n = (size_t)res < sl->len ? (size_t)res : sl->len;
    if (!s->write) VALGRIND_MAKE_MEM_DEFINED(s->ops[sl->op].dst + sl->pos, n);
    sl->pos += n;
    sl->len -= n;
    sl->state = sl->len > 0 && !s->failed ? PENDING : IDLE;
}

/* After a failed io_uring_enter: wait out what the kernel holds, then drop
 * the ring, whose queue may still hold entries it never took. */
static void abandon(struct io_uring *ring, int flying) {
    flying -= (int)io_uring_sq_ready(ring);
    while (flying > 0) {
        struct io_uring_cqe *cqe;
        int rc = io_uring_wait_cqe(ring, &cqe);
        if (rc == -EINTR) continue;
        if (rc < 0) break;
        io_uring_cqe_seen(ring, cqe);
        flying--;
    }
    release_ring(thread_ring);
    thread_ring = NULL;
    if (key_ok) pthread_setspecific(ring_key, NULL);
}

int binref_uring_run(const binref_op *ops, int n_ops, bool write, char *why, size_t why_size) {
    unsigned depth = tuned_depth ? tuned_depth : BINREF_URING_DEPTH;
    size_t chunk = tuned_chunk ? tuned_chunk : BINREF_URING_CHUNK;
    if (chunk > ((size_t)1 << 30)) chunk = (size_t)1 << 30;
    struct io_uring *ring = get_ring(depth, why, why_size);
    if (ring == NULL) return BINREF_NO_RING;

    slot slots[MAX_DEPTH];
    memset(slots, 0, sizeof slots);
    run_state s = {.ops = ops, .n_ops = n_ops, .write = write, .chunk = chunk, .why = why,
                   .why_size = why_size};
    int flying = 0;
    for (;;) {
        for (unsigned k = 0; k < depth; k++) {
            if (slots[k].state == IDLE && !s.failed) next_chunk(&s, &slots[k]);
            if (slots[k].state != PENDING) continue;
            /* Never NULL: at most depth entries are ever taken. */
            struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
            if (sqe == NULL) break;
            prep(&s, sqe, (int)k, &slots[k]);
            slots[k].state = FLYING;
            flying++;
        }
        if (flying == 0) break;
        int rc;
        do rc = io_uring_submit_and_wait(ring, 1);
        while (rc == -EINTR);
        if (rc < 0 && rc != -EAGAIN && rc != -EBUSY) {
            if (!s.failed)
                snprintf(why, why_size, "io_uring_enter failed: %s", strerror(-rc));
            abandon(ring, flying);
            return TSR_E_IO;
        }
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(ring, head, cqe) {
            complete(&s, &slots[io_uring_cqe_get_data64(cqe)], cqe->res);
            flying--;
            seen++;
        }
        io_uring_cq_advance(ring, seen);
    }
    return s.failed;
}
