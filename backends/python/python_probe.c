/* SPDX-License-Identifier: MIT */
/* An interpreter's version and shared library, asked of the interpreter
 * itself (-I -S: no site, no user settings, about 10 ms), and the
 * programs that build environments, run with their output in a log. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "python_env.h"

extern char **environ;

static const char probe_code[] =
    "import sys, sysconfig as s\n"
    "print('%d.%d' % sys.version_info[:2])\n"
    "print(s.get_config_var('LIBDIR') or '')\n"
    "print(s.get_config_var('INSTSONAME') or '')\n";

/* The last answer, for components opened one after another. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static python_target cached;

static int wait_exit(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Run the probe; its three lines into text. */
static int run_probe(const char *python, char *text, size_t n, char *why, size_t wn) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(why, wn, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    char exe[4096], code[sizeof probe_code];
    if (path_fmt(exe, sizeof exe, "%s", python)) {
        close(fds[0]);
        close(fds[1]);
        snprintf(why, wn, "the Python interpreter's path is too long");
        return -1;
    }
    memcpy(code, probe_code, sizeof code);
    char *argv[] = {exe, "-I", "-S", "-c", code, NULL};
    pid_t pid;
    int e = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (e != 0) {
        close(fds[0]);
        snprintf(why, wn, "cannot run the Python interpreter '%s': %s", python, strerror(e));
        return -1;
    }
    size_t used = 0;
    ssize_t got;
    while (used + 1 < n && ((got = read(fds[0], text + used, n - 1 - used)) > 0 ||
                            (got < 0 && errno == EINTR)))
        if (got > 0) used += (size_t)got;
    text[used] = '\0';
    close(fds[0]);
    if (wait_exit(pid) != 0) {
        snprintf(why, wn, "the Python interpreter '%s' failed to describe itself", python);
        return -1;
    }
    return 0;
}

int python_probe(const char *python, python_target *t, char *why, size_t n) {
    pthread_mutex_lock(&cache_lock);
    int hit = strcmp(cached.python, python) == 0 && cached.libpython[0];
    if (hit) *t = cached;
    pthread_mutex_unlock(&cache_lock);
    if (hit) return 0;
    char text[8192];
    if (run_probe(python, text, sizeof text, why, n) != 0) return -1;
    char *save = NULL;
    char *version = strtok_r(text, "\n", &save);
    char *libdir = strtok_r(NULL, "\n", &save);
    char *soname = libdir ? strtok_r(NULL, "\n", &save) : NULL;
    if (!version || !soname || !*soname) {
        snprintf(why, n,
                 "the Python interpreter '%s' has no shared library (libpython), so it cannot be "
                 "embedded; use a Python built with --enable-shared",
                 python);
        return -1;
    }
    memset(t, 0, sizeof *t);
    if (path_fmt(t->python, sizeof t->python, "%s", python) ||
        path_fmt(t->version, sizeof t->version, "%s", version)) {
        snprintf(why, n, "the Python interpreter's path is too long");
        return -1;
    }
    /* In a distribution's layout the loader finds it by its name alone. */
    if (path_fmt(t->libpython, sizeof t->libpython, "%s/%s", libdir, soname) ||
        access(t->libpython, R_OK) != 0)
        path_fmt(t->libpython, sizeof t->libpython, "%s", soname);
    pthread_mutex_lock(&cache_lock);
    cached = *t;
    pthread_mutex_unlock(&cache_lock);
    return 0;
}

int python_run_logged(char *const argv[], const char *cwd, int log_fd, int err_fd, char *why,
                      size_t n) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, log_fd, 1);
    if (err_fd != 2) posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd);
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        snprintf(why, n, "cannot run %s: %s", argv[0], strerror(e));
        return -1;
    }
    int status = wait_exit(pid);
    if (status != 0) {
        snprintf(why, n, "%s %s exited with status %d", argv[0], argv[1] ? argv[1] : "", status);
        return -1;
    }
    return 0;
}

int path_fmt(char *out, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(out, n, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= n) {
        if (n) out[0] = '\0';
        return -1;
    }
    return 0;
}
