/* SPDX-License-Identifier: MIT */
/* The worker's side of the arena: segments mapped by name on first use,
 * every binref checked against the real segment size. */
#include "arena_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tessera/tessera.h"

struct arena_view {
    char prefix[ARENA_NAME_MAX];
    struct {
        char *base;   /* NULL until first mapped */
        size_t size;
    } seg[ARENA_MAX_SEGMENTS];
};

int arena_view_open(arena_view **out, const char *prefix, char *why, size_t n) {
    if (out == NULL || prefix == NULL)
        return arena_fail(why, n, TSR_E_ARGUMENT, "arena_view_open: out or prefix is NULL");
    *out = NULL;
    /* A POSIX shm name: one leading '/', no other, short enough. */
    size_t len = strlen(prefix);
    if (prefix[0] != '/' || strchr(prefix + 1, '/') != NULL || len < 2 || len >= ARENA_NAME_MAX)
        return arena_fail(why, n, TSR_E_ARGUMENT, "'%.*s' is not an arena prefix", ARENA_NAME_MAX,
                          prefix);
    arena_view *v = calloc(1, sizeof *v);
    if (v == NULL) return arena_fail(why, n, TSR_E_NOMEM, "out of memory for an arena view");
    memcpy(v->prefix, prefix, len + 1);
    *out = v;
    return 0;
}

void arena_view_close(arena_view *v) {
    if (v == NULL) return;
    for (int k = 0; k < ARENA_MAX_SEGMENTS; k++)
        if (v->seg[k].base != NULL) munmap(v->seg[k].base, v->seg[k].size);   /* nothing to do on failure */
    free(v);
}

void *arena_view_resolve(arena_view *v, const binref *ref, char *why, size_t n) {
    if (v == NULL || ref == NULL) {
        arena_fail(why, n, TSR_E_ARGUMENT, "arena_view_resolve: no view or no binref");
        return NULL;
    }
    if (ref->seg >= ARENA_MAX_SEGMENTS || ref->reserved != 0) {
        arena_fail(why, n, TSR_E_PAYLOAD, "invalid binref: segment %u (at most %d), reserved %u",
                   ref->seg, ARENA_MAX_SEGMENTS - 1, ref->reserved);
        return NULL;
    }
    uint32_t k = ref->seg;
    if (v->seg[k].base == NULL) {
        char name[ARENA_NAME_MAX + 16];
        snprintf(name, sizeof name, "%s-%u", v->prefix, k);
        void *base;
        size_t size;
        if (shm_segment_open(name, &base, &size, why, n) != 0) return NULL;
        v->seg[k].base = base;
        v->seg[k].size = size;
    }
    size_t size = v->seg[k].size;
    if (ref->offset >= size || ref->bytes > size - ref->offset) {
        arena_fail(why, n, TSR_E_PAYLOAD,
                   "binref out of bounds: offset %llu + %llu bytes exceeds segment %u of %zu bytes",
                   (unsigned long long)ref->offset, (unsigned long long)ref->bytes, k, size);
        return NULL;
    }
    return v->seg[k].base + ref->offset;
}
