/* SPDX-License-Identifier: MIT */
/*
 * The leak check for a test's forked child that ends with _exit (which
 * skips LeakSanitizer's check at exit): in a sanitizer build, check now,
 * LeakSanitizer exiting with its status (23) on a leak. LeakSanitizer
 * knows the child's one thread by the parent thread's id and would not
 * scan its stack, where the parent's frames still hold what the parent was
 * using at the fork: the live part of the stack is given
 * to it as a root. The library's
 * forked workers do the same (worker/leak_check.h). Nothing otherwise.
 */
#ifndef TESSERA_TEST_FORKED_LEAK_CHECK_H
#define TESSERA_TEST_FORKED_LEAK_CHECK_H

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/lsan_interface.h>

/* glibc's, declared here for the test programs built without _GNU_SOURCE. */
extern int pthread_getattr_np(pthread_t thread, pthread_attr_t *attr);

static inline void forked_leak_check(void) {
    pthread_attr_t attr;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
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
static inline void forked_leak_check(void) {}
#endif

#endif /* TESSERA_TEST_FORKED_LEAK_CHECK_H */
