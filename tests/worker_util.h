/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the public-API tests of worker mode (tests/test_worker_*.c):
 * options per mode, the processes a host has started, shared-memory
 * segments left behind, and collected output lines. Tests that run their
 * body in a forked child use child_verdict.h (included here).
 */
#ifndef TESSERA_TEST_WORKER_UTIL_H
#define TESSERA_TEST_WORKER_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "child_verdict.h"
#include "dir_entries.h"
#include "test_util.h"

static const char *const mode_names[] = {"inproc", "isolated", "worker"};

/* Options for a mode; the caller adds to them and frees them. */
static inline tsr_options *mode_options(tsr_mode mode) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "mode", mode_names[mode], &err), 0, "%s", err.message);
    return o;
}

static inline void set_option(tsr_options *o, const char *key, const char *value) {
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_options_set(o, key, value, &err);
    cr_assert_eq(rc, 0, "option %s=%s: %s", key, value, err.message);
}

static inline void set_config(tsr_options *o, const char *key, const char *value) {
    cr_assert_eq(tsr_options_set_config(o, key, value), 0, "config %s=%s", key, value);
}

/* A component opened in a mode, with no other option. */
static inline tsr_component *open_mode(const char *path, tsr_mode mode) {
    tsr_options *o = mode_options(mode);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* A worker-mode component with at most two configuration keys (NULL key:
 * none). */
static inline tsr_component *open_worker_cfg(const char *path, const char *k1, const char *v1,
                                             const char *k2, const char *v2) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    if (k1) set_config(o, k1, v1);
    if (k2) set_config(o, k2, v2);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

static inline tsr_stats stats_of(const tsr_component *c) {
    tsr_stats s = TSR_STATS_INIT;
    tsr_component_stats(c, &s);
    return s;
}

/* ---- processes --------------------------------------------------------- */

static inline double ms_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static inline void sleep_ms(long ms) {
    struct timespec nap = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&nap, &nap) != 0 && errno == EINTR) {
    }
}

/* State letter of a process ('R', 'S', 'Z', ...), its parent, or 0 when
 * there is no such process. */
static inline char proc_state(pid_t pid, pid_t *ppid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ') return 0;
    char state = p[2];
    long parent = 0;
    if (ppid) *ppid = sscanf(p + 3, " %ld", &parent) == 1 ? (pid_t)parent : 0;
    return state;
}

/* CPU time a process has used (utime + stime, in clock ticks), or -1. */
static inline long long proc_cpu_ticks(pid_t pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p) return -1;
    unsigned long long utime, stime;
    /* fields 3 to 13, then utime (14) and stime (15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
               &stime) != 2)
        return -1;
    return (long long)(utime + stime);
}

/* 1 when no process has that pid, or only a zombie does (its new parent
 * may be slow to reap it). */
static inline int process_gone(pid_t pid) {
    char s = proc_state(pid, NULL);
    return s == 0 || s == 'Z' || s == 'X';
}

/* Wait up to ms for the process to be gone; 1 if it is. */
static inline int wait_gone(pid_t pid, long ms) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!process_gone(pid) && ms_since(&t0) < (double)ms) sleep_ms(5);
    return process_gone(pid);
}

/* The live (not zombie) children of a process, up to max; returns how many. */
static inline int children_of(pid_t parent, pid_t *out, int max) {
    DIR *d = opendir("/proc");
    cr_assert_not_null(d, "cannot read /proc");
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0) continue;
        pid_t pp = 0;
        char s = proc_state((pid_t)pid, &pp);
        if (s && s != 'Z' && s != 'X' && pp == parent) out[n++] = (pid_t)pid;
    }
    closedir(d);
    return n;
}

/* The single worker this process runs now (the test fails otherwise). */
static inline pid_t only_worker(void) {
    pid_t kids[8];
    int n = children_of(getpid(), kids, 8);
    cr_assert_eq(n, 1, "expected exactly one worker process, found %d", n);
    return kids[0];
}

/* ---- shared memory ----------------------------------------------------- */

/* Teardown of every worker test: whatever a test opened, it closed: this
 * process holds no segment (fd or mapping), and has nothing in /dev/shm. */
static inline void expect_no_own_segments(void) {
    int n = memfds_held(getpid());
    cr_expect_eq(n, 0, "%d memfd segments of this process are still open or mapped", n);
    n = shm_entries_of(getpid());
    cr_expect_eq(n, 0, "%d /dev/shm/tessera-%ld-* entries of this process", n, (long)getpid());
}

/* 1 if [p, p + bytes) lies in a mapping of one of this process's arena
 * segments (memfds, read from /proc/self/maps). */
static inline int in_own_shared_memory(const void *p, size_t bytes) {
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert_not_null(f);
    char line[1024];
    const char *stem = MEMFD_STEM "arena";
    uintptr_t a = (uintptr_t)p;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
        if (strstr(line, stem) && a >= lo && a + bytes <= hi) found = 1;
    }
    fclose(f);
    return found;
}

/* ---- collected output ---------------------------------------------------- */

typedef struct out_lines {
    pthread_mutex_t lock;
    int n;
    char *component[512];
    char *text[512];
} out_lines;

static inline void out_init(out_lines *l) {
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
}

static inline void out_collect(void *user, const char *component, const char *line) {
    out_lines *l = user;
    pthread_mutex_lock(&l->lock);
    if (l->n < 512) {
        l->component[l->n] = strdup(component ? component : "(null)");
        l->text[l->n] = strdup(line ? line : "(null)");
        l->n++;
    }
    pthread_mutex_unlock(&l->lock);
}

static inline int out_find(out_lines *l, const char *text) {
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->text[i], text) == 0) return i;
    return -1;
}

static inline void out_show(out_lines *l) {
    for (int i = 0; i < l->n; i++) cr_log_info("[%s] %.100s", l->component[i], l->text[i]);
}

static inline void out_free(out_lines *l) {
    for (int i = 0; i < l->n; i++) {
        free(l->component[i]);
        free(l->text[i]);
    }
    l->n = 0;
    pthread_mutex_destroy(&l->lock);
}

#endif /* TESSERA_TEST_WORKER_UTIL_H */
