/* SPDX-License-Identifier: MIT */
/* The fields of a served schema that are not arrays: strings as TEXT
 * fields (their "enum" or "const" as choices) and every other value a
 * JSON schema describes as a JSON field, differentiable when the schema
 * marks an array inside it as differentiable; and what such an input
 * takes when a request leaves it out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"
#include "remote_schema_read.h"
#include "tessera/tessera.h"

static json_t *member(json_t *obj, const char *key) {
    return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

static const char *type_of(json_t *v) {
    json_t *t = member(v, "type");
    return json_is_string(t) ? json_string_value(t) : NULL;
}

int remote_is_text(json_t *v) {
    const char *type = type_of(v);
    if (type) return strcmp(type, "string") == 0;
    /* A Literal or enum of strings pydantic writes without a type. */
    json_t *c = member(v, "const"), *e = member(v, "enum"), *x;
    size_t i;
    if (json_is_string(c)) return 1;
    if (!json_is_array(e) || json_array_size(e) == 0) return 0;
    json_array_foreach(e, i, x) if (!json_is_string(x)) return 0;
    return 1;
}

/* The JSON schema types; anything else is a schema Tessera cannot read. */
static int known_type(const char *type) {
    static const char *const types[] = {"boolean", "integer", "number", "null",
                                        "array",   "object",  "string"};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        if (strcmp(type, types[k]) == 0) return 1;
    return 0;
}

int remote_json_check(const field_reader *r, json_t *v, const char *name) {
    const char *type = type_of(v);
    if (!json_is_object(v)) {
        snprintf(r->why, r->n, "%s '%s': its schema is not a JSON object", r->side, name);
        return TSR_E_DESCRIPTOR;
    }
    if (member(v, "type") && (!type || !known_type(type))) {
        snprintf(r->why, r->n, "%s '%s' is of type '%.40s', which no JSON value has", r->side,
                 name, type ? type : "(not a string)");
        return TSR_E_DESCRIPTOR;
    }
    return 0;
}

/* Whether the schema below v marks an array as differentiable (its
 * array_flags), following $refs; depth bounds a model that holds itself. */
static int holds_differentiable(const field_reader *r, json_t *v, int depth) {
    /* Past the budget the reader refuses the document at its next property. */
    if (depth > REMOTE_MAX_DEPTH || !v || ++*r->visits > REMOTE_MAX_VISITS) return 0;
    if (json_is_array(v)) {
        json_t *x;
        size_t i;
        json_array_foreach(v, i, x) if (holds_differentiable(r, x, depth + 1)) return 1;
        return 0;
    }
    if (!json_is_object(v)) return 0;
    json_t *flags = member(v, "array_flags"), *x;
    size_t i;
    json_array_foreach(flags, i, x)
        if (json_is_string(x) && strcmp(json_string_value(x), "DIFFERENTIABLE") == 0) return 1;
    json_t *ref = member(v, "$ref");
    const char *prefix = "#/components/schemas/";
    if (json_is_string(ref) && strncmp(json_string_value(ref), prefix, strlen(prefix)) == 0)
        return holds_differentiable(r, member(r->schemas, json_string_value(ref) + strlen(prefix)),
                                    depth + 1);
    const char *key;
    json_object_foreach(v, key, x) {
        if (holds_differentiable(r, x, depth + 1)) return 1;
    }
    return 0;
}

/* tesseract-core lists differentiable arrays inside containers in the
 * side's differentiable_arrays under paths that start with the field's
 * name and a "." ("weights.{}", "layers.[]"). */
static int listed_inside(const field_reader *r, const char *name) {
    const char *key;
    json_t *x;
    size_t len = strlen(name);
    json_object_foreach(r->diff, key, x) {
        (void)x;
        if (strncmp(key, name, len) == 0 && key[len] == '.') return 1;
    }
    return 0;
}

int remote_json_differentiable(const field_reader *r, json_t *prop, const char *name) {
    return listed_inside(r, name) || member(r->diff, name) != NULL ||
           holds_differentiable(r, prop, 0);
}

int remote_text_choices(const field_reader *r, json_t *v, tsr_field *f) {
    json_t *c = member(v, "const"), *e = member(v, "enum"), *x;
    size_t count = json_is_string(c) ? 1 : json_array_size(e), i;
    if (!count) return 0;
    if (count > REMOTE_MAX_CHOICES) {
        snprintf(r->why, r->n, "%s '%s' allows %zu values; Tessera reads at most %d", r->side,
                 f->name, count, REMOTE_MAX_CHOICES);
        return TSR_E_DESCRIPTOR;
    }
    const char **list = (const char **)remote_keep_block(r->s, count * sizeof *list);
    if (!list) goto nomem;
    for (i = 0; i < count; i++) {
        x = json_is_string(c) ? c : json_array_get(e, i);
        if (!json_is_string(x)) {
            snprintf(r->why, r->n, "%s '%s': value %zu of its \"enum\" is not a string", r->side,
                     f->name, i);
            return TSR_E_DESCRIPTOR;
        }
        if (strlen(json_string_value(x)) != json_string_length(x)) {
            snprintf(r->why, r->n, "%s '%s': value %zu of its \"enum\" holds a NUL", r->side,
                     f->name, i);
            return TSR_E_DESCRIPTOR;
        }
        if (!(list[i] = remote_keep(r->s, json_string_value(x)))) goto nomem;
    }
    f->choices = list;
    f->n_choices = (int32_t)count;
    return 0;
nomem:
    snprintf(r->why, r->n, "out of memory");
    return TSR_E_NOMEM;
}

/* A TEXT or JSON input left out: the schema's non-null "default" held as
 * the field's default (a uint8 array of its text: the string itself for
 * TEXT, its JSON for JSON) when it fits TSR_MAX_DEFAULT_BYTES; else the
 * input is optional and a call that leaves it out leaves it out of the
 * request, so that the server applies its own default. */
int remote_value_default(const field_reader *r, int32_t k, json_t *dflt, int required) {
    remote_schema *s = r->s;
    remote_field *x = &s->extra[k];
    if (dflt && !json_is_null(dflt)) {
        char *text = remote_json_text(dflt);
        x->default_json = text ? remote_keep(s, text) : NULL;
        free(text);
        if (!x->default_json) goto nomem;
    }
    if (required || strcmp(r->side, "input") != 0) return 0;
    const char *value = NULL;
    size_t len = 0;
    if (x->kind == REMOTE_TEXT && json_is_string(dflt)) {
        value = json_string_value(dflt);
        len = json_string_length(dflt);
    } else if (x->kind == REMOTE_JSON && x->default_json) {
        value = x->default_json;
        len = strlen(value);
    }
    if (value && len <= TSR_MAX_DEFAULT_BYTES) {
        if (!(x->default_buf = malloc(len + 1))) goto nomem;
        memcpy(x->default_buf, value, len);
        ((char *)x->default_buf)[len] = '\0';
        x->default_array = (tsr_array){.data = x->default_buf, .dtype = TSR_UINT8, .rank = 1,
                                       .shape = {(int64_t)len}};
        return 0;
    }
    s->fields[k].flags |= TSR_FIELD_OPTIONAL;
    return 0;
nomem:
    snprintf(r->why, r->n, "out of memory");
    return TSR_E_NOMEM;
}
