/* SPDX-License-Identifier: MIT */
/*
 * `tessera docs`: the page of the contract plugin names every field with
 * its dtype and shape, nested fields under their parent, the symbolic dims
 * they share, how each endpoint is served; its example request runs as
 * printed; text from the schema is escaped; nothing is fetched from
 * outside; -o writes the whole page or nothing; every failure exits with
 * its status and message. tests/python/test_cli_docs.py parses the pages.
 */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <tessera/tessera.h>

#include "cli_run.h"
#include "dir_entries.h"
#include "temp_dir.h"

#define CONTRACT TEST_PLUGIN("contract")
#define HEAT BUNDLED_PLUGIN("heat")
#define ECHO_DTYPES TEST_PLUGIN("echo_dtypes") /* no symbolic dim, only apply */

static char dir[256];

static void make_dir(void) {
    make_temp_dir(dir, sizeof dir, "tessera-docs");
}

static void remove_dir(void) {
    remove_tree(dir);
}

TestSuite(cli_docs, .init = make_dir, .fini = remove_dir);

/* A manifest of the fixture library whose description and doc hold
 * markup, with derivatives served by central differences; written into
 * dir beside a link to the library. Returns its path (static). */
static const char *markup_manifest(void) {
    static char path[512];
    char lib[512];
    snprintf(lib, sizeof lib, "%s/libmanifest_fixture.so", dir);
    cr_assert_eq(symlink(TSR_TEST_MANIFEST_DIR "/libmanifest_fixture.so", lib), 0);
    snprintf(path, sizeof path, "%s/markup.json", dir);
    write_file(path,
               "{\"tessera_manifest\": 1, \"name\": \"markup\",\n"
               " \"description\": \"Sums <script>alert(\\\"x\\\")</script> & more.\\n\\n"
               "A second paragraph.\\n\\n    s = x[0] + x[1]\\n    t = 2\",\n"
               " \"library\": \"libmanifest_fixture.so\", \"convention\": \"c\",\n"
               " \"inputs\": [{\"name\": \"x\", \"dtype\": \"float64\", \"shape\": [\"n\"],\n"
               "   \"differentiable\": true, \"doc\": \"values, a < b & c\"}],\n"
               " \"outputs\": [{\"name\": \"s\", \"dtype\": \"float64\", \"shape\": [],\n"
               "   \"differentiable\": true}],\n"
               " \"fd\": {\"method\": \"central\"},\n"
               " \"endpoints\": {\"apply\": {\"symbol\": \"fx_sum\", \"returns\": {\"out\": \"s\"},\n"
               "   \"args\": [{\"dim\": \"x\"}, {\"in\": \"x\", \"readonly\": true}]}}}\n");
    return path;
}

/* The element <TAG id="id">...</TAG> of html (malloc'd), or NULL. */
static char *element(const char *html, const char *tag, const char *id) {
    char open[128], close[64];
    snprintf(open, sizeof open, "<%s id=\"%s\">", tag, id);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *from = strstr(html, open);
    const char *to = from != NULL ? strstr(from, close) : NULL;
    return to != NULL ? strndup(from, (size_t)(to - from) + strlen(close)) : NULL;
}

/* What a reader sees of html: tags of table cells, rows, paragraphs and
 * line breaks become one space, others vanish; entities decoded; runs of
 * white space made one space. malloc'd. */
static char *visible_text(const char *html) {
    static const char *const spacing[] = {"td", "th", "tr", "p", "br", "h1", "h2", "h3",
                                          "dt", "dd", "div", "li", "pre", NULL};
    static const char *const entities[][2] = {{"&lt;", "<"},   {"&gt;", ">"},  {"&quot;", "\""},
                                              {"&#39;", "'"},  {"&nbsp;", " "}, {"&amp;", "&"}};
    char *out = malloc(strlen(html) + 1);
    cr_assert_not_null(out);
    size_t n = 0;
    for (const char *s = html; *s != '\0';) {
        if (*s == '<') {
            const char *name = s + 1 + (s[1] == '/');
            size_t len = strcspn(name, " >/");
            const char *end = strchr(s, '>');
            cr_assert_not_null(end, "an unclosed tag in %s", s);
            for (size_t k = 0; spacing[k] != NULL; k++)
                if (strlen(spacing[k]) == len && strncmp(name, spacing[k], len) == 0) out[n++] = ' ';
            s = end + 1;
            continue;
        }
        bool decoded = false;
        for (size_t k = 0; k < sizeof entities / sizeof entities[0] && *s == '&'; k++) {
            size_t len = strlen(entities[k][0]);
            if (strncmp(s, entities[k][0], len) == 0) {
                out[n++] = entities[k][1][0];
                s += len;
                decoded = true;
                break;
            }
        }
        if (decoded) continue;
        out[n++] = *s == '\n' || *s == '\t' ? ' ' : *s;
        s++;
    }
    out[n] = '\0';
    /* one space for each run */
    size_t w = 0;
    for (size_t r = 0; r < n; r++)
        if (out[r] != ' ' || (w > 0 && out[w - 1] != ' ')) out[w++] = out[r];
    out[w] = '\0';
    return out;
}

