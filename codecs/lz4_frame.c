/* SPDX-License-Identifier: MIT */
#include "lz4_frame.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>

#include <tessera/tessera.h>

int lz4_frame_compress(const void *src, size_t n, void **out, size_t *out_len, char *why,
                     size_t why_size) {
    *out = NULL;
    *out_len = 0;
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.contentSize = n; /* as lz4.frame.compress(store_size=True) */
    size_t bound = LZ4F_compressFrameBound(n, &prefs);
    if (LZ4F_isError(bound)) {
        snprintf(why, why_size, "%zu bytes are too many for one lz4 frame", n);
        return TSR_E_PAYLOAD;
    }
    void *dst = malloc(bound ? bound : 1);
    if (dst == NULL) {
        snprintf(why, why_size, "out of memory for a %zu-byte lz4 frame", bound);
        return TSR_E_NOMEM;
    }
    size_t got = LZ4F_compressFrame(dst, bound, src, n, &prefs);
    if (LZ4F_isError(got)) {
        free(dst);
        snprintf(why, why_size, "lz4 compression failed: %s", LZ4F_getErrorName(got));
        return TSR_E_PAYLOAD;
    }
    *out = dst;
    *out_len = got;
    return 0;
}

/* Run the decoder over src[pos..n) until the frame ends. */
static int run(LZ4F_dctx *dctx, const unsigned char *src, size_t pos, size_t n, unsigned char *dst,
               size_t expected, char *why, size_t why_size) {
    size_t produced = 0, hint = 1;
    while (hint != 0) {
        unsigned char spare[64];
        /* Once dst is full, decode into spare: anything landing there is
         * more than the array holds. */
        int full = produced == expected;
        size_t dst_size = full ? sizeof spare : expected - produced;
        size_t src_size = n - pos;
        hint = LZ4F_decompress(dctx, full ? spare : dst + produced, &dst_size, src + pos, &src_size,
                               NULL);
        if (LZ4F_isError(hint)) {
            snprintf(why, why_size, "corrupt lz4 frame at byte %zu: %s", pos,
                     LZ4F_getErrorName(hint));
            return TSR_E_PAYLOAD;
        }
        if (full && dst_size > 0) {
            snprintf(why, why_size, "the lz4 frame holds more than the %zu bytes that shape x dtype need",
                     expected);
            return TSR_E_PAYLOAD;
        }
        produced += full ? 0 : dst_size;
        pos += src_size;
        if (hint != 0 && src_size == 0 && dst_size == 0 && pos == n) {
            snprintf(why, why_size, "truncated lz4 frame: it ends after %zu bytes, before its end mark",
                     n);
            return TSR_E_PAYLOAD;
        }
    }
    if (produced != expected) {
        snprintf(why, why_size, "the lz4 frame holds %zu bytes where shape x dtype need %zu",
                 produced, expected);
        return TSR_E_PAYLOAD;
    }
    if (pos != n) {
        snprintf(why, why_size, "%zu bytes follow the end of the lz4 frame", n - pos);
        return TSR_E_PAYLOAD;
    }
    return 0;
}

int lz4_frame_decompress(const void *src, size_t n, void *dst, size_t expected, char *why,
                       size_t why_size) {
    LZ4F_dctx *dctx = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
        snprintf(why, why_size, "out of memory for an lz4 decoder");
        return TSR_E_NOMEM;
    }
    LZ4F_frameInfo_t info;
    size_t header = n;
    size_t rc = LZ4F_getFrameInfo(dctx, &info, src, &header);
    int status;
    if (LZ4F_isError(rc)) {
        snprintf(why, why_size, "not an lz4 frame (%zu bytes): %s", n, LZ4F_getErrorName(rc));
        status = TSR_E_PAYLOAD;
    } else if (info.contentSize != 0 && info.contentSize != (unsigned long long)expected) {
        snprintf(why, why_size, "the lz4 frame holds %llu bytes where shape x dtype need %zu",
                 info.contentSize, expected);
        status = TSR_E_PAYLOAD;
    } else {
        status = run(dctx, src, header, n, dst, expected, why, why_size);
    }
    LZ4F_freeDecompressionContext(dctx);
    return status;
}
