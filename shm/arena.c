/* SPDX-License-Identifier: MIT */
/* The host's arena: a growing set of pre-faulted memfd segments and the
 * allocator over them. */
#include "arena_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tessera/tessera.h"

#define ARENA_FIRST_MIN ((size_t)1 << 20)

typedef struct segment {
    char *base;
    size_t size;
    int fd;              /* the memfd, kept to hand copies to workers */
    block_list blocks;   /* guarded by the arena's lock */
} segment;

struct arena {
    pthread_mutex_t lock;
    /* Segments are only appended: base, size and fd of seg[i < n_seg]
     * never change, so locate and arena_send_segments read them without
     * the lock. */
    _Atomic uint32_t n_seg;
    uint64_t limit;             /* arena_set_limit; 0 = none */
    segment seg[ARENA_MAX_SEGMENTS];
};

/* x rounded up to a multiple of m (a power of two); 0 on overflow. */
static size_t round_up(size_t x, size_t m) {
    if (x > SIZE_MAX - (m - 1)) return 0;
    return (x + m - 1) & ~(m - 1);
}

/* Make segment k of size bytes and make it allocatable. Called with the
 * lock held (or before the arena is shared). */
static int add_segment(arena *a, uint32_t k, size_t size, char *why, size_t n) {
    void *base;
    int fd;
    int rc = shm_segment_create(k, size, &base, &fd, why, n);
    if (rc != 0) return rc;
    segment *s = &a->seg[k];
    if (blocks_init(&s->blocks, size) != 0) {
        munmap(base, size);
        close(fd);
        return arena_fail(why, n, TSR_E_NOMEM, "out of memory for the bookkeeping of segment %u",
                          k);
    }
    s->base = base;
    s->size = size;
    s->fd = fd;
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
    rc = add_segment(a, 0, size, why, n);
    if (rc == 0) {
        *out = a;
        return 0;
    }
    pthread_mutex_destroy(&a->lock);
    free(a);
    return rc;
}

void arena_destroy(arena *a) {
    if (a == NULL) return;
    uint32_t n_seg = atomic_load(&a->n_seg);
    for (uint32_t k = 0; k < n_seg; k++) {
        segment *s = &a->seg[k];
        /* Teardown: a failed munmap or close leaves nothing we could fix;
         * the segment has no name, so nothing outlives this process. */
        munmap(s->base, s->size);
        close(s->fd);
        blocks_fini(&s->blocks);
    }
    pthread_mutex_destroy(&a->lock);
    free(a);
}

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
                   "the arena is at its limit of %d segments (%zu bytes); cannot allocate %zu bytes",
                   ARENA_MAX_SEGMENTS, arena_capacity(a), bytes);
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
            /* Doubling may ask more than the memory there is while the
             * request itself would fit. */
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

uint32_t arena_segments(arena *a) {
    return a == NULL ? 0 : atomic_load_explicit(&a->n_seg, memory_order_acquire);
}

int arena_send_segments(arena *a, int sock, uint32_t *sent, char *why, size_t n) {
    uint32_t count = arena_segments(a);
    while (*sent < count) {
        uint32_t k = *sent;
        shm_seg_msg m = {.magic = SHM_SEG_MAGIC, .index = k, .bytes = a->seg[k].size};
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } ctl;
        memset(&ctl, 0, sizeof ctl);
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                             .msg_controllen = sizeof ctl.buf};
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &a->seg[k].fd, sizeof(int));
        ssize_t r;
        do r = sendmsg(sock, &msg, MSG_NOSIGNAL);
        while (r < 0 && errno == EINTR);
        if (r != (ssize_t)sizeof m) {
            int e = r < 0 ? errno : EIO;
            arena_fail(why, n, TSR_E_SHM, "cannot hand arena segment %u to the worker: %s", k,
                       strerror(e));
            errno = e;
            return -1;
        }
        *sent = k + 1;
    }
    return 0;
}