/* The visible text of section `id` of the page. */
static char *section_text(const char *html, const char *id) {
    char *section = element(html, "section", id);
    cr_assert_not_null(section, "no section '%s' in the page", id);
    char *text = visible_text(section);
    free(section);
    return text;
}

static cli_run docs_ok(const char *component) {
    cli_run r = run_cli(NULL, "docs", component);
    assert_ok(&r);
    return r;
}

Test(cli_docs, contract_page_names_every_field_with_dtype_and_shape) {
    cli_run r = docs_ok(CONTRACT);
    char *inputs = section_text(r.out, "inputs");
    assert_contains(inputs, "mesh object: the fields below nest in it mesh.nodes array float64 (n, 2) "
                            "required yes mesh.cells array int32 (m, 3) required no flags");
    assert_contains(inputs, " flags array bool (*,) required no ");
    assert_contains(inputs, " scale array float32 () required yes ");
    assert_contains(inputs, " z array complex128 (k,) required yes");
    char *outputs = section_text(r.out, "outputs");
    assert_contains(outputs, "moved object: the fields below nest in it moved.nodes array float64 (n, 2) yes");
    assert_contains(outputs, " cells array int32 (m, 3) no ");
    assert_contains(outputs, " flags array bool (*,) no ");
    assert_contains(outputs, " total array float64 () yes ");
    assert_contains(outputs, " z array complex128 (k,) yes ");
    assert_contains(outputs, " ragged array float64 (r,) no");
    cr_assert_null(strstr(outputs, "required"), "outputs have no required column: %s", outputs);
    free(inputs);
    free(outputs);
    run_free(&r);
}

Test(cli_docs, shared_symbols_name_the_fields_and_axes) {
    cli_run r = docs_ok(CONTRACT);
    char *dims = section_text(r.out, "dims");
    assert_contains(dims, " n mesh.nodes axis 0 moved.nodes axis 0 ");
    assert_contains(dims, " m mesh.cells axis 0 cells axis 0 ");
    assert_contains(dims, " k z axis 0 z axis 0 ");
    assert_contains(dims, " r none: the component sets its size ragged axis 0 ");
    free(dims);
    run_free(&r);
}

Test(cli_docs, a_component_without_symbols_has_no_dims_section) {
    cli_run r = docs_ok(ECHO_DTYPES);
    cr_assert_null(strstr(r.out, "id=\"dims\""), "echo_dtypes has no symbolic dim");
    cr_assert_null(strstr(r.out, "href=\"#dims\""), "nor a link to their section");
    run_free(&r);
}

Test(cli_docs, endpoints_list_the_differentiable_fields) {
    cli_run r = docs_ok(CONTRACT);
    char *endpoints = section_text(r.out, "endpoints");
    assert_contains(endpoints, "jvp implemented ");
    assert_contains(endpoints, "jac_inputs a list of differentiable inputs: mesh.nodes, scale, z ");
    assert_contains(endpoints, "jac_outputs a list of differentiable outputs: moved.nodes, total, z ");
    assert_contains(endpoints, "vjp_inputs a list of differentiable inputs: mesh.nodes, scale, z ");
    /* complex results have no json form: the command lines ask for base64 */
    assert_contains(endpoints, "tessera vjp -f json+base64 " CONTRACT " @vjp.json");
    free(endpoints);
    run_free(&r);
}

Test(cli_docs, endpoints_say_how_they_are_served) {
    cli_run r = docs_ok(markup_manifest());
    char *endpoints = section_text(r.out, "endpoints");
    assert_contains(endpoints, "apply implemented ");
    assert_contains(endpoints, "jvp central differences of apply ");
    assert_contains(endpoints, "vjp central differences of apply ");
    assert_contains(endpoints, "jacobian central differences of apply ");
    assert_contains(endpoints, "abstract_eval derived from the declared shapes ");
    free(endpoints);
    run_free(&r);
    cli_run apply_only = docs_ok(ECHO_DTYPES);
    endpoints = section_text(apply_only.out, "endpoints");
    assert_contains(endpoints, "jvp not available ");
    cr_assert_null(strstr(endpoints, "@jvp.json"), "no command for a missing endpoint: %s", endpoints);
    free(endpoints);
    run_free(&apply_only);
}

