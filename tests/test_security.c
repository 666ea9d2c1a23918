/* SPDX-License-Identifier: MIT */
/*
 * What the threat model (docs/threat-model.md) promises and tests can
 * show: shared-memory segments that have no name (memfds: nothing to open,
 * read, plant or block), owner-only, out of reach of other users; and the
 * worker boundary: a plugin that
 * writes into its input damages the caller's array in process, but in a
 * worker it reaches only the arena copy, never the caller's memory (an
 * input the caller put in the arena with tsr_component_alloc is shared, and so is
 * reachable).
 */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>

#include "worker_util.h"

TestSuite(security, .fini = expect_no_own_segments, .timeout = 60);

/* The fds of process pid that are the library's memfds: their numbers,
 * up to max; how many. */
static int own_memfds(pid_t pid, int *fds, int max) {
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        char path[320], target[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len <= 0) continue;
        target[len] = '\0';
        if (strncmp(target, MEMFD_STEM, strlen(MEMFD_STEM)) == 0) fds[n++] = atoi(e->d_name);
    }
    closedir(d);
    return n;
}

/* As the user nobody (a forked child that drops root): whether it can
 * open /proc/<pid>/fd/<fd>, the only path to a memfd. -1 when the test
 * cannot become another user. */
static int other_user_opens(pid_t pid, int fd) {
    if (geteuid() != 0) return -1;
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/fd/%d", (long)pid, fd);
        int got = open(path, O_RDWR);
        _exit(got >= 0 ? 1 : 0);
    }
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 2, "cannot become nobody");
    return WEXITSTATUS(status);
}

Test(security, segments_have_no_name_and_only_their_owner_reaches_them) {
    mode_t old = umask(0); /* a permissive umask must not widen them */
    tsr_component *c = open_worker_cfg(BUNDLED_PLUGIN("noop"), NULL, NULL, NULL, NULL);
    umask(old);
    /* Nothing in /dev/shm or anywhere else can be opened, read, planted
     * or blocked by name: the arena's segments and the channel are memfds. */
    cr_expect_eq(shm_entries_of(getpid()), 0, "entries in /dev/shm");
    cr_expect_gt(memfd_fds_of(getpid(), "arena"), 0, "no arena segment");
    cr_expect_gt(memfd_fds_of(getpid(), "chan"), 0, "no channel");
    int fds[16];
    int n = own_memfds(getpid(), fds, 16);
    cr_assert_geq(n, 2, "an arena segment and a channel segment");
    for (int i = 0; i < n; i++) {
        struct stat st;
        cr_assert_eq(fstat(fds[i], &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0600, "fd %d has mode %o", fds[i], st.st_mode & 07777);
        cr_expect_eq(st.st_uid, geteuid(), "fd %d is not owned by this user", fds[i]);
        cr_expect_eq(st.st_nlink, 0, "fd %d has a name", fds[i]);
        cr_expect_eq(fcntl(fds[i], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC, "fd %d is inherited", fds[i]);
        /* Through /proc only a process that may ptrace this one gets in. */
        cr_expect_neq(other_user_opens(getpid(), fds[i]), 1, "another user opened fd %d",
                      fds[i]);
    }
    tsr_close(c);
}

/* hog with take=scribble overwrites its input x, then y = x. */
static double scribbled_input(tsr_mode mode, int in_arena) {
    tsr_options *o = mode_options(mode);
    set_config(o, "take", "scribble");
    tsr_component *c = open_ok(TEST_PLUGIN("hog"), o);
    tsr_options_free(o);
    double own[2] = {1, 2};
    double *x = in_arena ? tsr_component_alloc(c, sizeof own) : own;
    cr_assert_not_null(x);
    x[0] = 1;
    x[1] = 2;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    run_ok(call);
    double seen = x[0];
    tsr_call_free(call);
    if (in_arena) tsr_component_free_buffer(c, x);
    tsr_close(c);
    return seen;
}

Test(security, a_worker_cannot_write_into_the_callers_memory) {
    cr_expect(isnan(scribbled_input(TSR_MODE_INPROC, 0)), "in process the plugin can");
    cr_expect_eq(scribbled_input(TSR_MODE_WORKER, 0), 1.0, "a worker wrote the caller's array");
    cr_expect(isnan(scribbled_input(TSR_MODE_WORKER, 1)),
              "an input in the arena is shared with the worker");
}
