/* SPDX-License-Identifier: MIT */
/*
 * The shared-memory arena: POSIX shared-memory segments created by the host,
 * mapped once in the host and in its workers, pre-faulted and reused across
 * calls, with an allocator inside.
 *
 * Names: "/tessera-<hostpid>-<starttime>-<16 random hex>-<segment index>".
 * The pid and the process start time (field 22 of /proc/<pid>/stat) let a
 * later start prove a segment orphaned (arena_remove_orphans); the random
 * part makes names unguessable. Segments are created with O_CREAT|O_EXCL and
 * mode 0600, reserved with posix_fallocate (so that a full /dev/shm is a
 * clear error at allocation, never a SIGBUS at first touch), and mapped with
 * MAP_POPULATE|MADV_POPULATE_WRITE so that later writes do not fault.
 *
 * The allocator's bookkeeping lives in the host's private memory, never in
 * the segments, so a worker cannot corrupt it.
 *
 * Thread safety: an arena may be used from several threads; alloc, free
 * and locate take an internal mutex. A view is used by one thread.
 */
#ifndef TESSERA_TRANSPORT_ARENA_H
#define TESSERA_TRANSPORT_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include <tessera/plugin.h>   /* TSR_ALIGNMENT */

#define ARENA_MAX_SEGMENTS 64
#define ARENA_NAME_MAX 96

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
 * a cause in why (e.g. "/dev/shm is full: cannot reserve 4194304 bytes for
 * segment /tessera-...: No space left on device"). */
int arena_create(arena **out, size_t first_bytes, char *why, size_t n);
/* Let the arena grow only while its capacity stays within max_bytes (0:
 * no limit); past it arena_alloc fails, naming max_arena_bytes. */
void arena_set_limit(arena *a, uint64_t max_bytes);
/* Unmap and unlink every segment. Accepts NULL. */
void arena_destroy(arena *a);
/* The name prefix shared by the segments ("/tessera-<pid>-<start>-<hex>");
 * segment k is named "<prefix>-<k>". */
const char *arena_prefix(const arena *a);

/* 64-byte aligned block of at least `bytes` (0 allowed: a valid, unique
 * pointer). Grows the arena by adding a segment of max(2 x the last, the
 * request) when needed, up to ARENA_MAX_SEGMENTS. NULL with a cause in why
 * when /dev/shm is full or a limit is hit. */
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

/* ---- the worker's side -------------------------------------------------- */

/* A worker's mapping of its host's arena: segments are opened by name and
 * mapped (MAP_SHARED|MAP_POPULATE) the first time a binref names them. */
typedef struct arena_view arena_view;

int arena_view_open(arena_view **out, const char *prefix, char *why, size_t n);
void arena_view_close(arena_view *v);
/* Address of the bytes a binref names, mapping its segment if needed.
 * Checks that the segment exists and that offset + bytes lies within it;
 * NULL with a cause in why otherwise (a corrupted or hostile request must
 * end in an error, never in a fault). */
void *arena_view_resolve(arena_view *v, const binref *ref, char *why, size_t n);

/* ---- orphans ------------------------------------------------------------ */

/* Remove /dev/shm entries named by any Tessera arena or channel
 * ("tessera-<pid>-<starttime>-...") whose creator is provably gone: no
 * process has that pid, or the process that has it started at another
 * time. Entries of live processes are never touched. Returns the number
 * removed (>= 0). Cheap; called at each tsr_open in worker mode. */
int arena_remove_orphans(void);

/* The "<pid>-<starttime>" part of names made by this process. */
const char *arena_process_tag(void);

#endif
