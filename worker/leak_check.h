/* SPDX-License-Identifier: MIT */
/* A worker forked from its host (spawn=fork) ends with _exit, which skips
 * the leak check LeakSanitizer runs at exit: in a sanitizer build it runs
 * here instead, so that a leak in the worker is reported (and the worker
 * exits with LeakSanitizer's status). Nothing in other builds. */
#ifndef TESSERA_WORKER_LEAK_CHECK_H
#define TESSERA_WORKER_LEAK_CHECK_H

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WORKER_HAVE_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WORKER_HAVE_LSAN 1
#endif

#ifdef WORKER_HAVE_LSAN
#include <pthread.h>
#include <sanitizer/lsan_interface.h>

/* LeakSanitizer knows the forked child's one thread by the host thread's
 * id, so it would not scan its stack, where the host's frames still hold
 * what the host was using at the fork: the live part of the stack is
 * given as a root. */
static inline void worker_leak_check_forked(void) {
    pthread_attr_t attr;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return; /* no check rather than a false one */
    int rc = pthread_attr_getstack(&attr, &lo, &size);
    pthread_attr_destroy(&attr);
    /* From this frame up: what lies below is dead and may hold stale
     * pointers that would hide a leak. */
    char *top = (char *)lo + size, *here = (char *)__builtin_frame_address(0);
    if (rc != 0 || here < (char *)lo || here >= top) return;
    __lsan_register_root_region(here, (size_t)(top - here));
    __lsan_do_leak_check();
}
#else
static inline void worker_leak_check_forked(void) {}
#endif

#endif
