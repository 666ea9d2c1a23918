/* SPDX-License-Identifier: MIT */
/*
 * Counting what a directory holds: a spool, a private tmpfs, and the
 * shared-memory segments of a process in /dev/shm, which every test of
 * shared memory checks are gone. Header-only, like the other test helpers.
 */
#ifndef TESSERA_TEST_DIR_ENTRIES_H
#define TESSERA_TEST_DIR_ENTRIES_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

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

/* The /dev/shm entries of process pid: every segment name starts with
 * "tessera-<pid>-" (its start time and a random part follow). With names,
 * as in dir_entries_list. 0 when /dev/shm cannot be read, as where there
 * is none nothing can be left in it. */
static inline int shm_entries_list(pid_t pid, char *names, size_t cap) {
    char stem[48];
    snprintf(stem, sizeof stem, "tessera-%ld-", (long)pid);
    int n = dir_entries_list("/dev/shm", stem, names, cap);
    return n < 0 ? 0 : n;
}

static inline int shm_entries_of(pid_t pid) {
    return shm_entries_list(pid, NULL, 0);
}

#endif /* TESSERA_TEST_DIR_ENTRIES_H */
