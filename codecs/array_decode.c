/* SPDX-License-Identifier: MIT */
#include "array_decode.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "array_buffer.h"
#include "array_bytes.h"
#include "base64.h"
#include "binref_batch.h"
#include "json_hoist.h"
#include "list_text.h"
#include "lz4_frame.h"
#include "numeric.h"

static const char *json_kind(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return hoist_is_list(v) ? "a list" : "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a JSON value";
}

static bool is_scalar_leaf(const json_t *v) {
    return json_is_number(v) || json_is_boolean(v);
}

/* "[1, 2]" for messages. */
static void shape_text(char *buf, size_t size, const int64_t *shape, int32_t rank) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int32_t d = 0; d < rank && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, d ? ", " : "", shape[d]);
    if (used < size) snprintf(buf + used, size - used, "]");
}

/* Dimensions of a nested list, read along its first elements. */
static int nested_dims(json_t *v, int64_t *dims, int32_t *rank, const payload_ctx *ctx,
                       const char *path) {
    int32_t r = 0;
    *rank = 0; /* set on every path, the failing one included */
    while (json_is_array(v)) {
        if (r == TSR_MAX_RANK)
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "lists nest more than %d deep", TSR_MAX_RANK);
        size_t n = json_array_size(v);
        dims[r++] = (int64_t)n;
        if (n == 0) break;
        v = json_array_get(v, 0);
    }
    *rank = r;
    return 0;
}

/* Value of a leaf as a number, or an error naming its position. */
static int leaf_number(json_t *v, num_value *num, const payload_ctx *ctx, const char *where) {
    if (json_is_integer(v)) {
        num->kind = NUM_INT;
        num->v.i = json_integer_value(v);
    } else if (json_is_real(v)) {
        num->kind = NUM_REAL;
        num->v.r = json_real_value(v);
    } else if (json_is_boolean(v)) {
        num->kind = NUM_BOOL;
        num->v.b = json_is_true(v);
    } else {
        return payload_fail(ctx, TSR_E_PAYLOAD, where, "%s is not a number", json_kind(v));
    }
    return 0;
}

typedef struct fill_state {
    const int64_t *dims;
    int32_t rank;
    tsr_dtype dtype;
    size_t itemsize;
    char *dst;
    int64_t next; /* index of the next element in C order */
    const payload_ctx *ctx;
    int misfit_code; /* a value the dtype cannot hold: TSR_E_DTYPE when plain
                        values are cast to a field's dtype, TSR_E_PAYLOAD when
                        an encoded array's values belie its own dtype */
} fill_state;

/* Store the leaves of a nested list in C order, checking that it is
 * rectangular (every list at depth d has dims[d] entries). */
static int fill_nested(fill_state *s, json_t *v, int32_t depth, const char *path) {
    if (depth == s->rank) {
        if (json_is_array(v))
            return payload_fail(s->ctx, TSR_E_PAYLOAD, path,
                                    "ragged nested list: a list where a number belongs");
        num_value num;
        int rc = leaf_number(v, &num, s->ctx, path);
        if (rc != 0) return rc;
        char why[160];
        if (num_store(s->dtype, s->dst + (size_t)s->next * s->itemsize, &num, why, sizeof why) != 0)
            return payload_fail(s->ctx, s->misfit_code, path, "%s", why);
        s->next++;
        return 0;
    }
    if (!json_is_array(v))
        return payload_fail(s->ctx, TSR_E_PAYLOAD, path,
                                "ragged nested list: %s where a list of %" PRId64 " belongs",
                                json_kind(v), s->dims[depth]);
    if ((int64_t)json_array_size(v) != s->dims[depth])
        return payload_fail(s->ctx, TSR_E_PAYLOAD, path,
                                "ragged nested list: %zu entries where %" PRId64 " belong",
                                json_array_size(v), s->dims[depth]);
    for (size_t k = 0; k < json_array_size(v); k++) {
        char child[PAYLOAD_PATH_MAX];
        path_index(child, path, k);
        int rc = fill_nested(s, json_array_get(v, k), depth + 1, child);
        if (rc != 0) return rc;
    }
    return 0;
}

