/* SPDX-License-Identifier: MIT */
/*
 * TEXT and JSON fields of a request (tsr_field.kind). A TEXT value is a
 * JSON string. A JSON value is its subtree, handed to the component as
 * compact JSON text in which every encoded array object, whatever its
 * encoding (json, base64, binref), is rewritten in base64: the component
 * then reads one encoding only. Arrays inside are decoded with the
 * payload's own decoder, so they meet the same limits and binref rules as
 * array fields. Results go the other way: a JSON output's arrays are
 * written in the encoding the request asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/array_encode.h"
#include "codecs/json_hoist.h"
#include "payload_internal.h"

/* An item of a list inside a JSON value is a dotted index, as Tesseract's
 * loc has it ("inputs.opts.layers.0.w"); "[k]" stays for the elements of
 * an array. */
static void item_path(char dst[PAYLOAD_PATH_MAX], const char *parent, size_t index) {
    char part[24];
    snprintf(part, sizeof part, "%zu", index);
    path_join(dst, parent, part);
}

static bool is_array_object(json_t *v) {
    json_t *type = json_object_get(v, "object_type");
    return type != NULL && json_is_string(type) && strcmp(json_string_value(type), "array") == 0;
}

/* tsr_payload_input of a TEXT or JSON input: its bytes as a uint8
 * rank-1 array, as tsr_call_set_input binds such a field. */
static void text_view(tsr_payload *p, int32_t index) {
    char *text = p->kinds[index].text;
    p->inputs[index].array = (tsr_array){.data = text, .dtype = TSR_UINT8, .rank = 1,
                                         .shape = {(int64_t)strlen(text)}};
}

