/*
 * Tests whose body runs in a forked child (to change its mount namespace,
 * or to be single-threaded): the child returns a verdict string, "ok",
 * "skip" (no privilege for what the test needs) or what went wrong, and
 * the parent reports it. Header-only, like the other test helpers.
 */
#ifndef TESSERA_TEST_CHILD_VERDICT_H
#define TESSERA_TEST_CHILD_VERDICT_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tessera/tessera.h>

static char verdict[TSR_ERRMSG_MAX + 512];

/* In a child's test body: return a formatted verdict unless cond holds. */
#define CHECK(cond, ...)                                             \
    do {                                                             \
        if (!(cond)) {                                               \
            snprintf(verdict, sizeof verdict, __VA_ARGS__);          \
            return verdict;                                          \
        }                                                            \
    } while (0)

/* Run fn in a child and check its verdict; skip_why explains a "skip". */
static inline void run_in_child(const char *(*fn)(void), const char *skip_why) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(p[0]);
        const char *v = fn();
        ssize_t w = write(p[1], v, strlen(v));
        _exit(w == (ssize_t)strlen(v) ? 0 : 1);
    }
    close(p[1]);
    char got[sizeof verdict] = "";
    size_t len = 0;
    ssize_t r;
    while ((r = read(p[0], got + len, sizeof got - 1 - len)) > 0) len += (size_t)r;
    got[len] = '\0';
    close(p[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    if (strcmp(got, "skip") == 0) cr_skip_test("%s", skip_why);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    cr_expect_str_eq(got, "ok");
}

#endif
