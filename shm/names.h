/* SPDX-License-Identifier: MIT */
/*
 * Tags and random parts for what still has a name (the spool directories
 * of the files transport, made by worker/spool.c): shm_names.c. The rest
 * of shm/'s internals stay in arena_internal.h.
 */
#ifndef TESSERA_SHM_NAMES_H
#define TESSERA_SHM_NAMES_H

#include <sys/types.h>

#define SHM_RANDOM_HEX 16

/* Start time of pid (field 22 of /proc/<pid>/stat, clock ticks since
 * boot) in *start; -1 if it cannot be read (no such process, no /proc). */
int shm_proc_starttime(pid_t pid, unsigned long long *start);
/* 16 random lowercase hex digits and a NUL into hex; -1 (errno set) if
 * the kernel has no randomness to give. */
int shm_random_hex(char hex[SHM_RANDOM_HEX + 1]);
/* The "<pid>-<starttime>" part of names made by this process (spools,
 * FMU scratch folders). */
const char *arena_process_tag(void);
/* Whether the process a "<pid>-<start>" tag names is gone: no such pid, or
 * one that started at another time (the pid was reused). This process is
 * never gone; with start 0 (its maker could not read its own) only a
 * missing pid counts. */
int shm_process_gone(pid_t pid, unsigned long long start);

#endif
