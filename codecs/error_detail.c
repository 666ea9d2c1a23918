/* SPDX-License-Identifier: MIT */
/* A failure as Tesseract's 422 body (FastAPI's validation error), the one
 * form the CLI (--error-format json) and the server write, so that both
 * give the same bytes for the same request; the type names it gives each
 * error code (tsr_error_type). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <tessera/payload.h>

#include "json_hoist.h"

/* Only a request up to this size is parsed again to find the input at
 * fault: a failure of a larger one is not worth a second parse. */
#define DETAIL_SCAN_MAX ((size_t)16 << 20)
/* Nor one whose tree would hold more values than this (a few MiB): long
 * numeric lists and strings are cut out first and count as one. */
#define DETAIL_MAX_VALUES ((uint64_t)1 << 16)

/* A part of a loc made of digits is an index into a list. */
static int is_index(const char *part, size_t n) {
    if (n == 0 || n > 9) return 0;
    for (size_t i = 0; i < n; i++)
        if (part[i] < '0' || part[i] > '9') return 0;
    return 1;
}

/* ["body", parts...] of "inputs.mesh.nodes"; NULL when out of memory. */
static json_t *loc_list(const char *loc) {
    json_t *list = json_array();
    if (list == NULL || json_array_append_new(list, json_string("body")) != 0) {
        json_decref(list);
        return NULL;
    }
    for (const char *p = loc; *p != '\0';) {
        size_t n = strcspn(p, ".");
        json_t *part = is_index(p, n) ? json_integer(strtoll(p, NULL, 10)) : json_stringn(p, n);
        if (part == NULL || json_array_append_new(list, part) != 0) {
            json_decref(list);
            return NULL;
        }
        p += n + (p[n] == '.');
    }
    return list;
}

/* The value at loc within the request, when it is small enough to be
 * sent back (TSR_ERROR_INPUT_MAX bytes as compact JSON); else NULL. */
static json_t *input_at(const char *loc, const char *request, size_t len) {
    if (request == NULL || len == 0 || len > DETAIL_SCAN_MAX || loc[0] == '\0') return NULL;
    hoist_doc h;
    json_error_t jerr;
    hoist_status status;
    json_t *root = hoist_parse_limited(request, len, 0, DETAIL_MAX_VALUES, &h, &jerr, &status);
    json_t *v = root;
    for (const char *p = loc; v != NULL && *p != '\0';) {
        size_t n = strcspn(p, ".");
        if (json_is_object(v)) {
            char key[TSR_ERRLOC_MAX];
            snprintf(key, sizeof key, "%.*s", (int)n, p);
            v = json_object_get(v, key);
        } else if (json_is_array(v) && is_index(p, n)) {
            v = json_array_get(v, (size_t)strtoll(p, NULL, 10));
        } else {
            v = NULL;
        }
        p += n + (p[n] == '.');
    }
    /* A cut list is read from its text when it may be short enough; a cut
     * string never is (HOIST_MIN). */
    const hoisted_list *hl = hoist_list(&h, v);
    json_t *own = NULL;
    if (hl != NULL)
        v = own = hl->info.len <= 16 * TSR_ERROR_INPUT_MAX
                      ? json_loadb(hl->text, hl->info.len, 0, NULL)
                      : NULL;
    else if (json_is_string(v) && json_string_length(v) > 0 && json_string_value(v)[0] == '\0' &&
             h.n > 0)
        v = NULL;
    if (v != NULL && json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY) <= TSR_ERROR_INPUT_MAX)
        json_incref(v);
    else
        v = NULL;
    json_decref(own);
    json_decref(root);
    hoist_free(&h);
    return v;
}

/* The message without braces: clients format "msg" as a template. A
 * plugin's message that is not UTF-8 has its other bytes made '?', since
 * JSON text must be UTF-8. */
static json_t *message_text(const char *message) {
    char text[TSR_ERRMSG_MAX];
    snprintf(text, sizeof text, "%s", message);
    for (char *p = text; *p != '\0'; p++)
        if (*p == '{') *p = '(';
        else if (*p == '}') *p = ')';
    json_t *s = json_string(text);
    if (s != NULL) return s;
    for (unsigned char *p = (unsigned char *)text; *p != '\0'; p++)
        if (*p >= 0x80) *p = '?';
    return json_string(text);
}

TSR_API int tsr_error_detail_json(int code, const char *loc, const char *message,
                                  const char *request, size_t request_len, char **out) {
    if (out == NULL) return TSR_E_ARGUMENT;
    *out = NULL;
    if (loc == NULL) loc = "";
    json_t *input = input_at(loc, request, request_len);
    json_t *item = json_object();
    if (item == NULL) {
        json_decref(input);
        return TSR_E_NOMEM;
    }
    /* Each set takes its value, also when it fails: all four run. */
    int failed = json_object_set_new(item, "type", json_string(tsr_error_type(code))) |
                 json_object_set_new(item, "loc", loc_list(loc)) |
                 json_object_set_new(item, "msg", message_text(message ? message : "")) |
                 json_object_set_new(item, "input", input ? input : json_null());
    if (failed) {
        json_decref(item);
        return TSR_E_NOMEM;
    }
    json_t *body = json_pack("{s:[o]}", "detail", item);   /* takes item */
    if (body == NULL) return TSR_E_NOMEM;
    *out = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    return *out != NULL ? 0 : TSR_E_NOMEM;
}

/* pydantic's names where one fits (a client of Tesseract's 422 reads them
 * as usual), a name of the same style for the rest. */
TSR_API const char *tsr_error_type(int code) {
    switch (code) {
    case TSR_OK: return "ok";
    case TSR_E_MISSING: return "missing";
    case TSR_E_UNKNOWN_FIELD: return "extra_forbidden";
    case TSR_E_DTYPE: return "dtype_error";
    case TSR_E_SHAPE: return "shape_error";
    case TSR_E_NOT_DIFFERENTIABLE: return "not_differentiable";
    case TSR_E_LIMIT: return "too_large";
    case TSR_E_IO: return "io_error";
    case TSR_E_NOMEM: return "out_of_memory";
    case TSR_E_LOAD: return "load_error";
    case TSR_E_ABI: return "abi_error";
    case TSR_E_DESCRIPTOR: return "descriptor_error";
    case TSR_E_UNSUPPORTED: return "unsupported";
    case TSR_E_PLUGIN: return "plugin_error";
    case TSR_E_PLUGIN_RESULT: return "plugin_result_error";
    case TSR_E_INIT: return "init_error";
    case TSR_E_WORKER: return "worker_error";
    case TSR_E_TIMEOUT: return "timeout";
    case TSR_E_SHM: return "shared_memory_error";
    case TSR_E_CANCELLED: return "cancelled";
    case TSR_E_VALUE: return "literal_error";
    default: return "value_error";   /* TSR_E_PAYLOAD, TSR_E_ARGUMENT and unknown codes */
    }
}
