/* SPDX-License-Identifier: MIT */
/*
 * Counting what a directory holds: a spool, a private tmpfs, the entries
 * of a process in /dev/shm (the library makes none: its shared memory is
 * memfds, which have no name), and the memfd segments a process holds
 * (open fds and mappings), which every test of shared memory checks are
 * gone. Header-only, like the other test helpers.
 */
#ifndef TESSERA_TEST_DIR_ENTRIES_H
#define TESSERA_TEST_DIR_ENTRIES_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Entries of dir whose name starts with prefix ("" for all), "." and ".."
 * left out; -1 when dir cannot be read. With names (cap bytes), their
 * names too, each followed by '\n' (as many as fit). */
static inline int dir_entries_list(const char *dir, const char *prefix, char *names, size_t cap) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    size_t plen = strlen(prefix), used = 0;
    if (names && cap) names[0] = '\0';
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (strncmp(e->d_name, prefix, plen) != 0) continue;
        n++;
        if (names && used + strlen(e->d_name) + 2 <= cap)
            used += (size_t)snprintf(names + used, cap - used, "%s\n", e->d_name);
    }
    closedir(d);
    return n;
}

static inline int dir_entries(const char *dir, const char *prefix) {
    return dir_entries_list(dir, prefix, NULL, 0);
}

/* The /dev/shm entries of process pid under the names its segments had
 * before they became memfds ("tessera-<pid>-<start>-<random>-<k>"): none
 * may exist. With names, as in dir_entries_list. 0 when /dev/shm cannot be
 * read, as where there is none nothing can be left in it. */
static inline int shm_entries_list(pid_t pid, char *names, size_t cap) {
    char stem[48];
    snprintf(stem, sizeof stem, "tessera-%ld-", (long)pid);
    int n = dir_entries_list("/dev/shm", stem, names, cap);
    return n < 0 ? 0 : n;
}

static inline int shm_entries_of(pid_t pid) {
    return shm_entries_list(pid, NULL, 0);
}

/* The library's memfds as /proc shows them: "/memfd:tessera-arena
 * (deleted)" (arena segments) or "/memfd:tessera-chan (deleted)" (a
 * channel's control block). */
#define MEMFD_STEM "/memfd:tessera-"

/* How many of process pid's open fds are memfds of the library whose
 * label starts with MEMFD_STEM + what ("" for all, "arena", "chan"); -1
 * when its fds cannot be read. */
static inline int memfd_fds_of(pid_t pid, const char *what) {
    char dir[64], stem[64];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)pid);
    snprintf(stem, sizeof stem, MEMFD_STEM "%s", what);
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[320], target[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len <= 0) continue;
        target[len] = '\0';
        if (strncmp(target, stem, strlen(stem)) == 0) n++;
    }
    closedir(d);
    return n;
}

/* How many distinct memfds of the library (label as for memfd_fds_of)
 * process pid maps, told apart by inode; -1 when its maps cannot be read.
 * Up to 256 are told apart. */
static inline int memfd_maps_of(pid_t pid, const char *what) {
    char path[64], stem[64], line[512];
    snprintf(path, sizeof path, "/proc/%ld/maps", (long)pid);
    snprintf(stem, sizeof stem, MEMFD_STEM "%s", what);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    unsigned long inodes[256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        const char *name = strstr(line, stem);
        unsigned long inode;
        if (!name || sscanf(line, "%*s %*s %*s %*s %lu", &inode) != 1) continue;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++) seen = inodes[i] == inode;
        if (!seen && n < 256) inodes[n++] = inode;
    }
    fclose(f);
    return n;
}

/* What process pid holds of the library's shared memory: fds and mapped
 * segments together (a segment both open and mapped counts twice). */
static inline int memfds_held(pid_t pid) {
    int fds = memfd_fds_of(pid, ""), maps = memfd_maps_of(pid, "");
    return (fds > 0 ? fds : 0) + (maps > 0 ? maps : 0);
}

#endif /* TESSERA_TEST_DIR_ENTRIES_H */