/* The example's request body, decoded from its <pre>. */
static json_t *example_body(const char *html) {
    const char *open = "<pre class=\"json\">";
    const char *from = strstr(html, open);
    cr_assert_not_null(from, "no example body");
    from += strlen(open);
    char *escaped = strndup(from, (size_t)(strstr(from, "</pre>") - from));
    char *text = visible_text(escaped);
    json_error_t jerr;
    json_t *body = json_loads(text, 0, &jerr);
    cr_assert_not_null(body, "the example is not JSON: %s: %s", jerr.text, text);
    free(escaped);
    free(text);
    return body;
}

static void assert_encoded(json_t *body, const char *path, const char *dtype, const char *shape,
                           const char *encoding) {
    json_t *a = json_object_get(body, "inputs");
    char *copy = strdup(path), *save = NULL;
    for (char *part = strtok_r(copy, ".", &save); part != NULL; part = strtok_r(NULL, ".", &save))
        a = json_object_get(a, part);
    free(copy);
    cr_assert_not_null(a, "the example lacks inputs.%s", path);
    cr_assert_str_eq(json_string_value(json_object_get(a, "object_type")), "array", "%s", path);
    cr_assert_str_eq(json_string_value(json_object_get(a, "dtype")), dtype, "%s", path);
    char *got = json_dumps(json_object_get(a, "shape"), JSON_COMPACT);
    cr_assert_str_eq(got, shape, "%s", path);
    free(got);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(a, "data"), "encoding")),
                     encoding, "%s", path);
}

Test(cli_docs, example_nests_fields_and_sizes_symbols) {
    cli_run r = docs_ok(CONTRACT);
    json_t *body = example_body(r.out);
    assert_encoded(body, "mesh.nodes", "float64", "[2,2]", "json");
    assert_encoded(body, "mesh.cells", "int32", "[3,3]", "json");
    assert_encoded(body, "flags", "bool", "[2]", "json");
    assert_encoded(body, "scale", "float32", "[]", "json");
    assert_encoded(body, "z", "complex128", "[4]", "base64");
    cr_assert_null(json_object_get(json_object_get(body, "inputs"), "mesh.nodes"),
                   "nested fields nest, as on Tesseract's wire");
    char *example = section_text(r.out, "example");
    assert_contains(example, "n = 2, m = 3, k = 4.");
    free(example);
    json_decref(body);
    run_free(&r);
}

/* tests/plugins/defaults.c: x required, s = 2.0, w = [1, 2, 3], bias
 * optional without a default. */
Test(cli_docs, defaults_and_optional_inputs) {
    if (access(TEST_PLUGIN("defaults"), F_OK) != 0) cr_skip_test("no defaults plugin in this build");
    cli_run r = docs_ok(TEST_PLUGIN("defaults"));
    char *inputs = section_text(r.out, "inputs");
    assert_contains(inputs, " x array float64 (n,) required yes required ");
    assert_contains(inputs, " s array float64 () optional default 2.0 yes scale ");
    assert_contains(inputs, " w array float64 (3,) optional default [1.0, 2.0, 3.0] no weights ");
    assert_contains(inputs, " bias array float64 (n,) optional no default yes added when given ");
    char *example = section_text(r.out, "example");
    assert_contains(example, "Optional inputs are left out (those with a default take it): s, w, bias.");
    json_t *body = example_body(r.out);
    cr_assert_eq(json_object_size(json_object_get(body, "inputs")), 1, "only x is required");
    assert_encoded(body, "x", "float64", "[2]", "json");
    free(inputs);
    free(example);
    json_decref(body);
    run_free(&r);
}

/* The example is a request the component takes, sent as the page says. */
Test(cli_docs, example_runs_as_printed) {
    const char *components[] = {CONTRACT, HEAT, ECHO_DTYPES, TEST_PLUGIN("echo_complex"),
                                TEST_PLUGIN("defaults")};
    for (size_t k = 0; k < 5; k++) {
        if (access(components[k], F_OK) != 0) continue; /* defaults: not in every build */
        cli_run r = docs_ok(components[k]);
        json_t *body = example_body(r.out);
        char path[512];
        snprintf(path, sizeof path, "%s/apply.json", dir);
        cr_assert_eq(json_dump_file(body, path, 0), 0);
        bool complex = k == 0 || k == 3;
        char at[520];
        snprintf(at, sizeof at, "@%s", path);
        cli_run call = complex ? run_cli(NULL, "apply", "-f", "json+base64", components[k], at)
                               : run_cli(NULL, "apply", components[k], at);
        assert_ok(&call);
        run_free(&call);
        json_decref(body);
        run_free(&r);
    }
}

