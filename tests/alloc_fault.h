/* SPDX-License-Identifier: MIT */
/*
 * Allocation failures on demand, for one test program: this header defines
 * malloc, calloc, realloc, free and the aligned allocators, which take
 * precedence over the C library's (and AddressSanitizer's) for the whole
 * process, libtessera and jansson included, and forward to them. While a
 * thread is armed, its allocations are counted and the Nth fails; every
 * block it allocated is tracked until freed, so a test can tell what a
 * failed call left behind. No production code is changed.
 *
 * Include in exactly one file of a program.
 */
#ifndef TESSERA_TEST_ALLOC_FAULT_H
#define TESSERA_TEST_ALLOC_FAULT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h> /* memalign: every function defined below is declared first */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct fault_real {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    void *(*aligned_alloc)(size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*memalign)(size_t, size_t);
} fault_real;

static fault_real fault_next;
static __thread int fault_armed;      /* this thread counts and fails */
static __thread long fault_seen;      /* allocations counted since arming */
static __thread long fault_at;        /* the one that fails (1-based) */
static __thread int fault_failed;     /* it has failed */

/* Blocks allocated by armed threads and not freed yet. */
#define FAULT_TRACK_CAP 65536
static void *fault_track[FAULT_TRACK_CAP];
static long fault_live;
/* A spin lock: these functions run before the C library (or ASan) is ready
 * for pthread calls. */
static atomic_flag fault_lock = ATOMIC_FLAG_INIT;

static void fault_lock_take(void) {
    while (atomic_flag_test_and_set_explicit(&fault_lock, memory_order_acquire)) {
    }
}

static void fault_lock_give(void) { atomic_flag_clear_explicit(&fault_lock, memory_order_release); }

/* dlsym may allocate before the real functions are known: a little static
 * memory serves it, and is never given back. */
static char fault_boot[8192] __attribute__((aligned(64)));
static size_t fault_boot_used;

static int fault_is_boot(const void *p) {
    return (const char *)p >= fault_boot && (const char *)p < fault_boot + sizeof fault_boot;
}

static void *fault_boot_alloc(size_t n) {
    size_t at = (fault_boot_used + 63) & ~(size_t)63;
    if (at + n > sizeof fault_boot) return NULL;
    fault_boot_used = at + n;
    return fault_boot + at;
}

static int fault_resolving;

static void fault_resolve(void) {
    if (fault_next.free || fault_resolving) return;
    fault_resolving = 1;
    fault_next.malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    fault_next.calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    fault_next.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    fault_next.aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    fault_next.posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    fault_next.memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    fault_next.free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    fault_resolving = 0;
}

static size_t fault_slot(const void *p) {
    return (size_t)(((uintptr_t)p >> 4) * 11400714819323198485ull) % FAULT_TRACK_CAP;
}

static void fault_remember(void *p) {
    if (!p || !fault_armed) return;
    fault_lock_take();
    for (size_t i = fault_slot(p), k = 0; k < FAULT_TRACK_CAP; k++, i = (i + 1) % FAULT_TRACK_CAP)
        if (!fault_track[i] || fault_track[i] == (void *)1) {
            fault_track[i] = p;
            fault_live++;
            break;
        }
    fault_lock_give();
}

static void fault_forget(void *p) {
    if (!p) return;
    fault_lock_take();
    if (fault_live > 0)
        for (size_t i = fault_slot(p), k = 0; k < FAULT_TRACK_CAP && fault_track[i];
             k++, i = (i + 1) % FAULT_TRACK_CAP)
            if (fault_track[i] == p) {
                fault_track[i] = (void *)1; /* a tombstone keeps probing chains intact */
                fault_live--;
                break;
            }
    fault_lock_give();
}

/* 1 when this allocation is the one to fail. */
static int fault_now(void) {
    if (!fault_armed) return 0;
    if (++fault_seen != fault_at) return 0;
    fault_failed = 1;
    return 1;
}

