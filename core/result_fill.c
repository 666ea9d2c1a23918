/* SPDX-License-Identifier: MIT */
/* What a result buffer holds before the endpoint writes it. Buffers are
 * reused from call to call (and in a worker's arena, from caller to
 * caller), so a plugin that returns 0 without writing an output would hand
 * back the previous call's bytes: every result is cleared before the
 * endpoint runs. With the option unwritten=check it is filled with a
 * marker instead, and a result still holding the marker afterwards fails
 * the call, naming it; with unwritten=keep (a host that trusts its plugin
 * to write every result) it is left as it is. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The marker, one element of each dtype: a signalling NaN for floats (no
 * arithmetic produces one: operations quiet them), 0xA5 bytes otherwise
 * (for bool, not a valid value). */
static size_t marker_of(tsr_dtype dtype, unsigned char out[16]) {
    size_t size = tsr_dtype_size(dtype);
    memset(out, 0xA5, 16);
    uint64_t f64 = 0x7FF4A5A5A5A5A5A5ull;
    uint32_t f32 = 0x7FA5A5A5u;
    uint16_t f16 = 0x7D25u;
    switch (dtype) {
    case TSR_FLOAT64: memcpy(out, &f64, 8); break;
    case TSR_COMPLEX128: memcpy(out, &f64, 8); memcpy(out + 8, &f64, 8); break;
    case TSR_FLOAT32: memcpy(out, &f32, 4); break;
    case TSR_COMPLEX64: memcpy(out, &f32, 4); memcpy(out + 4, &f32, 4); break;
    case TSR_FLOAT16: memcpy(out, &f16, 2); break;
    default: break;
    }
    return size;
}

/* Fill `bytes` bytes of dtype-typed data as mode says. */
static void fill(int mode, void *data, tsr_dtype dtype, size_t bytes) {
    if (mode == UNWRITTEN_KEEP || !data || bytes == 0) return;
    if (mode != UNWRITTEN_CHECK) {
        memset(data, 0, bytes);
        return;
    }
    unsigned char m[16];
    size_t size = marker_of(dtype, m);
    if (size == 0 || bytes < size) return;
    unsigned char *p = data;
    memcpy(p, m, size);
    /* Doubling copies: a handful of memcpy calls for any size. */
    for (size_t done = size; done < bytes;) {
        size_t n = done < bytes - done ? done : bytes - done;
        memcpy(p + done, p, n);
        done += n;
    }
}

void result_fill(int mode, const tsr_array *r) {
    size_t bytes;
    if (mode != UNWRITTEN_KEEP && r->data && shape_bytes(r, &bytes) == 0)
        fill(mode, r->data, r->dtype, bytes);
}

void results_fill(int mode, const tsr_array *results, int32_t n) {
    for (int32_t k = 0; k < n; k++) result_fill(mode, &results[k]);
}

void call_results_fill(tsr_call *call) {
    int mode = call->comp->opts.unwritten;
    if (mode == UNWRITTEN_KEEP) return;
    for (int32_t k = 0; k < call->n_results; k++)
        fill(mode, call->results[k].data, call->results[k].dtype, call->result_bytes[k]);
}

int64_t result_unwritten_count(const tsr_array *r) {
    size_t bytes;
    if (!r->data || shape_bytes(r, &bytes) != 0) return 0;
    unsigned char m[16];
    size_t size = marker_of(r->dtype, m);
    if (size == 0) return 0;
    int64_t left = 0;
    const unsigned char *p = r->data;
    for (size_t at = 0; at + size <= bytes; at += size) left += memcmp(p + at, m, size) == 0;
    return left;
}