Test(cli_docs, text_from_the_schema_is_escaped_and_keeps_paragraphs) {
    cli_run r = docs_ok(markup_manifest());
    cr_assert_null(strstr(r.out, "<script"), "markup of the description reached the page");
    assert_contains(r.out, "<p>Sums &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more.</p>");
    assert_contains(r.out, "<p>A second paragraph.</p>");
    /* an indented block keeps its lines */
    assert_contains(r.out, "<pre class=\"doc\">s = x[0] + x[1]\nt = 2</pre>");
    assert_contains(r.out, "<p>values, a &lt; b &amp; c</p>");
    run_free(&r);
}

/* Nothing the page shows comes from anywhere else. */
Test(cli_docs, pages_fetch_nothing) {
    const char *components[] = {CONTRACT, HEAT, markup_manifest()};
    static const char *const outside[] = {"http://", "https://", "src=", "url(", "@import",
                                          "<script", "<link", "<img", "<iframe"};
    for (size_t k = 0; k < 3; k++) {
        cli_run r = docs_ok(components[k]);
        for (size_t o = 0; o < sizeof outside / sizeof outside[0]; o++)
            cr_assert_null(strstr(r.out, outside[o]), "the page of %s holds '%s'", components[k],
                           outside[o]);
        assert_contains(r.out, "default-src 'none'");
        /* links only within the page */
        for (const char *h = strstr(r.out, "href="); h != NULL; h = strstr(h + 1, "href="))
            cr_assert_eq(strncmp(h, "href=\"#", 7), 0, "a link out of the page: %.40s", h);
        run_free(&r);
    }
}

Test(cli_docs, output_file_holds_the_page) {
    cli_run to_stdout = docs_ok(CONTRACT);
    char path[512];
    snprintf(path, sizeof path, "%s/contract.html", dir);
    cli_run r = run_cli(NULL, "docs", CONTRACT, "-o", path);
    assert_ok(&r);
    cr_assert_str_eq(r.out, "", "-o leaves stdout empty");
    char *page = cli_slurp(path);
    cr_assert_str_eq(page, to_stdout.out);
    cr_assert_eq(dir_entries(dir, ""), 1, "the temporary file is gone");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    cr_assert_eq(st.st_mode & 0777, 0666 & ~mask, "mode %o", (unsigned)(st.st_mode & 0777));
    free(page);
    run_free(&r);
    run_free(&to_stdout);
}

Test(cli_docs, output_through_a_symlink_replaces_the_file_it_names) {
    char target[512], link[512];
    snprintf(target, sizeof target, "%s/page.html", dir);
    snprintf(link, sizeof link, "%s/link.html", dir);
    write_file(target, "old");
    cr_assert_eq(symlink(target, link), 0);
    cli_run r = run_cli(NULL, "docs", CONTRACT, "-o", link);
    assert_ok(&r);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link stays a link");
    char *page = cli_slurp(target);
    assert_contains(page, "<title>contract 1.0");
    free(page);
    run_free(&r);
}

Test(cli_docs, missing_plugin_gives_the_loaders_message) {
    const char *missing = "/nonexistent/missing_plugin.so";
    tsr_component *c = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_neq(tsr_open(missing, NULL, &c, &err), 0);
    char out[512];
    snprintf(out, sizeof out, "%s/page.html", dir);
    write_file(out, "old");
    cli_run r = run_cli(NULL, "docs", missing, "-o", out);
    assert_fails(&r, EXIT_LOAD, err.message);
    char *kept = cli_slurp(out);
    cr_assert_str_eq(kept, "old", "a failed run leaves -o as it was");
    cr_assert_eq(dir_entries(dir, ""), 1);
    free(kept);
    run_free(&r);
}

Test(cli_docs, bad_mode_is_a_usage_error) {
    cli_run r = run_cli(NULL, "docs", "--mode", "bogus", CONTRACT);
    assert_fails(&r, EXIT_USAGE, "unknown mode 'bogus'");
    run_free(&r);
}

Test(cli_docs, bad_option_is_a_usage_error) {
    cli_run r = run_cli(NULL, "docs", "--option", "workers=0", "--mode", "worker", CONTRACT);
    assert_fails(&r, EXIT_USAGE, "--option workers=0");
    run_free(&r);
}

