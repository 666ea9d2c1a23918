/* SPDX-License-Identifier: MIT */
#include "bench_util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_quantile(double *v, size_t n, double q) {
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

int bench_make_parent_dirs(const char *path) {
    size_t len = strlen(path);
    char *buf = malloc(len + 1);
    if (!buf) return -1;
    memcpy(buf, path, len + 1);
    /* Walk every '/' except a leading one; the last component is the file. */
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            int saved = errno;
            free(buf);
            errno = saved;
            return -1;
        }
        *p = '/';
    }
    free(buf);
    return 0;
}

int bench_cpus(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? (int)(cpus < 64 ? cpus : 64) : 1;
}

void bench_load_start(bench_load *l, unsigned max_s) {
    bench_load_start_n(l, bench_cpus(), max_s);
}

void bench_load_start_n(bench_load *l, int n, unsigned max_s) {
    l->n = 0;
    if (n <= 0) return;
    for (int i = 0; i < n && i < 64; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            alarm(max_s);
            for (volatile unsigned long spin = 0;; spin++) {
            }
        }
        if (pid > 0) l->pid[l->n++] = pid;
    }
    nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL); /* let the scheduler see them */
}

void bench_load_stop(bench_load *l) {
    for (int i = 0; i < l->n; i++) kill(l->pid[i], SIGKILL);
    for (int i = 0; i < l->n; i++) waitpid(l->pid[i], NULL, 0);
    l->n = 0;
}

FILE *bench_open_csv(const char *program, const char *path) {
    if (bench_make_parent_dirs(path) != 0) {
        fprintf(stderr, "%s: cannot create the folder of %s: %s\n", program, path,
                strerror(errno));
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "%s: cannot write %s: %s\n", program, path, strerror(errno));
    return f;
}
