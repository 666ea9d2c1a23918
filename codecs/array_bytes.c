/* SPDX-License-Identifier: MIT */
#include "array_bytes.h"

#include <stdlib.h>
#include <string.h>

#include "array_buffer.h"
#include "checksum.h"
#include "lz4_frame.h"

int stored_read(json_t *data, stored_form *st, const payload_ctx *ctx, const char *path) {
    memset(st, 0, sizeof *st);
    json_t *compression = json_object_get(data, "compression");
    if (compression != NULL && !json_is_null(compression)) {
        if (!json_is_string(compression))
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "\"compression\" must be \"lz4\" or null");
        if (strcmp(json_string_value(compression), "lz4") != 0)
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "unknown compression \"%.40s\" (lz4 or none)",
                                    json_string_value(compression));
        st->lz4 = true;
    }
    json_t *checksum = json_object_get(data, "checksum");
    if (checksum != NULL) {
        if (!json_is_string(checksum))
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "\"checksum\" must be a string \"xxh3:<16 hex digits>\"");
        char why[160];
        if (checksum_parse(json_string_value(checksum), &st->checksum, why, sizeof why) != 0)
            return payload_fail(ctx, TSR_E_PAYLOAD, path, "%s", why);
        st->has_checksum = true;
    }
    return 0;
}

int stored_finish(const stored_form *st, const void *src, size_t src_len, void *dst,
                      size_t bytes, int64_t count, tsr_dtype dtype, const payload_ctx *ctx,
                      const char *path) {
    if (st->lz4) {
        char why[256];
        int rc = lz4_frame_decompress(src, src_len, dst, bytes, why, sizeof why);
        if (rc != 0) return payload_fail(ctx, rc, path, "%s", why);
    }
    if (st->has_checksum) {
        uint64_t got = checksum_xxh3(dst, bytes);
        if (got != st->checksum) {
            char want_text[CHECKSUM_TEXT_MAX], got_text[CHECKSUM_TEXT_MAX];
            checksum_format(st->checksum, want_text);
            checksum_format(got, got_text);
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "checksum mismatch: the %zu bytes of the array hash to %s, "
                                    "the payload says %s",
                                    bytes, got_text, want_text);
        }
    }
    to_little_endian(dst, count, dtype);
    return 0;
}

int stored_make(const tsr_array *a, int64_t count, size_t bytes, bool lz4,
                    uint64_t *checksum, const void **stored, size_t *stored_len, void **owned,
                    const payload_ctx *ctx, const char *path) {
    *owned = NULL;
    const void *le = a->data;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    void *copy = malloc(bytes ? bytes : 1);
    if (copy == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
    memcpy(copy, a->data, bytes);
    to_little_endian(copy, count, a->dtype);
    le = copy;
    *owned = copy;
#else
    (void)count;
#endif
    if (checksum != NULL) *checksum = checksum_xxh3(le, bytes);
    if (!lz4) {
        *stored = le;
        *stored_len = bytes;
        return 0;
    }
    void *frame;
    size_t frame_len;
    char why[160];
    int rc = lz4_frame_compress(le, bytes, &frame, &frame_len, why, sizeof why);
    free(*owned);
    *owned = NULL;
    if (rc != 0) return payload_fail(ctx, rc, path, "%s", why);
    *stored = frame;
    *stored_len = frame_len;
    *owned = frame;
    return 0;
}
