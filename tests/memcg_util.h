/* SPDX-License-Identifier: MIT */
/*
 * A memory cgroup of a test's own, made below the one this process is in
 * (cgroup v2 or v1), for tests that need a memory limit or want to see
 * what shared memory is still charged after processes died: a child
 * process moves itself in, the test sets a limit or reads "shmem" from
 * memory.stat, and removes the cgroup when no process is left in it.
 * Needs the privilege to make one (root, or a delegated subtree); callers
 * skip otherwise. Header-only, like the other test helpers.
 */
#ifndef TESSERA_TEST_MEMCG_UTIL_H
#define TESSERA_TEST_MEMCG_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Under AddressSanitizer a process takes fresh memory for every allocation
 * (freed blocks wait in a quarantine) and maps shadow memory as it goes:
 * a limit that leaves it less than a few MiB gets it OOM-killed. Tests
 * that need such a tight limit skip in sanitizer builds, and in coverage
 * builds (TSR_COVERAGE), where every process writes its coverage files as
 * it exits, and their page cache counts against the limit. */
#if defined(__SANITIZE_ADDRESS__) || defined(TSR_COVERAGE)
#define MEMCG_TIGHT_LIMITS_WORK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMCG_TIGHT_LIMITS_WORK 0
#endif
#endif
#ifndef MEMCG_TIGHT_LIMITS_WORK
#define MEMCG_TIGHT_LIMITS_WORK 1
#endif

typedef struct memcg {
    char dir[1024];
    int v2;
} memcg;

static inline int memcg_write(const memcg *m, const char *file, const char *text) {
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", m->dir, file);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* A number from one of its files (v2 name, v1 name), or -1. */
static inline long long memcg_number(const memcg *m, const char *v2_file, const char *v1_file) {
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", m->dir, m->v2 ? v2_file : v1_file);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long long v = -1;
    if (fscanf(f, "%lld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

/* Make "tessera-test-<pid>-<tag>" below this process's memory cgroup. 0,
 * or -1 when there is no memory controller or no privilege. */
static inline int memcg_create(memcg *m, const char *tag) {
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return -1;
    char line[1024], base[1024] = "";
    int v2 = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        const char *ctl = c1 + 1, *path = c2 + 1;
        if (*ctl == '\0' && !base[0]) {
            const char *mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
            for (int i = 0; i < 2; i++) {
                char probe[1200];
                snprintf(probe, sizeof probe, "%s%s/memory.max", mounts[i], path);
                if (access(probe, F_OK) == 0 || strcmp(path, "/") == 0) {
                    snprintf(probe, sizeof probe, "%s/cgroup.controllers", mounts[i]);
                    FILE *c = fopen(probe, "r");
                    char have[256] = "";
                    if (c) {
                        if (!fgets(have, sizeof have, c)) have[0] = '\0';
                        fclose(c);
                    }
                    if (strstr(have, "memory")) {
                        snprintf(base, sizeof base, "%s%s", mounts[i], strcmp(path, "/") ? path : "");
                        v2 = 1;
                        break;
                    }
                }
            }
        } else if (strstr(ctl, "memory") && !v2) {
            char mount[300];
            snprintf(mount, sizeof mount, "/sys/fs/cgroup/%s", ctl);
            if (access(mount, F_OK) != 0) snprintf(mount, sizeof mount, "/sys/fs/cgroup/memory");
            snprintf(base, sizeof base, "%s%s", mount, strcmp(path, "/") ? path : "");
        }
    }
    fclose(f);
    if (!base[0]) return -1;
    m->v2 = v2;
    /* A truncated path would name some other cgroup. */
    int len = snprintf(m->dir, sizeof m->dir, "%s/tessera-test-%ld-%s", base, (long)getpid(), tag);
    if (len < 0 || (size_t)len >= sizeof m->dir) return -1;
    if (mkdir(m->dir, 0755) != 0 && errno != EEXIST) return -1;
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/%s", m->dir, v2 ? "memory.max" : "memory.limit_in_bytes");
    if (access(probe, W_OK) != 0) { /* v2 without memory in the parent's subtree_control */
        rmdir(m->dir);
        return -1;
    }
    return 0;
}

/* Move the calling process into it. */
static inline int memcg_enter(const memcg *m) { return memcg_write(m, "cgroup.procs", "0\n"); }

static inline int memcg_set_limit(const memcg *m, uint64_t bytes) {
    char text[32];
    snprintf(text, sizeof text, "%llu\n", (unsigned long long)bytes);
    return memcg_write(m, m->v2 ? "memory.max" : "memory.limit_in_bytes", text);
}

/* Bytes charged to it now. */
static inline long long memcg_usage(const memcg *m) {
    return memcg_number(m, "memory.current", "memory.usage_in_bytes");
}

/* Shared memory (tmpfs, memfd) charged to it: "shmem" of memory.stat; -1
 * when it cannot be read. */
static inline long long memcg_shmem(const memcg *m) {
    char path[1100], line[256];
    snprintf(path, sizeof path, "%s/memory.stat", m->dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "shmem %lld", &v) == 1) break;
    fclose(f);
    return v;
}

/* Remove it (no process may be left in it); what is still charged goes to
 * the parent. */
static inline void memcg_remove(const memcg *m) {
    for (int i = 0; i < 100 && rmdir(m->dir) != 0 && errno == EBUSY; i++) usleep(10000);
}

#endif /* TESSERA_TEST_MEMCG_UTIL_H */