static int refuse_complex_json(const payload_ctx *ctx, const char *path, tsr_dtype dtype) {
    return payload_fail(ctx, TSR_E_PAYLOAD, path,
                            "%s values have no json form (nor in Tesseract's json encoding); "
                            "give an encoded array with base64 encoding",
                            tsr_dtype_name(dtype));
}

/* The dtype plain values take when nothing else says: numpy's choice. */
static tsr_dtype infer_plain_dtype(json_t *v) {
    if (json_is_boolean(v)) return TSR_BOOL;
    if (json_is_integer(v)) return TSR_INT64;
    if (!json_is_array(v)) return TSR_FLOAT64;
    tsr_dtype widest = TSR_BOOL;
    for (size_t k = 0; k < json_array_size(v); k++) {
        tsr_dtype d = infer_plain_dtype(json_array_get(v, k));
        if (d == TSR_FLOAT64) return d;
        if (d == TSR_INT64) widest = d;
    }
    return json_array_size(v) == 0 ? TSR_FLOAT64 : widest;
}

/* Allocate out->buffer for shape/dtype and fill it from the nested list
 * (or single leaf) v, whose own nesting need only hold the same number of
 * elements in C order. A numeric list cut out of the text (json_hoist.h)
 * is read from the text. */
static int fill_from_json(json_t *v, tsr_dtype dtype, const int64_t *shape, int32_t rank,
                          int misfit_code, const payload_ctx *ctx, const char *path,
                          decoded_array *out) {
    const hoisted_list *hl = hoist_list(ctx->hoist, v);
    int64_t dims[TSR_MAX_RANK];
    int32_t nest_rank;
    int rc = 0;
    if (hl != NULL) {
        nest_rank = hl->info.rank;
        memcpy(dims, hl->info.dims, sizeof dims);
    } else {
        rc = nested_dims(v, dims, &nest_rank, ctx, path);
    }
    if (rc != 0) return rc;
    if (hl == NULL && nest_rank == 0 && !is_scalar_leaf(v))
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "%s is not a number", json_kind(v));

    int64_t count, nest_count = 0;
    size_t bytes, nest_bytes;
    if (array_shape_bytes(shape, rank, dtype, &count, &bytes) != 0)
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "shape is too large to allocate");
    if (array_shape_bytes(dims, nest_rank, dtype, &nest_count, &nest_bytes) != 0 || nest_count != count) {
        char want[128], got[128];
        shape_text(want, sizeof want, shape, rank);
        shape_text(got, sizeof got, dims, nest_rank);
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "shape %s holds %" PRId64 " elements but the json buffer, "
                                "shaped %s, holds %" PRId64,
                                want, count, got, nest_count);
    }
    /* Empty complex arrays need no values, so no json form either. */
    if (dtype_is_complex(dtype) && count > 0) return refuse_complex_json(ctx, path, dtype);
    /* Refused before the buffer is spent. */
    if (hl != NULL && hl->info.ragged)
        return list_refuse(hl->text, &hl->info, dtype, misfit_code, ctx, path);
    rc = array_take_bytes(ctx, path, bytes, 0);
    if (rc != 0) return rc;
    out->buffer = aligned_buffer(bytes);
    if (out->buffer == NULL)
        return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory for %zu bytes", bytes);
    if (hl != NULL)
        return list_fill(hl->text, &hl->info, dtype, out->buffer, misfit_code, ctx, path);
    fill_state s = {.dims = dims, .rank = nest_rank, .dtype = dtype,
                    .itemsize = tsr_dtype_size(dtype), .dst = out->buffer, .ctx = ctx,
                    .misfit_code = misfit_code};
    return fill_nested(&s, v, 0, path);
}

