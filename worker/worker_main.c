/* SPDX-License-Identifier: MIT */
/* tessera-worker: the process a worker-mode host starts. It is not meant
 * to be run by hand; the host passes everything on the command line and
 * through inherited fds (see worker_proc.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker_args.h"

static const char usage[] =
    "usage: tessera-worker --plugin PATH (--arena-fd FD | --spool DIR --spool-tag TAG\n"
    "                      [--file-io 0|1|2]) --chan-fd FD --bell FD --host-bell FD\n"
    "                      --host-pid PID [--spin-ns NS] [--rlimit-as BYTES]\n"
    "                      [--rlimit-cpu SECONDS] [--rlimit-nofile N]\n"
    "tessera-worker is started by libtessera for components opened in worker mode;\n"
    "it is not meant to be run by hand.\n";

__attribute__((format(printf, 1, 2)))
static int bad(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tessera-worker: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

/* A whole decimal number within [lo, hi]. */
static int parse_num(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    worker_args a = {.arena_fd = -1, .chan_fd = -1, .my_bell = -1, .peer_bell = -1, .host_pid = 0};
    long long v;
    for (int i = 1; i < argc; i += 2) {
        const char *opt = argv[i];
        if (i + 1 >= argc) return bad("option '%s' needs a value", opt);
        const char *val = argv[i + 1];
        if (strcmp(opt, "--plugin") == 0) {
            a.plugin_path = val;
        } else if (strcmp(opt, "--arena-fd") == 0) {
            if (parse_num(val, 0, INT_MAX, &v))
                return bad("--arena-fd: '%s' is not a file descriptor", val);
            a.arena_fd = (int)v;
        } else if (strcmp(opt, "--spool") == 0) {
            a.spool_dir = val;
        } else if (strcmp(opt, "--spool-tag") == 0) {
            a.spool_tag = val;
        } else if (strcmp(opt, "--file-io") == 0) {
            if (parse_num(val, 0, 2, &v)) return bad("--file-io: '%s' is not 0, 1 or 2", val);
            a.file_io = (int)v;
        } else if (strcmp(opt, "--spin-adaptive") == 0) {
            if (parse_num(val, 0, 1, &v)) return bad("--spin-adaptive: '%s' is not 0 or 1", val);
            a.spin_adaptive = (int)v;
        } else if (strcmp(opt, "--spin-ns") == 0) {
            if (parse_num(val, 0, LLONG_MAX, &v)) return bad("--spin-ns: '%s' is not a duration", val);
            a.spin_ns = (uint64_t)v;
        } else if (strncmp(opt, "--rlimit-", 9) == 0) {
            uint64_t *slot = strcmp(opt, "--rlimit-as") == 0       ? &a.limits.as_bytes
                             : strcmp(opt, "--rlimit-cpu") == 0    ? &a.limits.cpu_seconds
                             : strcmp(opt, "--rlimit-nofile") == 0 ? &a.limits.nofile
                                                                   : NULL;
            if (!slot) return bad("unknown option '%s'", opt);
            if (parse_num(val, 1, LLONG_MAX, &v)) return bad("'%s' is not a limit", val);
            *slot = (uint64_t)v;
        } else if (strcmp(opt, "--host-pid") == 0) {
            if (parse_num(val, 1, INT_MAX, &v)) return bad("--host-pid: '%s' is not a pid", val);
            a.host_pid = (pid_t)v;
        } else {
            int *fd = strcmp(opt, "--chan-fd") == 0     ? &a.chan_fd
                      : strcmp(opt, "--bell") == 0      ? &a.my_bell
                      : strcmp(opt, "--host-bell") == 0 ? &a.peer_bell
                                                        : NULL;
            if (!fd) return bad("unknown option '%s'", opt);
            if (parse_num(val, 0, INT_MAX, &v)) return bad("'%s' is not a file descriptor", val);
            *fd = (int)v;
        }
    }
    if (!a.plugin_path || (a.arena_fd < 0) == !a.spool_dir || (a.spool_dir && !a.spool_tag) ||
        a.chan_fd < 0 || a.my_bell < 0 || a.peer_bell < 0 ||
        a.host_pid <= 0)
        return bad("%s", "missing options");
    return worker_serve(&a);
}
