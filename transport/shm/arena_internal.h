/* SPDX-License-Identifier: MIT */
/*
 * Internals of the arena, shared by its files: segment names and process
 * tags (shm_names.c), mapping segments (arena_segment.c) and the private
 * block lists of the allocator (arena_blocks.c).
 */
#ifndef TESSERA_TRANSPORT_ARENA_INTERNAL_H
#define TESSERA_TRANSPORT_ARENA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arena.h"

/* Names as they appear in /dev/shm start with this (shm_open adds '/'). */
#define SHM_NAME_STEM "tessera-"
#define SHM_RANDOM_HEX 16

/* printf into why (NULL or n == 0 accepted); returns code. */
int arena_fail(char *why, size_t n, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- names (shm_names.c) ---------------------------------------------- */

/* Start time of pid (field 22 of /proc/<pid>/stat, clock ticks since
 * boot) in *start; -1 if it cannot be read (no such process, no /proc). */
int shm_proc_starttime(pid_t pid, unsigned long long *start);
/* 16 random lowercase hex digits and a NUL into hex; -1 (errno set) if
 * the kernel has no randomness to give. */
int shm_random_hex(char hex[SHM_RANDOM_HEX + 1]);

/* What a /dev/shm entry named "tessera-<pid>-<start>-<16 hex>-<k>" or
 * "...-c<k>" says about its creator. */
typedef struct shm_name_parts {
    pid_t pid;
    unsigned long long start;
} shm_name_parts;
/* 0 if name (a directory entry, no '/') has exactly that form. */
int shm_parse_name(const char *name, shm_name_parts *parts);

/* ---- segments (arena_segment.c) --------------------------------------- */

/* Create, reserve, map and pre-fault a new segment of size bytes (a
 * multiple of the page size). Nothing is left behind on failure. */
int shm_segment_create(const char *name, size_t size, void **base, char *why, size_t n);
/* Map an existing segment read-write; its size from fstat. */
int shm_segment_open(const char *name, void **base, size_t *size, char *why, size_t n);
size_t shm_page_size(void);

/* ---- block lists (arena_blocks.c) ------------------------------------- */

/* One block of a segment: [off, off + size), free or in use. The list is
 * kept sorted by offset; neighbouring free blocks are always merged. */
typedef struct arena_block {
    uint64_t off;
    uint64_t size;
    uint8_t used;
} arena_block;

typedef struct block_list {
    arena_block *b;
    size_t n, cap;
} block_list;

/* One free block covering [0, size); -1 when out of memory. */
int blocks_init(block_list *l, uint64_t size);
void blocks_fini(block_list *l);
/* First fit for size (a multiple of TSR_ALIGNMENT, > 0): the offset of the
 * block now in use, or -1 if no free block is large enough. */
int64_t blocks_take(block_list *l, uint64_t size);
/* Free the in-use block that starts at off and merge it with free
 * neighbours; ignored if no in-use block starts there. */
void blocks_give(block_list *l, uint64_t off);

#endif
