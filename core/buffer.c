/* Result buffers: 64-byte aligned, grown when too small, kept otherwise so
 * that a loop of calls allocates nothing after the first. */
#include <stdlib.h>

#include "internal.h"

void *result_reserve(result_buf *b, size_t bytes) {
    /* Never hand out NULL, even for an empty array: NULL means "not
     * allocated yet" to plugins. */
    size_t want = bytes < TSR_ALIGN ? TSR_ALIGN : bytes;
    if (want <= b->cap) return b->ptr;
    if (want > SIZE_MAX - TSR_ALIGN) return NULL;
    size_t rounded = (want + TSR_ALIGN - 1) / TSR_ALIGN * TSR_ALIGN;
    void *p = aligned_alloc(TSR_ALIGN, rounded);
    if (!p) return NULL;
    free(b->ptr);
    b->ptr = p;
    b->cap = rounded;
    return p;
}

void result_release(result_buf *b) {
    free(b->ptr);
    b->ptr = NULL;
    b->cap = 0;
}
