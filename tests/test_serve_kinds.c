/* SPDX-License-Identifier: MIT */
/*
 * TEXT and JSON fields through `tessera serve` (the real HTTP server, in
 * process and in worker mode): a TEXT value is a JSON string, a JSON value
 * its subtree with arrays inside in the format the Accept header asks
 * for; the refusals are 422s in Tesseract's form: a value outside the
 * choices (literal_error), a number for a TEXT field (string_type), an
 * endpoint's own refusal (its type and path). And the same bad requests
 * answered as tesseract-core's server answers them, for a Python
 * component with a Literal, a str and a bounded int.
 */
#define _GNU_SOURCE
#include <jansson.h>

#include "net_util.h"
#include "test_util.h"

#define KINDS_JSON TEST_PLUGIN("kinds_json")
#define OPTIONS_API TSR_SOURCE_DIR "/tests/pycomponents/options/tesseract_api.py"
#define X_JSON                                                                           \
    "{\"object_type\":\"array\",\"shape\":[3],\"dtype\":\"float64\",\"data\":{\"buffer\":" \
    "[1.0,2.0,3.0],\"encoding\":\"json\"}}"

TestSuite(serve_kinds, .fini = stop_servers, .timeout = 120);

typedef struct answer {
    int status;
    json_t *body;   /* NULL when it is not JSON */
    char raw[16384];
} answer;

/* POST body to path on the port (one request, then the server closes). */
static answer post(int port, const char *path, const char *accept, const char *body) {
    answer a = {0};
    int fd = connect_port(port);
    cr_assert(fd >= 0, "cannot connect to port %d", port);
    char *head = NULL;
    int n = asprintf(&head,
                     "POST %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                     "Accept: %s\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s",
                     path, accept, strlen(body), body);
    cr_assert(n > 0);
    cr_assert_eq(write(fd, head, (size_t)n), n);
    free(head);
    size_t used = 0;
    ssize_t got;
    while (used < sizeof a.raw - 1 && (got = read(fd, a.raw + used, sizeof a.raw - 1 - used)) > 0)
        used += (size_t)got;
    close(fd);
    a.raw[used] = '\0';
    cr_assert_eq(sscanf(a.raw, "HTTP/1.1 %d", &a.status), 1, "no status line: %s", a.raw);
    const char *start = strstr(a.raw, "\r\n\r\n");
    if (start != NULL) a.body = json_loads(start + 4, 0, NULL);
    return a;
}

static test_server *serve_mode(const char *mode, const char *component) {
    return serve_ok(&(server_spec){
        .args = (const char *const[]){"serve", "--port", "{port}", "--mode", mode, component,
                                      NULL}});
}

static void assert_json_is(json_t *got, const char *want_text, const char *what) {
    json_t *want = json_loads(want_text, JSON_DECODE_ANY, NULL);
    cr_assert_not_null(want, "bad expectation %s", want_text);
    char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
    cr_assert(json_equal(got, want), "%s: got %s, want %s", what, g ? g : "(none)",
              want_text);
    free(g);
    json_decref(want);
}

static const char *const modes[] = {"inproc", "worker"};

/* A TEXT value and a JSON value with an array inside go in; the text,
 * the JSON value and the array come back, the array in the encoding the
 * Accept header names. */
Test(serve_kinds, text_and_json_bodies_in_each_mode_and_format) {
    const char *request = "{\"inputs\":{\"x\":" X_JSON ",\"method\":\"twice\",\"opts\":{\"n\":2,"
                          "\"w\":{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":[1.5],\"encoding\":\"json\"}}}}}";
    for (size_t m = 0; m < 2; m++) {
        test_server *s = serve_mode(modes[m], KINDS_JSON);
        answer a = post(s->port, "/apply", "application/json", request);
        cr_assert_eq(a.status, 200, "%s: %s", modes[m], a.raw);
        assert_json_is(json_object_get(a.body, "tag"), "\"twice\"", modes[m]);
        assert_json_is(json_object_get(a.body, "echo"),
                       "{\"n\":2,\"w\":{\"object_type\":\"array\",\"shape\":[1],\"dtype\":"
                       "\"float64\",\"data\":{\"buffer\":[1.5],\"encoding\":\"json\"}}}",
                       modes[m]);
        json_decref(a.body);
        a = post(s->port, "/apply", "application/json+base64", request);
        cr_assert_eq(a.status, 200, "%s: %s", modes[m], a.raw);
        json_t *w = json_object_get(json_object_get(a.body, "echo"), "w");
        assert_json_is(json_object_get(json_object_get(w, "data"), "encoding"), "\"base64\"",
                       modes[m]);
        assert_json_is(json_object_get(json_object_get(w, "data"), "buffer"),
                       "\"AAAAAAAA+D8=\"", modes[m]);
        json_decref(a.body);
        serve_stop_ok(s);
    }
}

