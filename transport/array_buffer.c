#include "array_buffer.h"

#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

int tsr_shape_bytes(const int64_t *shape, int32_t rank, tsr_dtype dtype, int64_t *count,
                    size_t *bytes) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (shape[d] < 0) return -1;
        if (__builtin_mul_overflow(n, shape[d], &n)) return -1;
    }
    size_t itemsize = tsr_dtype_size(dtype);
    size_t total;
    if (itemsize == 0 || (uint64_t)n > SIZE_MAX) return -1;
    if (__builtin_mul_overflow((size_t)n, itemsize, &total)) return -1;
    /* Room to round up to the alignment without overflowing. */
    if (total > SIZE_MAX - TSR_BUFFER_ALIGNMENT) return -1;
    *count = n;
    *bytes = total;
    return 0;
}

void *tsr_aligned_buffer(size_t bytes) {
    size_t rounded = (bytes + TSR_BUFFER_ALIGNMENT - 1) / TSR_BUFFER_ALIGNMENT * TSR_BUFFER_ALIGNMENT;
    if (rounded == 0) rounded = TSR_BUFFER_ALIGNMENT;
    void *p = NULL;
    if (posix_memalign(&p, TSR_BUFFER_ALIGNMENT, rounded) != 0) return NULL;
    memset(p, 0, rounded);
    return p;
}

void tsr_to_little_endian(void *data, int64_t count, tsr_dtype dtype) {
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