int payload_read_text(tsr_payload *p, int32_t index, json_t *value, const char *path,
                      const payload_ctx *ctx) {
    if (!json_is_string(value) || hoist_is_list(value))
        return payload_fail(ctx, TSR_E_VALUE, path, "Input should be a valid string");
    const char *text;
    size_t len;
    hoist_string(ctx->hoist, value, &text, &len);
    if (memchr(text, '\0', len) != NULL)
        return payload_fail(ctx, TSR_E_VALUE, path, "Input should be a valid string without NUL");
    char *copy = malloc(len + 1);
    if (copy == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
    memcpy(copy, text, len);
    copy[len] = '\0';
    p->kinds[index].text = copy;
    text_view(p, index);
    return 0;
}

/* Decode every array object below v, in the order emit() meets them. */
static int collect(kind_value *kv, json_t *v, const char *path, const payload_ctx *ctx) {
    char child[PAYLOAD_PATH_MAX];
    if (json_is_object(v)) {
        if (is_array_object(v)) {
            if (kv->n_arrays == kv->cap_arrays) {
                size_t cap = kv->cap_arrays ? 2 * kv->cap_arrays : 4;
                decoded_array *grown = realloc(kv->arrays, cap * sizeof *grown);
                if (grown == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
                kv->arrays = grown;
                kv->cap_arrays = cap;
            }
            decoded_array *d = &kv->arrays[kv->n_arrays];
            memset(d, 0, sizeof *d);
            int rc = decode_array_value(v, TSR_DTYPE_INVALID, false, ctx, path, d);
            if (rc != 0) {
                free(d->buffer);
                return rc;
            }
            kv->n_arrays++;
            return 0;
        }
        const char *key;
        json_t *item;
        json_object_foreach(v, key, item) {
            path_join(child, path, key);
            int rc = collect(kv, item, child, ctx);
            if (rc != 0) return rc;
        }
    } else if (json_is_array(v)) {
        for (size_t k = 0; k < json_array_size(v); k++) {
            item_path(child, path, k);
            int rc = collect(kv, json_array_get(v, k), child, ctx);
            if (rc != 0) return rc;
        }
    }
    return 0;
}

int payload_read_json(tsr_payload *p, int32_t index, json_t *value, const char *path,
                      const payload_ctx *ctx) {
    kind_value *kv = &p->kinds[index];
    kv->tree = json_incref(value);
    return collect(kv, value, path, ctx);
}

/* A numeric list cut out of the text, written without its whitespace
 * (it holds only numbers, commas and brackets). */
static void write_list_text(json_writer *jw, const char *text, size_t len) {
    char *out = jw_raw_begin(jw, len);
    if (out == NULL) return;
    size_t n = 0;
    for (size_t k = 0; k < len; k++)
        if (text[k] != ' ' && text[k] != '\t' && text[k] != '\n' && text[k] != '\r')
            out[n++] = text[k];
    /* Pad with spaces, which JSON allows between values, to the length
     * reserved. */
    memset(out + n, ' ', len - n);
    jw_raw_end(jw, len);
}

typedef struct emitter {
    json_writer *jw;
    const array_out *out;
    const payload_ctx *ctx;
    const hoist_doc *hoist;
    /* Inputs: the arrays decoded in advance, taken in order; outputs: each
     * array object is decoded where it is met. */
    bool predecoded;
    decoded_array *arrays;
    size_t n_arrays, next;
    kept_buffers *keep;   /* outputs: the decoded arrays, alive until the sink is done */
} emitter;

void kept_buffers_free(kept_buffers *k) {
    for (size_t i = 0; i < k->n; i++) free(k->items[i]);
    free(k->items);
    k->items = NULL;
    k->n = k->cap = 0;
}

static int keep_buffer(kept_buffers *k, void *buffer) {
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 8;
        void **grown = realloc(k->items, cap * sizeof *grown);
        if (grown == NULL) return -1;
        k->items = grown;
        k->cap = cap;
    }
    k->items[k->n++] = buffer;
    return 0;
}

static int emit_array(emitter *e, json_t *v, const char *path) {
    if (e->predecoded) {
        if (e->next >= e->n_arrays)
            return payload_fail(e->ctx, TSR_E_ARGUMENT, path, "array objects out of step");
        return write_encoded_array(e->jw, &e->arrays[e->next++].array, e->out, e->ctx, path);
    }
    decoded_array d = {0};
    int rc = decode_array_value(v, TSR_DTYPE_INVALID, false, e->ctx, path, &d);
    if (rc != 0) {
        free(d.buffer);
        return rc;
    }
    /* A binref sink reads the bytes when it is finished, after this. */
    if (d.buffer != NULL && keep_buffer(e->keep, d.buffer) != 0) {
        free(d.buffer);
        return payload_fail(e->ctx, TSR_E_NOMEM, path, "out of memory");
    }
    return write_encoded_array(e->jw, &d.array, e->out, e->ctx, path);
}

static int emit(emitter *e, json_t *v, const char *path, int depth) {
    char child[PAYLOAD_PATH_MAX];
    if (depth >= JW_MAX_DEPTH - 8)
        return payload_fail(e->ctx, TSR_E_PAYLOAD, path, "nested too deeply");
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (is_array_object(v)) return emit_array(e, v, path);
        jw_begin_object(e->jw);
        const char *key;
        json_t *item;
        json_object_foreach(v, key, item) {
            jw_key(e->jw, key);
            path_join(child, path, key);
            int rc = emit(e, item, child, depth + 1);
            if (rc != 0) return rc;
        }
        jw_end_object(e->jw);
        return 0;
    }
    case JSON_ARRAY:
        jw_begin_array(e->jw);
        for (size_t k = 0; k < json_array_size(v); k++) {
            item_path(child, path, k);
            int rc = emit(e, json_array_get(v, k), child, depth + 1);
            if (rc != 0) return rc;
        }
        jw_end_array(e->jw);
        return 0;
    case JSON_STRING: {
        const hoisted_list *list = hoist_list(e->hoist, v);
        const char *text;
        size_t len;
        if (list != NULL) {
            /* The list's own characters, '[' to its ']', from the text. */
            write_list_text(e->jw, list->text, list->info.len);
            return 0;
        }
        hoist_string(e->hoist, v, &text, &len);
        if (text == json_string_value(v)) {
            jw_string(e->jw, text);
        } else {
            /* A cut string is printable ASCII without escapes. */
            char *out = jw_raw_begin(e->jw, len + 2);
            if (out != NULL) {
                out[0] = '"';
                memcpy(out + 1, text, len);
                out[len + 1] = '"';
                jw_raw_end(e->jw, len + 2);
            }
        }
        return 0;
    }
    case JSON_INTEGER: jw_int(e->jw, (int64_t)json_integer_value(v)); return 0;
    case JSON_REAL: jw_double(e->jw, json_real_value(v)); return 0;
    case JSON_TRUE: jw_bool(e->jw, true); return 0;
    case JSON_FALSE: jw_bool(e->jw, false); return 0;
    case JSON_NULL: jw_null(e->jw); return 0;
    }
    return 0;
}