void *malloc(size_t n) {
    fault_resolve();
    if (!fault_next.malloc) return fault_boot_alloc(n);
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = fault_next.malloc(n);
    fault_remember(p);
    return p;
}

void *calloc(size_t k, size_t n) {
    fault_resolve();
    if (!fault_next.calloc) return fault_boot_alloc(k * n); /* static memory is zeroed */
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = fault_next.calloc(k, n);
    fault_remember(p);
    return p;
}

void *realloc(void *old, size_t n) {
    fault_resolve();
    if (fault_is_boot(old)) {
        void *p = malloc(n);
        if (p) memcpy(p, old, n < sizeof fault_boot ? n : sizeof fault_boot);
        return p;
    }
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = fault_next.realloc(old, n);
    if (p) {
        fault_forget(old);
        fault_remember(p);
    }
    return p;
}

void free(void *p) {
    if (!p || fault_is_boot(p)) return;
    fault_resolve();
    if (!fault_next.free) return; /* while resolving: the block is kept */
    fault_forget(p);
    fault_next.free(p);
}

void *aligned_alloc(size_t align, size_t n) {
    fault_resolve();
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = fault_next.aligned_alloc(align, n);
    fault_remember(p);
    return p;
}

int posix_memalign(void **out, size_t align, size_t n) {
    fault_resolve();
    if (fault_now()) return ENOMEM;
    int rc = fault_next.posix_memalign(out, align, n);
    if (rc == 0) fault_remember(*out);
    return rc;
}

void *memalign(size_t align, size_t n) {
    fault_resolve();
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = fault_next.memalign(align, n);
    fault_remember(p);
    return p;
}

/* The dynamic loader keeps state of its own across calls (the objects it
 * has seen, the last dlerror() message): its allocations are the C
 * library's business, so they are neither failed nor tracked. */
#define FAULT_PAUSED(type, expr)                     \
    do {                                             \
        int armed_ = fault_armed;                    \
        fault_armed = 0;                             \
        type r_ = (expr);                            \
        fault_armed = armed_;                        \
        return r_;                                   \
    } while (0)

void *dlopen(const char *file, int mode) {
    static void *(*next)(const char *, int);
    if (!next) next = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    FAULT_PAUSED(void *, next(file, mode));
}

void *dlmopen(Lmid_t ns, const char *file, int mode) {
    static void *(*next)(Lmid_t, const char *, int);
    if (!next) next = (void *(*)(Lmid_t, const char *, int))dlsym(RTLD_NEXT, "dlmopen");
    FAULT_PAUSED(void *, next(ns, file, mode));
}

int dlclose(void *handle) {
    static int (*next)(void *);
    if (!next) next = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    FAULT_PAUSED(int, next(handle));
}

char *dlerror(void) {
    static char *(*next)(void);
    if (!next) next = (char *(*)(void))dlsym(RTLD_NEXT, "dlerror");
    FAULT_PAUSED(char *, next());
}

/* Count this thread's allocations from now on and fail the at-th. */
static inline void fault_arm(long at) {
    fault_resolve();
    fault_seen = 0;
    fault_at = at;
    fault_failed = 0;
    fault_armed = 1;
}

/* Stop counting; returns 1 if an allocation was made to fail. */
static inline int fault_disarm(void) {
    fault_armed = 0;
    return fault_failed;
}

/* Blocks the armed thread allocated that are still live. */
static inline long fault_live_blocks(void) {
    fault_lock_take();
    long n = fault_live;
    fault_lock_give();
    return n;
}

/* Forget every tracked block (after a check, before the next round). */
static inline void fault_reset_tracking(void) {
    fault_lock_take();
    memset(fault_track, 0, sizeof fault_track);
    fault_live = 0;
    fault_lock_give();
}

#endif /* TESSERA_TEST_ALLOC_FAULT_H */
