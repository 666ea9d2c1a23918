/* SPDX-License-Identifier: MIT */
/*
 * `tessera serve`'s GET /docs: the page `tessera docs` writes for the
 * served component, as text/html; HEAD like GET, other methods 405, the
 * bearer token required like the API it describes, the route listed in
 * /openapi.json. And the page as a real browser shows it: headless
 * Chromium (Debian's chromium) loads /docs from the server, its DOM names
 * every field of the schema with its kind, dtype, shape, default and
 * description, and its screenshot is kept in the build's test-output/.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>

#include "cli_run.h"
#include "net_util.h"
#include "temp_dir.h"
#include "test_util.h"

#define KINDS TEST_PLUGIN("kinds")
#define DOCUMENTED TSR_SOURCE_DIR "/tests/pycomponents/documented"
#define OUTPUT_DIR TSR_BINARY_DIR "/test-output"
#define BROWSER_LIMIT_S 120

TestSuite(serve_docs, .fini = stop_servers, .timeout = 300);

typedef struct answer {
    int status;
    char head[4096];
    char *body;   /* malloc'd, NUL-terminated */
    size_t body_len;
} answer;

/* One request (the server closes after it); the whole answer read. */
static answer request(int port, const char *method, const char *path, const char *extra) {
    answer a = {0};
    int fd = connect_port(port);
    cr_assert(fd >= 0, "cannot connect to port %d", port);
    char *req = NULL;
    int n = asprintf(&req, "%s %s HTTP/1.1\r\nHost: test\r\n%sConnection: close\r\n\r\n", method,
                     path, extra ? extra : "");
    cr_assert(n > 0);
    cr_assert_eq(write(fd, req, (size_t)n), n);
    free(req);
    size_t cap = 1 << 16, used = 0;
    char *raw = malloc(cap);
    cr_assert_not_null(raw);
    ssize_t got;
    while ((got = read(fd, raw + used, cap - used - 1)) > 0) {
        used += (size_t)got;
        if (cap - used < 2) {
            raw = realloc(raw, cap *= 2);
            cr_assert_not_null(raw);
        }
    }
    close(fd);
    raw[used] = '\0';
    cr_assert_eq(sscanf(raw, "HTTP/1.1 %d", &a.status), 1, "no status line: %.200s", raw);
    char *end = strstr(raw, "\r\n\r\n");
    cr_assert_not_null(end, "no end of headers: %.200s", raw);
    size_t head_len = (size_t)(end - raw);
    cr_assert_lt(head_len, sizeof a.head);
    memcpy(a.head, raw, head_len);
    a.head[head_len] = '\0';
    a.body_len = used - head_len - 4;
    a.body = strdup(end + 4);
    cr_assert_not_null(a.body);
    free(raw);
    return a;
}

static void answer_free(answer *a) { free(a->body); }

/* The value of a header of the answer ("" when absent; static buffer). */
static const char *header(const answer *a, const char *name) {
    static char value[256];
    value[0] = '\0';
    size_t n = strlen(name);
    for (const char *p = strstr(a->head, "\r\n"); p; p = strstr(p + 2, "\r\n"))
        if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':') {
            const char *v = p + 3 + n;
            while (*v == ' ') v++;
            size_t len = strcspn(v, "\r");
            snprintf(value, sizeof value, "%.*s", (int)len, v);
            break;
        }
    return value;
}

static test_server *serve(const char *component, const char *token_file) {
    if (token_file)
        return serve_ok(&(server_spec){
            .args = (const char *const[]){"serve", "--port", "{port}", "--token-file", token_file,
                                          component, NULL}});
    return serve_ok(&(server_spec){
        .args = (const char *const[]){"serve", "--port", "{port}", component, NULL}});
}

/* GET /docs is byte for byte the page of `tessera docs` for the same
 * component, as HTML in UTF-8; HEAD gives its headers without the body. */
Test(serve_docs, get_answers_the_page_tessera_docs_writes) {
    test_server *s = serve(KINDS, NULL);
    answer a = request(s->port, "GET", "/docs", NULL);
    cr_assert_eq(a.status, 200, "%s", a.head);
    cr_assert_str_eq(header(&a, "Content-Type"), "text/html; charset=utf-8");
    cli_run docs = run_cli(NULL, "docs", KINDS);
    assert_ok(&docs);
    cr_assert_str_eq(a.body, docs.out, "GET /docs differs from `tessera docs`");
    run_free(&docs);

    answer h = request(s->port, "HEAD", "/docs", NULL);
    cr_assert_eq(h.status, 200);
    cr_assert_str_eq(header(&h, "Content-Type"), "text/html; charset=utf-8");
    char len[32];
    snprintf(len, sizeof len, "%zu", a.body_len);
    cr_assert_str_eq(header(&h, "Content-Length"), len);
    cr_assert_eq(h.body_len, 0, "HEAD has no body");
    answer_free(&a);
    answer_free(&h);
}

