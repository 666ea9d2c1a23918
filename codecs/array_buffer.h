/* SPDX-License-Identifier: MIT */
/*
 * Sizes and buffers of decoded arrays: element counts checked for overflow
 * before anything is allocated, and storage aligned to 64 bytes as the
 * plugin ABI promises.
 */
#ifndef TESSERA_CODECS_ARRAY_BUFFER_H
#define TESSERA_CODECS_ARRAY_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include <tessera/plugin.h>


/* Buffers from this size on are aligned to a huge page and advised to use
 * transparent huge pages: the first touch of a 4 KiB page costs ~3 us on
 * the project's VMs (a ceiling of ~1.4 GB/s for filling fresh memory),
 * one 2 MiB page far less per byte. */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_PAGE_MIN ((size_t)4 << 20)

/* The library's one statement of array-size arithmetic, used by core, the
 * worker and the codecs alike. array_shape_count: the number of elements of
 * shape[0..rank), or -1 when a dim is negative or the count overflows
 * int64. array_shape_bytes: that count and its size in bytes for dtype, with
 * room left to round the size up to TSR_ALIGNMENT; -1 when a dimension is
 * negative, the dtype invalid or the size overflows. */
int64_t array_shape_count(const int64_t *shape, int32_t rank);
int array_shape_bytes(const int64_t *shape, int32_t rank, tsr_dtype dtype, int64_t *count,
                    size_t *bytes);

/* A zeroed buffer of at least one alignment unit, so that an empty array
 * still has a valid data pointer. NULL when out of memory. Release with free(). */
void *aligned_buffer(size_t bytes);
/* The same without zeroing the first `bytes` (only the padding after
 * them): for buffers about to be filled whole. */
void *aligned_buffer_unzeroed(size_t bytes);

/* Advise the whole pages of p[0..bytes) to use transparent huge pages
 * (madvise MADV_HUGEPAGE; a hint, ignored where THP is off). */
void advise_huge_pages(void *p, size_t bytes);

/* Reverse the byte order of every element (complex: of each part) when the
 * machine is big-endian; encodings carry little-endian bytes. */
void to_little_endian(void *data, int64_t count, tsr_dtype dtype);

#endif /* TESSERA_CODECS_ARRAY_BUFFER_H */
