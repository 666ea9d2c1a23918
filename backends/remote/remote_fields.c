/* SPDX-License-Identifier: MIT */
/* The properties of an OpenAPI model as Tessera fields: tesseract-core's
 * encoded arrays (of one rank, or any), nested models (their fields named
 * with dots), and TEXT and JSON fields (remote_values.c) for the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/schema.h"
#include "remote_schema_read.h"
#include "tessera/tessera.h"

#define REF_PREFIX "#/components/schemas/"

static json_t *member(json_t *obj, const char *key) {
    return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

/* The one alternative of an anyOf / oneOf besides {"type": "null"}, or
 * NULL when there are several (a union Tessera cannot represent). */
static json_t *sole_alternative(json_t *list) {
    json_t *found = NULL, *alt;
    size_t i;
    json_array_foreach(list, i, alt) {
        json_t *type = member(alt, "type");
        if (json_is_string(type) && strcmp(json_string_value(type), "null") == 0) continue;
        if (found) return NULL;
        found = alt;
    }
    return found;
}

json_t *remote_resolve(const field_reader *r, json_t *v, const char *name, json_t **doc,
                       json_t **dflt) {
    if (!v) snprintf(r->why, r->n, "%s '%s' has no schema", r->side, name);
    for (int hops = 0; hops < REMOTE_MAX_DEPTH; hops++) {
        if (doc && !*doc && json_is_string(member(v, "description"))) *doc = member(v, "description");
        if (dflt && !*dflt && member(v, "default")) *dflt = member(v, "default");
        json_t *ref = member(v, "$ref"), *all = member(v, "allOf"), *next = NULL;
        json_t *any = member(v, "anyOf") ? member(v, "anyOf") : member(v, "oneOf");
        if (json_is_string(ref)) {
            const char *target = json_string_value(ref);
            if (strncmp(target, REF_PREFIX, strlen(REF_PREFIX)) == 0)
                next = member(r->schemas, target + strlen(REF_PREFIX));
            if (!next) {
                snprintf(r->why, r->n, "%s '%s' refers to '%s', which the document lacks",
                         r->side, name, target);
                return NULL;
            }
        } else if (json_is_array(all) && json_array_size(all) == 1) {
            next = json_array_get(all, 0);
        } else if (json_is_array(any) && sole_alternative(any)) {
            next = sole_alternative(any); /* Optional[X] is X, as for Python components */
        }
        if (!next) return v;
        v = next;
    }
    snprintf(r->why, r->n, "%s '%s': its $refs nest more than %d deep", r->side, name,
             REMOTE_MAX_DEPTH);
    return NULL;
}

/* A new field at the end of the schema; NULL when out of memory. */
static tsr_field *add_field(remote_schema *s) {
    if (s->n_fields == s->cap) {
        int32_t cap = s->cap ? 2 * s->cap : 16;
        tsr_field *f = realloc(s->fields, (size_t)cap * sizeof *f);
        if (f) s->fields = f;
        tsr_dim *d = realloc(s->dims, (size_t)cap * TSR_MAX_FIELD_RANK * sizeof *d);
        if (d) s->dims = d;
        remote_field *x = realloc(s->extra, (size_t)cap * sizeof *x);
        if (x) s->extra = x;
        if (!f || !d || !x) return NULL;
        s->cap = cap;
    }
    int32_t k = s->n_fields++;
    memset(&s->fields[k], 0, sizeof s->fields[k]);
    memset(&s->extra[k], 0, sizeof s->extra[k]);
    return &s->fields[k];
}

/* The size an axis must have: an integer "const", or the largest of an
 * "enum" of integers (tesseract-core allows 1 or N for a fixed N, to
 * broadcast; Tessera asks for N); anything else is any size. */
static int64_t axis_size(json_t *item) {
    json_t *c = member(item, "const"), *e = member(item, "enum"), *v;
    if (json_is_integer(c)) return json_integer_value(c) >= 0 ? json_integer_value(c) : TSR_DIM_ANY;
    int64_t size = TSR_DIM_ANY;
    size_t i;
    json_array_foreach(e, i, v) {
        if (!json_is_integer(v)) return TSR_DIM_ANY;
        if (json_integer_value(v) > size) size = json_integer_value(v);
    }
    return size;
}

