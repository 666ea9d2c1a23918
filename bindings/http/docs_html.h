/* SPDX-License-Identifier: MIT */
/*
 * The page of `tessera docs`: one self-contained HTML document (inline CSS,
 * nothing fetched) describing a component from its schema JSON, the text
 * tsr_schema_to_json gives.
 *   docs_html.c     the page: head, style, name, description
 *   docs_fields.c   input and output tables, nested fields under their
 *                   parent, and the symbolic dims fields share
 *   docs_endpoints.c  each endpoint: how it is served, what it takes
 *   docs_example.c  an example apply request in Tesseract's JSON form
 *   docs_text.c     escaping and small formatting shared by the above
 */
#ifndef TESSERA_SERVE_DOCS_HTML_H
#define TESSERA_SERVE_DOCS_HTML_H

#include <stdio.h>

#include <jansson.h>
#include <tessera/tessera.h>

/* What the page needs beyond the schema JSON: how each endpoint is
 * served and how to call the component from the command line. */
typedef struct docs_facts {
    const char *component_arg; /* PLUGIN as given on the command line */
    const char *mode;          /* a --mode for the command lines; NULL: none */
    unsigned native;           /* bit (1u << ep): the plugin implements ep itself */
    tsr_fd_method fd_method;   /* what serves missing derivatives */
    tsr_hvp_source hvp_source; /* how hvp is served */
    const char *format;        /* a -f for the command lines (docs_html_page sets it) */
} docs_facts;

/* The page for schema_json as NUL-terminated text in *page (free()).
 * 0, or -1 with the cause in why. */
int docs_html_page(const char *schema_json, const docs_facts *facts, char **page, char *why,
                   size_t why_size);

/* ---- parts of the page --------------------------------------------------- */

/* The Inputs and Outputs sections. */
void docs_fields_sections(FILE *f, const json_t *schema);
/* The section on symbolic dims shared between fields; nothing when no
 * field has one. */
void docs_dims_section(FILE *f, const json_t *schema);
/* The Endpoints section (docs_endpoints.c). */
void docs_endpoints_section(FILE *f, const json_t *schema, const docs_facts *facts);
/* The example section: an apply request body, the sizes it gives the
 * symbolic dims and the command that sends it. 0, or -1 with why. */
int docs_example_section(FILE *f, const json_t *schema, const docs_facts *facts, char *why,
                         size_t why_size);

/* ---- text (docs_text.c) --------------------------------------------------- */

/* s with & < > " ' escaped; NULL writes nothing. */
void docs_text(FILE *f, const char *s);
/* A field name, escaped, that may break after its dots. */
void docs_name(FILE *f, const char *s);
/* text as <p> paragraphs, one per run of lines between blank lines. */
void docs_paragraphs(FILE *f, const char *text);
/* A field's shape as `(n, 2)`, `(k,)`, `()`; `*` for a wildcard. */
void docs_shape(FILE *f, const json_t *shape);
/* The command line to call endpoint `command` with a request in FILE. */
void docs_command_line(FILE *f, const docs_facts *facts, const char *command, const char *file);
/* A string member of obj, or NULL when absent or not a string. */
const char *docs_string(const json_t *obj, const char *key);

#endif /* TESSERA_SERVE_DOCS_HTML_H */