static int fill_from_base64(json_t *buffer, const stored_form *st, const int64_t *shape,
                            int32_t rank, tsr_dtype dtype, const payload_ctx *ctx,
                            const char *path, decoded_array *out) {
    if (!json_is_string(buffer))
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "a base64 buffer must be a string, not %s", json_kind(buffer));
    int64_t count;
    size_t bytes;
    if (array_shape_bytes(shape, rank, dtype, &count, &bytes) != 0)
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "shape is too large to allocate");

    const char *text;
    size_t len;
    hoist_string(ctx->hoist, buffer, &text, &len);
    char why[160];
    long long decoded = b64_decoded_length(text, len, why, sizeof why);
    if (decoded < 0) return payload_fail(ctx, TSR_E_PAYLOAD, path, "%s", why);
    if (!st->lz4 && (unsigned long long)decoded != bytes) {
        /* A bad character explains more than the length it leads to. */
        if (b64_find_bad(text, len, why, sizeof why) != 0)
            return payload_fail(ctx, TSR_E_PAYLOAD, path, "%s", why);
        char want[128];
        shape_text(want, sizeof want, shape, rank);
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "shape %s of %s needs %zu bytes but the base64 buffer holds %lld",
                                want, tsr_dtype_name(dtype), bytes, decoded);
    }
    if (st->lz4 && bytes > lz4_frame_max_content((size_t)decoded)) {
        char want[128];
        shape_text(want, sizeof want, shape, rank);
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "shape %s of %s needs %zu bytes, more than an lz4 frame of %lld "
                                "bytes can hold",
                                want, tsr_dtype_name(dtype), bytes, decoded);
    }
    int rc = array_take_bytes(ctx, path, bytes, 0);
    if (rc != 0) return rc;
    out->buffer = aligned_buffer_unzeroed(bytes);
    if (out->buffer == NULL)
        return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory for %zu bytes", bytes);
    /* Compressed: decode the frame aside, then decompress into the array. */
    unsigned char *frame = NULL;
    if (st->lz4 && (frame = malloc(decoded > 0 ? (size_t)decoded : 1)) == NULL)
        return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory for %lld bytes", decoded);
    if (b64_decode(text, len, frame ? frame : out->buffer, why, sizeof why) != 0)
        rc = payload_fail(ctx, TSR_E_PAYLOAD, path, "%s", why);
    else
        rc = stored_finish(st, frame, (size_t)decoded, out->buffer, bytes, count, dtype, ctx,
                               path);
    free(frame);
    return rc;
}

static int queue_binref(json_t *buffer, const stored_form *st, tsr_dtype want,
                        const payload_ctx *ctx, const char *path, decoded_array *out) {
    if (!json_is_string(buffer))
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "a binref buffer must be a string \"<path>:<offset>\", not %s",
                                json_kind(buffer));
    if (ctx->binrefs == NULL)
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "arrays in files (binref) are refused here: the reader has no "
                                "directory to read them from");
    const char *text;
    size_t len;
    hoist_string(ctx->hoist, buffer, &text, &len);
    if (memchr(text, '\0', len) != NULL)
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "a binref buffer holds a NUL character");
    /* A hoisted string is a slice of the payload's text, which no NUL ends:
     * the parser gets a terminated copy. */
    char *ref = strndup(text, len);
    if (ref == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
    int rc = binref_batch_add(ctx->binrefs, ref, st, out, want, ctx, path);
    free(ref);
    return rc;
}


static int decode_shape(json_t *shape, tsr_array *a, const payload_ctx *ctx, const char *path) {
    if (shape == NULL)
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "the array lacks \"shape\"");
    const hoisted_list *hl = hoist_list(ctx->hoist, shape);
    if (hl != NULL)
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "\"shape\" has %" PRId64 " dimensions, more than the %d supported",
                                hl->info.dims[0], TSR_MAX_RANK);
    if (!json_is_array(shape))
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "\"shape\" must be a list of integers, not %s", json_kind(shape));
    size_t rank = json_array_size(shape);
    if (rank > TSR_MAX_RANK)
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "\"shape\" has %zu dimensions, more than the %d supported",
                                rank, TSR_MAX_RANK);
    for (size_t d = 0; d < rank; d++) {
        json_t *dim = json_array_get(shape, d);
        if (!json_is_integer(dim) || json_integer_value(dim) < 0)
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "\"shape\" entry %zu must be a non-negative integer", d);
        a->shape[d] = json_integer_value(dim);
    }
    a->rank = (int32_t)rank;
    return 0;
}