/* Other methods are refused as on /health and /openapi.json: 405 with
 * Allow: GET, HEAD; a path below /docs is not the page. */
Test(serve_docs, other_methods_and_paths_are_refused) {
    test_server *s = serve(KINDS, NULL);
    const char *methods[] = {"POST", "PUT", "DELETE"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        answer a = request(s->port, methods[i], "/docs", "Content-Length: 0\r\n");
        cr_assert_eq(a.status, 405, "%s /docs: %s", methods[i], a.head);
        cr_assert_str_eq(header(&a, "Allow"), "GET, HEAD");
        answer_free(&a);
    }
    const char *paths[] = {"/docs/", "/docs/x", "/doc", "/DOCS"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        answer a = request(s->port, "GET", paths[i], NULL);
        cr_assert_eq(a.status, 404, "GET %s: %s", paths[i], a.head);
        answer_free(&a);
    }
}

/* With --token-file the page is behind the token, as the API it
 * describes is (only /health is open). */
Test(serve_docs, the_page_needs_the_token_when_the_server_has_one) {
    char dir[256], token_file[300];
    make_temp_dir(dir, sizeof dir, "serve-docs");
    snprintf(token_file, sizeof token_file, "%s/token", dir);
    write_file(token_file, "s3cret\n");
    test_server *s = serve(KINDS, token_file);
    answer none = request(s->port, "GET", "/docs", NULL);
    cr_assert_eq(none.status, 401, "%s", none.head);
    answer wrong = request(s->port, "GET", "/docs", "Authorization: Bearer nope\r\n");
    cr_assert_eq(wrong.status, 401, "%s", wrong.head);
    answer ok = request(s->port, "GET", "/docs", "Authorization: Bearer s3cret\r\n");
    cr_assert_eq(ok.status, 200, "%s", ok.head);
    cr_assert_not_null(strstr(ok.body, "<h1>"), "the page itself");
    answer_free(&none);
    answer_free(&wrong);
    answer_free(&ok);
    remove_tree(dir);
}

/* /openapi.json lists /docs (beside /health) as a GET answering HTML. */
Test(serve_docs, openapi_lists_the_docs_route) {
    test_server *s = serve(KINDS, NULL);
    answer a = request(s->port, "GET", "/openapi.json", NULL);
    cr_assert_eq(a.status, 200);
    json_t *doc = json_loads(a.body, 0, NULL);
    cr_assert_not_null(doc);
    json_t *get = json_object_get(json_object_get(json_object_get(doc, "paths"), "/docs"), "get");
    cr_assert_not_null(get, "no GET /docs in %s", a.body);
    json_t *content = json_object_get(json_object_get(json_object_get(get, "responses"), "200"),
                                      "content");
    cr_assert_not_null(json_object_get(content, "text/html"), "its answer is HTML");
    json_decref(doc);
    answer_free(&a);
}

/* ---- in a browser --------------------------------------------------------------- */

/* Runs argv with stdout into out_path (NULL: /dev/null), killed past
 * BROWSER_LIMIT_S; its exit status, or -1 when it did not exit by itself. */