Test(cli_docs, usage_errors) {
    struct {
        const char *args[4];
        const char *message;
    } cases[] = {
        {{"docs", NULL}, "missing PLUGIN"},
        {{"docs", CONTRACT, HEAT, NULL}, "too many arguments"},
        {{"docs", "--openapi", CONTRACT, NULL}, "'--openapi'"},
        {{"docs", "-f", "json", NULL}, "unknown option '-f'"},
        {{"docs", "-o", NULL}, "needs a value"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cli_run r = run_cli_v(NULL, cases[k].args);
        assert_fails(&r, EXIT_USAGE, cases[k].message);
        assert_contains(r.err, "tessera docs");
        run_free(&r);
    }
}

Test(cli_docs, unwritable_output_names_the_path_and_cause) {
    char out[512];
    snprintf(out, sizeof out, "%s/no_such_folder/page.html", dir);
    cli_run r = run_cli(NULL, "docs", CONTRACT, "-o", out);
    assert_fails(&r, EXIT_OUTPUT, out);
    assert_contains(r.err, strerror(ENOENT));
    run_free(&r);
}

/* A file size limit far below the page: the write fails part way. */
static void limit_file_size(void) {
    struct rlimit small = {.rlim_cur = 512, .rlim_max = 512};
    signal(SIGXFSZ, SIG_IGN); /* kept across exec: write fails with EFBIG */
    if (setrlimit(RLIMIT_FSIZE, &small) != 0) _exit(126);
}

Test(cli_docs, failed_write_leaves_nothing_half_written) {
#ifdef TSR_COVERAGE
    cr_skip_test("the limit would cut short the coverage files the command writes as it exits");
#endif
    char out[512];
    snprintf(out, sizeof out, "%s/page.html", dir);
    write_file(out, "old");
    cli_run r = run_cli_with(NULL, limit_file_size, (const char *const[]){"docs", CONTRACT, "-o", out, NULL});
    assert_fails(&r, EXIT_OUTPUT, out);
    assert_contains(r.err, strerror(EFBIG));
    char *kept = cli_slurp(out);
    cr_assert_str_eq(kept, "old", "the old file is left whole");
    cr_assert_eq(dir_entries(dir, ""), 1, "and no temporary file beside it");
    free(kept);
    run_free(&r);
}

Test(cli_docs, help_describes_the_command) {
    cli_run r = run_cli(NULL, "docs", "--help");
    assert_ok(&r);
    assert_contains(r.out, "Usage: tessera docs [OPTIONS] PLUGIN");
    assert_contains(r.out, "Exit status");
    run_free(&r);
    cli_run main_help = run_cli(NULL, "--help");
    assert_contains(main_help.out, "  docs PLUGIN ");
    run_free(&main_help);
}

/* Every field shows its kind; TEXT and JSON fields no dtype or shape, a
 * TEXT field its choices; an array of any rank shows (...); the example
 * gives TEXT its default or first choice and JSON null, and it runs. */
Test(cli_docs, text_json_and_any_rank_fields) {
    cli_run r = docs_ok(TEST_PLUGIN("kinds"));
    char *inputs = section_text(r.out, "inputs");
    assert_contains(inputs, " mode text a string — optional default \"single\" no how to scale "
                            "one of single, double or café ");
    assert_contains(inputs, " config JSON a JSON value — optional no default no ");
    assert_contains(inputs, " a array float64 (...) required yes");
    char *outputs = section_text(r.out, "outputs");
    assert_contains(outputs, " label text a string — no ");
    assert_contains(outputs, " total array float64 (...) yes");
    free(inputs);
    free(outputs);
    run_free(&r);
    r = docs_ok(TEST_PLUGIN("kinds_json"));
    json_t *body = example_body(r.out);
    json_t *in = json_object_get(body, "inputs");
    cr_assert(json_is_null(json_object_get(in, "opts")), "opts: JSON null in the example");
    cr_assert_null(json_object_get(in, "method"), "method has a default: left out");
    char path[512], at[520];
    snprintf(path, sizeof path, "%s/apply.json", dir);
    cr_assert_eq(json_dump_file(body, path, 0), 0);
    snprintf(at, sizeof at, "@%s", path);
    cli_run call = run_cli(NULL, "apply", TEST_PLUGIN("kinds_json"), at);
    assert_ok(&call);
    assert_contains(call.out, "\"tag\":\"plain\"");
    run_free(&call);
    json_decref(body);
    run_free(&r);
}
