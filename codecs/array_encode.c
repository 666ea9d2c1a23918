/* SPDX-License-Identifier: MIT */
#include "array_encode.h"

#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array_buffer.h"
#include "array_bytes.h"
#include "base64.h"
#include "checksum.h"
#include "number_text.h"
#include "numeric.h"

static int check_array(const tsr_array *a, int64_t *count, size_t *bytes,
                       const payload_ctx *ctx, const char *path) {
    if (tsr_dtype_name(a->dtype) == NULL)
        return payload_fail(ctx, TSR_E_DTYPE, path, "invalid dtype %d", (int)a->dtype);
    if (a->rank < 0 || a->rank > TSR_MAX_RANK)
        return payload_fail(ctx, TSR_E_SHAPE, path, "invalid rank %d", (int)a->rank);
    if (array_shape_bytes(a->shape, a->rank, a->dtype, count, bytes) != 0)
        return payload_fail(ctx, TSR_E_SHAPE, path, "invalid or oversized shape");
    return 0;
}

static void write_shape(json_writer *w, const tsr_array *a) {
    jw_key(w, "shape");
    jw_begin_array(w);
    for (int32_t d = 0; d < a->rank; d++) jw_int(w, a->shape[d]);
    jw_end_array(w);
}

static int write_element(json_writer *w, const tsr_array *a, int64_t k, const payload_ctx *ctx,
                         const char *path) {
    num_value num;
    num_load(a->dtype, (const char *)a->data + (size_t)k * tsr_dtype_size(a->dtype), &num);
    switch (num.kind) {
    case NUM_BOOL: jw_bool(w, num.v.b); return 0;
    case NUM_INT: jw_int(w, num.v.i); return 0;
    case NUM_UINT: jw_uint(w, num.v.u); return 0;
    case NUM_REAL:
        if (!isfinite(num.v.r))
            return payload_fail(ctx, TSR_E_UNSUPPORTED, path,
                                    "element %" PRId64 " is %s, which JSON cannot represent; "
                                    "use base64 encoding",
                                    k, isnan(num.v.r) ? "NaN" : "infinite");
        jw_double(w, num.v.r);
        return 0;
    case NUM_COMPLEX:
        break;
    }
    return payload_fail(ctx, TSR_E_UNSUPPORTED, path, "complex values have no json form");
}

/* Elements per step of write_row: the room reserved for one step stays small. */
#define ROW_STEP 4096

/* The text of one element of a dtype write_row takes; -1 (nothing
 * written) for a double JSON cannot hold. */
static inline int row_element(tsr_dtype dtype, const char *src, char *out) {
    switch (dtype) {
    case TSR_FLOAT64: {
        double v;
        memcpy(&v, src, sizeof v);
        return isfinite(v) ? (int)numtext_double(v, out) : -1;
    }
    case TSR_FLOAT32: {
        float f;
        memcpy(&f, src, sizeof f);
        return isfinite(f) ? (int)numtext_double((double)f, out) : -1;
    }
    case TSR_INT64: { int64_t v; memcpy(&v, src, 8); return (int)numtext_int(v, out); }
    case TSR_INT32: { int32_t v; memcpy(&v, src, 4); return (int)numtext_int(v, out); }
    case TSR_INT16: { int16_t v; memcpy(&v, src, 2); return (int)numtext_int(v, out); }
    case TSR_INT8: { int8_t v; memcpy(&v, src, 1); return (int)numtext_int(v, out); }
    case TSR_UINT64: { uint64_t v; memcpy(&v, src, 8); return (int)numtext_uint(v, out); }
    case TSR_UINT32: { uint32_t v; memcpy(&v, src, 4); return (int)numtext_uint(v, out); }
    case TSR_UINT16: { uint16_t v; memcpy(&v, src, 2); return (int)numtext_uint(v, out); }
    case TSR_UINT8: { uint8_t v; memcpy(&v, src, 1); return (int)numtext_uint(v, out); }
    default: { /* bool */
        bool b = *src != 0;
        memcpy(out, b ? "true" : "false", b ? 4 : 5);
        return b ? 4 : 5;
    }
    }
}

