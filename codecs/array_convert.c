/* SPDX-License-Identifier: MIT */
/* A decoded array converted to its field's dtype, and the bytes a payload's
 * arrays take counted against its limits: used both by the decoder and by
 * a batch of binref files read later, which thus depend on this file and
 * not on each other. */
#include <stdint.h>
#include <stdlib.h>

#include <tessera/tessera.h>

#include "array_buffer.h"
#include "array_decode.h"
#include "numeric.h"

int array_take_bytes(const payload_ctx *ctx, const char *path, size_t bytes,
                         size_t released) {
    payload_limits *l = ctx->limits;
    if (l == NULL) return 0;
    if (l->max_array_bytes != 0 && bytes > l->max_array_bytes)
        return payload_fail(ctx, TSR_E_LIMIT, path,
                                "%zu bytes exceed max_array_bytes (%llu); raise the option "
                                "max_array_bytes to allow it",
                                bytes, (unsigned long long)l->max_array_bytes);
    uint64_t total = l->used - (released < l->used ? released : l->used);
    if (__builtin_add_overflow(total, (uint64_t)bytes, &total)) total = UINT64_MAX;
    if (l->max_call_bytes != 0 && total > l->max_call_bytes)
        return payload_fail(ctx, TSR_E_LIMIT, path,
                                "%zu bytes bring the payload's arrays to %llu bytes, past "
                                "max_call_bytes (%llu); raise the option max_call_bytes to "
                                "allow it",
                                bytes, (unsigned long long)total,
                                (unsigned long long)l->max_call_bytes);
    l->used = total;
    return 0;
}

int decoded_convert(decoded_array *out, tsr_dtype want, const payload_ctx *ctx,
                        const char *path) {
    tsr_dtype have = out->array.dtype;
    if (want == TSR_DTYPE_INVALID || want == have) return 0;
    if (!dtype_casts_same_kind(have, want))
        return payload_fail(ctx, TSR_E_DTYPE, path,
                                "dtype %s cannot be converted to the field's %s "
                                "(only same_kind casts are allowed)",
                                tsr_dtype_name(have), tsr_dtype_name(want));
    if (out->pending) return 0; /* converted once read */
    if (out->buffer == NULL) { /* abstract: nothing to convert */
        out->array.dtype = want;
        return 0;
    }
    int64_t count;
    size_t bytes;
    if (array_shape_bytes(out->array.shape, out->array.rank, want, &count, &bytes) != 0)
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "shape is too large to allocate");
    size_t had = 0;
    array_shape_bytes(out->array.shape, out->array.rank, have, &count, &had);
    int rc = array_take_bytes(ctx, path, bytes, had);
    if (rc != 0) return rc;
    char *converted = aligned_buffer(bytes);
    if (converted == NULL)
        return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory for %zu bytes", bytes);
    int64_t bad;
    char why[200];
    if (num_convert(out->buffer, have, converted, want, count, &bad, why, sizeof why) != 0) {
        free(converted);
        return payload_fail(ctx, TSR_E_DTYPE, path, "%s", why);
    }
    free(out->buffer);
    out->buffer = converted;
    out->array.dtype = want;
    return 0;
}
