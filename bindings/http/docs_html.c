/* SPDX-License-Identifier: MIT */
/* The docs page as a whole: head and inline style (nothing is fetched,
 * and the Content-Security-Policy says so to the browser), the
 * component's name and description, then the sections of the other
 * docs_*.c files in their order. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "docs_html.h"

static const char style[] =
    ":root{--fg:#1b1f24;--muted:#57606a;--bg:#fff;--line:#d0d7de;--code:#f3f5f7;"
    "--accent:#0b5cad;--group:#f6f8fa}\n"
    "@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9da7b3;--bg:#0d1117;"
    "--line:#30363d;--code:#161b22;--accent:#58a6ff;--group:#161b22}}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"
    "'Segoe UI',Roboto,'Noto Sans',Arial,sans-serif}\n"
    "main{max-width:72rem;margin:0 auto;padding:2rem 1.5rem 3rem}\n"
    "h1{font-size:2rem;margin:0 0 .25rem;overflow-wrap:anywhere}\n"
    "h2{font-size:1.35rem;margin:2.2rem 0 .6rem;padding-bottom:.3rem;"
    "border-bottom:1px solid var(--line)}\n"
    "h3{font-size:1.1rem;margin:0 0 .4rem}\n"
    "a{color:var(--accent)}\n"
    "code,pre,var{font-family:ui-monospace,'SFMono-Regular','DejaVu Sans Mono',Menlo,Consolas,"
    "monospace;font-size:.9em}\n"
    "var{font-style:italic;color:var(--accent)}\n"
    "p code,dd code{overflow-wrap:anywhere}\n"
    "pre{background:var(--code);border:1px solid var(--line);border-radius:6px;"
    "padding:.75rem 1rem;white-space:pre-wrap;overflow-wrap:anywhere;margin:.5rem 0}\n"
    ".version{font-size:1rem;font-weight:normal;color:var(--muted);margin-left:.5rem}\n"
    ".subtitle,.note{color:var(--muted)}\n"
    ".subtitle{margin:0 0 1rem}\n"
    ".description{max-width:48rem}\n"
    "nav{font-size:.95rem;margin:1rem 0}\n"
    "nav a{margin-right:1rem}\n"
    ".scroll{overflow-x:auto}\n"
    "table{border-collapse:collapse;width:100%;font-size:.95rem}\n"
    "th{text-align:left;font-weight:600;border-bottom:2px solid var(--line);padding:.4rem .6rem;"
    "white-space:nowrap}\n"
    "td{border-bottom:1px solid var(--line);padding:.45rem .6rem;vertical-align:top}\n"
    "td p{margin:0 0 .4rem}td p:last-child{margin:0}\n"
    "td.name{min-width:8rem}\n"
    ".dtype,.shape{white-space:nowrap}\n"
    "pre.json{font-size:.85em}\n"
    "pre.doc{background:none;border:0;padding:0 0 0 1rem;white-space:pre;overflow-x:auto}\n"
    "td.doc{min-width:16rem}\n"
    "tr.group td{background:var(--group);font-weight:600}\n"
    "tr.group .note{font-weight:normal}\n"
    ".parent{color:var(--muted)}\n"
    ".value{max-width:14rem;display:inline-block;vertical-align:top}\n"
    ".yes{color:#116329;font-weight:600}\n"
    "@media (prefers-color-scheme:dark){.yes{color:#56d364}}\n"
    ".endpoint{border:1px solid var(--line);border-radius:6px;padding:.8rem 1rem;"
    "margin:.8rem 0}\n"
    ".endpoint.off{color:var(--muted)}\n"
    ".endpoint dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;"
    "margin:.4rem 0}\n"
    ".endpoint dt{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.9em}\n"
    ".endpoint dd{margin:0}\n"
    ".badge{display:inline-block;font-size:.8rem;font-weight:600;padding:.05rem .5rem;"
    "border-radius:1rem;margin-left:.2rem;vertical-align:middle}\n"
    ".native{background:#dafbe1;color:#116329}.fd{background:#fff1c2;color:#6b4400}\n"
    ".derived{background:#ddf4ff;color:#0a4b8c}.missing{background:#eef0f2;color:#57606a}\n"
    "footer{margin-top:3rem;font-size:.85rem;color:var(--muted)}\n";

/* The version, or NULL when the schema gives none (manifests give ""). */
static const char *version_of(const json_t *schema) {
    const char *v = docs_string(schema, "version");
    return v != NULL && v[0] != '\0' ? v : NULL;
}

