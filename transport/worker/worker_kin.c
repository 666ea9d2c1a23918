/* SPDX-License-Identifier: MIT */
/* Keeping what a plugin forks from outliving its worker. Where the kernel
 * allows it, the worker's children are born into a PID namespace of their
 * own whose init is a small process that exits as soon as the worker is
 * gone, however it went (exit, SIGKILL, crash): the kernel then kills
 * every process in the namespace. A root worker creates the namespace
 * directly; any other first enters a user namespace that maps its own uid
 * and gid to themselves. Where neither is allowed, the worker becomes a
 * child subreaper (orphaned descendants are reparented to it, not to init)
 * and kills every descendant it finds when it ends by itself; the host
 * kills the worker's process group whenever a worker ends (worker_proc.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker_proc.h"

static int write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t len = strlen(text);
    ssize_t put = write(fd, text, len);
    int err = errno;
    close(fd);
    if (put == (ssize_t)len) return 0;
    errno = put < 0 ? err : EIO;
    return -1;
}

/* A worker has no use for the capabilities a new user namespace gives it:
 * the plugin runs with none, as it would without the namespace. */
static int drop_capabilities(void) {
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    return (int)syscall(SYS_capset, &hdr, none);
}

/* Enter a user namespace where this process keeps its uid and gid. -1
 * with errno when the kernel refuses one (the process is unchanged); -2
 * with a cause when it was entered but the ids could not be mapped. */
static int enter_user_ns(char *why, size_t n) {
    unsigned long uid = (unsigned long)geteuid(), gid = (unsigned long)getegid();
    if (unshare(CLONE_NEWUSER) != 0) return -1;
    char map[64];
    const char *step = "/proc/self/uid_map";
    snprintf(map, sizeof map, "%lu %lu 1\n", uid, uid);
    if (write_text(step, map) == 0) {
        /* An unprivileged process may map its gid only once setgroups is off. */
        step = "/proc/self/setgroups";
        if (write_text(step, "deny") == 0 || errno == ENOENT) {
            step = "/proc/self/gid_map";
            snprintf(map, sizeof map, "%lu %lu 1\n", gid, gid);
            if (write_text(step, map) == 0) {
                step = "capset";
                if (drop_capabilities() == 0) return 0;
            }
        }
    }
    snprintf(why, n, "cannot set up the worker's user namespace (%s): %s", step, strerror(errno));
    return -2;
}

/* The namespace's init: it holds nothing of the worker (no fd but the
 * worker's pidfd, no shared mapping), reaps the orphans handed to it, and
 * leaves when the worker has, which ends the namespace. */
_Noreturn static void ns_init(int worker) {
    if (worker > 0) (void)syscall(SYS_close_range, 0u, (unsigned)worker - 1, 0u);
    (void)syscall(SYS_close_range, (unsigned)worker + 1, ~0u, 0u);
    (void)signal(SIGCHLD, SIG_IGN); /* orphans are reaped by the kernel */
    (void)prctl(PR_SET_NAME, "tessera-ns-init", 0, 0, 0);
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    struct pollfd gone = {.fd = worker, .events = POLLIN};
    while (poll(&gone, 1, -1) < 0 && errno == EINTR) {
    }
    _exit(0);
}

/* clone3 arguments (linux/sched.h has them only in recent headers). */
struct kin_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* Start the init of the namespace the worker's children will be born in.
 * It signals nothing at its exit, so a plugin's wait() for its own
 * children never sees it (only waits with __WALL do). */
static int start_ns_init(void) {
    int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (self < 0) return -1;
    long r = -1;
#ifdef SYS_clone3
    struct kin_clone_args ca;
    memset(&ca, 0, sizeof ca);
    r = syscall(SYS_clone3, &ca, sizeof ca);
    if (r < 0 && errno == ENOSYS) r = fork();
#else
    r = fork();
#endif
    if (r == 0) ns_init(self);
    int err = errno;
    close(self);
    errno = err;
    return r < 0 ? -1 : 0;
}

int worker_contain_kin(worker_kin *how, char *why, size_t n) {
    *how = WORKER_KIN_GROUP;
    const char *pidns = getenv("TESSERA_WORKER_PIDNS");
    if (!pidns || strcmp(pidns, "0") != 0) {
        int in_ns = unshare(CLONE_NEWPID) == 0;
        if (!in_ns) {
            int u = enter_user_ns(why, n);
            if (u == -2) return TSR_E_WORKER;
            in_ns = u == 0 && unshare(CLONE_NEWPID) == 0;
        }
        /* A namespace whose init could not start takes no children (fork
         * fails with ENOMEM): then only the fallback is left, which needs
         * none; so the init is started before anything relies on it. */
        if (in_ns && start_ns_init() == 0) {
            *how = WORKER_KIN_PIDNS;
            return 0;
        }
        if (in_ns) {
            snprintf(why, n, "cannot start the init of the worker's PID namespace: %s",
                     strerror(errno));
            return TSR_E_WORKER;
        }
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
        snprintf(why, n, "cannot make the worker a child subreaper: %s", strerror(errno));
        return TSR_E_WORKER;
    }
    return 0;
}

/* SIGKILL each live child of pid (all its threads' children) and, first,
 * theirs; returns how many were found. */
static int kill_tree(pid_t pid, int depth) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    DIR *tasks = opendir(path);
    if (!tasks) return 0;
    int found = 0;
    struct dirent *t;
    while ((t = readdir(tasks)) != NULL) {
        if (t->d_name[0] == '.') continue;
        char list[96];
        snprintf(list, sizeof list, "/proc/%ld/task/%.20s/children", (long)pid, t->d_name);
        FILE *f = fopen(list, "re");
        if (!f) continue;
        long child;
        while (fscanf(f, "%ld", &child) == 1) {
            if (child <= 0) continue;
            /* Stopped first, so that it forks no more while its own are
             * found; the depth bound only guards against a runaway chain. */
            (void)kill((pid_t)child, SIGSTOP);
            if (depth < 64) found += kill_tree((pid_t)child, depth + 1);
            if (kill((pid_t)child, SIGKILL) == 0) found++;
        }
        fclose(f);
    }
    closedir(tasks);
    return found;
}

void worker_end_kin(worker_kin how) {
    if (how != WORKER_KIN_GROUP) return; /* the namespace ends with the worker */
    /* Killed children stay as zombies (counted again) and their orphans
     * come to this subreaper: a few rounds find those. */
    for (int round = 0; round < 4 && kill_tree(getpid(), 0) > 0; round++) {
    }
}
