/* SPDX-License-Identifier: MIT */
/* Starting the worker process: posix_spawn of tessera-worker, or a plain
 * fork whose child serves directly. Either way the child gets the channel
 * at fd 3, its doorbell at 4, the host's at 5, with shared memory the
 * socket its arena segments arrive on at 6, the output pipe as stdout
 * and stderr, /dev/null as stdin, default signal handling and a process
 * group of its own (a Ctrl-C meant for the host's terminal must not kill
 * it behind the host's back; it exits with its host anyway). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shm/arena.h"
#include "worker/leak_check.h"
#include "worker_spawn.h"

#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 34)
#define HAVE_ADDCLOSEFROM 1
#endif
#endif

extern char **environ;

static int overridden(const char *entry, const char *const *set) {
    size_t len = strcspn(entry, "=");
    for (; set && *set; set++)
        if (strncmp(*set, entry, len) == 0 && (*set)[len] == '=') return 1;
    return 0;
}

/* environ (unless clear_env) without the names env_set replaces, then
 * env_set. The inherited strings are borrowed; those of env_set are copied
 * (posix_spawn takes char *const envp[]) behind the array, in the same
 * block: one free() releases it all. */
static char **build_env(const worker_spawn_opts *o) {
    size_t n_inherit = 0, n_set = 0, set_bytes = 0;
    if (!o->clear_env)
        for (char **e = environ; e && *e; e++) n_inherit++;
    for (const char *const *s = o->env_set; s && *s; s++) {
        n_set++;
        set_bytes += strlen(*s) + 1;
    }
    size_t array_bytes = (n_inherit + n_set + 1) * sizeof(char *);
    char **env = malloc(array_bytes + set_bytes);
    if (!env) return NULL;
    char *text = (char *)env + array_bytes;
    size_t k = 0;
    if (!o->clear_env)
        for (char **e = environ; e && *e; e++)
            if (!overridden(*e, o->env_set)) env[k++] = *e;
    for (const char *const *s = o->env_set; s && *s; s++) {
        size_t len = strlen(*s) + 1;
        env[k++] = memcpy(text, *s, len);
        text += len;
    }
    env[k] = NULL;
    return env;
}

/* Copies of n strings (NULL stays NULL) into one allocated block, returned
 * for free(); posix_spawn takes char *const argv[], so the options' const
 * strings are passed as copies rather than cast. */
static char *copy_strings(const char *const *src, char **dst, int n) {
    size_t total = 1;
    for (int i = 0; i < n; i++) total += src[i] ? strlen(src[i]) + 1 : 0;
    char *block = malloc(total), *p = block;
    if (!block) return NULL;
    for (int i = 0; i < n; i++) {
        dst[i] = NULL;
        if (!src[i]) continue;
        size_t len = strlen(src[i]) + 1;
        dst[i] = memcpy(p, src[i], len);
        p += len;
    }
    return block;
}

