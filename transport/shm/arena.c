/* SPDX-License-Identifier: MIT */
/* The host's arena: a growing set of pre-faulted segments and the
 * allocator over them. */
#include "arena_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tessera/tessera.h"

#define ARENA_FIRST_MIN ((size_t)1 << 20)

typedef struct segment {
    char *base;
    size_t size;
    block_list blocks;   /* guarded by the arena's lock */
} segment;

struct arena {
    pthread_mutex_t lock;
    pid_t owner;                /* a forked copy must not unlink the owner's segments */
    char prefix[ARENA_NAME_MAX];
    /* Segments are only appended: base and size of seg[i < n_seg] never
     * change, so locate reads them without the lock. */
    _Atomic uint32_t n_seg;
    uint64_t limit;             /* arena_set_limit; 0 = none */
    segment seg[ARENA_MAX_SEGMENTS];
};

static void segment_name(const arena *a, uint32_t k, char name[ARENA_NAME_MAX + 16]) {
    snprintf(name, ARENA_NAME_MAX + 16, "%s-%u", a->prefix, k);
}

/* x rounded up to a multiple of m (a power of two); 0 on overflow. */
static size_t round_up(size_t x, size_t m) {
    if (x > SIZE_MAX - (m - 1)) return 0;
    return (x + m - 1) & ~(m - 1);
}

/* Map segment k of size bytes and make it allocatable. Called with the
 * lock held (or before the arena is shared). */
static int add_segment(arena *a, uint32_t k, size_t size, char *why, size_t n) {
    char name[ARENA_NAME_MAX + 16];
    segment_name(a, k, name);
    void *base;
    int rc = shm_segment_create(name, size, &base, why, n);
    if (rc != 0) return rc;
    segment *s = &a->seg[k];
    if (blocks_init(&s->blocks, size) != 0) {
        munmap(base, size);
        shm_unlink(name);
        return arena_fail(why, n, TSR_E_NOMEM, "out of memory for the bookkeeping of segment %s",
                          name);
    }
    s->base = base;
    s->size = size;
    atomic_store_explicit(&a->n_seg, k + 1, memory_order_release);
    return 0;
}

int arena_create(arena **out, size_t first_bytes, char *why, size_t n) {
    if (out == NULL) return arena_fail(why, n, TSR_E_ARGUMENT, "arena_create: out is NULL");
    *out = NULL;
    size_t size = round_up(first_bytes < ARENA_FIRST_MIN ? ARENA_FIRST_MIN : first_bytes,
                           shm_page_size());
    if (size == 0)
        return arena_fail(why, n, TSR_E_SHM, "arena of %zu bytes is too large", first_bytes);
    arena *a = calloc(1, sizeof *a);
    if (a == NULL) return arena_fail(why, n, TSR_E_NOMEM, "out of memory for an arena");
    int rc = pthread_mutex_init(&a->lock, NULL);
    if (rc != 0) {
        free(a);
        return arena_fail(why, n, TSR_E_NOMEM, "cannot create the arena's lock: %s", strerror(rc));
    }
    a->owner = getpid();
    const char *tag = arena_process_tag();
    /* 64 random bits make a clash all but impossible; O_EXCL catches it. */
    for (int attempt = 0;; attempt++) {
        char hex[SHM_RANDOM_HEX + 1];
        if (shm_random_hex(hex) != 0) {
            rc = arena_fail(why, n, TSR_E_SHM, "cannot get random bytes for a segment name: %s",
                            strerror(errno));
            break;
        }
        snprintf(a->prefix, sizeof a->prefix, "/" SHM_NAME_STEM "%s-%s", tag, hex);
        rc = add_segment(a, 0, size, why, n);
        if (rc == 0) {
            *out = a;
            return 0;
        }
        if (errno != EEXIST || attempt == 3) break;
    }
    pthread_mutex_destroy(&a->lock);
    free(a);
    return rc;
}

void arena_destroy(arena *a) {
    if (a == NULL) return;
    uint32_t n_seg = atomic_load(&a->n_seg);
    int owner = getpid() == a->owner;
    for (uint32_t k = 0; k < n_seg; k++) {
        segment *s = &a->seg[k];
        /* Teardown: a failed munmap or unlink leaves nothing we could fix;
         * arena_remove_orphans catches what an unlink missed. */
        munmap(s->base, s->size);
        if (owner) {
            char name[ARENA_NAME_MAX + 16];
            segment_name(a, k, name);
            shm_unlink(name);
        }
        blocks_fini(&s->blocks);
    }
    pthread_mutex_destroy(&a->lock);
    free(a);
}

const char *arena_prefix(const arena *a) { return a != NULL ? a->prefix : NULL; }

void arena_set_limit(arena *a, uint64_t max_bytes) {
    if (a == NULL || pthread_mutex_lock(&a->lock) != 0) return;
    a->limit = max_bytes;
    pthread_mutex_unlock(&a->lock);
}

/* Whether a new segment of size bytes keeps the arena within its limit. */
static int within_limit(arena *a, size_t size) {
    return a->limit == 0 || (uint64_t)arena_capacity(a) + size <= a->limit;
}

