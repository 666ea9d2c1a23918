/* SPDX-License-Identifier: MIT */
/* Text of the docs page: every string from the schema reaches the page
 * through docs_text, so a description holding markup stays text. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docs_html.h"

void docs_text(FILE *f, const char *s) {
    if (s == NULL) return;
    for (; *s != '\0'; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Long names break after their dots, not inside a part. */
void docs_name(FILE *f, const char *s) {
    if (s == NULL) return;
    for (; *s != '\0'; s++) {
        char one[2] = {*s, '\0'};
        docs_text(f, one);
        if (*s == '.' && s[1] != '\0') fputs("<wbr>", f);
    }
}

static bool blank_line(const char *line, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') return false;
    return true;
}

static size_t line_length(const char *line) {
    const char *nl = strchr(line, '\n');
    return nl != NULL ? (size_t)(nl - line) : strlen(line);
}

static const char *next_line(const char *line) {
    size_t len = line_length(line);
    return line + len + (line[len] == '\n');
}

/* Text [from, to) escaped, leaving out `dedent` leading chars per line. */
static void block_text(FILE *f, const char *from, const char *to, size_t dedent) {
    for (const char *line = from; line < to; line = next_line(line)) {
        size_t len = line_length(line), skip = dedent < len ? dedent : len;
        char *copy = strndup(line + skip, len - skip);
        if (copy != NULL) docs_text(f, copy);
        free(copy);
        if (next_line(line) < to) fputc('\n', f);
    }
}

/* A paragraph: lines indented by 4 or more (a formula, a code sample)
 * keep their breaks and alignment; other lines are joined by the browser,
 * as docstrings come wrapped at a fixed width. */
static void paragraph(FILE *f, const char *from, const char *to) {
    size_t indent = SIZE_MAX;
    for (const char *line = from; line < to; line = next_line(line)) {
        size_t n = strspn(line, " ");
        if (n < indent) indent = n;
    }
    bool literal = indent >= 4;
    fputs(literal ? "<pre class=\"doc\">" : "<p>", f);
    block_text(f, from, to, literal ? indent : 0);
    fputs(literal ? "</pre>\n" : "</p>\n", f);
}

void docs_paragraphs(FILE *f, const char *text) {
    if (text == NULL) return;
    const char *line = text;
    while (*line != '\0') {
        if (blank_line(line, line_length(line))) {
            line = next_line(line);
            continue;
        }
        const char *from = line;
        while (*line != '\0' && !blank_line(line, line_length(line))) line = next_line(line);
        paragraph(f, from, line);
    }
}

void docs_shape(FILE *f, const json_t *shape) {
    size_t rank = json_array_size(shape), d;
    const json_t *dim;
    /* An array of any rank (Array[..., dtype]) has no shape to list. */
    if (!json_is_array(shape)) {
        fputs("<span class=\"any\" title=\"any rank\">(...)</span>", f);
        return;
    }
    fputc('(', f);
    json_array_foreach(shape, d, dim) {
        if (d > 0) fputs(", ", f);
        if (json_is_string(dim)) {
            fputs("<var>", f);
            docs_text(f, json_string_value(dim));
            fputs("</var>", f);
        } else if (json_is_integer(dim)) {
            fprintf(f, "%lld", (long long)json_integer_value(dim));
        } else {
            fputs("<span class=\"any\" title=\"any size\">*</span>", f);
        }
    }
    /* Python's spelling of a 1-tuple, as Tesseract's schemas print it */
    fputs(rank == 1 ? ",)" : ")", f);
}

/* Single quotes where the shell would otherwise split or expand. */
static void shell_word(FILE *f, const char *word) {
    static const char plain[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-";
    if (word[0] != '\0' && strspn(word, plain) == strlen(word)) {
        docs_text(f, word);
        return;
    }
    fputc('\'', f);
    for (const char *s = word; *s != '\0'; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else {
            char one[2] = {*s, '\0'};
            docs_text(f, one);
        }
    }
    fputc('\'', f);
}

void docs_command_line(FILE *f, const docs_facts *facts, const char *command, const char *file) {
    fputs("<code class=\"cmd\">tessera ", f);
    docs_text(f, command);
    if (facts->format != NULL) {
        fputs(" -f ", f);
        docs_text(f, facts->format);
    }
    if (facts->mode != NULL) {
        fputs(" --mode ", f);
        docs_text(f, facts->mode);
    }
    fputc(' ', f);
    shell_word(f, facts->component_arg);
    fputs(" @", f);
    docs_text(f, file);
    fputs("</code>", f);
}

const char *docs_string(const json_t *obj, const char *key) {
    return json_string_value(json_object_get(obj, key));
}
