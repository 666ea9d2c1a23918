/* SPDX-License-Identifier: MIT */
/* The docs page's field tables: each input and output with its kind, dtype,
 * shape, default and differentiability, nested fields (`mesh.nodes`)
 * grouped under their parent as they nest on the wire; and which fields
 * share each symbolic dim. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docs_html.h"

/* The part of name below the group `prefix` (its first prefix_len
 * chars), or NULL when name is not in that group. Length 0: the top. */
static const char *below(const char *name, const char *prefix, size_t prefix_len) {
    if (prefix_len == 0) return name;
    if (strncmp(name, prefix, prefix_len) != 0 || name[prefix_len] != '.') return NULL;
    return name + prefix_len + 1;
}

/* The left padding of a cell at nesting depth `depth`, in integer
 * arithmetic (a %f would follow the locale's decimal comma). */
static void indent_style(FILE *f, int depth) {
    int tenths = 6 + 14 * depth;
    fprintf(f, " style=\"padding-left:%d.%dem\"", tenths / 10, tenths % 10);
}

static void name_cell(FILE *f, const char *name, size_t parent_len, int depth) {
    fputs("<td class=\"name\"", f);
    indent_style(f, depth);
    fputs("><code>", f);
    if (parent_len > 0) {
        char *parent = strndup(name, parent_len + 1);
        fputs("<span class=\"parent\">", f);
        docs_name(f, parent);
        fputs("</span>", f);
        free(parent);
    }
    docs_name(f, name + (parent_len > 0 ? parent_len + 1 : 0));
    fputs("</code></td>", f);
}

/* required, or optional with its default (schemas before defaults
 * existed have no "required": every field was). */
static void required_cell(FILE *f, const json_t *field) {
    const json_t *required = json_object_get(field, "required");
    if (!json_is_false(required)) {
        fputs("<td>required</td>", f);
        return;
    }
    const json_t *def = json_object_get(field, "default");
    if (def == NULL) {
        fputs("<td>optional<br><span class=\"note\">no default</span></td>", f);
        return;
    }
    char *text = json_dumps(def, JSON_ENCODE_ANY);
    fputs("<td>optional<br><span class=\"note\">default</span> <code class=\"value\">", f);
    docs_text(f, text != NULL ? text : "?");
    fputs("</code></td>", f);
    free(text);
}

/* A TEXT field's allowed values, for its description cell. */
static void choices_line(FILE *f, const json_t *choices) {
    size_t k;
    const json_t *c;
    fputs("<p>one of ", f);
    json_array_foreach(choices, k, c) {
        if (k > 0) fputs(k + 1 == json_array_size(choices) ? " or " : ", ", f);
        fputs("<code>", f);
        docs_text(f, json_string_value(c));
        fputs("</code>", f);
    }
    fputs("</p>", f);
}

/* The field's kind (array, text or JSON), then an array's dtype and
 * shape; a TEXT field is a string and a JSON field any JSON value, with
 * no dtype or shape of their own. */
static void type_cells(FILE *f, const json_t *field) {
    const char *kind = docs_string(field, "kind");
    if (kind != NULL && strcmp(kind, "array") != 0) {
        int text = strcmp(kind, "text") == 0;
        fputs(text ? "<td class=\"kind\">text</td>" : "<td class=\"kind\">JSON</td>", f);
        fputs("<td><span class=\"note\">", f);
        fputs(text ? "a string" : "a JSON value", f);
        fputs("</span></td><td><span class=\"note\" title=\"no shape\">\xe2\x80\x94</span></td>", f);
        return;
    }
    fputs("<td class=\"kind\">array</td><td><code class=\"dtype\">", f);
    docs_text(f, docs_string(field, "dtype"));
    fputs("</code></td><td><code class=\"shape\">", f);
    docs_shape(f, json_object_get(field, "shape"));
    fputs("</code></td>", f);
}

