/* SPDX-License-Identifier: MIT */
/* The scratch folders FMU archives are unpacked into (fmu.h):
 * "$TMPDIR/tessera-fmu-<pid>-<start>-XXXXXX", mode 0700, named after the
 * process that made it (its pid and start time, as /proc gives them), so
 * that a folder left by a process that died before it closed its FMU is
 * recognised as orphaned and removed by the next one made. Removal never
 * follows a link. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmu.h"
#include "shm/names.h"

#define STEM "tessera-fmu-"
/* Folders below a scratch folder's root that removal descends: archives
 * are refused beyond 64 components a name. */
#define MAX_REMOVE_DEPTH 256

/* Everything below the folder open at dfd, removed without following a
 * link (the descriptor is consumed). 0, or -1 with errno. */
static int remove_below(int dfd, int depth) {
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        errno = e;
        return -1;
    }
    int rc = 0, err = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno) rc = -1, err = errno;
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = -1, err = errno;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth >= MAX_REMOVE_DEPTH) {
                rc = -1, err = ELOOP;
                continue;
            }
            int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 || remove_below(sub, depth + 1) != 0) {
                rc = -1, err = errno;
                continue;
            }
            if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) != 0) rc = -1, err = errno;
        } else if (unlinkat(dirfd(d), de->d_name, 0) != 0) {
            rc = -1, err = errno;
        }
    }
    closedir(d);
    errno = err;
    return rc;
}

/* The folder `name` below the folder open at pfd, and all in it. */
static int remove_at(int pfd, const char *name) {
    int dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return errno == ENOENT ? 0 : -1;
    if (remove_below(dfd, 0) != 0) return -1;
    return unlinkat(pfd, name, AT_REMOVEDIR);
}

int fmu_scratch_remove(const char *path) { return remove_at(AT_FDCWD, path); }

/* Whether the maker named in a scratch folder's name is gone. */
static int creator_gone(const char *name) {
    long pid;
    unsigned long long start;
    int used = -1;
    if (sscanf(name, STEM "%ld-%llu-%*6[A-Za-z0-9]%n", &pid, &start, &used) != 2 || used < 0 ||
        name[used] != '\0' || pid <= 0 || pid > INT_MAX)
        return 0;
    return shm_process_gone((pid_t)pid, start);
}

/* This user's scratch folders in parent whose makers are gone. */
static void remove_orphans(const char *parent) {
    int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0) return;
    DIR *d = fdopendir(pfd);
    if (!d) {
        close(pfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (strncmp(e->d_name, STEM, strlen(STEM)) != 0 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || !creator_gone(e->d_name))
            continue;
        (void)remove_at(dirfd(d), e->d_name); /* another process may be at it too */
    }
    closedir(d);
}

char *fmu_scratch_make(char *why, size_t n, int *code) {
    const char *t = getenv("TMPDIR");
    if (!t || !*t) t = "/tmp";
    remove_orphans(t);
    char tmpl[PATH_MAX];
    int len = snprintf(tmpl, sizeof tmpl, "%s/" STEM "%s-XXXXXX", t, arena_process_tag());
    if (len < 0 || (size_t)len >= sizeof tmpl) {
        snprintf(why, n, "TMPDIR is too long a path");
        *code = TSR_E_IO;
        return NULL;
    }
    if (!mkdtemp(tmpl)) {
        snprintf(why, n, "cannot make a folder in '%s': %s", t, strerror(errno));
        *code = TSR_E_IO;
        return NULL;
    }
    char *abs = realpath(tmpl, NULL);
    if (!abs) {
        int e = errno;
        rmdir(tmpl);
        snprintf(why, n, "'%s': %s", tmpl, strerror(e));
        *code = e == ENOMEM ? TSR_E_NOMEM : TSR_E_IO;
        return NULL;
    }
    return abs;
}
