/* SPDX-License-Identifier: MIT */
/* The spool directory of the files transport: making it private, naming
 * its files, removing it, and removing those that crashed hosts left. */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/names.h"
#include "tessera/tessera.h"

struct spool {
    char *path;
    int dirfd;
};

/* Nested directories a plugin may have made in the spool, removed too. */
#define SPOOL_MAX_DEPTH 8

const char *spool_default_parent(void) {
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

const char *spool_path(const spool *s) { return s->path; }

void spool_tag(char *tag, int slot) { snprintf(tag, SPOOL_TAG_MAX, "w%d", slot); }

int spool_prefix(char *buf, size_t n, const char *tag, int results) {
    int len = snprintf(buf, n, "%s-%s", tag, results ? "out" : "in");
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

int spool_file(char *buf, size_t n, const char *dir, const char *tag, int results) {
    int len = snprintf(buf, n, "%s/%s-%s-0.bin", dir, tag, results ? "out" : "in");
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

int spool_entry(char *buf, size_t n, const char *tag, int results) {
    int len = snprintf(buf, n, "%s-%s-0.bin", tag, results ? "out" : "in");
    return len < 0 || (size_t)len >= n || strchr(tag, '/') ? -1 : 0;
}

int spool_dirfd(const spool *s) { return s->dirfd; }

void spool_clean(const spool *s, const char *tag) {
    char name[SPOOL_TAG_MAX + 16];
    for (int results = 0; results < 2; results++) {
        if (spool_entry(name, sizeof name, tag, results) != 0) continue;
        (void)unlinkat(s->dirfd, name, 0); /* ENOENT: nothing was written */
    }
}

/* Remove everything in the directory open as fd (which is closed). */
static void empty_dir(int fd, int depth) {
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (unlinkat(fd, e->d_name, 0) == 0 || (errno != EISDIR && errno != EPERM)) continue;
        int sub = depth < SPOOL_MAX_DEPTH
                      ? openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                      : -1;
        if (sub >= 0) empty_dir(sub, depth + 1);
        (void)unlinkat(fd, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

/* Remove parent/name, a directory, and everything in it. */
static int remove_tree(int parent_fd, const char *name) {
    int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) empty_dir(fd, 0);
    return unlinkat(parent_fd, name, AT_REMOVEDIR);
}

int spool_create(spool **out, const char *parent, char *why, size_t n) {
    *out = NULL;
    char hex[SHM_RANDOM_HEX + 1];
    if (shm_random_hex(hex) != 0) {
        snprintf(why, n, "no randomness for the spool directory's name: %s", strerror(errno));
        return TSR_E_IO;
    }
    /* Absolute, so that a worker with another working directory finds it. */
    char *real = realpath(parent, NULL);
    if (!real) {
        snprintf(why, n, "the spool's parent directory %s: %s", parent, strerror(errno));
        return TSR_E_IO;
    }
    spool *s = calloc(1, sizeof *s);
    int len = s ? asprintf(&s->path, "%s/" SPOOL_STEM "%s-%s", real, arena_process_tag(), hex) : -1;
    free(real);
    if (len < 0) {
        free(s);
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    s->dirfd = -1;
    /* mkdir's mode is cut by the umask, never widened: 0700 or less. */
    if (mkdir(s->path, 0700) != 0) {
        snprintf(why, n, "cannot make the spool directory %s: %s", s->path, strerror(errno));
        free(s->path);
        free(s);
        return TSR_E_IO;
    }
    s->dirfd = open(s->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (s->dirfd < 0 || fchmod(s->dirfd, 0700) != 0) {
        snprintf(why, n, "cannot open the spool directory %s: %s", s->path, strerror(errno));
        spool_destroy(s);
        return TSR_E_IO;
    }
    *out = s;
    return 0;
}

void spool_destroy(spool *s) {
    if (!s) return;
    if (s->dirfd >= 0) {
        empty_dir(s->dirfd, 0); /* closes it */
        s->dirfd = -1;
    }
    (void)rmdir(s->path);
    free(s->path);
    free(s);
}

/* The creator's pid and start time from "tessera-spool-<pid>-<start>-<hex>". */
static int parse_spool_name(const char *name, pid_t *pid, unsigned long long *start) {
    long p;
    unsigned long long st;
    char hex[SHM_RANDOM_HEX + 1];
    int used = -1;
    if (sscanf(name, SPOOL_STEM "%ld-%llu-%16[0-9a-f]%n", &p, &st, hex, &used) != 3 ||
        used < 0 || name[used] != '\0' || strlen(hex) != SHM_RANDOM_HEX || p <= 0 ||
        p > INT_MAX)
        return -1;
    *pid = (pid_t)p;
    *start = st;
    return 0;
}

int spool_remove_orphans(const char *parent) {
    int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0) return 0;
    DIR *d = fdopendir(pfd);
    if (!d) {
        close(pfd);
        return 0;
    }
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        pid_t pid;
        unsigned long long start;
        struct stat st;
        if (strncmp(e->d_name, SPOOL_STEM, strlen(SPOOL_STEM)) != 0 ||
            parse_spool_name(e->d_name, &pid, &start) != 0 ||
            fstatat(pfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid() || !shm_process_gone(pid, start))
            continue;
        if (remove_tree(pfd, e->d_name) == 0) removed++;
    }
    closedir(d);
    return removed;
}