/* Segment size for a request of need bytes when every segment is full:
 * twice the last one, or the request if larger. 0 on overflow. */
static size_t growth_size(const arena *a, uint32_t n_seg, size_t need) {
    size_t req = round_up(need, shm_page_size());
    size_t last = a->seg[n_seg - 1].size;
    size_t twice = last > SIZE_MAX / 2 ? 0 : 2 * last;
    return twice > req ? twice : req;
}

void *arena_alloc(arena *a, size_t bytes, char *why, size_t n) {
    if (a == NULL) {
        arena_fail(why, n, TSR_E_ARGUMENT, "arena_alloc: no arena");
        return NULL;
    }
    /* 0 bytes still takes one aligned unit, so the pointer is unique. */
    size_t need = round_up(bytes == 0 ? 1 : bytes, TSR_ALIGNMENT);
    if (need == 0) {
        arena_fail(why, n, TSR_E_SHM, "cannot allocate %zu bytes: too large", bytes);
        return NULL;
    }
    if (pthread_mutex_lock(&a->lock) != 0) {
        arena_fail(why, n, TSR_E_SHM, "arena_alloc: cannot take the arena's lock");
        return NULL;
    }
    void *p = NULL;
    uint32_t n_seg = atomic_load_explicit(&a->n_seg, memory_order_relaxed);
    for (uint32_t k = 0; k < n_seg && p == NULL; k++) {
        int64_t off = blocks_take(&a->seg[k].blocks, need);
        if (off >= 0) p = a->seg[k].base + off;
    }
    if (p == NULL && n_seg == ARENA_MAX_SEGMENTS) {
        arena_fail(why, n, TSR_E_SHM,
                   "arena %s is at its limit of %d segments (%zu bytes); cannot allocate %zu bytes",
                   a->prefix, ARENA_MAX_SEGMENTS, arena_capacity(a), bytes);
    } else if (p == NULL) {
        size_t size = growth_size(a, n_seg, need);
        size_t req = round_up(need, shm_page_size());
        if (size > req && !within_limit(a, size)) size = req;
        if (size == 0 || req == 0) {
            arena_fail(why, n, TSR_E_SHM, "cannot allocate %zu bytes: too large", bytes);
        } else if (!within_limit(a, size)) {
            arena_fail(why, n, TSR_E_SHM,
                       "cannot allocate %zu bytes: the arena holds %zu bytes and would grow "
                       "past max_arena_bytes (%llu); raise the option max_arena_bytes to allow it",
                       bytes, arena_capacity(a), (unsigned long long)a->limit);
        } else {
            int rc = add_segment(a, n_seg, size, why, n);
            /* Doubling may ask more than /dev/shm holds while the request
             * itself would fit. */
            if (rc == TSR_E_SHM && size > req) rc = add_segment(a, n_seg, req, why, n);
            if (rc == 0) {
                int64_t off = blocks_take(&a->seg[n_seg].blocks, need);
                if (off >= 0) p = a->seg[n_seg].base + off;
            }
        }
    }
    pthread_mutex_unlock(&a->lock);
    return p;
}

/* Index of the segment holding [p, p + bytes), or -1. */
static int find_segment(const arena *a, const void *p, size_t bytes) {
    uint32_t n_seg = atomic_load_explicit(&a->n_seg, memory_order_acquire);
    uintptr_t x = (uintptr_t)p;
    for (uint32_t k = 0; k < n_seg; k++) {
        uintptr_t base = (uintptr_t)a->seg[k].base;
        size_t size = a->seg[k].size;
        if (x >= base && x - base < size && bytes <= size - (x - base)) return (int)k;
    }
    return -1;
}

void arena_free(arena *a, void *p) {
    if (a == NULL || p == NULL) return;
    int k = find_segment(a, p, 0);
    if (k < 0) return;   /* not from this arena: ignored */
    if (pthread_mutex_lock(&a->lock) != 0) return;
    blocks_give(&a->seg[k].blocks, (uint64_t)((char *)p - a->seg[k].base));
    pthread_mutex_unlock(&a->lock);
}

int arena_locate(arena *a, const void *p, size_t bytes, binref *ref) {
    if (a == NULL || p == NULL || ref == NULL) return -1;
    int k = find_segment(a, p, bytes);
    if (k < 0) return -1;
    ref->seg = (uint32_t)k;
    ref->reserved = 0;
    ref->offset = (uint64_t)((const char *)p - a->seg[k].base);
    ref->bytes = bytes;
    return 0;
}

void *arena_address(arena *a, const binref *ref) {
    if (a == NULL || ref == NULL) return NULL;
    uint32_t n_seg = atomic_load_explicit(&a->n_seg, memory_order_acquire);
    if (ref->seg >= n_seg) return NULL;
    const segment *s = &a->seg[ref->seg];
    if (ref->offset >= s->size || ref->bytes > s->size - ref->offset) return NULL;
    return s->base + ref->offset;
}

size_t arena_capacity(arena *a) {
    if (a == NULL) return 0;
    uint32_t n_seg = atomic_load_explicit(&a->n_seg, memory_order_acquire);
    size_t total = 0;
    for (uint32_t k = 0; k < n_seg; k++) total += a->seg[k].size;
    return total;
}
