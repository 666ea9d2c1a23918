/* SPDX-License-Identifier: MIT */
/* The docs page's example: an apply request in Tesseract's JSON form,
 * nested by the dots of the field names, each array encoded by the
 * library itself (tsr_array_to_json), so that the example is exactly what
 * the command line reads. Values are small placeholders; symbolic dims get
 * small notes. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docs_html.h"

#include <tessera/payload.h>

enum { MAX_SYMBOLS = 64 };

/* The size each symbol is given, in order of first use by an input, and
 * what the page must say about the example. */
typedef struct example_notes {
    const char *name[MAX_SYMBOLS];
    int64_t size[MAX_SYMBOLS];
    int count;
    bool wildcard;    /* an axis of any size was given WILDCARD_SIZE */
    bool abbreviated; /* an array too large to show has its values elided */
    bool base64;      /* a complex array is given in base64 */
} example_notes;

enum { WILDCARD_SIZE = 2 };
/* Beyond this many elements (a large fixed dim) the example names the
 * count instead of listing the values. */
enum { MAX_SHOWN_ELEMENTS = 1024 };

/* 2, 3, 4, 2, ...: distinct sizes show which axes share a symbol. */
static int64_t symbol_size(example_notes *s, const char *name) {
    for (int i = 0; i < s->count; i++)
        if (strcmp(s->name[i], name) == 0) return s->size[i];
    int64_t size = 2 + s->count % 3;
    if (s->count < MAX_SYMBOLS) {
        s->name[s->count] = name;
        s->size[s->count++] = size;
    }
    return size;
}

/* v (1, 2 or 3) in the dtype's own representation, little-endian. */
static void encode_small(unsigned char *out, tsr_dtype dtype, int v) {
    memset(out, 0, 16);
    switch (dtype) {
    case TSR_BOOL: out[0] = v != 2; break;
    case TSR_FLOAT16: {
        static const uint16_t half[] = {0, 0x3C00, 0x4000, 0x4200}; /* IEEE half 0 to 3 */
        memcpy(out, &half[v], sizeof half[v]);
        break;
    }
    case TSR_FLOAT32:
    case TSR_COMPLEX64: {
        float x = (float)v;
        memcpy(out, &x, sizeof x);
        break;
    }
    case TSR_FLOAT64:
    case TSR_COMPLEX128: {
        double x = v;
        memcpy(out, &x, sizeof x);
        break;
    }
    default: out[0] = (unsigned char)v; /* the integers */
    }
}

/* Placeholders 1, 2, 3, 1, ... starting at `first`: inputs that differ
 * keep a component that subtracts or normalises them away from 0/0. */
static void fill_values(unsigned char *data, tsr_dtype dtype, int64_t count, size_t first) {
    size_t size = tsr_dtype_size(dtype);
    unsigned char value[16];
    for (int64_t i = 0; i < count; i++) {
        encode_small(value, dtype, 1 + (int)((first + (size_t)i) % 3));
        memcpy(data + (size_t)i * size, value, size);
    }
}

/* An array too large to list: its header, and its values named. */
static json_t *elided_array(const json_t *field, const tsr_array *a, example_notes *notes) {
    json_t *shape = json_array();
    for (int32_t d = 0; d < a->rank; d++) json_array_append_new(shape, json_integer(a->shape[d]));
    notes->abbreviated = true;
    bool complex = a->dtype == TSR_COMPLEX64 || a->dtype == TSR_COMPLEX128;
    return json_pack("{s:s, s:o, s:s, s:{s:s, s:s}}", "object_type", "array", "shape", shape,
                     "dtype", docs_string(field, "dtype"), "data", "buffer", "...",
                     "encoding", complex ? "base64" : "json");
}

