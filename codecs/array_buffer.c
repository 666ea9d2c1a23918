/* SPDX-License-Identifier: MIT */
#include "array_buffer.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <tessera/tessera.h>

int64_t array_shape_count(const int64_t *shape, int32_t rank) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (shape[d] < 0) return -1;
        if (__builtin_mul_overflow(n, shape[d], &n)) return -1;
    }
    return n;
}

int array_shape_bytes(const int64_t *shape, int32_t rank, tsr_dtype dtype, int64_t *count,
                    size_t *bytes) {
    int64_t n = array_shape_count(shape, rank);
    if (n < 0) return -1;
    size_t itemsize = tsr_dtype_size(dtype);
    size_t total;
    if (itemsize == 0 || (uint64_t)n > SIZE_MAX) return -1;
    if (__builtin_mul_overflow((size_t)n, itemsize, &total)) return -1;
    /* Room to round up to the alignment without overflowing. */
    if (total > SIZE_MAX - TSR_ALIGNMENT) return -1;
    *count = n;
    *bytes = total;
    return 0;
}

static void *allocate(size_t bytes, size_t *rounded) {
    *rounded = (bytes + TSR_ALIGNMENT - 1) / TSR_ALIGNMENT * TSR_ALIGNMENT;
    if (*rounded == 0) *rounded = TSR_ALIGNMENT;
    bool big = *rounded >= HUGE_PAGE_MIN;
    void *p = NULL;
    if (posix_memalign(&p, big ? HUGE_PAGE : TSR_ALIGNMENT, *rounded) != 0) return NULL;
    if (big) advise_huge_pages(p, *rounded);
    return p;
}

void advise_huge_pages(void *p, size_t bytes) {
    /* Whole pages only; THP uses the 2 MiB-aligned stretches within. */
    uintptr_t start = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
    uintptr_t end = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
    /* A hint: where THP is off it fails, and nothing else changes. */
    if (end > start) (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
}

void *aligned_buffer(size_t bytes) {
    size_t rounded;
    void *p = allocate(bytes, &rounded);
    if (p != NULL) memset(p, 0, rounded);
    return p;
}

void *aligned_buffer_unzeroed(size_t bytes) {
    size_t rounded;
    char *p = allocate(bytes, &rounded);
    if (p != NULL) memset(p + bytes, 0, rounded - bytes);
    return p;
}

void to_little_endian(void *data, int64_t count, tsr_dtype dtype) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    size_t width = tsr_dtype_size(dtype);
    if (dtype == TSR_COMPLEX64 || dtype == TSR_COMPLEX128) {
        width /= 2;
        count *= 2;
    }
    unsigned char *p = data;
    for (int64_t k = 0; k < count; k++, p += width) {
        for (size_t a = 0, b = width - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
    }
#else
    (void)data;
    (void)count;
    (void)dtype;
#endif
}