static int run_program(const char *const *argv, const char *out_path, const char *err_path) {
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        int out = open_output(out_path, O_WRONLY | O_CREAT | O_TRUNC);
        int err = open_output(err_path, O_WRONLY | O_CREAT | O_TRUNC);
        int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (out < 0 || err < 0 || in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0)
            _exit(127);
        execv(argv[0], (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    time_t deadline = time(NULL) + BROWSER_LIMIT_S;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (time(NULL) >= deadline) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    }
    kill(-pid, SIGKILL); /* helpers the browser may leave in its group */
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Whether the tag at p (its '<') separates words: a cell, row, paragraph
 * or line break; inline ones (code, var, span) do not. */
static int breaks_words(const char *p) {
    static const char *const tags[] = {"td", "th", "tr", "p", "br", "div", "li", "dd", "dt"};
    p += 1 + (p[1] == '/');
    for (size_t k = 0; k < sizeof tags / sizeof tags[0]; k++) {
        size_t n = strlen(tags[k]);
        if (strncmp(p, tags[k], n) == 0 && (p[n] == '>' || p[n] == ' ' || p[n] == '/'))
            return 1;
    }
    return 0;
}

/* The visible text of html (tags dropped, block ones as a space, runs of
 * space one space, a few entities decoded); malloc'd. */
static char *text_of(const char *html) {
    char *out = malloc(strlen(html) + 2);
    cr_assert_not_null(out);
    size_t n = 0;
    int tag = 0;
    for (const char *p = html; *p; p++) {
        if (*p == '<') {
            tag = 1;
            if (!breaks_words(p)) continue;
        } else if (*p == '>' && tag) {
            tag = 0;
            continue;
        } else if (tag) {
            continue;
        }
        char c = tag ? ' ' : *p;
        if (!tag && c == '&') {
            static const struct { const char *ent, *ch; } ents[] = {
                {"&quot;", "\""}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&#39;", "'"}};
            int done = 0;
            for (size_t k = 0; k < sizeof ents / sizeof ents[0] && !done; k++)
                if (strncmp(p, ents[k].ent, strlen(ents[k].ent)) == 0) {
                    out[n++] = ents[k].ch[0];
                    p += strlen(ents[k].ent) - 1;
                    done = 1;
                }
            if (done) continue;
        }
        if (c == '\n' || c == '\t' || c == '\r') c = ' ';
        if (c == ' ' && n > 0 && out[n - 1] == ' ') continue;
        out[n++] = c;
    }
    out[n] = '\0';
    return out;
}

/* The text of the table row whose name cell holds exactly <code>name</code>,
 * in the section with id `section` of the DOM; malloc'd, NULL if none. */
static char *row_text(const char *dom, const char *section, const char *name) {
    char id[64], cell[300];
    snprintf(id, sizeof id, "<section id=\"%s\">", section);
    const char *start = strstr(dom, id);
    cr_assert_not_null(start, "no section %s in the DOM", section);
    const char *end = strstr(start, "</section>");
    snprintf(cell, sizeof cell, "<code>%s</code></td>", name);
    const char *at = strstr(start, cell);
    if (at == NULL || (end != NULL && at > end)) return NULL;
    const char *row = at;
    while (row > start && strncmp(row, "<tr", 3) != 0) row--;
    const char *row_end = strstr(at, "</tr>");
    cr_assert_not_null(row_end);
    char *html = strndup(row, (size_t)(row_end - row));
    cr_assert_not_null(html);
    char *text = text_of(html);
    free(html);
    return text;
}

static void assert_row_has(const char *row, const char *what, const char *field, const char *want) {
    cr_assert_not_null(strstr(row, want), "field '%s': its row lacks its %s '%s': %s", field, what,
                       want, row);
}

/* A field's shape as the page writes it: (3,), (*,), (n, 2), (), (...). */
static void shape_text(const json_t *shape, char *out, size_t n) {
    if (!json_is_array(shape)) {
        snprintf(out, n, "(...)");
        return;
    }
    size_t used = (size_t)snprintf(out, n, "(");
    size_t i;
    json_t *d;
    json_array_foreach(shape, i, d) {
        char dim[64];
        if (json_is_integer(d)) snprintf(dim, sizeof dim, "%lld", (long long)json_integer_value(d));
        else if (json_is_string(d)) snprintf(dim, sizeof dim, "%s", json_string_value(d));
        else snprintf(dim, sizeof dim, "*");
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "", dim);
    }
    snprintf(out + used, n - used, json_array_size(shape) == 1 ? ",)" : ")");
}

/* Every field of the component's schema (from `tessera schema`) is in the
 * DOM the browser built: its row names its kind, an array's dtype and
 * shape, an input's default (or that it is required) and its
 * description. */
static void check_fields(const char *dom, const char *component) {
    cli_run sr = run_cli(NULL, "schema", component);
    assert_ok(&sr);
    json_t *schema = json_loads(sr.out, 0, NULL);
    cr_assert_not_null(schema);
    const char *lists[] = {"inputs", "outputs"};
    int checked = 0;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(schema, lists[l]), i, f) {
            const char *name = json_string_value(json_object_get(f, "name"));
            char *row = row_text(dom, lists[l], name);
            cr_assert_not_null(row, "%s: no row for %s '%s' in the DOM", component, lists[l],
                               name);
            const char *kind = json_string_value(json_object_get(f, "kind"));
            const char *label = strcmp(kind, "json") == 0 ? "JSON" : kind;
            char want[512];
            snprintf(want, sizeof want, " %s %s ", name, label);
            assert_row_has(row, "kind", name, want);
            if (strcmp(kind, "array") == 0) {
                char shape[128];
                shape_text(json_object_get(f, "shape"), shape, sizeof shape);
                snprintf(want, sizeof want, " %s %s ",
                         json_string_value(json_object_get(f, "dtype")), shape);
                assert_row_has(row, "dtype and shape", name, want);
            }
            if (l == 0) {
                json_t *def = json_object_get(f, "default");
                if (json_is_true(json_object_get(f, "required"))) {
                    assert_row_has(row, "required mark", name, " required ");
                } else if (def != NULL) {
                    char *text = json_dumps(def, JSON_ENCODE_ANY);
                    snprintf(want, sizeof want, " optional default %s ", text);
                    free(text);
                    assert_row_has(row, "default", name, want);
                } else {
                    assert_row_has(row, "optional mark", name, " optional no default ");
                }
            }
            const char *doc = json_string_value(json_object_get(f, "doc"));
            if (doc != NULL) assert_row_has(row, "description", name, doc);
            free(row);
            checked++;
        }
    }
    cr_assert_gt(checked, 0);
    json_decref(schema);
    run_free(&sr);
}