static void field_row(FILE *f, const json_t *field, bool inputs, size_t parent_len, int depth) {
    fputs("<tr>", f);
    name_cell(f, docs_string(field, "name"), parent_len, depth);
    type_cells(f, field);
    if (inputs) required_cell(f, field);
    fputs(json_is_true(json_object_get(field, "differentiable"))
              ? "<td><span class=\"yes\">yes</span></td>"
              : "<td><span class=\"no\">no</span></td>",
          f);
    fputs("<td class=\"doc\">", f);
    docs_paragraphs(f, docs_string(field, "doc"));
    const json_t *choices = json_object_get(field, "choices");
    if (json_array_size(choices) > 0) choices_line(f, choices);
    fputs("</td></tr>\n", f);
}

static void group_row(FILE *f, const char *name, size_t group_len, int depth, int columns) {
    fprintf(f, "<tr class=\"group\"><td colspan=\"%d\"", columns);
    indent_style(f, depth);
    fputs("><code>", f);
    char *group = strndup(name, group_len);
    docs_text(f, group);
    free(group);
    fputs("</code> <span class=\"note\">object: the fields below nest in it</span></td></tr>\n", f);
}

/* Has a field before `upto` a name in the group name[0, group_len)? */
static bool group_seen(const json_t *fields, size_t upto, const char *name, size_t group_len) {
    for (size_t j = 0; j < upto; j++) {
        const char *other = docs_string(json_array_get(fields, j), "name");
        if (other != NULL && below(other, name, group_len) != NULL) return true;
    }
    return false;
}

/* The fields of the group prefix[0, prefix_len), in schema order, each
 * subgroup where its first field stands. */
static void rows_of_group(FILE *f, const json_t *fields, bool inputs, const char *prefix,
                          size_t prefix_len, int depth) {
    size_t i;
    const json_t *field;
    json_array_foreach(fields, i, field) {
        const char *name = docs_string(field, "name");
        const char *rest = name != NULL ? below(name, prefix, prefix_len) : NULL;
        if (rest == NULL) continue;
        const char *dot = strchr(rest, '.');
        if (dot == NULL) {
            field_row(f, field, inputs, prefix_len, depth);
            continue;
        }
        size_t group_len = (size_t)(dot - name);
        if (group_seen(fields, i, name, group_len)) continue;
        group_row(f, name, group_len, depth, inputs ? 7 : 6);
        rows_of_group(f, fields, inputs, name, group_len, depth + 1);
    }
}

static void fields_section(FILE *f, const json_t *fields, bool inputs) {
    const char *title = inputs ? "Inputs" : "Outputs";
    fprintf(f, "<section id=\"%s\">\n<h2>%s</h2>\n", inputs ? "inputs" : "outputs", title);
    if (json_array_size(fields) == 0) {
        fprintf(f, "<p class=\"note\">No %s.</p>\n</section>\n", inputs ? "inputs" : "outputs");
        return;
    }
    fputs("<div class=\"scroll\"><table class=\"fields\">\n<thead><tr><th>field</th><th>kind</th>"
          "<th>dtype</th><th>shape</th>",
          f);
    if (inputs) fputs("<th>required</th>", f);
    fputs("<th>differentiable</th><th>description</th></tr></thead>\n<tbody>\n", f);
    rows_of_group(f, fields, inputs, "", 0, 0);
    fputs("</tbody>\n</table></div>\n</section>\n", f);
}

void docs_fields_sections(FILE *f, const json_t *schema) {
    fields_section(f, json_object_get(schema, "inputs"), true);
    fields_section(f, json_object_get(schema, "outputs"), false);
}

/* ---- symbolic dims ------------------------------------------------------- */

/* Was symbol named by a field of `fields` before index upto (or, with
 * upto past the end, anywhere)? */
static bool symbol_in(const json_t *fields, size_t upto, const char *symbol) {
    for (size_t i = 0; i < upto && i < json_array_size(fields); i++) {
        size_t d;
        const json_t *dim;
        json_array_foreach(json_object_get(json_array_get(fields, i), "shape"), d, dim) {
            if (json_is_string(dim) && strcmp(json_string_value(dim), symbol) == 0) return true;
        }
    }
    return false;
}

