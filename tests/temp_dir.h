/* SPDX-License-Identifier: MIT */
/*
 * A fresh temporary directory per test and its removal with everything
 * in it (no shell). Header-only because every tests/test_*.c is its own
 * program; the file including it defines _GNU_SOURCE (nftw) first. The
 * try_ and _quietly forms assert nothing: for report hooks and for
 * children that report a verdict of their own.
 */
#ifndef TESSERA_TEST_TEMP_DIR_H
#define TESSERA_TEST_TEMP_DIR_H

#include <criterion/criterion.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* dir (size bytes) = a new directory $TMPDIR/<stem>-XXXXXX: 0, or -1. */
static inline int try_make_temp_dir(char *dir, size_t size, const char *stem) {
    const char *t = getenv("TMPDIR");
    snprintf(dir, size, "%s/%s-XXXXXX", t && *t ? t : "/tmp", stem);
    return mkdtemp(dir) ? 0 : -1;
}

static inline void make_temp_dir(char *dir, size_t size, const char *stem) {
    cr_assert_eq(try_make_temp_dir(dir, size, stem), 0, "mkdtemp %s", dir);
}

static inline int remove_entry(const char *path, const struct stat *st, int type, struct FTW *f) {
    (void)st;
    (void)type;
    (void)f;
    return remove(path);
}

/* Remove path and everything below it (symlinks themselves, not what
 * they point at); a path that is gone already is fine. */
static inline int remove_tree_quietly(const char *path) {
    if (access(path, F_OK) != 0) return 0;
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void remove_tree(const char *path) {
    cr_assert_eq(remove_tree_quietly(path), 0, "cannot remove %s", path);
}

#endif /* TESSERA_TEST_TEMP_DIR_H */
