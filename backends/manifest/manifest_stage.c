/* SPDX-License-Identifier: MIT */
/* Moving an array between the host's row-major (C) layout and the
 * column-major (Fortran) layout a routine expects: the same shape, the
 * axes' strides reversed. */
#include <string.h>

#include "manifest_internal.h"

/* Walk the array in C order (last axis fastest), keeping the matching
 * Fortran offset, and copy each element one way or the other. */
static void permute(void *dst, const void *src, const int64_t *shape, int32_t rank, size_t esize,
                    int to_fortran) {
    int64_t count = 1;
    for (int32_t d = 0; d < rank; d++) count *= shape[d];
    if (count == 0) return;
    if (rank <= 1) {
        memcpy(dst, src, (size_t)count * esize);
        return;
    }
    int64_t fstride[TSR_MAX_RANK], index[TSR_MAX_RANK] = {0};
    fstride[0] = 1;
    for (int32_t d = 1; d < rank; d++) fstride[d] = fstride[d - 1] * shape[d - 1];
    const char *s = src;
    char *t = dst;
    int64_t f = 0;
    for (int64_t c = 0; c < count; c++) {
        size_t from = (size_t)(to_fortran ? c : f) * esize;
        size_t to = (size_t)(to_fortran ? f : c) * esize;
        if (esize == 8) memcpy(t + to, s + from, 8);   /* the common case, inlined */
        else memcpy(t + to, s + from, esize);
        /* next C index: carry from the last axis */
        for (int32_t d = rank - 1; d >= 0; d--) {
            if (++index[d] < shape[d]) {
                f += fstride[d];
                break;
            }
            f -= (shape[d] - 1) * fstride[d];
            index[d] = 0;
        }
    }
}

void mf_to_fortran(void *dst, const void *src, const int64_t *shape, int32_t rank, size_t esize) {
    permute(dst, src, shape, rank, esize, 1);
}

void mf_from_fortran(void *dst, const void *src, const int64_t *shape, int32_t rank,
                     size_t esize) {
    permute(dst, src, shape, rank, esize, 0);
}
