/* SPDX-License-Identifier: MIT */
/*
 * Tests whose body runs in a forked child: to change its mount namespace,
 * or to be single-threaded (Criterion's test processes have a thread of
 * their own, and spawn=fork is refused in a threaded host). The child
 * returns a verdict string, "ok", "skip" (no privilege for what the test
 * needs) or what went wrong, and the parent reports it. The one such
 * helper of the tests; header-only, like the others.
 */
#ifndef TESSERA_TEST_CHILD_VERDICT_H
#define TESSERA_TEST_CHILD_VERDICT_H

#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tessera/tessera.h>

#include "dir_entries.h"
#include "forked_leak_check.h"

/* Room for a message or two of the library and some words around them. */
static char verdict[3 * TSR_ERRMSG_MAX];

/* In a child's test body: return a formatted verdict unless cond holds. */
#define CHECK(cond, ...)                                             \
    do {                                                             \
        if (!(cond)) {                                               \
            snprintf(verdict, sizeof verdict, __VA_ARGS__);          \
            return verdict;                                          \
        }                                                            \
    } while (0)

/* Run fn in a child and check its verdict. skip_why explains a "skip";
 * NULL when the test cannot be skipped (a "skip" then fails it). The
 * child must leave nothing of its own in /dev/shm. With watchdog_s > 0 the
 * child is killed (SIGALRM) after that many seconds, and the test fails
 * saying it hung, instead of hanging the suite. */
static inline void run_in_child_watched(const char *(*fn)(void), const char *skip_why,
                                        unsigned watchdog_s) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(p[0]);
        if (watchdog_s) alarm(watchdog_s);
        const char *v = fn();
        size_t len = strlen(v);
        int wrote = write(p[1], v, len) == (ssize_t)len;
        /* A leak in the child fails the test through its exit status. */
        forked_leak_check();
        _exit(wrote ? 0 : 1);
    }
    close(p[1]);
    char got[sizeof verdict] = "";
    size_t len = 0;
    for (;;) {
        ssize_t r = read(p[0], got + len, sizeof got - 1 - len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        len += (size_t)r;
    }
    got[len] = '\0';
    close(p[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(!(watchdog_s && WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM),
              "the child hung: the watchdog killed it after %u s", watchdog_s);
    if (skip_why && strcmp(got, "skip") == 0) cr_skip_test("%s", skip_why);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "child status %#x (exit status 23: a leak LeakSanitizer reported)", status);
    cr_expect_str_eq(got, "ok");
    cr_expect_eq(shm_entries_of(pid), 0, "the child left segments in /dev/shm");
}

static inline void run_in_child(const char *(*fn)(void), const char *skip_why) {
    run_in_child_watched(fn, skip_why, 0);
}

#endif /* TESSERA_TEST_CHILD_VERDICT_H */