static void head(FILE *f, const json_t *schema) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'\">\n<title>",
          f);
    docs_text(f, docs_string(schema, "name"));
    if (version_of(schema) != NULL) {
        fputs(" ", f);
        docs_text(f, version_of(schema));
    }
    fputs(" \xe2\x80\x94 API</title>\n<style>\n", f);
    fputs(style, f);
    fputs("</style>\n</head>\n<body>\n<main>\n", f);
}

static void title(FILE *f, const json_t *schema, bool has_dims) {
    fputs("<header>\n<h1>", f);
    docs_text(f, docs_string(schema, "name"));
    if (version_of(schema) != NULL) {
        fputs("<span class=\"version\">version ", f);
        docs_text(f, version_of(schema));
        fputs("</span>", f);
    }
    fputs("</h1>\n<p class=\"subtitle\">The API of a Tessera component: its inputs and "
          "outputs, its endpoints and how to call them.</p>\n<div class=\"description\">\n",
          f);
    docs_paragraphs(f, docs_string(schema, "description"));
    fputs("</div>\n</header>\n<nav><a href=\"#inputs\">Inputs</a><a href=\"#outputs\">Outputs</a>",
          f);
    if (has_dims) fputs("<a href=\"#dims\">Symbolic dimensions</a>", f);
    fputs("<a href=\"#endpoints\">Endpoints</a><a href=\"#example\">Example</a></nav>\n", f);
}

/* Does a field hold complex numbers? Their results have no json form. */
static bool any_complex(const json_t *schema) {
    const char *lists[2] = {"inputs", "outputs"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        const json_t *field;
        json_array_foreach(json_object_get(schema, lists[l]), i, field) {
            const char *dtype = docs_string(field, "dtype");
            if (dtype != NULL && strncmp(dtype, "complex", 7) == 0) return true;
        }
    }
    return false;
}

/* The page into f; 0 or -1 with why. */
static int write_page(FILE *f, const json_t *schema, const docs_facts *facts, char *why,
                      size_t why_size) {
    char *dims = NULL, *example = NULL;
    size_t dims_len = 0, example_len = 0;
    FILE *dm = open_memstream(&dims, &dims_len);
    FILE *em = open_memstream(&example, &example_len);
    int rc = dm != NULL && em != NULL ? 0 : -1;
    if (dm != NULL) docs_dims_section(dm, schema);
    if (em != NULL && rc == 0) rc = docs_example_section(em, schema, facts, why, why_size);
    else if (rc != 0) snprintf(why, why_size, "out of memory");
    if (dm != NULL && fclose(dm) != 0) rc = -1;
    if (em != NULL && fclose(em) != 0) rc = -1;
    if (rc == 0) {
        head(f, schema);
        title(f, schema, dims_len > 0);
        docs_fields_sections(f, schema);
        fputs(dims, f);
        docs_endpoints_section(f, schema, facts);
        fputs(example, f);
        fprintf(f, "<footer>Generated by <code>tessera docs</code> %s from the component's "
                   "schema.</footer>\n</main>\n</body>\n</html>\n",
                tsr_version());
    }
    free(dims);
    free(example);
    return rc;
}

int docs_html_page(const char *schema_json, const docs_facts *facts, char **page, char *why,
                   size_t why_size) {
    *page = NULL;
    json_error_t jerr;
    json_t *schema = json_loads(schema_json, 0, &jerr);
    if (!json_is_object(schema) || !json_is_array(json_object_get(schema, "inputs")) ||
        !json_is_array(json_object_get(schema, "outputs"))) {
        snprintf(why, why_size, "the schema is not an object with inputs and outputs: %s",
                 schema == NULL ? jerr.text : "wrong layout");
        json_decref(schema);
        return -1;
    }
    docs_facts with_format = *facts;
    if (any_complex(schema)) with_format.format = "json+base64";
    size_t len = 0;
    FILE *f = open_memstream(page, &len);
    int rc = f != NULL ? write_page(f, schema, &with_format, why, why_size) : -1;
    if (f == NULL) snprintf(why, why_size, "out of memory");
    if (f != NULL && fclose(f) != 0 && rc == 0) {
        snprintf(why, why_size, "out of memory");
        rc = -1;
    }
    if (rc != 0) {
        free(*page);
        *page = NULL;
    }
    json_decref(schema);
    return rc;
}