static int spawn_exec(const worker_spawn_opts *o, const spawn_fds *f, pid_t *pid, char *why,
                      size_t n) {
    char host_pid[24], spin[24], fd_chan[8], fd_bell[8], fd_host_bell[8], fd_segs[8];
    snprintf(host_pid, sizeof host_pid, "%ld", (long)getpid());
    snprintf(spin, sizeof spin, "%llu", (unsigned long long)o->spin_ns);
    snprintf(fd_chan, sizeof fd_chan, "%d", WORKER_FD_CHAN);
    snprintf(fd_bell, sizeof fd_bell, "%d", WORKER_FD_BELL);
    snprintf(fd_host_bell, sizeof fd_host_bell, "%d", WORKER_FD_HOST_BELL);
    snprintf(fd_segs, sizeof fd_segs, "%d", WORKER_FD_SEGS);
    /* The files transport names its spool; shared memory, the socket on
     * which the arena's segments arrive. */
    enum { COPY_EXE, COPY_PLUGIN, COPY_STORE, COPY_TAG, N_COPIES };
    const char *originals[N_COPIES] = {o->worker_exe, o->plugin_path,
                                       o->spool_dir ? o->spool_dir : fd_segs, o->spool_tag};
    char *copy[N_COPIES];
    char *copies = copy_strings(originals, copy, N_COPIES);
    if (!copies) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    char *argv[28] = {copy[COPY_EXE], "--plugin", copy[COPY_PLUGIN],
                      o->spool_dir ? "--spool" : "--arena-fd", copy[COPY_STORE], "--chan-fd",
                      fd_chan, "--bell", fd_bell, "--host-bell", fd_host_bell, "--host-pid",
                      host_pid, "--spin-ns", spin, "--spin-adaptive",
                      o->spin_adaptive ? "1" : "0"};
    char limit_text[3][24];
    char *limit_opt[3] = {"--rlimit-as", "--rlimit-cpu", "--rlimit-nofile"};
    uint64_t limit_val[3] = {o->limits.as_bytes, o->limits.cpu_seconds, o->limits.nofile};
    int argc = 17;
    for (int i = 0; i < 3; i++)
        if (limit_val[i]) {
            snprintf(limit_text[i], sizeof limit_text[i], "%llu", (unsigned long long)limit_val[i]);
            argv[argc++] = limit_opt[i];
            argv[argc++] = limit_text[i];
        }
    char file_io[8];
    if (o->spool_dir) {
        snprintf(file_io, sizeof file_io, "%d", o->file_io);
        argv[argc++] = "--spool-tag";
        argv[argc++] = copy[COPY_TAG];
        argv[argc++] = "--file-io";
        argv[argc++] = file_io;
    }
    argv[argc] = NULL;
    char **env = build_env(o);
    if (!env) {
        free(copies);
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
#ifdef HAVE_ADDCLOSEFROM
    int first_free = f->segs >= 0 ? WORKER_FD_SEGS + 1 : WORKER_FD_SEGS;
#endif
    int err = posix_spawn_file_actions_init(&fa);
    if (err) {
        free(env);
        free(copies);
        snprintf(why, n, "cannot start the worker: %s", strerror(err));
        return TSR_E_WORKER;
    }
    if ((err = posix_spawnattr_init(&attr))) {
        posix_spawn_file_actions_destroy(&fa);
        free(env);
        free(copies);
        snprintf(why, n, "cannot start the worker: %s", strerror(err));
        return TSR_E_WORKER;
    }
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    const char *step = "prepare";
    if (!(err = posix_spawn_file_actions_adddup2(&fa, f->chan, WORKER_FD_CHAN)) &&
        !(err = posix_spawn_file_actions_adddup2(&fa, f->bell, WORKER_FD_BELL)) &&
        !(err = posix_spawn_file_actions_adddup2(&fa, f->host_bell, WORKER_FD_HOST_BELL)) &&
        !(err = f->segs >= 0 ? posix_spawn_file_actions_adddup2(&fa, f->segs, WORKER_FD_SEGS)
                             : 0) &&
        !(err = posix_spawn_file_actions_adddup2(&fa, f->out, STDOUT_FILENO)) &&
        !(err = posix_spawn_file_actions_adddup2(&fa, f->out, STDERR_FILENO)) &&
        !(err = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0)) &&
#ifdef HAVE_ADDCLOSEFROM
        /* fds the host application left inheritable are not the worker's */
        !(err = posix_spawn_file_actions_addclosefrom_np(&fa, first_free)) &&
#endif
        !(err = o->cwd ? posix_spawn_file_actions_addchdir_np(&fa, o->cwd) : 0) &&
        !(err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                    POSIX_SPAWN_SETPGROUP)) &&
        !(err = posix_spawnattr_setsigmask(&attr, &none)) &&
        !(err = posix_spawnattr_setsigdefault(&attr, &all)) &&
        !(err = posix_spawnattr_setpgroup(&attr, 0))) {
        step = "start";
        err = posix_spawn(pid, o->worker_exe, &fa, &attr, argv, env);
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    free(copies);
    if (err) {
        snprintf(why, n, "cannot %s the worker '%s': %s", step, o->worker_exe, strerror(err));
        return TSR_E_WORKER;
    }
    return 0;
}

