/* SPDX-License-Identifier: MIT */
/* The "inputs" object of a request: nested objects follow the dots of the
 * schema's field names, leaves are arrays, texts and JSON values (whose
 * subtrees are never walked for field names). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "payload_internal.h"

/* prefix + "." + key, or key when prefix is empty; NULL when out of memory. */
static char *dotted(const char *prefix, const char *key) {
    size_t a = strlen(prefix), b = strlen(key);
    char *s = malloc(a + b + 2);
    if (s == NULL) return NULL;
    if (a > 0) {
        memcpy(s, prefix, a);
        s[a++] = '.';
    }
    memcpy(s + a, key, b + 1);
    return s;
}

/* Is there an input field below the group `name` (named "name.<...>")? */
static bool is_group(const tsr_component *c, const char *name) {
    size_t n = strlen(name);
    for (int32_t i = 0; i < tsr_component_n_inputs(c); i++) {
        const char *field = tsr_component_input(c, i)->name;
        if (strncmp(field, name, n) == 0 && field[n] == '.') return true;
    }
    return false;
}

/* "x, y, mesh.nodes" for messages, cut to fit. */
static void list_inputs(const tsr_component *c, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < tsr_component_n_inputs(c) && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                                 tsr_component_input(c, i)->name);
}

static int read_object(tsr_payload *p, json_t *obj, const char *prefix, const char *path,
                       const payload_ctx *ctx);

static int read_member(tsr_payload *p, const char *name, json_t *value, const char *path,
                       const payload_ctx *ctx) {
    const tsr_component *c = p->component;
    int32_t index = tsr_component_find_input(c, name);
    if (index >= 0) {
        const tsr_field *field = tsr_component_input(c, index);
        int rc;
        if (field->kind == TSR_KIND_TEXT) {
            rc = payload_read_text(p, index, value, path, ctx);
            if (rc == 0) p->given[index] = true;
            return rc;
        }
        if (field->kind == TSR_KIND_JSON) {
            rc = payload_read_json(p, index, value, path, ctx);
            if (rc == 0) p->given[index] = true;
            return rc;
        }
        rc = decode_array_value(value, field->dtype, p->abstract, ctx, path, &p->inputs[index]);
        if (rc == 0) p->given[index] = true;
        return rc;
    }
    if (is_group(c, name)) {
        if (!json_is_object(value))
            return payload_fail(ctx, TSR_E_PAYLOAD, path,
                                    "expected an object holding the fields \"%s.*\"", name);
        return read_object(p, value, name, path, ctx);
    }
    char known[256];
    list_inputs(c, known, sizeof known);
    return payload_fail(ctx, TSR_E_UNKNOWN_FIELD, path,
                            "no input field \"%s\" in the schema (inputs: %s)", name, known);
}

static int read_object(tsr_payload *p, json_t *obj, const char *prefix, const char *path,
                       const payload_ctx *ctx) {
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value) {
        char child_path[PAYLOAD_PATH_MAX];
        path_join(child_path, path, key);
        /* As in Tesseract, an unknown key. Its location is the object
         * holding it: a dotted location cannot name a key with a dot. */
        if (strchr(key, '.') != NULL || key[0] == '\0')
            return payload_fail(ctx, TSR_E_UNKNOWN_FIELD, path,
                                    "key \"%s\": keys of \"inputs\" are single names; a "
                                    "dotted field \"a.b\" is written {\"a\": {\"b\": ...}}",
                                    key);
        char *name = dotted(prefix, key);
        if (name == NULL) return payload_fail(ctx, TSR_E_NOMEM, child_path, "out of memory");
        int rc = read_member(p, name, value, child_path, ctx);
        free(name);
        if (rc != 0) return rc;
    }
    return 0;
}

int payload_read_inputs(tsr_payload *p, json_t *inputs, const payload_ctx *ctx) {
    if (!json_is_object(inputs))
        return payload_fail(ctx, TSR_E_PAYLOAD, "inputs", "\"inputs\" must be an object");
    int rc = read_object(p, inputs, "", "inputs", ctx);
    if (rc != 0) return rc;
    for (int32_t i = 0; i < p->n_inputs; i++) {
        const tsr_field *f = tsr_component_input(p->component, i);
        /* One with a default or an optional one is filled in by the call. */
        if (p->given[i] || !tsr_field_required(f)) continue;
        char path[PAYLOAD_PATH_MAX];
        path_join(path, "inputs", f->name);
        return payload_fail(ctx, TSR_E_MISSING, path, "required input is missing");
    }
    return 0;
}