/* The refusals, each a 422 with Tesseract's body, in each mode. */
Test(serve_kinds, refusals_are_422_with_their_type_and_loc) {
    static const struct {
        const char *opts_and_method, *body;
    } cases[] = {
        {"\"method\":\"thrice\",\"opts\":1",
         "{\"detail\":[{\"type\":\"literal_error\",\"loc\":[\"body\",\"inputs\",\"method\"],"
         "\"msg\":\"Input should be 'plain' or 'twice'\",\"input\":\"thrice\",\"ctx\":{"
         "\"expected\":\"'plain' or 'twice'\"}}]}"},
        {"\"method\":7,\"opts\":1",
         "{\"detail\":[{\"type\":\"string_type\",\"loc\":[\"body\",\"inputs\",\"method\"],"
         "\"msg\":\"Input should be a valid string\",\"input\":7}]}"},
        {"\"opts\":{\"steps\":-3}",
         "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":[\"body\",\"inputs\",\"opts\","
         "\"steps\"],\"msg\":\"Input should be greater than or equal to 0\",\"input\":-3}]}"},
    };
    for (size_t m = 0; m < 2; m++) {
        test_server *s = serve_mode(modes[m], KINDS_JSON);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            char *request = NULL;
            cr_assert(asprintf(&request, "{\"inputs\":{\"x\":" X_JSON ",%s}}",
                               cases[k].opts_and_method) > 0);
            answer a = post(s->port, "/apply", "application/json", request);
            cr_assert_eq(a.status, 422, "%s, case %zu: %s", modes[m], k, a.raw);
            assert_json_is(a.body, cases[k].body, modes[m]);
            json_decref(a.body);
            free(request);
        }
        serve_stop_ok(s);
    }
}

/* The same bad requests to tesseract-runtime and to tessera serving the
 * same Python component: detail's type, loc, msg and input agree (and
 * ctx where Tessera writes one). */
Test(serve_kinds, refusals_match_tesseract_runtime, .timeout = 240) {
    char runtime[4096];
    if (find_program("tesseract-runtime", runtime, sizeof runtime) != 0)
        cr_skip_test("tesseract-runtime is not on PATH");
    test_server *ref = serve_ok(&(server_spec){
        .program = runtime,
        .args = (const char *const[]){"serve", "--host", "127.0.0.1", "--port", "{port}", NULL},
        .env = (const char *const[]){"TESSERACT_API_PATH", OPTIONS_API, NULL}});
    test_server *ours = serve_mode("inproc", OPTIONS_API);
    static const char *const bad[] = {
        "{\"inputs\":{\"x\":[1.0,2.0],\"method\":\"cube\"}}",
        "{\"inputs\":{\"x\":[1.0,2.0],\"name\":5}}",
        "{\"inputs\":{\"x\":[1.0,2.0],\"name\":[\"a\"]}}",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        answer want = post(ref->port, "/apply", "application/json", bad[k]);
        answer got = post(ours->port, "/apply", "application/json", bad[k]);
        cr_assert_eq(want.status, 422, "tesseract-runtime: %s", want.raw);
        cr_assert_eq(got.status, 422, "tessera: %s", got.raw);
        json_t *w = json_array_get(json_object_get(want.body, "detail"), 0);
        json_t *g = json_array_get(json_object_get(got.body, "detail"), 0);
        const char *keys[] = {"type", "loc", "msg", "input", "ctx"};
        for (size_t j = 0; j < 5; j++)
            cr_assert(json_equal(json_object_get(w, keys[j]), json_object_get(g, keys[j])) ||
                          (json_object_get(w, keys[j]) == NULL &&
                           json_object_get(g, keys[j]) == NULL),
                      "%s differs for %s:\n tesseract-runtime %s\n tessera           %s", keys[j],
                      bad[k], want.raw, got.raw);
        json_decref(want.body);
        json_decref(got.body);
    }
    const char *count = "{\"inputs\":{\"x\":[1.0,2.0],\"count\":-1}}";
    answer want = post(ref->port, "/apply", "application/json", count);
    answer got = post(ours->port, "/apply", "application/json", count);
    cr_assert_eq(got.status, 422, "tessera: %s", got.raw);
    json_t *w = json_array_get(json_object_get(want.body, "detail"), 0);
    json_t *g = json_array_get(json_object_get(got.body, "detail"), 0);
    cr_assert(json_equal(json_object_get(w, "type"), json_object_get(g, "type")), "%s vs %s",
              want.raw, got.raw);
    cr_assert(json_equal(json_object_get(w, "loc"), json_object_get(g, "loc")), "%s vs %s",
              want.raw, got.raw);
    /* and pydantic's msg, worded as tesseract-core's (its ctx does not cross) */
    cr_assert(json_equal(json_object_get(w, "msg"), json_object_get(g, "msg")), "%s vs %s",
              want.raw, got.raw);
    json_decref(want.body);
    json_decref(got.body);
    serve_stop_ok(ours);
    serve_stop_ok(ref);
}
