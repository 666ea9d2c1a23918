/* Result and staging buffers: 64-byte aligned, grown when too small, kept
 * otherwise so that a loop of calls allocates nothing after the first. In
 * worker mode they come from the component's shared-memory arena, where
 * the worker can see them. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "transport/shm/arena.h"

static void *raw_alloc(tsr_component *c, size_t bytes, char *why, size_t n) {
    if (c->arena) return arena_alloc(c->arena, bytes, why, n);
    void *p = aligned_alloc(TSR_ALIGN, bytes);
    if (!p) snprintf(why, n, "out of memory");
    return p;
}

static void raw_free(tsr_component *c, void *p) {
    if (c->arena) arena_free(c->arena, p);
    else free(p);
}

void *result_reserve(tsr_component *c, result_buf *b, size_t bytes, char *why, size_t n) {
    /* Never hand out NULL, even for an empty array: NULL means "not
     * allocated yet" to plugins. */
    size_t want = bytes < TSR_ALIGN ? TSR_ALIGN : bytes;
    if (want <= b->cap) return b->ptr;
    if (want > SIZE_MAX - TSR_ALIGN) {
        snprintf(why, n, "size overflow");
        return NULL;
    }
    size_t rounded = (want + TSR_ALIGN - 1) / TSR_ALIGN * TSR_ALIGN;
    void *p = raw_alloc(c, rounded, why, n);
    if (!p) return NULL;
    raw_free(c, b->ptr);
    b->ptr = p;
    b->cap = rounded;
    return p;
}

void result_release(tsr_component *c, result_buf *b) {
    if (b->ptr) raw_free(c, b->ptr);
    b->ptr = NULL;
    b->cap = 0;
}

TSR_API void *tsr_alloc(tsr_component *c, size_t bytes) {
    if (!c) return NULL;
    char why[256];
    size_t want = bytes ? (bytes + TSR_ALIGN - 1) / TSR_ALIGN * TSR_ALIGN : TSR_ALIGN;
    if (want < bytes) return NULL;
    void *p = raw_alloc(c, want, why, sizeof why);
    if (!p) comp_log(c, TSR_LOG_WARN, "tsr_alloc of %zu bytes failed: %s", bytes, why);
    return p;
}

TSR_API void tsr_free(tsr_component *c, void *p) {
    if (c && p) raw_free(c, p);
}