static int decode_dtype(json_t *dtype, tsr_dtype *out, const payload_ctx *ctx, const char *path) {
    if (dtype == NULL)
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "the array lacks \"dtype\"");
    if (!json_is_string(dtype))
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "\"dtype\" must be a string, not %s",
                                json_kind(dtype));
    int d = tsr_dtype_from_name(json_string_value(dtype));
    if (d < 0)
        return payload_fail(ctx, TSR_E_DTYPE, path, "unknown dtype \"%s\"",
                                json_string_value(dtype));
    *out = (tsr_dtype)d;
    return 0;
}

/* The buffer and its encoding:
 * {"buffer": ..., "encoding": ..., "compression": ..., "checksum": ...}. */
static int decode_data(json_t *data, tsr_dtype want, decoded_array *out,
                       const payload_ctx *ctx, const char *path) {
    if (data == NULL) return payload_fail(ctx, TSR_E_PAYLOAD, path, "the array lacks \"data\"");
    if (!json_is_object(data))
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "\"data\" must be an object, not %s",
                                json_kind(data));
    const char *key;
    json_t *value;
    json_object_foreach(data, key, value) {
        if (strcmp(key, "buffer") != 0 && strcmp(key, "encoding") != 0 &&
            strcmp(key, "compression") != 0 && strcmp(key, "checksum") != 0)
            return payload_fail(ctx, TSR_E_PAYLOAD, path, "unknown key \"%s\" in \"data\"", key);
    }
    json_t *encoding = json_object_get(data, "encoding");
    json_t *buffer = json_object_get(data, "buffer");
    if (!json_is_string(encoding))
        return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                "\"data\" needs \"encoding\": \"json\", \"base64\" or \"binref\"");
    if (buffer == NULL) return payload_fail(ctx, TSR_E_PAYLOAD, path, "\"data\" lacks \"buffer\"");
    const char *enc = json_string_value(encoding);
    stored_form st;
    int rc = stored_read(data, &st, ctx, path);
    if (rc != 0) return rc;
    tsr_array *a = &out->array;
    /* "raw" is the old name of "json", still read by Tesseract. */
    if (strcmp(enc, "json") == 0 || strcmp(enc, "raw") == 0) {
        if (st.lz4)
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "json buffers cannot be compressed (nor in Tesseract); "
                                    "compression applies to base64 and binref");
        if (st.has_checksum)
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "json buffers carry no checksum; it applies to base64 and binref");
        return fill_from_json(buffer, a->dtype, a->shape, a->rank, TSR_E_PAYLOAD, ctx, path, out);
    }
    if (strcmp(enc, "base64") == 0)
        return fill_from_base64(buffer, &st, a->shape, a->rank, a->dtype, ctx, path, out);
    if (strcmp(enc, "binref") == 0) return queue_binref(buffer, &st, want, ctx, path, out);
    return payload_fail(ctx, TSR_E_PAYLOAD, path,
                            "unknown encoding \"%s\" (json, base64 or binref)", enc);
}

static int decode_encoded(json_t *obj, tsr_dtype want, bool abstract,
                          const payload_ctx *ctx, const char *path, decoded_array *out) {
    json_t *type = json_object_get(obj, "object_type");
    if (type != NULL && (!json_is_string(type) || strcmp(json_string_value(type), "array") != 0))
        return payload_fail(ctx, TSR_E_PAYLOAD, path, "\"object_type\" must be \"array\"");
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value) {
        if (strcmp(key, "object_type") != 0 && strcmp(key, "shape") != 0 &&
            strcmp(key, "dtype") != 0 && strcmp(key, "data") != 0)
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "unknown key \"%s\" in an encoded array", key);
    }
    int rc = decode_dtype(json_object_get(obj, "dtype"), &out->array.dtype, ctx, path);
    if (rc == 0) rc = decode_shape(json_object_get(obj, "shape"), &out->array, ctx, path);
    if (rc != 0 || abstract) return rc;
    return decode_data(json_object_get(obj, "data"), want, out, ctx, path);
}

/* abstract_eval's description of an array; other keys are ignored, as
 * Tesseract does, so that full encoded arrays pass too. */
static int decode_shape_dtype(json_t *obj, const payload_ctx *ctx, const char *path,
                              decoded_array *out) {
    int rc = decode_dtype(json_object_get(obj, "dtype"), &out->array.dtype, ctx, path);
    if (rc != 0) return rc;
    return decode_shape(json_object_get(obj, "shape"), &out->array, ctx, path);
}

