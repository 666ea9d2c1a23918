/* SPDX-License-Identifier: MIT */
/*
 * For tests that need a small or read-only filesystem (a full disk, a full
 * or read-only /dev/shm): in a forked child (child_verdict.h), a tmpfs
 * mounted over a directory in a mount namespace of the child's own, which
 * nothing outside the child sees. The file including it defines
 * _GNU_SOURCE (unshare) first.
 */
#ifndef TESSERA_TEST_PRIVATE_TMPFS_H
#define TESSERA_TEST_PRIVATE_TMPFS_H

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>

#include "child_verdict.h"

/* Mount a tmpfs (mount flags, options such as "size=64k,mode=0700") on
 * dir. NULL when done, "skip" without the privilege, else what failed (a
 * verdict). */
static inline const char *private_tmpfs(const char *dir, unsigned long flags, const char *opts) {
    if (unshare(CLONE_NEWNS) != 0) {
        if (errno == EPERM) return "skip";
        CHECK(0, "unshare(CLONE_NEWNS): %s", strerror(errno));
    }
    /* else the mount would propagate to the namespace we came from */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        if (errno == EPERM) return "skip";
        CHECK(0, "cannot make mounts private: %s", strerror(errno));
    }
    if (mount("tessera-test", dir, "tmpfs", flags, opts) != 0) {
        if (errno == EPERM) return "skip";
        CHECK(0, "cannot mount a tmpfs (%s) on %s: %s", opts, dir, strerror(errno));
    }
    return NULL;
}

#endif /* TESSERA_TEST_PRIVATE_TMPFS_H */
