/* SPDX-License-Identifier: MIT */
/* The allocator's block list for one segment: a sorted array in private
 * memory. First fit, split on take, merge with free neighbours on give.
 * Arrays of a few hundred blocks make the linear scans cheaper than a
 * tree would be. */
#include "arena_internal.h"

#include <stdlib.h>
#include <string.h>

int blocks_init(block_list *l, uint64_t size) {
    l->b = malloc(16 * sizeof *l->b);
    if (l->b == NULL) return -1;
    l->cap = 16;
    l->n = 1;
    l->b[0] = (arena_block){.off = 0, .size = size, .used = 0};
    return 0;
}

void blocks_fini(block_list *l) {
    free(l->b);
    l->b = NULL;
    l->n = l->cap = 0;
}

/* Make room for one more entry; -1 when out of memory. */
static int reserve_one(block_list *l) {
    if (l->n < l->cap) return 0;
    if (l->cap > SIZE_MAX / 2 / sizeof *l->b) return -1;
    size_t cap = l->cap * 2;
    arena_block *b = realloc(l->b, cap * sizeof *b);
    if (b == NULL) return -1;
    l->b = b;
    l->cap = cap;
    return 0;
}

int64_t blocks_take(block_list *l, uint64_t size) {
    for (size_t i = 0; i < l->n; i++) {
        arena_block *b = &l->b[i];
        if (b->used || b->size < size) continue;
        /* Split off the rest; out of memory for the entry only means the
         * caller gets the whole block. */
        if (b->size > size && reserve_one(l) == 0) {
            b = &l->b[i];
            memmove(&l->b[i + 2], &l->b[i + 1], (l->n - i - 1) * sizeof *b);
            l->b[i + 1] = (arena_block){.off = b->off + size, .size = b->size - size, .used = 0};
            b->size = size;
            l->n++;
        }
        b->used = 1;
        return (int64_t)b->off;
    }
    return -1;
}

void blocks_give(block_list *l, uint64_t off) {
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->b[mid].off < off) lo = mid + 1;
        else hi = mid;
    }
    if (lo == l->n || l->b[lo].off != off || !l->b[lo].used) return;   /* not ours, or freed twice */
    size_t i = lo;
    l->b[i].used = 0;
    if (i + 1 < l->n && !l->b[i + 1].used) {
        l->b[i].size += l->b[i + 1].size;
        memmove(&l->b[i + 1], &l->b[i + 2], (l->n - i - 2) * sizeof *l->b);
        l->n--;
    }
    if (i > 0 && !l->b[i - 1].used) {
        l->b[i - 1].size += l->b[i].size;
        memmove(&l->b[i], &l->b[i + 1], (l->n - i - 1) * sizeof *l->b);
        l->n--;
    }
}
