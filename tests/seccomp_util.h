/* SPDX-License-Identifier: MIT */
/*
 * Forbidding one system call in the calling process (it fails with
 * EPERM; everything else is allowed), as Docker's default profile or
 * /proc/sys/kernel/io_uring_disabled do for io_uring. For tests that run
 * it in a child. Header-only because every tests/test_*.c is its own
 * program.
 */
#ifndef TESSERA_TEST_SECCOMP_UTIL_H
#define TESSERA_TEST_SECCOMP_UTIL_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define TEST_SECCOMP_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_SECCOMP_ARCH AUDIT_ARCH_AARCH64
#endif

/* Returns 0, or -1 (no filter for this architecture, or refused). */
static inline int forbid_syscall(long nr) {
#ifdef TEST_SECCOMP_ARCH
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_SECCOMP_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof filter / sizeof filter[0], .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 ? 0 : -1;
#else
    (void)nr;
    return -1;
#endif
}

#endif /* TESSERA_TEST_SECCOMP_UTIL_H */
