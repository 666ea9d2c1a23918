/* SPDX-License-Identifier: MIT */
/* Making and mapping one memfd segment, and how much memory there is room
 * for. */
#include "arena_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera/tessera.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14; older headers lack it */
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U  /* Linux 6.3 */
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#endif

int arena_fail(char *why, size_t n, int code, const char *fmt, ...) {
    if (why != NULL && n > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return code;
}

size_t shm_page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

int shm_memfd(const char *label) {
    /* Where vm.memfd_noexec asks for it, a memfd must be made not
     * executable; kernels before 6.3 do not know the flag (EINVAL). */
    int fd = memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
    if (fd < 0 && errno == EINVAL) fd = memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    /* Nothing can open a memfd by name; only a process that may ptrace
     * ours reaches it through /proc. The owner-only mode is one more
     * fence, whatever the umask. */
    if (fchmod(fd, 0600) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* ---- room ------------------------------------------------------------------ */

/* The first number in a small file ("max" is UINT64_MAX); -1 if none. */
static int read_number(const char *path, uint64_t *v) {
    char buf[64];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t got;
    do got = read(fd, buf, sizeof buf - 1);
    while (got < 0 && errno == EINTR);
    close(fd);
    if (got <= 0) return -1;
    buf[got] = '\0';
    if (strncmp(buf, "max", 3) == 0) {
        *v = UINT64_MAX;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 10);
    if (errno != 0 || end == buf) return -1;
    *v = x;
    return 0;
}

/* The sum of the values of keys (NULL-terminated) in a "key value" file
 * (memory.stat; /proc/meminfo, whose "key:" values are in kB and are
 * returned in bytes). -1 unless every key is found. */
static int read_keys(const char *path, const char *const *keys, uint64_t *sum) {
    FILE *f = fopen(path, "re");
    if (f == NULL) return -1;
    char line[256];
    int found = 0, want = 0;
    for (const char *const *k = keys; *k; k++) want++;
    uint64_t total = 0;
    while (found < want && fgets(line, sizeof line, f)) {
        for (const char *const *k = keys; *k; k++) {
            size_t len = strlen(*k);
            if (strncmp(line, *k, len) != 0 || (line[len] != ' ' && line[len] != ':')) continue;
            const char *p = line + len + (line[len] == ':');
            unsigned long long x;
            if (sscanf(p, "%llu", &x) != 1) break;
            total += line[len] == ':' ? (uint64_t)x * 1024u : (uint64_t)x;
            found++;
            break;
        }
    }
    fclose(f);
    if (found < want) return -1;
    *sum = total;
    return 0;
}

/* Room under one cgroup's memory limit (dir: its directory); 0 and *room,
 * or -1 when it sets none or cannot be read. */
static int cgroup_room(const char *dir, int v2, uint64_t *room) {
    static const char *const v2_keys[] = {"inactive_file", "active_file", NULL};
    static const char *const v1_keys[] = {"total_inactive_file", "total_active_file", NULL};
    char path[4200];
    uint64_t limit, usage, reclaimable;
    snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes");
    if (read_number(path, &limit) != 0) return -1;
    /* v1 says "no limit" with a huge number rounded to pages */
    if (limit == UINT64_MAX || (!v2 && limit >= ((uint64_t)1 << 62))) return -1;
    snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.current" : "memory.usage_in_bytes");
    if (read_number(path, &usage) != 0) return -1;
    snprintf(path, sizeof path, "%s/memory.stat", dir);
    if (read_keys(path, v2 ? v2_keys : v1_keys, &reclaimable) != 0) reclaimable = 0;
    /* Page cache can be reclaimed to make room; shared memory cannot. */
    uint64_t used = usage > reclaimable ? usage - reclaimable : 0;
    *room = limit > used ? limit - used : 0;
    return 0;
}

/* The least room under the limits of cgroup `path` (as /proc/self/cgroup
 * gives it) and of its ancestors, in the hierarchy mounted at mount. */
static void hierarchy_room(const char *mount, const char *path, int v2, uint64_t *room,
                           char *what, size_t n) {
    char dir[4096];
    if ((size_t)snprintf(dir, sizeof dir, "%s%s", mount, path) >= sizeof dir) return;
    size_t base = strlen(mount);
    for (;;) {
        size_t len = strlen(dir);
        while (len > base && dir[len - 1] == '/') dir[--len] = '\0';
        uint64_t r;
        if (cgroup_room(dir, v2, &r) == 0 && r < *room) {
            *room = r;
            snprintf(what, n, "memory cgroup %s", len > base ? dir + base : "/");
        }
        char *slash = strrchr(dir + base, '/');
        if (len <= base || slash == NULL) break;
        *slash = '\0';
    }
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

uint64_t shm_memory_room(char *what, size_t n) {
    static const char *const mem_keys[] = {"MemAvailable", "SwapFree", NULL};
    uint64_t room = UINT64_MAX;
    if (what && n) snprintf(what, n, "no limit");
    if (read_keys("/proc/meminfo", mem_keys, &room) == 0 && what && n)
        snprintf(what, n, "the machine's available memory and swap");
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (f == NULL) return room;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "ID:CONTROLLERS:PATH"; cgroup v2 is "0::PATH" */
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL || c2[1] != '/') continue;
        *c2 = '\0';
        const char *controllers = c1 + 1, *path = c2 + 1;
        if (*controllers == '\0') {
            const char *mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
            for (int i = 0; i < 2; i++) {
                char probe[4200];
                snprintf(probe, sizeof probe, "%s/cgroup.controllers", mounts[i]);
                if (access(probe, F_OK) == 0) {
                    hierarchy_room(mounts[i], path, 1, &room, what, n);
                    break;
                }
            }
            continue;
        }
        /* cgroup v1: the hierarchy with the memory controller */
        int memory = 0;
        for (const char *p = controllers; *p;) {
            size_t len = strcspn(p, ",");
            if (len == 6 && strncmp(p, "memory", 6) == 0) memory = 1;
            p += len + (p[len] == ',');
        }
        if (!memory) continue;
        char mount[4200];
        snprintf(mount, sizeof mount, "/sys/fs/cgroup/%s", controllers);
        if (!is_dir(mount)) snprintf(mount, sizeof mount, "/sys/fs/cgroup/memory");
        if (is_dir(mount)) hierarchy_room(mount, path, 0, &room, what, n);
    }
    fclose(f);
    return room;
}

/* ---- segments -------------------------------------------------------------- */

/* Pre-fault writable page tables, so that later first writes cost ~20 ns
 * instead of a fault each. MADV_POPULATE_WRITE alone is measured ~25%
 * faster than MAP_POPULATE (which maps shared pages read-only first) and
 * then the madvise. Kernels before 5.14 answer EINVAL: there the mapping
 * is replaced in place by a MAP_POPULATE one. */
static int populate_write(int fd, void *base, size_t size) {
    for (int tries = 0; tries < 100; tries++) {
        if (madvise(base, size, MADV_POPULATE_WRITE) == 0) return 0;
        if (errno == EINVAL) {
            void *p = mmap(base, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
                           fd, 0);
            return p == MAP_FAILED ? -1 : 0;
        }
        if (errno != EINTR) return -1;   /* EINTR: a signal came; again */
    }
    return -1;
}

/* Undo a half-made segment; errors here have no better remedy. */
static int discard(int fd, void *base, size_t size, int code) {
    int saved = errno;
    if (base != NULL) munmap(base, size);
    close(fd);
    errno = saved;
    return code;
}

int shm_segment_create(uint32_t k, size_t size, void **base, int *fd_out, char *why, size_t n) {
    if ((uint64_t)size > (uint64_t)INT64_MAX)
        return arena_fail(why, n, TSR_E_SHM, "arena segment %u: %zu bytes is too large", k, size);
    /* fallocate past what is there would not fail: under a memory cgroup
     * limit the OOM killer would end this process or another one, so the
     * room is checked first. */
    char what[300];
    uint64_t room = shm_memory_room(what, sizeof what);
    if ((uint64_t)size > room)
        return arena_fail(why, n, TSR_E_SHM,
                          "not enough memory for arena segment %u (%zu bytes): %s has room for "
                          "%llu bytes",
                          k, size, what, (unsigned long long)room);
    int fd = shm_memfd(SHM_ARENA_LABEL);
    if (fd < 0)
        return arena_fail(why, n, TSR_E_SHM, "cannot create shared memory (memfd_create): %s",
                          strerror(errno));
    /* Reserve now, so that running out fails here and not as a SIGBUS at
     * some later first touch. */
    int rc;
    do rc = posix_fallocate(fd, 0, (off_t)size);
    while (rc == EINTR);
    if (rc != 0) {
        discard(fd, NULL, 0, 0);
        return arena_fail(why, n, TSR_E_SHM,
                          "%scannot reserve %zu bytes of shared memory for arena segment %u: %s",
                          rc == ENOSPC || rc == ENOMEM || rc == EFBIG ? "not enough memory: " : "",
                          size, k, strerror(rc));
    }
    /* A worker holds the segment too: it must not be able to shrink it
     * under the host (whose next touch would be a SIGBUS). */
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int e = errno;
        discard(fd, NULL, 0, 0);
        return arena_fail(why, n, TSR_E_SHM, "cannot seal arena segment %u: %s", k, strerror(e));
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        discard(fd, NULL, 0, 0);
        return arena_fail(why, n, TSR_E_SHM, "cannot map %zu bytes of arena segment %u: %s", size,
                          k, strerror(e));
    }
    if (populate_write(fd, p, size) != 0) {
        int e = errno;
        discard(fd, p, size, 0);
        return arena_fail(why, n, TSR_E_SHM, "cannot pre-fault %zu bytes of arena segment %u: %s",
                          size, k, strerror(e));
    }
    *base = p;
    *fd_out = fd;
    return 0;
}

int shm_segment_map(uint32_t k, int fd, void **base, size_t *size, char *why, size_t n) {
    struct stat st;
    if (fstat(fd, &st) != 0)
        return arena_fail(why, n, TSR_E_SHM, "cannot stat arena segment %u: %s", k,
                          strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > (uint64_t)SIZE_MAX)
        return arena_fail(why, n, TSR_E_SHM, "arena segment %u has an unusable size (%lld bytes)",
                          k, (long long)st.st_size);
    size_t len = (size_t)st.st_size;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED)
        return arena_fail(why, n, TSR_E_SHM, "cannot map %zu bytes of arena segment %u: %s", len,
                          k, strerror(errno));
    /* A child the worker's plugin forks gets none of the arena: left
     * behind, it could write into what the next worker computes. */
    if (madvise(p, len, MADV_DONTFORK) != 0) {
        int err = errno;
        munmap(p, len);
        return arena_fail(why, n, TSR_E_SHM, "cannot keep arena segment %u from forked children: %s",
                          k, strerror(err));
    }
    *base = p;
    *size = len;
    return 0;
}