/* Whether every leaf of plain values is a number or a boolean. */
static bool only_numbers(json_t *v) {
    if (!json_is_array(v)) return json_is_number(v) || json_is_boolean(v);
    for (size_t k = 0; k < json_array_size(v); k++)
        if (!only_numbers(json_array_get(v, k))) return false;
    return true;
}

static bool shape_has_elements(const int64_t *shape, int32_t rank) {
    for (int32_t d = 0; d < rank; d++)
        if (shape[d] == 0) return false;
    return true;
}

static int decode_plain(json_t *value, tsr_dtype want, bool abstract, const payload_ctx *ctx,
                        const char *path, decoded_array *out) {
    tsr_array *a = &out->array;
    const hoisted_list *hl = hoist_list(ctx->hoist, value);
    int rc = 0;
    if (hl != NULL) {
        a->rank = hl->info.rank;
        memcpy(a->shape, hl->info.dims, sizeof a->shape);
    } else {
        rc = nested_dims(value, a->shape, &a->rank, ctx, path);
    }
    if (rc != 0) return rc;
    tsr_dtype inferred = hl != NULL ? list_natural_dtype(&hl->info) : infer_plain_dtype(value);
    a->dtype = want != TSR_DTYPE_INVALID ? want : inferred;
    /* The casting rule of encoded arrays, applied to the dtype numpy reads
     * the values as (as Tesseract does): 2.0 is no int32, 1 no bool. An
     * empty list holds no value to convert. */
    if (want != TSR_DTYPE_INVALID && (a->rank == 0 || shape_has_elements(a->shape, a->rank))) {
        /* A leaf that is no number is for fill_nested to name. */
        tsr_dtype natural = hl != NULL ? inferred : only_numbers(value) ? inferred : want;
        if (!dtype_casts_same_kind(natural, want))
            return payload_fail(ctx, TSR_E_DTYPE, path,
                                    "values read as %s cannot be converted to the field's %s "
                                    "(only same_kind casts are allowed)",
                                    tsr_dtype_name(natural), tsr_dtype_name(want));
    }
    if (abstract && dtype_is_complex(a->dtype)) return 0; /* only the shape matters */
    return fill_from_json(value, a->dtype, a->shape, a->rank,
                          want != TSR_DTYPE_INVALID ? TSR_E_DTYPE : TSR_E_PAYLOAD, ctx, path, out);
}

int decode_array_value(json_t *value, tsr_dtype want, bool abstract,
                           const payload_ctx *ctx, const char *path, decoded_array *out) {
    memset(out, 0, sizeof *out);
    if (path == NULL) path = "";
    int rc;
    if (json_is_object(value)) {
        /* tesseract-core's client leaves "object_type" out (its model
         * defaults it to "array"): "data" marks an encoded array too. */
        if (json_object_get(value, "object_type") != NULL || json_object_get(value, "data") != NULL)
            rc = decode_encoded(value, want, abstract, ctx, path, out);
        else if (abstract && json_object_get(value, "shape") != NULL)
            rc = decode_shape_dtype(value, ctx, path, out);
        else
            rc = payload_fail(ctx, TSR_E_PAYLOAD, path,
                                  abstract ? "expected an array: {\"shape\": [...], \"dtype\": ...}, "
                                             "an encoded array, a number or a list; got an object"
                                           : "expected an array: an encoded array "
                                             "({\"object_type\": \"array\", ...}), a number or a "
                                             "list; got an object");
    } else if (json_is_array(value) || is_scalar_leaf(value) ||
               hoist_list(ctx->hoist, value) != NULL) {
        rc = decode_plain(value, want, abstract, ctx, path, out);
    } else {
        rc = payload_fail(ctx, TSR_E_PAYLOAD, path,
                              "expected an array (an encoded array, a number or a list), got %s",
                              json_kind(value));
    }
    if (rc == 0) rc = decoded_convert(out, want, ctx, path);
    if (rc != 0) {
        free(out->buffer);
        memset(out, 0, sizeof *out);
        return rc;
    }
    if (abstract) {
        free(out->buffer);
        out->buffer = NULL;
    }
    out->array.data = out->buffer;
    return 0;
}
