/* SPDX-License-Identifier: MIT */
/*
 * lz4 frames (liblz4's LZ4F format), as Tesseract compresses array bytes
 * ("compression": "lz4"): one frame per array, content size recorded in
 * the frame header as Python's lz4.frame.compress does.
 */
#ifndef TESSERA_CODECS_LZ4_FRAME_H
#define TESSERA_CODECS_LZ4_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* Compress src[0..n) into one frame; *out (free()) holds *out_len bytes.
 * Returns 0 or TSR_E_NOMEM / TSR_E_PAYLOAD with the cause in why. */
int lz4_frame_compress(const void *src, size_t n, void **out, size_t *out_len, char *why,
                     size_t why_size);

/* Decompress the one frame src[0..n) into dst, which must come out at
 * exactly `expected` bytes (shape x dtype). Returns 0, or TSR_E_PAYLOAD
 * with the cause in why: not an lz4 frame, a corrupt or truncated frame,
 * trailing bytes after it, or a size other than expected; TSR_E_NOMEM. */
int lz4_frame_decompress(const void *src, size_t n, void *dst, size_t expected, char *why,
                       size_t why_size);

/* The most bytes a frame of frame_bytes can decompress to: LZ4 encodes
 * at best about 255 bytes of a match per byte, so a claim of more (a
 * shape far larger than its compressed buffer) is refused before anything
 * is allocated for it. */
static inline size_t lz4_frame_max_content(size_t frame_bytes) {
    return frame_bytes > (SIZE_MAX - 4096) / 256 ? SIZE_MAX : frame_bytes * 256 + 4096;
}

#endif /* TESSERA_CODECS_LZ4_FRAME_H */