static bool row_dtype(tsr_dtype dtype) {
    return dtype == TSR_BOOL || (dtype >= TSR_INT8 && dtype <= TSR_UINT64) ||
           dtype == TSR_FLOAT32 || dtype == TSR_FLOAT64;
}

/* The innermost list of n elements from element *next on, written as one
 * value straight into the writer's buffer, ROW_STEP elements at a time:
 * the same text write_element gives element by element. */
static int write_row(json_writer *w, const tsr_array *a, int64_t n, int64_t *next,
                     const payload_ctx *ctx, const char *path) {
    size_t item = tsr_dtype_size(a->dtype);
    const char *src = (const char *)a->data + (size_t)*next * item;
    char *text = jw_raw_begin(w, 1);
    if (text == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
    text[0] = '[';
    jw_raw_end(w, 1);
    for (int64_t k = 0; k < n;) {
        int64_t step = n - k < ROW_STEP ? n - k : ROW_STEP;
        size_t room = (size_t)step * (NUMTEXT_MAX + 1) + 1;
        text = jw_raw_more(w, room);
        if (text == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
        size_t o = 0;
        for (int64_t j = 0; j < step; j++, k++, src += item) {
            if (k > 0) text[o++] = ',';
            int len = row_element(a->dtype, src, text + o);
            if (len < 0) {
                jw_raw_end(w, o);
                return write_element(w, a, *next + k, ctx, path); /* its refusal */
            }
            o += (size_t)len;
        }
        if (k == n) text[o++] = ']';
        jw_raw_end(w, o);
    }
    if (n == 0) {
        text = jw_raw_more(w, 1);
        if (text == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
        text[0] = ']';
        jw_raw_end(w, 1);
    }
    *next += n;
    return 0;
}

/* Values as nested lists following the shape (C order), a bare value for
 * rank 0, as numpy's tolist() gives them. */
static int write_nested(json_writer *w, const tsr_array *a, int32_t depth, int64_t *next,
                        const payload_ctx *ctx, const char *path) {
    if (depth == a->rank) return write_element(w, a, (*next)++, ctx, path);
    if (depth == a->rank - 1 && row_dtype(a->dtype))
        return write_row(w, a, a->shape[depth], next, ctx, path);
    jw_begin_array(w);
    for (int64_t k = 0; k < a->shape[depth]; k++) {
        int rc = write_nested(w, a, depth + 1, next, ctx, path);
        if (rc != 0) return rc;
    }
    jw_end_array(w);
    return 0;
}

/* The base64 text of stored[0..n), quoted, straight into the writer. */
static int write_base64(json_writer *w, const void *stored, size_t n, const payload_ctx *ctx,
                        const char *path) {
    int overflow;
    size_t len = b64_encoded_length(n, &overflow);
    if (overflow || len > SIZE_MAX - 3)
        return payload_fail(ctx, TSR_E_NOMEM, path, "array too large to encode");
    char *text = jw_raw_begin(w, len + 2);
    if (text == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
    text[0] = '"';
    if (n > 0) b64_encode(stored, n, text + 1);
    text[len + 1] = '"';
    jw_raw_end(w, len + 2);
    return 0;
}

static int write_binref(json_writer *w, const array_out *o, const void *stored, size_t n,
                        void *owned, const payload_ctx *ctx, const char *path) {
    const char *file;
    uint64_t offset;
    int rc = binref_sink_add(o->sink, stored, n, owned, &file, &offset, ctx, path);
    if (rc != 0) return rc;
    char *ref = NULL;
    int len = o->lz4 ? asprintf(&ref, "%s:%" PRIu64 ":%zu", file, offset, n)
                     : asprintf(&ref, "%s:%" PRIu64, file, offset);
    if (len < 0) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
    jw_string(w, ref);
    free(ref);
    return 0;
}

/* "buffer" of base64 and binref, and the keys that follow it. */
static int write_bytes(json_writer *w, const tsr_array *a, const array_out *o, int64_t count,
                       size_t bytes, const payload_ctx *ctx, const char *path) {
    const void *stored;
    size_t n;
    void *owned;
    uint64_t sum = 0;
    int rc = stored_make(a, count, bytes, o->lz4, o->checksum ? &sum : NULL, &stored, &n,
                             &owned, ctx, path);
    if (rc != 0) return rc;
    if (o->enc == TSR_ENCODING_BINREF) {
        rc = write_binref(w, o, stored, n, owned, ctx, path); /* the sink owns `owned` */
    } else {
        rc = write_base64(w, stored, n, ctx, path);
        free(owned);
    }
    if (rc != 0) return rc;
    jw_key(w, "encoding");
    jw_string(w, tsr_encoding_name(o->enc));
    if (o->lz4) {
        jw_key(w, "compression");
        jw_string(w, "lz4");
    }
    if (o->checksum) {
        char text[CHECKSUM_TEXT_MAX];
        checksum_format(sum, text);
        jw_key(w, "checksum");
        jw_string(w, text);
    }
    return 0;
}

int write_encoded_array(json_writer *w, const tsr_array *a, const array_out *o,
                            const payload_ctx *ctx, const char *path) {
    int64_t count;
    size_t bytes;
    int rc = check_array(a, &count, &bytes, ctx, path);
    if (rc != 0) return rc;
    if (a->data == NULL && count > 0)
        return payload_fail(ctx, TSR_E_ARGUMENT, path, "array has no data");
    /* An empty complex array has no values, so its json form is []. */
    if (o->enc == TSR_ENCODING_JSON && dtype_is_complex(a->dtype) && count > 0)
        return payload_fail(ctx, TSR_E_UNSUPPORTED, path,
                                "%s values have no json form (nor in Tesseract's json "
                                "encoding); use base64 encoding",
                                tsr_dtype_name(a->dtype));
    if (tsr_encoding_name(o->enc) == NULL || (o->enc == TSR_ENCODING_BINREF && o->sink == NULL))
        return payload_fail(ctx, TSR_E_ARGUMENT, path, "unknown encoding %d", (int)o->enc);

    jw_begin_object(w);
    jw_key(w, "object_type");
    jw_string(w, "array");
    write_shape(w, a);
    jw_key(w, "dtype");
    jw_string(w, tsr_dtype_name(a->dtype));
    jw_key(w, "data");
    jw_begin_object(w);
    jw_key(w, "buffer");
    if (o->enc == TSR_ENCODING_JSON) {
        int64_t next = 0;
        rc = write_nested(w, a, 0, &next, ctx, path);
        if (rc != 0) return rc;
        jw_key(w, "encoding");
        jw_string(w, "json");
    } else {
        rc = write_bytes(w, a, o, count, bytes, ctx, path);
        if (rc != 0) return rc;
    }
    jw_end_object(w);
    jw_end_object(w);
    return 0;
}

int write_plain_values(json_writer *w, const tsr_array *a, const payload_ctx *ctx,
                           const char *path) {
    int64_t next = 0;
    return write_nested(w, a, 0, &next, ctx, path);
}

int write_shape_dtype(json_writer *w, const tsr_array *a, const payload_ctx *ctx,
                          const char *path) {
    int64_t count;
    size_t bytes;
    int rc = check_array(a, &count, &bytes, ctx, path);
    if (rc != 0) return rc;
    jw_begin_object(w);
    write_shape(w, a);
    jw_key(w, "dtype");
    jw_string(w, tsr_dtype_name(a->dtype));
    jw_end_object(w);
    return 0;
}