static int is_png(const char *path, off_t *size) {
    unsigned char sig[8] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(sig, 1, sizeof sig, f);
    fclose(f);
    struct stat st;
    *size = stat(path, &st) == 0 ? st.st_size : 0;
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    return n == sizeof sig && memcmp(sig, png, sizeof png) == 0;
}

/* The page of `name` served, loaded in headless Chromium: the DOM (after
 * the browser parsed it) has every field; the screenshot is a PNG in
 * <build>/test-output/docs-<name>.png. */
static void browse(const char *component, const char *name) {
    char chromium[4096];
    if (find_program("chromium", chromium, sizeof chromium) != 0)
        cr_skip_test("chromium is not installed (apt-get install chromium; scripts/setup.sh "
                     "installs it): /docs was not checked in a browser");
    if (mkdir(OUTPUT_DIR, 0755) != 0 && errno != EEXIST)
        cr_assert_fail("cannot make %s: %s", OUTPUT_DIR, strerror(errno));
    char profile[256], dom_path[300], log_path[300], png[512], shot[600], data_dir[300];
    make_temp_dir(profile, sizeof profile, "serve-docs-browser");
    snprintf(dom_path, sizeof dom_path, "%s/dom.html", profile);
    snprintf(log_path, sizeof log_path, "%s/chromium.log", profile);
    snprintf(data_dir, sizeof data_dir, "--user-data-dir=%s/profile", profile);
    snprintf(png, sizeof png, "%s/docs-%s.png", OUTPUT_DIR, name);
    snprintf(shot, sizeof shot, "--screenshot=%s", png);
    unlink(png);
    test_server *s = serve(component, NULL);
    char url[128];
    snprintf(url, sizeof url, "%s/docs", s->url);

    const char *dump[] = {chromium, "--headless", "--no-sandbox", "--disable-gpu", data_dir,
                          "--dump-dom", url, NULL};
    int rc = run_program(dump, dom_path, log_path);
    cr_assert_eq(rc, 0, "chromium --dump-dom %s: status %d: %s", url, rc, file_tail(log_path));
    char *dom = cli_slurp(dom_path);
    cr_assert_not_null(strstr(dom, "<table class=\"fields\">"), "not the docs page: %.300s", dom);
    check_fields(dom, component);
    free(dom);

    const char *screenshot[] = {chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                data_dir, "--hide-scrollbars", "--window-size=1200,1600", shot,
                                url, NULL};
    rc = run_program(screenshot, NULL, log_path);
    cr_assert_eq(rc, 0, "chromium --screenshot %s: status %d: %s", url, rc, file_tail(log_path));
    off_t size = 0;
    cr_assert(is_png(png, &size), "%s is not a PNG: %s", png, file_tail(log_path));
    cr_assert_gt(size, 1000, "%s: %lld bytes", png, (long long)size);
    fprintf(stderr, "serve_docs: the page of %s as Chromium shows it: %s\n", name, png);
    remove_tree(profile);
}

Test(serve_docs, a_browser_shows_every_field_of_a_plugin_with_kind_shape_and_default) {
    browse(KINDS, "kinds");
}

Test(serve_docs, a_browser_shows_every_field_of_a_python_component_with_its_description) {
#if TSR_HAVE_PYTHON_COMPONENTS
    browse(DOCUMENTED, "documented");
#else
    cr_skip_test("this build has no Python components");
#endif
}
