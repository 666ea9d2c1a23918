/* SPDX-License-Identifier: MIT */
/*
 * A plugin whose apply forks a child that lives on after the call, for the
 * tests of a worker's descendants (test_worker_descendants.c). Before
 * apply goes on, the child holds a shared flock on DIR/lock (so that the
 * lock can be taken exclusively once every such process is gone, however
 * deep) and apply appends the child's pid, as fork returned it, to
 * DIR/pids. The configuration:
 *
 *   dir     where the two files are (required)
 *   child   "sleep" (default): the child sleeps; "write": it writes -1 into
 *           the call's output y without pause, for as long as it can
 *   leave   "setsid": the child leaves the worker's process group and
 *           session first
 *   orphan  "1": the child forks the process that lives on and exits, so
 *           that this one is an orphan
 *
 * What apply does after the fork, by the call's x[0]: -1 hangs (without
 * polling for cancellation), -2 crashes the worker (SIGSEGV), anything
 * else is y = x.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "minimal.h"

typedef struct forker_cfg {
    char lock[4096], pids[4096];
    int write, setsid, orphan;
} forker_cfg;

static forker_cfg cfg;

static int init(tsr_ctx *ctx, void **state) {
    const char *dir = tsr_ctx_config(ctx, "dir");
    const char *child = tsr_ctx_config(ctx, "child");
    const char *leave = tsr_ctx_config(ctx, "leave");
    const char *orphan = tsr_ctx_config(ctx, "orphan");
    if (!dir) {
        return tsr_ctx_errorf(ctx, "the configuration has no 'dir'");
    }
    snprintf(cfg.lock, sizeof cfg.lock, "%s/lock", dir);
    snprintf(cfg.pids, sizeof cfg.pids, "%s/pids", dir);
    cfg.write = child && strcmp(child, "write") == 0;
    cfg.setsid = leave && strcmp(leave, "setsid") == 0;
    cfg.orphan = orphan && strcmp(orphan, "1") == 0;
    *state = &cfg;
    return 0;
}

/* The process that lives on: only async-signal-safe calls (the worker has
 * other threads). */
_Noreturn static void live_on(int ready, double *y, int64_t n) {
    char one = 1;
    if (write(ready, &one, 1) != 1) _exit(3);
    close(ready);
    for (;;) {
        if (cfg.write)
            for (int64_t i = 0; i < n; i++) ((volatile double *)y)[i] = -1.0;
        struct timespec nap = {0, cfg.write ? 100 * 1000 : 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

_Noreturn static void child(int ready, double *y, int64_t n) {
    int fd = open(cfg.lock, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_SH) != 0) _exit(2);
    if (cfg.setsid && setsid() < 0) _exit(2);
    if (!cfg.orphan) live_on(ready, y, n);
    pid_t g = fork();
    if (g < 0) _exit(2);
    if (g == 0) live_on(ready, y, n);
    _exit(0);
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *x = &args->inputs[0];
    int64_t n = tsr_array_count(x);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        return tsr_ctx_errorf(ctx, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return tsr_ctx_errorf(ctx, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(p[0]);
        child(p[1], args->results[0].data, n);
    }
    close(p[1]);
    char one = 0;
    ssize_t got;
    while ((got = read(p[0], &one, 1)) < 0 && errno == EINTR) {
    }
    close(p[0]);
    if (cfg.orphan) waitpid(pid, NULL, 0);
    if (got != 1) {
        return tsr_ctx_errorf(ctx, "the child did not start");
    }
    FILE *f = fopen(cfg.pids, "ae");
    if (!f) {
        return tsr_ctx_errorf(ctx, "%s: %s", cfg.pids, strerror(errno));
    }
    fprintf(f, "%ld\n", (long)pid);
    fclose(f);
    const double *xv = x->data;
    if (n > 0 && xv[0] == -1.0)
        for (;;) pause();
    if (n > 0 && xv[0] == -2.0) raise(SIGSEGV);
    return minimal_apply(ctx, args);
}

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "forker", .version = "1.0",
    .description = "Forks a child in apply that outlives the call.",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .init = init, .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
