/* SPDX-License-Identifier: MIT */
/* A worker's resource limits, set on itself before it loads the plugin, so
 * that the plugin's memory, CPU time and open files are bounded whatever it
 * does; the host's own limits stay as they are. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "worker_args.h"

/* Soft limit `soft`; the hard limit one step above for CPU time, so that
 * SIGXCPU (which names the cause) comes before the SIGKILL, and never above
 * the hard limit already in force, which this process cannot raise. */
static int set_one(int resource, const char *name, uint64_t soft, char *why, size_t n) {
    struct rlimit cur, want;
    if (getrlimit(resource, &cur) != 0) {
        snprintf(why, n, "cannot read %s: %s", name, strerror(errno));
        return -1;
    }
    want.rlim_cur = (rlim_t)soft;
    want.rlim_max = resource == RLIMIT_CPU ? (rlim_t)soft + 1 : (rlim_t)soft;
    if (cur.rlim_max != RLIM_INFINITY && want.rlim_max > cur.rlim_max) want.rlim_max = cur.rlim_max;
    if (want.rlim_cur > want.rlim_max) want.rlim_cur = want.rlim_max;
    if (setrlimit(resource, &want) != 0) {
        snprintf(why, n, "cannot set %s to %llu: %s", name, (unsigned long long)soft,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int worker_apply_rlimits(const worker_rlimits *l, char *why, size_t n) {
    if (l->as_bytes && set_one(RLIMIT_AS, "RLIMIT_AS", l->as_bytes, why, n) != 0) return -1;
    if (l->cpu_seconds && set_one(RLIMIT_CPU, "RLIMIT_CPU", l->cpu_seconds, why, n) != 0)
        return -1;
    if (l->nofile && set_one(RLIMIT_NOFILE, "RLIMIT_NOFILE", l->nofile, why, n) != 0) return -1;
    return 0;
}
