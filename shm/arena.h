/* SPDX-License-Identifier: MIT */
/*
 * The shared-memory arena: segments created by the host, mapped once in the
 * host and in its workers, pre-faulted and reused across calls, with an
 * allocator inside.
 *
 * Segments are memfds: they have no name in any filesystem, so no other
 * process can open, plant or block one, and the kernel frees each when the
 * last process holding it (an fd or a mapping) is gone, however it ended:
 * nothing is ever left behind and nothing needs cleaning up later. The
 * host keeps each segment's fd and hands a copy to each worker over a Unix
 * socket (SCM_RIGHTS), before the first request that may name it
 * (arena_send_segments); a worker maps what it received when a binref
 * first names it (arena_view_resolve).
 *
 * Each segment is reserved with fallocate when it is made, after checking
 * that the memory is there (shm_memory_room: the machine's available
 * memory, memory cgroup limits), so that running out is a clear TSR_E_SHM
 * at allocation, never a SIGBUS or an OOM kill at some later first touch;
 * it is sealed against shrinking and growing (a worker cannot truncate it
 * under the host), and mapped with MADV_POPULATE_WRITE so that later
 * writes do not fault.
 *
 * The allocator's bookkeeping lives in the host's private memory, never in
 * the segments, so a worker cannot corrupt it.
 *
 * Thread safety: an arena may be used from several threads; alloc, free
 * and locate take an internal mutex (locate and arena_segments read
 * without it). A view is used by one thread.
 */
#ifndef TESSERA_CODECS_ARENA_H
#define TESSERA_CODECS_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include <tessera/plugin.h>   /* TSR_ALIGNMENT */

#define ARENA_MAX_SEGMENTS 64

/* Where bytes lie in an arena: what crosses the process boundary. */
typedef struct binref {
    uint32_t seg;       /* segment index */
    uint32_t reserved;  /* 0 */
    uint64_t offset;    /* from the segment's start; a multiple of TSR_ALIGNMENT */
    uint64_t bytes;
} binref;

typedef struct arena arena;

/* Create an arena whose first segment holds at least first_bytes (rounded
 * up to pages; at least 1 MiB). Returns 0, or a negative TSR_E_* code with
 * a cause in why (e.g. "not enough memory for arena segment 0 (4194304
 * bytes): memory cgroup /a/b has room for 1048576"). */
int arena_create(arena **out, size_t first_bytes, char *why, size_t n);
/* Let the arena grow only while its capacity stays within max_bytes (0:
 * no limit); past it arena_alloc fails, naming max_arena_bytes. */
void arena_set_limit(arena *a, uint64_t max_bytes);
/* Unmap and close every segment (the kernel frees each once no worker
 * maps it either). Accepts NULL. */
void arena_destroy(arena *a);

/* 64-byte aligned block of at least `bytes` (0 allowed: a valid, unique
 * pointer). Grows the arena by adding a segment of max(2 x the last, the
 * request) when needed, up to ARENA_MAX_SEGMENTS. NULL with a cause in why
 * when memory is short or a limit is hit. */
void *arena_alloc(arena *a, size_t bytes, char *why, size_t n);
/* Return a block to the arena. p must come from arena_alloc of this arena
 * (NULL accepted). */
void arena_free(arena *a, void *p);
/* If [p, p + bytes) lies inside one segment, fill *ref and return 0;
 * otherwise -1 (the caller then copies the bytes into the arena). */
int arena_locate(arena *a, const void *p, size_t bytes, binref *ref);
/* Host address of a binref of this arena, or NULL if out of bounds. */
void *arena_address(arena *a, const binref *ref);
/* Total bytes of all segments. */
size_t arena_capacity(arena *a);

/* ---- handing segments to a worker --------------------------------------- */

/* Number of segments; it only grows, and segments [0, count) never change. */
uint32_t arena_segments(arena *a);
/* Send segments [*sent, arena_segments(a)) over sock (a Unix socket), one
 * message each: its index and its fd (SCM_RIGHTS); *sent advances past
 * each one sent. Returns 0, or -1 with errno (EPIPE or ECONNRESET: the
 * peer is gone) and a cause in why. Never raises SIGPIPE. */
int arena_send_segments(arena *a, int sock, uint32_t *sent, char *why, size_t n);

/* ---- the worker's side -------------------------------------------------- */

/* A worker's mapping of its host's arena: segments arrive as fds on a
 * Unix socket and are mapped (MAP_SHARED|MAP_POPULATE) the first time a
 * binref names them. */
typedef struct arena_view arena_view;

/* sock: where the host sends segments (arena_send_segments); the view owns
 * it from now on, also on failure. */
int arena_view_open(arena_view **out, int sock, char *why, size_t n);
void arena_view_close(arena_view *v);
/* Address of the bytes a binref names. A segment not mapped yet is taken
 * from what the host has sent (read without waiting: the host sends before
 * it posts the request) and mapped. Checks that the segment exists and
 * that offset + bytes lies within it; NULL with a cause in why otherwise (a
 * corrupted or hostile request must end in an error, never in a fault).
 * A request whose segments are mapped makes no system call. */
void *arena_view_resolve(arena_view *v, const binref *ref, char *why, size_t n);

/* In a worker forked from its host (spawn=fork): unmap the shared memory
 * it inherited, every arena and channel of the host's (shm_inherited.c),
 * which it has no use for and which what its plugin forks must not reach.
 * 0, or -1 with a cause in why. */
int shm_unmap_inherited(char *why, size_t n);

#endif