/* The encoded array of placeholders for input `index`, or NULL with why. */
static json_t *example_array(const json_t *field, size_t index, example_notes *notes, char *why,
                             size_t why_size) {
    const char *name = docs_string(field, "name");
    int dtype = tsr_dtype_from_name(docs_string(field, "dtype"));
    const json_t *shape = json_object_get(field, "shape");
    if (dtype < 0 || json_array_size(shape) > TSR_MAX_RANK) {
        snprintf(why, why_size, "input '%s': no dtype or shape in the schema", name);
        return NULL;
    }
    tsr_array a = {.dtype = (tsr_dtype)dtype, .rank = (int32_t)json_array_size(shape)};
    int64_t count = 1;
    bool too_large = false;
    size_t d;
    const json_t *dim;
    json_array_foreach(shape, d, dim) {
        if (json_is_string(dim)) {
            a.shape[d] = symbol_size(notes, json_string_value(dim));
        } else if (json_is_integer(dim)) {
            a.shape[d] = json_integer_value(dim);
        } else {
            a.shape[d] = WILDCARD_SIZE;
            notes->wildcard = true;
        }
        too_large |= __builtin_mul_overflow(count, a.shape[d], &count) || count > MAX_SHOWN_ELEMENTS;
    }
    if (too_large) {
        json_t *elided = elided_array(field, &a, notes);
        if (elided == NULL) snprintf(why, why_size, "input '%s': out of memory for its example", name);
        return elided;
    }
    a.data = calloc((size_t)count + 1, tsr_dtype_size(a.dtype));
    if (a.data == NULL) {
        snprintf(why, why_size, "input '%s': out of memory for its example", name);
        return NULL;
    }
    fill_values(a.data, a.dtype, count, index);
    char *text = NULL;
    tsr_error err = TSR_ERROR_INIT;
    json_t *encoded = NULL;
    /* complex numbers have no json form, in Tesseract as here */
    bool complex = a.dtype == TSR_COMPLEX64 || a.dtype == TSR_COMPLEX128;
    notes->base64 |= complex;
    if (tsr_array_to_json(&a, complex ? TSR_ENCODING_BASE64 : TSR_ENCODING_JSON, &text, &err) != 0)
        snprintf(why, why_size, "input '%s': %s", name, err.message);
    else if ((encoded = json_loads(text, 0, NULL)) == NULL)
        snprintf(why, why_size, "input '%s': its encoded example does not parse", name);
    tsr_json_free(text);
    free(a.data);
    return encoded;
}

/* The example of an input: a TEXT field's default or first choice, or
 * "text"; a JSON field null (its schema says no more); an array's
 * encoded placeholder. */
static json_t *example_value(const json_t *field, size_t index, example_notes *notes, char *why,
                             size_t why_size) {
    const char *kind = docs_string(field, "kind");
    if (kind == NULL || strcmp(kind, "array") == 0)
        return example_array(field, index, notes, why, why_size);
    json_t *v = NULL;
    if (strcmp(kind, "text") == 0) {
        const json_t *def = json_object_get(field, "default");
        const json_t *first = json_array_get(json_object_get(field, "choices"), 0);
        v = json_string(json_is_string(def)     ? json_string_value(def)
                        : json_is_string(first) ? json_string_value(first)
                                                : "text");
    } else {
        v = json_null();
    }
    if (v == NULL)
        snprintf(why, why_size, "input '%s': out of memory for its example",
                 docs_string(field, "name"));
    return v;
}

/* Put value at the dotted path name under obj, as Tesseract nests it:
 * 0, value taken; or -1, value left to the caller, when a part of the
 * path is already a field (a schema with both `a` and `a.b`). */
static int set_nested(json_t *obj, const char *name, json_t *value) {
    const char *dot = strchr(name, '.');
    if (dot == NULL) {
        if (json_object_get(obj, name) != NULL || json_object_set(obj, name, value) != 0) return -1;
        json_decref(value); /* obj holds it now */
        return 0;
    }
    char *head = strndup(name, (size_t)(dot - name));
    json_t *child = head != NULL ? json_object_get(obj, head) : NULL;
    if (head != NULL && child == NULL) {
        child = json_object();
        if (json_object_set_new(obj, head, child) != 0) child = NULL;
    }
    free(head);
    if (!json_is_object(child) || json_object_get(child, "object_type") != NULL) return -1;
    return set_nested(child, dot + 1, value);
}

