/* SPDX-License-Identifier: MIT */
/* Result and staging buffers: 64-byte aligned, grown when too small, kept
 * otherwise so that a loop of calls allocates nothing after the first.
 * They come from the component's buffer source when its backend set one
 * (worker mode: the shared-memory arena, where the worker sees them). */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static void *raw_alloc(tsr_component *c, size_t bytes, char *why, size_t n) {
    if (c->buffers.alloc) return c->buffers.alloc(c->buffers.user, bytes, why, n);
    void *p = aligned_alloc(TSR_ALIGNMENT, bytes);
    if (!p) snprintf(why, n, "out of memory");
    return p;
}

static void raw_free(tsr_component *c, void *p) {
    if (c->buffers.alloc) c->buffers.free(c->buffers.user, p);
    else free(p);
}

void backend_set_buffers(tsr_component *c, const buffer_source *src) {
    c->buffers = src ? *src : (buffer_source){0};
}

int buffer_fail_code(const tsr_component *c) {
    return c->buffers.alloc ? c->buffers.fail_code : TSR_E_NOMEM;
}

void *result_reserve(tsr_component *c, result_buf *b, size_t bytes, char *why, size_t n) {
    /* Never hand out NULL, even for an empty array: NULL means "not
     * allocated yet" to plugins. */
    size_t want = bytes < TSR_ALIGNMENT ? TSR_ALIGNMENT : bytes;
    if (want <= b->cap) return b->ptr;
    if (want > SIZE_MAX - TSR_ALIGNMENT) {
        snprintf(why, n, "size overflow");
        return NULL;
    }
    size_t rounded = (want + TSR_ALIGNMENT - 1) / TSR_ALIGNMENT * TSR_ALIGNMENT;
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

TSR_API void *tsr_component_alloc(tsr_component *c, size_t bytes) {
    if (!c) return NULL;
    char why[256];
    size_t want = bytes ? (bytes + TSR_ALIGNMENT - 1) / TSR_ALIGNMENT * TSR_ALIGNMENT : TSR_ALIGNMENT;
    if (want < bytes) return NULL;
    void *p = raw_alloc(c, want, why, sizeof why);
    if (!p) comp_log(c, TSR_LOG_WARN, "tsr_component_alloc of %zu bytes failed: %s", bytes, why);
    return p;
}

TSR_API void tsr_component_free_buffer(tsr_component *c, void *p) {
    if (c && p) raw_free(c, p);
}