int payload_finish_json(tsr_payload *p, const payload_ctx *ctx) {
    array_out base64 = {.enc = TSR_ENCODING_BASE64};
    for (int32_t i = 0; i < p->n_inputs; i++) {
        kind_value *kv = &p->kinds[i];
        if (kv->tree == NULL) continue;
        char path[PAYLOAD_PATH_MAX];
        path_join(path, "inputs", tsr_component_input(p->component, i)->name);
        json_writer jw;
        jw_init(&jw);
        emitter e = {.jw = &jw, .out = &base64, .ctx = ctx, .hoist = ctx->hoist,
                     .predecoded = true, .arrays = kv->arrays, .n_arrays = kv->n_arrays};
        int rc = emit(&e, kv->tree, path, 0);
        if (rc != 0) {
            jw_discard(&jw);
            return rc;
        }
        kv->text = jw_finish(&jw);
        if (kv->text == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
        kind_value_release_tree(kv);
        text_view(p, i);
    }
    return 0;
}

void kind_value_release_tree(kind_value *kv) {
    json_decref(kv->tree);
    kv->tree = NULL;
    for (size_t k = 0; k < kv->n_arrays; k++) free(kv->arrays[k].buffer);
    free(kv->arrays);
    kv->arrays = NULL;
    kv->n_arrays = kv->cap_arrays = 0;
}

int payload_write_kind_result(json_writer *jw, const tsr_field *field, const tsr_array *a,
                              const array_out *out, kept_buffers *keep, const payload_ctx *ctx,
                              const char *path) {
    const char *text = a->data != NULL ? (const char *)a->data : "";
    size_t len = a->rank == 1 ? (size_t)a->shape[0] : 0;
    if (a->dtype != TSR_UINT8 || a->rank != 1 || (len > 0 && a->data == NULL))
        return payload_fail(ctx, TSR_E_PLUGIN_RESULT, path,
                            "a %s result must be a rank-1 uint8 array of its bytes",
                            field->kind == TSR_KIND_TEXT ? "TEXT" : "JSON");
    if (field->kind == TSR_KIND_TEXT) {
        if (memchr(text, '\0', len) != NULL)
            return payload_fail(ctx, TSR_E_PLUGIN_RESULT, path, "the text holds a NUL byte");
        char *copy = malloc(len + 1);
        if (copy == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
        memcpy(copy, text, len);
        copy[len] = '\0';
        jw_string(jw, copy);
        free(copy);
        return 0;
    }
    json_error_t jerr;
    json_t *tree = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (tree == NULL)
        return payload_fail(ctx, TSR_E_PLUGIN_RESULT, path,
                            "the JSON result is malformed at line %d, column %d: %s", jerr.line,
                            jerr.column, jerr.text);
    emitter e = {.jw = jw, .out = out, .ctx = ctx, .keep = keep};
    int rc = emit(&e, tree, path, 0);
    json_decref(tree);
    return rc;
}
