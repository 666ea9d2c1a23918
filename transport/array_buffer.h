/*
 * Sizes and buffers of decoded arrays: element counts checked for overflow
 * before anything is allocated, and storage aligned to 64 bytes as the
 * plugin ABI promises.
 */
#ifndef TESSERA_TRANSPORT_ARRAY_BUFFER_H
#define TESSERA_TRANSPORT_ARRAY_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include <tessera/plugin.h>

#define TSR_BUFFER_ALIGNMENT 64

/* Number of elements of shape[0..rank) and their size in bytes for dtype.
 * Returns -1 if a dimension is negative or the byte size overflows. */
int tsr_shape_bytes(const int64_t *shape, int32_t rank, tsr_dtype dtype, int64_t *count,
                    size_t *bytes);

/* A zeroed buffer of at least one alignment unit, so that an empty array
 * still has a valid data pointer. NULL when out of memory. Release with free(). */
void *tsr_aligned_buffer(size_t bytes);

/* Reverse the byte order of every element (complex: of each part) when the
 * machine is big-endian; encodings carry little-endian bytes. */
void tsr_to_little_endian(void *data, int64_t count, tsr_dtype dtype);

#endif /* TESSERA_TRANSPORT_ARRAY_BUFFER_H */