/* Objects indented, each encoded array on one line of its own. */
static void print_body(FILE *m, json_t *v, int indent) {
    if (!json_is_object(v) || json_object_get(v, "object_type") != NULL ||
        json_object_size(v) == 0) {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        fputs(text != NULL ? text : "null", m);
        free(text);
        return;
    }
    fputs("{\n", m);
    const char *key;
    json_t *child;
    size_t left = json_object_size(v);
    json_object_foreach(v, key, child) {
        json_t *key_json = json_string(key);
        char *quoted = json_dumps(key_json, JSON_ENCODE_ANY);
        fprintf(m, "%*s%s: ", indent + 2, "", quoted != NULL ? quoted : "\"?\"");
        free(quoted);
        json_decref(key_json);
        print_body(m, child, indent + 2);
        fputs(--left > 0 ? ",\n" : "\n", m);
    }
    fprintf(m, "%*s}", indent, "");
}

/* The request body as text (free()), or NULL with why. */
static char *apply_body(const json_t *schema, example_notes *notes, json_t *left_out, char *why,
                        size_t why_size) {
    json_t *body = json_object(), *inputs = json_object();
    if (body == NULL || inputs == NULL || json_object_set_new(body, "inputs", inputs) != 0) {
        json_decref(body);
        snprintf(why, why_size, "out of memory for the example");
        return NULL;
    }
    size_t i;
    const json_t *field;
    json_array_foreach(json_object_get(schema, "inputs"), i, field) {
        const char *name = docs_string(field, "name");
        if (json_is_false(json_object_get(field, "required"))) {
            json_array_append_new(left_out, json_string(name));
            continue;
        }
        json_t *array = example_value(field, i, notes, why, why_size);
        if (array == NULL) {
            json_decref(body);
            return NULL;
        }
        /* a path that cannot nest stays a dotted key */
        if (set_nested(inputs, name, array) != 0) json_object_set_new(inputs, name, array);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m != NULL) {
        print_body(m, body, 0);
        if (fclose(m) != 0) {
            free(text);
            text = NULL;
        }
    }
    json_decref(body);
    if (text == NULL) snprintf(why, why_size, "out of memory for the example");
    return text;
}

static void sizes_sentence(FILE *f, const example_notes *notes) {
    if (notes->count == 0) return;
    fputs(" Its symbolic dims are given small sizes: ", f);
    for (int i = 0; i < notes->count; i++) {
        fputs(i > 0 ? ", <var>" : "<var>", f);
        docs_text(f, notes->name[i]);
        fprintf(f, "</var>&nbsp;=&nbsp;%lld", (long long)notes->size[i]);
    }
    fputs(".", f);
}

int docs_example_section(FILE *f, const json_t *schema, const docs_facts *facts, char *why,
                         size_t why_size) {
    example_notes notes = {.count = 0};
    json_t *left_out = json_array();
    char *body = left_out != NULL ? apply_body(schema, &notes, left_out, why, why_size) : NULL;
    if (body == NULL) {
        if (left_out == NULL) snprintf(why, why_size, "out of memory for the example");
        json_decref(left_out);
        return -1;
    }
    fputs("<section id=\"example\">\n<h2>Example</h2>\n<p>A request body for "
          "<code>apply</code> in Tesseract's JSON form: nested fields as nested objects, each "
          "array encoded with its shape and dtype, its values placeholders.",
          f);
    sizes_sentence(f, &notes);
    if (notes.wildcard) fprintf(f, " Axes of any size (<code>*</code>) get %d.", WILDCARD_SIZE);
    if (notes.base64) fputs(" Complex arrays, which have no json form, are given in base64.", f);
    if (notes.abbreviated)
        fprintf(f, " Arrays of more than %d elements show \"...\" in place of their values.",
                MAX_SHOWN_ELEMENTS);
    fputs("</p>\n", f);
    if (json_array_size(left_out) > 0) {
        fputs("<p>Optional inputs are left out (those with a default take it): ", f);
        size_t i;
        const json_t *name;
        json_array_foreach(left_out, i, name) {
            fputs(i > 0 ? ", <code>" : "<code>", f);
            docs_text(f, json_string_value(name));
            fputs("</code>", f);
        }
        fputs(".</p>\n", f);
    }
    fputs("<pre class=\"json\">", f);
    docs_text(f, body);
    fputs("</pre>\n<p>Saved as <code>apply.json</code>, it is sent with</p>\n<pre>", f);
    docs_command_line(f, facts, "apply", "apply.json");
    fputs("</pre>\n</section>\n", f);
    free(body);
    json_decref(left_out);
    return 0;
}