static int array_dims(const field_reader *r, json_t *array, const char *name, tsr_field *f,
                      tsr_dim *dims) {
    json_t *given = member(member(array, "properties"), "shape");
    if (!given) {
        snprintf(r->why, r->n, "%s '%s': its array model has no \"shape\"", r->side, name);
        return TSR_E_DESCRIPTOR;
    }
    json_t *shape = remote_resolve(r, given, name, NULL, NULL);
    if (!shape) return TSR_E_LOAD;
    json_t *lo = member(shape, "minItems"), *hi = member(shape, "maxItems");
    if (!lo && !hi && !member(shape, "prefixItems")) {
        f->rank = TSR_RANK_ANY; /* Array[..., dtype]: a list of any length */
        return 0;
    }
    if (!json_is_integer(lo) || !json_is_integer(hi) ||
        json_integer_value(lo) != json_integer_value(hi) || json_integer_value(lo) < 0) {
        snprintf(r->why, r->n,
                 "%s '%s' is an array of any rank; Tessera fields have a fixed rank", r->side,
                 name);
        return TSR_E_DESCRIPTOR;
    }
    json_int_t rank = json_integer_value(lo);
    if (rank > TSR_MAX_FIELD_RANK) {
        snprintf(r->why, r->n, "%s '%s' has rank %lld; Tessera fields have at most %d axes",
                 r->side, name, (long long)rank, TSR_MAX_FIELD_RANK);
        return TSR_E_DESCRIPTOR;
    }
    json_t *items = member(shape, "prefixItems");
    for (json_int_t d = 0; d < rank; d++)
        dims[d] = (tsr_dim){NULL, axis_size(json_array_get(items, (size_t)d))};
    f->rank = (int32_t)rank;
    return 0;
}

/* tesseract-core names an array's model
 * "EncodedArrayModel__<shape>__<dtype>__<flags>"; its dtype, "None" for
 * any dtype. Else "" (not such a name). */
static void title_dtype(json_t *array, char *out, size_t n) {
    json_t *title = member(array, "title");
    out[0] = '\0';
    const char *t = json_is_string(title) ? json_string_value(title) : "";
    const char *prefix = "EncodedArrayModel__";
    if (strncmp(t, prefix, strlen(prefix)) != 0) return;
    const char *shape_end = strstr(t + strlen(prefix), "__");
    if (!shape_end) return;
    const char *dtype = shape_end + 2, *end = strstr(dtype, "__");
    size_t len = end ? (size_t)(end - dtype) : strlen(dtype);
    snprintf(out, n, "%.*s", (int)len, dtype);
}

static const char *string_of(json_t *v) { return json_is_string(v) ? json_string_value(v) : NULL; }

/* The dtype the server expects: from the model's title, the side's
 * differentiable_arrays, a single allowed dtype, or the dtype's example. */
static int array_dtype(const field_reader *r, json_t *array, const char *name, tsr_field *f) {
    char from_title[32];
    title_dtype(array, from_title, sizeof from_title);
    json_t *dt = member(member(array, "properties"), "dtype");
    json_t *allowed = member(dt, "enum"), *examples = member(dt, "examples");
    const char *names[] = {
        from_title[0] ? from_title : NULL,
        string_of(member(member(r->diff, name), "dtype")),
        string_of(member(dt, "const")),
        json_array_size(allowed) == 1 ? string_of(json_array_get(allowed, 0)) : NULL,
        string_of(json_array_get(examples, 0)),
    };
    if (names[0] && strcmp(names[0], "None") == 0) {
        snprintf(r->why, r->n, "%s '%s' is an array of any dtype; Tessera fields have one dtype",
                 r->side, name);
        return TSR_E_DESCRIPTOR;
    }
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        int code = names[k] ? tsr_dtype_from_name(names[k]) : -1;
        if (code < 0) continue;
        f->dtype = (tsr_dtype)code;
        return 0;
    }
    snprintf(r->why, r->n, "%s '%s': the document does not say the array's dtype", r->side,
             name);
    return TSR_E_DESCRIPTOR;
}

static int is_differentiable(const field_reader *r, json_t *array, const char *name) {
    json_t *flag;
    size_t i;
    json_array_foreach(member(array, "array_flags"), i, flag)
        if (json_is_string(flag) && strcmp(json_string_value(flag), "DIFFERENTIABLE") == 0) return 1;
    return member(r->diff, name) != NULL;
}

static int is_array_model(json_t *v) {
    json_t *c = member(member(member(v, "properties"), "object_type"), "const");
    return json_is_string(c) && strcmp(json_string_value(c), "array") == 0;
}

/* A nested model outside containers: its fields become dotted names. */
static int is_nested_model(json_t *v) {
    json_t *extra = member(v, "additionalProperties");
    return json_is_object(member(v, "properties")) && (!extra || json_is_false(extra));
}