/* ---- fork mode: everything below runs in the child --------------------- */

_Noreturn static void child_fail(const char *what) {
    int err = errno;
    dprintf(STDERR_FILENO, "tessera-worker: %s: %s\n", what, strerror(err));
    _exit(127);
}

static void close_from(int lowest) {
    if (syscall(SYS_close_range, (unsigned)lowest, ~0u, 0u) == 0) return;
    struct rlimit rl;
    int top = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536u)
        top = (int)rl.rlim_cur;
    for (int fd = lowest; fd < top; fd++) close(fd); /* EBADF for most: expected */
}

_Noreturn static void child_serve(const worker_spawn_opts *o, const spawn_fds *f, pid_t host) {
    /* Output the host had buffered but not written is the host's, not ours. */
    __fpurge(stdout);
    __fpurge(stderr);
    if (dup2(f->out, STDOUT_FILENO) < 0 || dup2(f->out, STDERR_FILENO) < 0) _exit(127);
    if (setpgid(0, 0) != 0) child_fail("setpgid");
    char cause[300];
    if (shm_unmap_inherited(cause, sizeof cause) != 0) {
        dprintf(STDERR_FILENO, "tessera-worker: %s\n", cause);
        _exit(127);
    }
    /* The host's handlers and mask are not the worker's. */
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) (void)signal(sig, SIG_DFL); /* EINVAL for reserved ones */
    sigset_t none;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0) child_fail("sigprocmask");
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, STDIN_FILENO) < 0) child_fail("/dev/null");
    if (dup2(f->chan, WORKER_FD_CHAN) < 0 || dup2(f->bell, WORKER_FD_BELL) < 0 ||
        dup2(f->host_bell, WORKER_FD_HOST_BELL) < 0 ||
        (f->segs >= 0 && dup2(f->segs, WORKER_FD_SEGS) < 0))
        child_fail("dup2");
    /* The host's other fds, its arenas' segments among them, are not the
     * worker's. */
    close_from(f->segs >= 0 ? WORKER_FD_SEGS + 1 : WORKER_FD_SEGS);
    if (o->cwd && chdir(o->cwd) != 0) child_fail(o->cwd);
    if (o->clear_env && clearenv() != 0) child_fail("clearenv");
    for (const char *const *s = o->env_set; s && *s; s++) {
        char *entry = strdup(*s); /* putenv keeps the string, and may not have a const one */
        if (!entry || putenv(entry) != 0) child_fail("putenv");
    }
    worker_args a = {
        .plugin_path = o->plugin_path,
        .arena_fd = f->segs >= 0 ? WORKER_FD_SEGS : -1,
        .chan_fd = WORKER_FD_CHAN,
        .my_bell = WORKER_FD_BELL,
        .peer_bell = WORKER_FD_HOST_BELL,
        .host_pid = host,
        .spin_ns = o->spin_ns,
        .spin_adaptive = o->spin_adaptive,
        .limits = o->limits,
        .spool_dir = o->spool_dir,
        .spool_tag = o->spool_tag,
        .file_io = o->file_io,
    };
    int status = worker_serve(&a);
    fflush(stdout);
    worker_leak_check_forked();
    _exit(status);
}

static int spawn_fork(const worker_spawn_opts *o, const spawn_fds *f, pid_t *pid, char *why,
                      size_t n) {
    pid_t host = getpid();
    pid_t child = fork();
    if (child < 0) {
        snprintf(why, n, "cannot fork the worker: %s", strerror(errno));
        return TSR_E_WORKER;
    }
    if (child == 0) child_serve(o, f, host);
    /* Also here, so that the group exists for the host to kill from now on
     * (EACCES or ESRCH: the child has done it, or has died). */
    (void)setpgid(child, child);
    *pid = child;
    return 0;
}

int worker_spawn(const worker_spawn_opts *o, const spawn_fds *f, pid_t *pid, char *why,
                 size_t n) {
    return o->use_fork ? spawn_fork(o, f, pid, why, n) : spawn_exec(o, f, pid, why, n);
}
