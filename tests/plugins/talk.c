/* SPDX-License-Identifier: MIT */
/*
 * A plugin that prints, for output forwarding. apply (y = x) writes, in
 * this order:
 *   "out K" on stdout for K = 1..lines (config "lines", default 3)
 *   "err line" on stderr
 *   "cwd=DIR" and "env=VALUE" (VALUE of the variable named by config
 *   "env", "(unset)" when absent) on stdout
 *   a warning through tsr_ctx_log: "a warning from talk"
 *   with config "long" = N: one line of N 'x' characters on stdout
 *   with config "partial" = TEXT: TEXT on stdout without a newline
 *   with config "flood" = 1: "flood K" lines on stdout without end (a
 *   plugin that never stops printing; only a timeout ends the call)
 *   with config "list_fds" = 1: "fd N" on stdout for every open fd above 2
 *   with config "list_env" = 1: "environ NAME=VALUE" on stdout for every
 *   variable of the environment, then "environ end"
 * init, with config "init_say" = TEXT, prints TEXT on stdout.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#include "minimal.h"

static int init(tsr_ctx *ctx, void **state) {
    (void)state;
    const char *say = tsr_ctx_config(ctx, "init_say");
    if (say) printf("%s\n", say);
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const char *lines = tsr_ctx_config(ctx, "lines");
    const char *env = tsr_ctx_config(ctx, "env");
    const char *longest = tsr_ctx_config(ctx, "long");
    const char *partial = tsr_ctx_config(ctx, "partial");
    int n = lines ? atoi(lines) : 3;
    for (int k = 1; k <= n; k++) printf("out %d\n", k);
    fflush(stdout);
    fprintf(stderr, "err line\n");
    char cwd[4096];
    printf("cwd=%s\n", getcwd(cwd, sizeof cwd) ? cwd : "(unknown)");
    const char *value = env ? getenv(env) : NULL;
    printf("env=%s\n", value ? value : "(unset)");
    fflush(stdout);
    tsr_ctx_log(ctx, TSR_LOG_WARN, "a warning from talk");
    if (longest) {
        for (long i = atol(longest); i > 0; i--) putchar('x');
        putchar('\n');
    }
    const char *list_fds = tsr_ctx_config(ctx, "list_fds");
    DIR *d = list_fds ? opendir("/proc/self/fd") : NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        int fd = atoi(e->d_name);
        if (fd > 2 && fd != dirfd(d)) printf("fd %d\n", fd);
    }
    if (d) closedir(d);
    const char *list_env = tsr_ctx_config(ctx, "list_env");
    if (list_env) {
        for (char **e = environ; *e; e++) printf("environ %s\n", *e);
        printf("environ end\n");
    }
    if (partial) printf("%s", partial);
    if (tsr_ctx_config(ctx, "flood"))
        for (unsigned long k = 1;; k++) printf("flood %lu\n", k);
    return minimal_apply(ctx, args);
}

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "talk", .version = "1.0",
    .description = "Prints on stdout and stderr, for output forwarding.",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .init = init, .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