/* Each field of `fields` whose shape names symbol, with the axis. */
static void symbol_uses(FILE *f, const json_t *fields, const char *symbol) {
    bool any = false;
    size_t i, d;
    const json_t *field, *dim;
    json_array_foreach(fields, i, field) {
        json_array_foreach(json_object_get(field, "shape"), d, dim) {
            if (!json_is_string(dim) || strcmp(json_string_value(dim), symbol) != 0) continue;
            fputs(any ? ", " : "", f);
            fputs("<code>", f);
            docs_text(f, docs_string(field, "name"));
            fprintf(f, "</code>&nbsp;<span class=\"note\">axis&nbsp;%zu</span>", d);
            any = true;
        }
    }
    if (!any) fputs("<span class=\"note\">none</span>", f);
}

/* Is axis d of field i of `fields` the first to name symbol? Inputs come
 * before outputs (is_output: fields are the outputs). */
static bool first_use(const json_t *inputs, bool is_output, const json_t *fields, size_t i,
                      size_t d, const char *symbol) {
    if ((is_output && symbol_in(inputs, SIZE_MAX, symbol)) || symbol_in(fields, i, symbol))
        return false;
    const json_t *shape = json_object_get(json_array_get(fields, i), "shape");
    for (size_t e = 0; e < d; e++) {
        const json_t *prev = json_array_get(shape, e);
        if (json_is_string(prev) && strcmp(json_string_value(prev), symbol) == 0) return false;
    }
    return true;
}

static void symbol_row(FILE *f, const json_t *inputs, const json_t *outputs, const char *symbol) {
    fputs("<tr><td><code><var>", f);
    docs_text(f, symbol);
    fputs("</var></code></td><td>", f);
    if (symbol_in(inputs, SIZE_MAX, symbol)) symbol_uses(f, inputs, symbol);
    else fputs("<span class=\"note\">none: the component sets its size</span>", f);
    fputs("</td><td>", f);
    symbol_uses(f, outputs, symbol);
    fputs("</td></tr>\n", f);
}

/* One row per symbol, in order of first use; false when there is none. */
static bool symbol_rows(FILE *f, const json_t *inputs, const json_t *outputs) {
    bool any = false;
    for (int l = 0; l < 2; l++) {
        const json_t *fields = l == 0 ? inputs : outputs;
        size_t i, d;
        const json_t *field, *dim;
        json_array_foreach(fields, i, field) {
            json_array_foreach(json_object_get(field, "shape"), d, dim) {
                const char *symbol = json_string_value(dim);
                if (symbol == NULL || !first_use(inputs, l == 1, fields, i, d, symbol)) continue;
                if (!any)
                    fputs("<div class=\"scroll\"><table class=\"dims\">\n<thead><tr><th>symbol</th>"
                          "<th>inputs</th><th>outputs</th></tr></thead>\n<tbody>\n",
                          f);
                any = true;
                symbol_row(f, inputs, outputs, symbol);
            }
        }
    }
    if (any) fputs("</tbody>\n</table></div>\n", f);
    return any;
}

void docs_dims_section(FILE *f, const json_t *schema) {
    const json_t *inputs = json_object_get(schema, "inputs");
    const json_t *outputs = json_object_get(schema, "outputs");
    /* Written to a buffer first: the section is left out with no symbol. */
    char *rows = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&rows, &len);
    if (m == NULL) return;
    bool any = symbol_rows(m, inputs, outputs);
    if (fclose(m) != 0) any = false;
    if (any) {
        fputs("<section id=\"dims\">\n<h2>Symbolic dimensions</h2>\n"
              "<p>A symbol stands for one size throughout a call: every field whose shape "
              "names it has that size on that axis. <code>*</code> is any size, for each "
              "field on its own.</p>\n",
              f);
        fputs(rows, f);
        fputs("</section>\n", f);
    }
    free(rows);
}
