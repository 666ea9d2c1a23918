/* SPDX-License-Identifier: MIT */
/*
 * Internals of shm/, shared by its files (names.h, what also worker/'s
 * spool uses, is included here): making and mapping memfd segments
 * (arena_segment.c), the message that hands one over a Unix socket (sent
 * by arena.c, read by arena_view.c) and the private block lists of the
 * allocator (arena_blocks.c).
 */
#ifndef TESSERA_CODECS_ARENA_INTERNAL_H
#define TESSERA_CODECS_ARENA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arena.h"
#include "names.h"

/* The labels of our memfds, as /proc/<pid>/maps and /proc/<pid>/fd show
 * them ("/memfd:tessera-arena (deleted)"). A label, not a name: nothing
 * can open a memfd by it. */
#define SHM_ARENA_LABEL "tessera-arena"
#define SHM_CHAN_LABEL "tessera-chan"

/* printf into why (NULL or n == 0 accepted); returns code. */
int arena_fail(char *why, size_t n, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- segments (arena_segment.c) --------------------------------------- */

/* One segment handed over (arena_send_segments, read by the view): its
 * index in the message's bytes, its fd in an SCM_RIGHTS control message. */
#define SHM_SEG_MAGIC 0x53475354u   /* "TSGS" */
typedef struct shm_seg_msg {
    uint32_t magic;
    uint32_t index;
    uint64_t bytes;
} shm_seg_msg;

/* A new memfd (close-on-exec, sealable, not executable where the kernel
 * knows MFD_NOEXEC_SEAL), mode 0600; -1 with errno. */
int shm_memfd(const char *label);
/* Bytes of memory a new segment may take without pushing this process's
 * memory cgroup or the machine into the OOM killer: the least of the
 * machine's available memory and swap (MemAvailable + SwapFree) and the
 * room under each memory cgroup limit above this process (limit - usage +
 * reclaimable page cache; cgroup v2 and v1). UINT64_MAX when nothing can
 * be read. what (n bytes) says which limit is the least ("memory cgroup
 * /a/b", "the machine's available memory and swap"). Advisory: another process may take the memory
 * meanwhile. */
uint64_t shm_memory_room(char *what, size_t n);
/* Create, reserve (fallocate), seal against shrinking and growing, map and
 * pre-fault a new memfd segment of size bytes (a multiple of the page
 * size); *fd keeps it (the worker gets a copy). k names it in messages.
 * Nothing is left behind on failure. */
int shm_segment_create(uint32_t k, size_t size, void **base, int *fd, char *why, size_t n);
/* Map a segment received as fd read-write, for this process only (a fork
 * does not inherit the mapping); its size from fstat. */
int shm_segment_map(uint32_t k, int fd, void **base, size_t *size, char *why, size_t n);
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
