/* SPDX-License-Identifier: MIT */
/* What still has a name, the spool directories of the files transport
 * and FMU scratch folders (arena segments and channels are memfds, which
 * have none): the creator's tag (pid and start time), whether that
 * creator is gone, and a random part. */
#include "arena_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <unistd.h>

int shm_proc_starttime(pid_t pid, unsigned long long *start) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            close(fd);
            return -1;
        }
        if (r == 0 || (len += (size_t)r) == sizeof buf - 1) break;
    }
    close(fd);
    buf[len] = '\0';
    /* comm (field 2) may hold spaces and ')': fields 3.. follow the last ')'. */
    char *p = strrchr(buf, ')');
    if (p == NULL) return -1;
    p++;
    for (int field = 3; field < 22; field++) {
        while (*p == ' ') p++;
        while (*p != ' ' && *p != '\0') p++;
        if (*p == '\0') return -1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno != 0 || end == p || (*end != ' ' && *end != '\n' && *end != '\0')) return -1;
    *start = v;
    return 0;
}

static int read_urandom(unsigned char *buf, size_t n) {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            close(fd);
            errno = e;
            return -1;
        }
        got += (size_t)r;
    }
    close(fd);
    return 0;
}

int shm_random_hex(char hex[SHM_RANDOM_HEX + 1]) {
    unsigned char raw[SHM_RANDOM_HEX / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == ENOSYS) {   /* kernels before 3.17 */
            if (read_urandom(raw, sizeof raw) != 0) return -1;
            break;
        }
        if (r < 0) return -1;
        got += (size_t)r;
    }
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof raw; i++) {
        hex[2 * i] = digits[raw[i] >> 4];
        hex[2 * i + 1] = digits[raw[i] & 15];
    }
    hex[SHM_RANDOM_HEX] = '\0';
    return 0;
}

/*
 * The tag is computed once per process. A forked child has another pid, so
 * the cache is keyed by pid. The lock word holds the pid of its owner: a
 * child that inherits it locked (another thread of the parent held it at
 * fork time) sees a foreign pid and takes it over instead of waiting
 * forever, which a pthread mutex would do.
 */
static char tag_text[48];
static _Atomic pid_t tag_pid;
static _Atomic pid_t tag_lock;

const char *arena_process_tag(void) {
    pid_t me = getpid();
    if (atomic_load_explicit(&tag_pid, memory_order_acquire) == me) return tag_text;
    for (;;) {
        pid_t owner = atomic_load(&tag_lock);
        if (owner != me) {   /* free, or inherited from a parent */
            if (atomic_compare_exchange_weak(&tag_lock, &owner, me)) break;
        } else {
            sched_yield();   /* another thread of this process computes it */
        }
        if (atomic_load_explicit(&tag_pid, memory_order_acquire) == me) return tag_text;
    }
    if (atomic_load_explicit(&tag_pid, memory_order_acquire) != me) {
        unsigned long long start = 0;
        /* Without /proc the start time is 0; orphan removal then relies on
         * the pid alone for such names. */
        if (shm_proc_starttime(me, &start) != 0) start = 0;
        snprintf(tag_text, sizeof tag_text, "%ld-%llu", (long)me, start);
        atomic_store_explicit(&tag_pid, me, memory_order_release);
    }
    atomic_store(&tag_lock, 0);
    return tag_text;
}

int shm_process_gone(pid_t pid, unsigned long long start) {
    if (pid == getpid()) return 0;
    if (kill(pid, 0) != 0 && errno == ESRCH) return 1;
    unsigned long long now;
    if (start == 0 || shm_proc_starttime(pid, &now) != 0) return 0;
    return now != start;
}