static int nomem(const field_reader *r) {
    snprintf(r->why, r->n, "out of memory");
    return TSR_E_NOMEM;
}

/* One property: a field, or the fields of a nested model. */
static int read_property(const field_reader *r, json_t *prop, const char *name, int depth,
                         int required) {
    if (++*r->visits > REMOTE_MAX_VISITS) {
        snprintf(r->why, r->n, "the document takes more than %d properties to read (%s '%s')",
                 REMOTE_MAX_VISITS, r->side, name);
        return TSR_E_DESCRIPTOR;
    }
    json_t *doc = NULL, *dflt = NULL;
    json_t *v = remote_resolve(r, prop, name, &doc, &dflt);
    if (!v) return TSR_E_LOAD;
    int array = is_array_model(v);
    remote_kind kind = array ? REMOTE_ARRAY : remote_is_text(v) ? REMOTE_TEXT : REMOTE_JSON;
    if (kind == REMOTE_JSON) {
        if (is_nested_model(v)) return remote_read_fields(r, v, name, depth + 1);
        int rc = remote_json_check(r, v, name);
        if (rc) return rc;
    }
    remote_schema *s = r->s;
    if (s->n_fields >= 2 * SCHEMA_MAX_FIELDS) {
        snprintf(r->why, r->n, "the document has more than %d fields", 2 * SCHEMA_MAX_FIELDS);
        return TSR_E_DESCRIPTOR;
    }
    tsr_field *f = add_field(s);
    if (!f) return nomem(r);
    int32_t k = s->n_fields - 1;
    f->name = remote_keep(s, name);
    f->doc = doc ? remote_keep(s, json_string_value(doc)) : NULL;
    if (!f->name || (doc && !f->doc)) return nomem(r);
    if (kind != REMOTE_ARRAY) {
        /* Bytes of text: what the host passes (the descriptor's dtype,
         * rank and dims of such a field are not read). */
        f->kind = kind == REMOTE_TEXT ? TSR_KIND_TEXT : TSR_KIND_JSON;
        f->dtype = TSR_UINT8;
        f->rank = 1;
        s->dims[(size_t)k * TSR_MAX_FIELD_RANK] = (tsr_dim)TSR_ANY;
        s->extra[k].kind = kind;
        int rc = kind == REMOTE_TEXT ? remote_text_choices(r, v, f) : 0;
        if (!rc && kind == REMOTE_JSON && remote_json_differentiable(r, prop, name))
            f->flags |= TSR_FIELD_DIFFERENTIABLE;
        return rc ? rc : remote_value_default(r, k, dflt, required);
    }
    int rc = array_dims(r, v, name, f, s->dims + (size_t)k * TSR_MAX_FIELD_RANK);
    if (!rc) rc = array_dtype(r, v, name, f);
    if (!rc && is_differentiable(r, v, name)) f->flags |= TSR_FIELD_DIFFERENTIABLE;
    return rc ? rc : remote_read_default(r, k, dflt, required);
}

/* Whether property key of model is required: listed in the model's
 * "required"; where the model has no such list (pydantic leaves it out
 * when no field is required; a hand-written document may), when the
 * property gives no "default". */
static int is_required(json_t *model, const char *key, json_t *prop) {
    json_t *list = member(model, "required"), *v;
    size_t i;
    if (!json_is_array(list)) return member(prop, "default") == NULL;
    json_array_foreach(list, i, v)
        if (json_is_string(v) && strcmp(json_string_value(v), key) == 0) return 1;
    return 0;
}

int remote_read_fields(const field_reader *r, json_t *model, const char *prefix, int depth) {
    if (depth > REMOTE_MAX_DEPTH) {
        snprintf(r->why, r->n, "%s '%s': models nest more than %d deep", r->side, prefix,
                 REMOTE_MAX_DEPTH);
        return TSR_E_DESCRIPTOR;
    }
    const char *key;
    json_t *prop;
    json_object_foreach(member(model, "properties"), key, prop) {
        if (strchr(key, '.')) {
            snprintf(r->why, r->n,
                     "%s '%s%s%s': a name with a dot would read as a field of a nested model",
                     r->side, prefix, *prefix ? "." : "", key);
            return TSR_E_DESCRIPTOR;
        }
        size_t len = strlen(prefix) + strlen(key) + 2;
        char *name = malloc(len);
        if (!name) return nomem(r);
        snprintf(name, len, "%s%s%s", prefix, *prefix ? "." : "", key);
        int rc = read_property(r, prop, name, depth, is_required(model, key, prop));
        free(name);
        if (rc) return rc;
    }
    return 0;
}
