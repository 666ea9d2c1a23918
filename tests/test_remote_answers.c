/* SPDX-License-Identifier: MIT */
/*
 * Remote components against answers no Tesseract gives: a small HTTP
 * server in the test's own thread serves a hand-written /openapi.json and
 * canned answers to /apply, and keeps what it was sent. It checks the
 * documents the schema reader refuses (and why), the request the library
 * sends (Tesseract's body, base64 arrays, headers, a bearer token), each
 * kind of answer that is not a success or not what the call expects, an
 * answer over max_payload_bytes, a server that never answers (timeout,
 * cancel), and that URLs keep their path and query and lose their
 * password in messages. The backend against a real `tesseract-runtime
 * serve` is test_remote.c.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "test_util.h"

/* ---- the canned server ---------------------------------------------------- */

typedef struct canned {
    int fd, port;
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t lock;            /* guards the members below */
    const char *openapi;             /* GET .../openapi.json */
    int status;                      /* POST .../apply; 0: never answer */
    const char *body;
    int flood;                       /* POST .../apply: one of the floods below, or 0 */
    char request[16384];             /* the last POST, head and body */
    atomic_ullong sent;              /* body bytes of the last answer that were sent */
} canned;

/* Answers over any limit: a head that declares 1 GiB, then a few bytes
 * and a connection held open, or then as many bytes as the client takes;
 * and a chunked answer that never ends (cut at 512 MiB). */
enum { DECLARES_1G_SENDS_LITTLE = 1, DECLARES_1G_SENDS_ALL, CHUNKED_WITHOUT_END };

static int wait_readable(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, ms) == 1;
}

/* One request: its head and body in buf (NUL-terminated). */
static size_t read_request(int fd, char *buf, size_t cap) {
    size_t len = 0, want = 0;
    while (len + 1 < cap && wait_readable(fd, 2000)) {
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r <= 0) break;
        len += (size_t)r;
        buf[len] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (!end) continue;
        if (!want) {
            char *cl = strcasestr(buf, "content-length:");
            want = (size_t)(end + 4 - buf) + (cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0);
        }
        if (len >= want) break;
    }
    buf[len] = '\0';
    return len;
}

/* All of len bytes, or fewer when the client left (no SIGPIPE); counted
 * in *sent. 0 when all went. */
static int send_all(int fd, const char *p, size_t len, atomic_ullong *sent) {
    while (len) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        if (sent) atomic_fetch_add(sent, (unsigned long long)w);
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static void answer(canned *s, int fd, int status, const char *body) {
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d Canned\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     status, strlen(body));
    if (send_all(fd, head, (size_t)n, NULL) == 0) send_all(fd, body, strlen(body), &s->sent);
}

static void hold_open(canned *s, int fd) {
    char c; /* until the client leaves */
    while (!atomic_load(&s->stop))
        if (wait_readable(fd, 50) && read(fd, &c, 1) <= 0) break;
}

static void flood(canned *s, int fd, int how) {
    static char block[65536];
    memset(block, ' ', sizeof block);
    const char *head = how == CHUNKED_WITHOUT_END
                           ? "HTTP/1.1 200 Canned\r\nContent-Type: application/json\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n"
                           : "HTTP/1.1 200 Canned\r\nContent-Type: application/json\r\n"
                             "Content-Length: 1073741824\r\n\r\n";
    if (send_all(fd, head, strlen(head), NULL) != 0) return;
    if (how == DECLARES_1G_SENDS_LITTLE) {
        if (send_all(fd, "{\"y\": ", 6, &s->sent) == 0) hold_open(s, fd);
        return;
    }
    for (int k = 0; k < 8192 && !atomic_load(&s->stop); k++) {   /* 512 MiB at most */
        if (how == CHUNKED_WITHOUT_END && send_all(fd, "10000\r\n", 7, NULL) != 0) return;
        if (send_all(fd, block, sizeof block, &s->sent) != 0) return;
        if (how == CHUNKED_WITHOUT_END && send_all(fd, "\r\n", 2, NULL) != 0) return;
    }
}

static void serve_one(canned *s, int fd) {
    char buf[16384];
    read_request(fd, buf, sizeof buf);
    char *line_end = strstr(buf, "\r\n"), *query;
    if (line_end) *line_end = '\0';
    char path[512] = "";
    sscanf(buf, "%*s %511s", path);
    if ((query = strchr(path, '?'))) *query = '\0';
    if (line_end) *line_end = '\r';
    size_t plen = strlen(path);
    int is_openapi = plen >= 13 && strcmp(path + plen - 13, "/openapi.json") == 0;
    pthread_mutex_lock(&s->lock);
    if (!is_openapi) snprintf(s->request, sizeof s->request, "%s", buf);
    const char *body = is_openapi ? s->openapi : s->body;
    int status = is_openapi ? 200 : s->status;
    int how = is_openapi ? 0 : s->flood;
    pthread_mutex_unlock(&s->lock);
    atomic_store(&s->sent, 0);
    if (how) flood(s, fd, how);
    else if (status) answer(s, fd, status, body);
    else hold_open(s, fd); /* unanswered */
}

static void *serve(void *arg) {
    canned *s = arg;
    while (!atomic_load(&s->stop)) {
        if (!wait_readable(s->fd, 50)) continue;
        int fd = accept(s->fd, NULL, NULL);
        if (fd < 0) continue;
        serve_one(s, fd);
        close(fd);
    }
    return NULL;
}

static void canned_start(canned *s, const char *openapi) {
    memset(s, 0, sizeof *s);
    s->openapi = openapi;
    s->status = 200;
    s->body = "{\"y\": [1, 2, 3]}";
    pthread_mutex_init(&s->lock, NULL);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(s->fd >= 0);
    cr_assert_eq(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(s->fd, 16), 0);
    cr_assert_eq(getsockname(s->fd, (struct sockaddr *)&a, &len), 0);
    s->port = ntohs(a.sin_port);
    cr_assert_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

/* What the next answers are. */
static void canned_set(canned *s, const char *openapi, int status, const char *body) {
    pthread_mutex_lock(&s->lock);
    if (openapi) s->openapi = openapi;
    s->status = status;
    if (body) s->body = body;
    s->flood = 0;
    pthread_mutex_unlock(&s->lock);
}

static void canned_flood(canned *s, int how) {
    pthread_mutex_lock(&s->lock);
    s->flood = how;
    pthread_mutex_unlock(&s->lock);
}

static void canned_stop(canned *s) {
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    close(s->fd);
    pthread_mutex_destroy(&s->lock);
}

static const char *canned_url(const canned *s, const char *rest) {
    static char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s->port, rest);
    return url;
}

static const char *last_request(canned *s) {
    static char copy[sizeof s->request];
    pthread_mutex_lock(&s->lock);
    memcpy(copy, s->request, sizeof copy);
    pthread_mutex_unlock(&s->lock);
    return copy;
}

/* ---- documents -------------------------------------------------------------- */

/* An encoded array of three float64, as tesseract-core describes one but
 * without its title (the dtype then comes from "const"). */
#define ARRAY3                                                                              \
    "{\"properties\": {\"object_type\": {\"const\": \"array\"}, \"shape\": {\"type\": "     \
    "\"array\", \"minItems\": 1, \"maxItems\": 1, \"prefixItems\": [{\"const\": 3}]}, "     \
    "\"dtype\": {\"const\": \"float64\"}}}"

/* A document with these input and output properties, extra schemas and
 * paths. */
static const char *doc_with(const char *inputs, const char *outputs, const char *extra,
                            const char *paths) {
    static char buf[20000];
    snprintf(buf, sizeof buf,
             "{\"openapi\": \"3.1.0\", \"info\": {\"title\": \"canned\", \"version\": \"1\"}, "
             "\"paths\": {%s}, \"components\": {\"schemas\": {%s%s"
             "\"Apply_InputSchema\": {\"properties\": {%s}}, "
             "\"Apply_OutputSchema\": {\"properties\": {%s}}}}}",
             paths, extra, extra[0] ? ", " : "", inputs, outputs);
    return buf;
}

static const char *doc(const char *inputs) {
    return doc_with(inputs, "\"y\": " ARRAY3, "", "\"/apply\": {\"post\": {}}");
}

/* A TEXT or JSON input bound to its text. */
static void text_ok(tsr_call *call, const char *name, const char *text) {
    int rc = tsr_call_set_text(call, name, text);
    cr_assert_eq(rc, 0, "binding %s failed: %d %s", name, rc, tsr_call_errmsg(call));
}

static tsr_options *options(const char *key, const char *value) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    if (key) cr_assert_eq(tsr_options_set(o, key, value, NULL), 0);
    return o;
}

/* apply with x = (1, 2, 3); returns the run's status. */
static int run_apply(tsr_call *call) {
    static double x[3] = {1, 2, 3};
    bind_ok(call, "x", f64_vec(x, 3));
    return tsr_call_run(call);
}

/* ---- the schema ----------------------------------------------------------------- */

Test(remote_answers, a_minimal_document_is_a_schema) {
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    tsr_component *c = open_ok(canned_url(&s, ""), NULL);
    cr_assert_str_eq(tsr_component_name(c), "canned");
    cr_assert_str_eq(tsr_component_version(c), "1");
    const tsr_field *x = tsr_component_input(c, 0), *y = tsr_component_output(c, 0);
    cr_assert_str_eq(x->name, "x");
    cr_assert_eq(x->dtype, TSR_FLOAT64);
    cr_assert_eq(x->rank, 1);
    cr_assert_eq(x->dims[0].size, 3);
    cr_assert_eq(x->flags, 0u);
    cr_assert_str_eq(y->name, "y");
    cr_assert(tsr_component_has_endpoint(c, TSR_EP_APPLY));
    for (int e = TSR_EP_JVP; e <= TSR_EP_JACOBIAN; e++)
        cr_assert_not(tsr_component_has_endpoint(c, (tsr_endpoint)e));
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(run_apply(call), 0, "%s", tsr_call_errmsg(call));
    const double *got = tsr_call_output(call, "y")->data;
    for (int i = 0; i < 3; i++) cr_assert_eq(got[i], i + 1.0);
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
}

/* Each document the reader refuses, with its code and the words that say why. */
Test(remote_answers, documents_that_are_not_a_schema_are_refused_with_the_reason) {
    static const struct {
        const char *inputs, *extra, *paths;
        int code;
        const char *why;
    } cases[] = {
        {"\"name\": {\"type\": \"file\"}", "", NULL, TSR_E_DESCRIPTOR,
         "input 'name' is of type 'file', which no JSON value has"},
        {"\"m\": {\"type\": 7}", "", NULL, TSR_E_DESCRIPTOR,
         "input 'm' is of type '(not a string)'"},
        {"\"t\": {\"type\": \"string\", \"enum\": [\"a\", 1]}", "", NULL,
         TSR_E_DESCRIPTOR, "input 't': value 1 of its \"enum\" is not a string"},
        {"\"x\": {\"title\": \"EncodedArrayModel__3__None__noflags\", \"properties\": "
         "{\"object_type\": {\"const\": \"array\"}, \"shape\": {\"minItems\": 1, \"maxItems\": "
         "1}, \"dtype\": {\"examples\": [\"float64\"]}}}",
         "", NULL, TSR_E_DESCRIPTOR, "input 'x' is an array of any dtype"},
        {"\"x\": {\"properties\": {\"object_type\": {\"const\": \"array\"}, \"shape\": "
         "{\"minItems\": 9, \"maxItems\": 9}, \"dtype\": {\"const\": \"float64\"}}}",
         "", NULL, TSR_E_DESCRIPTOR, "input 'x' has rank 9"},
        {"\"x\": {\"$ref\": \"#/components/schemas/Gone\"}", "", NULL, TSR_E_LOAD,
         "input 'x' refers to '#/components/schemas/Gone'"},
        {"\"x\": {\"$ref\": \"#/components/schemas/Loop\"}",
         "\"Loop\": {\"$ref\": \"#/components/schemas/Loop\"}", NULL, TSR_E_LOAD,
         "nest more than"},
        {"\"x\": {\"$ref\": \"#/components/schemas/Node\"}",
         "\"Node\": {\"properties\": {\"next\": {\"$ref\": \"#/components/schemas/Node\"}}}", NULL,
         TSR_E_DESCRIPTOR, "models nest more than"},
        {"\"x\": {\"$ref\": \"#/components/schemas/Twin\"}",
         "\"Twin\": {\"properties\": {\"a\": {\"$ref\": \"#/components/schemas/Twin\"}, "
         "\"b\": {\"$ref\": \"#/components/schemas/Twin\"}}}",
         NULL, TSR_E_DESCRIPTOR, "models nest more than 32 deep"},
        {"\"x\": " ARRAY3 ", \"a.b\": " ARRAY3, "", NULL, TSR_E_DESCRIPTOR,
         "input 'a.b': a name with a dot"},
        {"\"x\": {\"properties\": {\"object_type\": {\"const\": \"array\"}}}", "", NULL,
         TSR_E_DESCRIPTOR, "input 'x': its array model has no \"shape\""},
        {"\"x\": " ARRAY3, "", "\"/health\": {\"get\": {}}", TSR_E_LOAD, "lists no /apply"},
    };
    canned s;
    canned_start(&s, "");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        canned_set(&s, doc_with(cases[k].inputs, "\"y\": " ARRAY3, cases[k].extra,
                                cases[k].paths ? cases[k].paths : "\"/apply\": {\"post\": {}}"),
                   200, NULL);
        tsr_error err = open_fails(canned_url(&s, ""), NULL);
        assert_code(err.code, cases[k].code, err.message);
        assert_contains(err.message, cases[k].why);
        assert_contains(err.message, canned_url(&s, "/openapi.json"));
    }
    const char *not_documents[] = {"this is not JSON", "[1, 2]", "{\"paths\": {}}"};
    for (size_t k = 0; k < 3; k++) {
        canned_set(&s, not_documents[k], 200, NULL);
        tsr_error err = open_fails(canned_url(&s, ""), NULL);
        assert_code(err.code, TSR_E_LOAD, err.message);
        assert_contains(err.message, "/openapi.json");
    }
    canned_stop(&s);
}

/* Models L0 .. L<levels-1> each with two properties of the next model, and
 * leaf as the last: 2^levels leaves from a short document. */
static const char *doubling(int levels, const char *leaf) {
    static char extra[8192];
    size_t used = 0;
    for (int k = 0; k < levels; k++)
        used += (size_t)snprintf(extra + used, sizeof extra - used,
                                 "\"L%d\": {\"properties\": {\"a\": {\"$ref\": "
                                 "\"#/components/schemas/L%d\"}, \"b\": {\"$ref\": "
                                 "\"#/components/schemas/L%d\"}}}, ",
                                 k, k + 1, k + 1);
    snprintf(extra + used, sizeof extra - used, "\"L%d\": %s", levels, leaf);
    return doc_with("\"x\": {\"$ref\": \"#/components/schemas/L0\"}", "\"y\": " ARRAY3, extra,
                    "\"/apply\": {\"post\": {}}");
}

Test(remote_answers, a_document_that_doubles_at_each_level_is_refused_early) {
    canned s;
    canned_start(&s, doubling(14, ARRAY3)); /* 16384 fields */
    tsr_error err = open_fails(canned_url(&s, ""), NULL);
    assert_code(err.code, TSR_E_DESCRIPTOR, err.message);
    assert_contains(err.message, "more than 8192 fields");
    canned_set(&s, doubling(17, "{\"properties\": {}}"), 200, NULL); /* no field, 2^18 visits */
    err = open_fails(canned_url(&s, ""), NULL);
    assert_code(err.code, TSR_E_DESCRIPTOR, err.message);
    assert_contains(err.message, "more than 65536 properties");
    canned_stop(&s);
}

/* ---- the request ----------------------------------------------------------------- */

Test(remote_answers, the_request_is_tesseracts_body_with_base64_arrays) {
    canned s;
    canned_start(&s, doc_with("\"p\": {\"$ref\": \"#/components/schemas/P\"}, "
                              "\"k\": {\"type\": \"integer\", \"default\": 5}, "
                              "\"f\": {\"anyOf\": [{\"type\": \"boolean\"}, {\"type\": \"null\"}]}",
                              "\"y\": " ARRAY3,
                              "\"P\": {\"properties\": {\"v\": " ARRAY3 ", \"w\": " ARRAY3 "}}",
                              "\"/apply\": {\"post\": {}}, \"/abstract_eval\": {\"post\": {}}"));
    tsr_component *c = open_ok(canned_url(&s, ""), NULL);
    cr_assert_eq(tsr_component_n_inputs(c), 4);
    cr_assert_str_eq(tsr_component_input(c, 0)->name, "p.v");
    cr_assert_str_eq(tsr_component_input(c, 1)->name, "p.w");
    cr_assert_eq(tsr_component_input(c, 2)->kind, TSR_KIND_JSON);
    cr_assert_eq(tsr_component_input(c, 3)->kind, TSR_KIND_JSON);
    double v[3] = {1, 2, 3}, w[3] = {0};
    char k[] = "7", f[] = "true";
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "p.v", f64_vec(v, 3));
    bind_ok(call, "p.w", f64_vec(w, 3));
    text_ok(call, "k", k);
    text_ok(call, "f", f);
    run_ok(call);
    const char *req = last_request(&s);
    assert_contains(req, "POST /apply HTTP/1.1");
    assert_contains(req, "Content-Type: application/json");
    assert_contains(req, "Accept: application/json+base64");
    assert_contains(req, "User-Agent: tessera/");
    /* v = (1, 2, 3) as little-endian float64, in base64. */
    assert_contains(req, "{\"inputs\":{\"p\":{\"v\":{\"object_type\":\"array\",\"shape\":[3],"
                         "\"dtype\":\"float64\",\"data\":{\"buffer\":"
                         "\"AAAAAAAA8D8AAAAAAAAAQAAAAAAAAAhA\",\"encoding\":\"base64\"}},\"w\":");
    assert_contains(req, "},\"k\":7,\"f\":true}}");
    cr_assert_null(strstr(req, "checksum"), "Tesseract refuses unknown keys: %s", req);
    tsr_call_free(call);

    /* abstract_eval: shapes and dtypes of arrays, plain fields as given;
     * f has no default, so it cannot be left out. */
    canned_set(&s, NULL, 200, "{\"y\": {\"shape\": [3], \"dtype\": \"float64\"}}");
    call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    bind_ok(call, "p.v", f64_vec(NULL, 3));
    bind_ok(call, "p.w", f64_vec(NULL, 3));
    text_ok(call, "k", k);
    text_ok(call, "f", f);
    run_ok(call);
    assert_contains(last_request(&s), "\"w\":{\"shape\":[3],\"dtype\":\"float64\"}},"
                                      "\"k\":7,\"f\":true}}");
    cr_assert_eq(tsr_call_set_input(call, "f", NULL), 0);
    const char *msg = run_fails(call, TSR_E_MISSING);
    assert_contains(msg, "'f'");
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
}

Test(remote_answers, abstract_eval_sends_shapes_and_the_defaults_of_plain_fields) {
    canned s;
    canned_start(&s, doc_with("\"x\": " ARRAY3 ", \"k\": {\"type\": \"integer\", \"default\": 5}",
                              "\"y\": " ARRAY3, "",
                              "\"/apply\": {\"post\": {}}, \"/abstract_eval\": {\"post\": {}}"));
    canned_set(&s, NULL, 200, "{\"y\": {\"shape\": [3], \"dtype\": \"float64\"}}");
    tsr_component *c = open_ok(canned_url(&s, ""), NULL);
    tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    bind_ok(call, "x", f64_vec(NULL, 3)); /* k left out: its default is sent */
    run_ok(call);
    const tsr_array *y = tsr_call_output(call, "y");
    cr_assert_eq(y->rank, 1);
    cr_assert_eq(y->shape[0], 3);
    cr_assert_null(y->data);
    assert_contains(last_request(&s),
                    "{\"inputs\":{\"x\":{\"shape\":[3],\"dtype\":\"float64\"},\"k\":5}}");
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
}

Test(remote_answers, a_url_keeps_its_path_and_query_and_hides_its_password) {
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    tsr_component *c = open_ok(canned_url(&s, "/behind/a/proxy/?run_id=7"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(run_apply(call), 0);
    assert_contains(last_request(&s), "POST /behind/a/proxy/apply?run_id=7 HTTP/1.1");
    tsr_call_free(call);
    tsr_close(c);

    char url[128];
    snprintf(url, sizeof url, "http://someone:hunter2@127.0.0.1:%d/", s.port);
    canned_set(&s, "not JSON", 200, NULL);
    tsr_error err = open_fails(url, NULL);
    cr_assert_null(strstr(err.message, "hunter2"), "the password shows: %s", err.message);
    assert_contains(err.message, "someone@127.0.0.1");
    canned_stop(&s);
}

Test(remote_answers, a_bearer_token_comes_from_token_file) {
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    char path[256];
    temp_path(path, sizeof path);
    write_file(path, "s3cret-token\n");
    tsr_options *o = options(NULL, NULL);
    cr_assert_eq(tsr_options_set_config(o, "token_file", path), 0);
    tsr_component *c = open_ok(canned_url(&s, ""), o);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(run_apply(call), 0);
    assert_contains(last_request(&s), "\r\nAuthorization: Bearer s3cret-token\r\n");
    tsr_call_free(call);
    tsr_close(c);

    write_file(path, "two words\n");
    tsr_error err = open_fails(canned_url(&s, ""), o);
    assert_code(err.code, TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "token_file");
    cr_assert_null(strstr(err.message, "words"), "the token shows: %s", err.message);
    unlink(path);
    err = open_fails(canned_url(&s, ""), o);
    assert_code(err.code, TSR_E_IO, err.message);
    assert_contains(err.message, path);
    tsr_options_free(o);
    canned_stop(&s);
}

/* ---- answers --------------------------------------------------------------------- */

/* 48 zero bytes (three complex128) in base64. */
#define ZEROS_48 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

/* Each answer that is not a success, or not what the call expects: its
 * code and the words of the message; the component serves the next call. */
Test(remote_answers, each_bad_answer_is_the_closest_error) {
    static const struct {
        int status;
        const char *body;
        int code;
        const char *why;
    } cases[] = {
        {200, "this is not JSON", TSR_E_PLUGIN_RESULT, "the answer is not JSON"},
        {200, "[1, 2, 3]", TSR_E_PLUGIN_RESULT, "the answer is not a JSON object: [1, 2, 3]"},
        {200, "{}", TSR_E_PLUGIN_RESULT, "the answer's output 'y' is missing"},
        {200, "{\"y\": \"text\"}", TSR_E_PLUGIN_RESULT, "field 'y'"},
        {200, "{\"y\": [1, 2, 3, 4]}", TSR_E_PLUGIN_RESULT, "has shape (4,), not (3,)"},
        {200, "{\"y\": [1.5, 2, 1e400]}", TSR_E_PLUGIN_RESULT, "the answer is not JSON"},
        {200,
         "{\"y\": {\"object_type\": \"array\", \"shape\": [3], \"dtype\": \"float64\", \"data\": "
         "{\"buffer\": \"/etc/passwd:0\", \"encoding\": \"binref\"}}}",
         TSR_E_PLUGIN_RESULT, "binref"},
        {200,
         "{\"y\": {\"object_type\": \"array\", \"shape\": [3], \"dtype\": \"complex128\", \"data\": "
         "{\"buffer\": \"" ZEROS_48 "\", \"encoding\": \"base64\"}}}",
         TSR_E_PLUGIN_RESULT, "complex128"},
        {500, "Internal Server Error", TSR_E_PLUGIN, "HTTP 500: Internal Server Error"},
        {503, "", TSR_E_PLUGIN, "HTTP 503: (no body)"},
        {401, "{\"detail\": \"Unauthorized\"}", TSR_E_PLUGIN, "token_file"},
        {404, "{\"detail\": \"Not Found\"}", TSR_E_UNSUPPORTED, "HTTP 404"},
        {413, "too large", TSR_E_LIMIT, "HTTP 413"},
        {302, "", TSR_E_PLUGIN_RESULT, "HTTP 302"},
        {422,
         "{\"detail\": [{\"type\": \"missing\", \"loc\": [\"body\", \"inputs\", \"x\"], "
         "\"msg\": \"Field required\"}]}",
         TSR_E_MISSING, "HTTP 422: inputs.x: Field required"},
        {422,
         "{\"detail\": [{\"type\": \"literal_error\", \"loc\": [\"body\", \"inputs\", \"x\", "
         "\"shape\", 0], \"msg\": \"Input should be 3\"}]}",
         TSR_E_SHAPE, "inputs.x.shape[0]: Input should be 3"},
        {422,
         "{\"detail\": [{\"type\": \"literal_error\", \"loc\": [\"body\", \"inputs\", \"x\", "
         "\"dtype\"], \"msg\": \"Input should be 'float64'\"}]}",
         TSR_E_DTYPE, "inputs.x.dtype"},
        {422,
         "{\"detail\": [{\"type\": \"extra_forbidden\", \"loc\": [\"body\", \"inputs\", \"z\"], "
         "\"msg\": \"Extra inputs are not permitted\"}, {\"type\": \"value_error\", \"loc\": "
         "[\"body\"], \"msg\": \"second\"}]}",
         TSR_E_UNKNOWN_FIELD, "inputs.z: Extra inputs are not permitted; the request: second"},
        {422, "{\"detail\": \"plain words\"}", TSR_E_PAYLOAD, "HTTP 422: plain words"},
    };
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    tsr_component *c = open_ok(canned_url(&s, ""), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        canned_set(&s, NULL, cases[k].status, cases[k].body);
        const char *msg = expect_failure(call, run_apply(call), cases[k].code);
        assert_contains(msg, cases[k].why);
        assert_contains(msg, canned_url(&s, "/apply"));
        canned_set(&s, NULL, 200, "{\"y\": [4, 5, 6]}");
        cr_assert_eq(run_apply(call), 0, "after case %zu: %s", k, tsr_call_errmsg(call));
        cr_assert_eq(((const double *)tsr_call_output(call, "y")->data)[2], 6.0);
    }
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
}

Test(remote_answers, a_long_body_is_cut_in_the_message) {
    static char body[4000];
    memset(body, 'x', sizeof body - 1);
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    canned_set(&s, NULL, 500, body);
    tsr_component *c = open_ok(canned_url(&s, ""), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    const char *msg = expect_failure(call, run_apply(call), TSR_E_PLUGIN);
    assert_contains(msg, "xxx...");
    cr_assert_lt(strlen(msg), 600u);
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
}

Test(remote_answers, an_answer_over_max_payload_bytes_is_refused) {
    static char body[2000];
    snprintf(body, sizeof body, "{\"y\": [1, 2, 3], \"pad\": \"%01500d\"}", 0);
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    canned_set(&s, NULL, 200, body);
    tsr_options *o = options("max_payload_bytes", "1K");
    tsr_component *c = open_ok(canned_url(&s, ""), o);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    const char *msg = expect_failure(call, run_apply(call), TSR_E_LIMIT);
    assert_contains(msg, "max_payload_bytes");
    tsr_call_free(call);
    tsr_close(c);
    tsr_options_free(o);
    o = options("max_payload_bytes", "100");
    tsr_error err = open_fails(canned_url(&s, ""), o); /* the document itself is larger */
    assert_code(err.code, TSR_E_LIMIT, err.message);
    tsr_options_free(o);
    canned_stop(&s);
}

/* More than the socket buffers of a loopback connection hold: what a
 * refused answer's server got out before the client left is less. */
#define FAR_BELOW_THE_FLOOD (64ull << 20)

Test(remote_answers, an_answer_that_declares_more_than_max_payload_bytes_is_refused_from_its_head) {
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    /* A long timeout: an answer waited for to the end would be a timeout, not a limit. */
    tsr_options *o = options("max_payload_bytes", "256M");
    cr_assert_eq(tsr_options_set(o, "timeout_ms", "20000", NULL), 0);
    tsr_component *c = open_ok(canned_url(&s, ""), o);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    const int floods[] = {DECLARES_1G_SENDS_LITTLE, DECLARES_1G_SENDS_ALL};
    for (int k = 0; k < 2; k++) {
        canned_flood(&s, floods[k]);
        const char *msg = expect_failure(call, run_apply(call), TSR_E_LIMIT);
        assert_contains(msg, canned_url(&s, "/apply"));
        assert_contains(msg, "the answer declares 1073741824 bytes (Content-Length), more than "
                             "max_payload_bytes (268435456 bytes)");
        assert_contains(msg, "raise the option max_payload_bytes");
        cr_assert_lt(atomic_load(&s.sent), FAR_BELOW_THE_FLOOD, "flood %d: %llu bytes sent",
                     floods[k], (unsigned long long)atomic_load(&s.sent));
        canned_set(&s, NULL, 200, NULL); /* the next call, to a good answer, works */
        cr_assert_eq(run_apply(call), 0, "after flood %d: %s", floods[k], tsr_call_errmsg(call));
        cr_assert_eq(((const double *)tsr_call_output(call, "y")->data)[2], 3.0);
    }
    tsr_call_free(call);
    tsr_close(c);
    tsr_options_free(o);
    canned_stop(&s);
}

Test(remote_answers, a_chunked_answer_is_cut_off_as_it_grows_past_max_payload_bytes) {
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    tsr_options *o = options("max_payload_bytes", "1M");
    tsr_component *c = open_ok(canned_url(&s, ""), o);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    canned_flood(&s, CHUNKED_WITHOUT_END);
    const char *msg = expect_failure(call, run_apply(call), TSR_E_LIMIT);
    assert_contains(msg, canned_url(&s, "/apply"));
    assert_contains(msg, "the answer is larger than max_payload_bytes (1048576 bytes)");
    assert_contains(msg, "reading stopped after");
    cr_assert_lt(atomic_load(&s.sent), FAR_BELOW_THE_FLOOD, "%llu bytes sent",
                 (unsigned long long)atomic_load(&s.sent));
    canned_set(&s, NULL, 200, NULL);
    cr_assert_eq(run_apply(call), 0, "%s", tsr_call_errmsg(call));
    tsr_call_free(call);
    tsr_close(c);
    tsr_options_free(o);
    canned_stop(&s);
}

/* A document of n inputs, each an encoded array written out in full. */
static char *doc_of_many_fields(int n) {
    static const char field[] = "\"x%d\": " ARRAY3 ", ";
    size_t cap = (size_t)n * (sizeof field + 8) + 1024;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    size_t used = (size_t)snprintf(buf, cap,
                                   "{\"openapi\": \"3.1.0\", \"info\": {\"title\": \"many\"}, "
                                   "\"paths\": {\"/apply\": {\"post\": {}}}, \"components\": "
                                   "{\"schemas\": {\"Apply_InputSchema\": {\"properties\": {");
    for (int k = 0; k < n; k++) used += (size_t)snprintf(buf + used, cap - used, field, k);
    snprintf(buf + used - 2, cap - used + 2,
             "}}, \"Apply_OutputSchema\": {\"properties\": {\"y\": " ARRAY3 "}}}}}");
    return buf;
}

Test(remote_answers, a_document_of_100000_fields_is_refused_before_it_is_read) {
    char *many = doc_of_many_fields(100000);
    cr_assert_gt(strlen(many), 16u << 20);
    canned s;
    canned_start(&s, many);
    tsr_error err = open_fails(canned_url(&s, ""), NULL);
    assert_code(err.code, TSR_E_LIMIT, err.message);
    assert_contains(err.message, canned_url(&s, "/openapi.json"));
    assert_contains(err.message, "(Content-Length), more than the size a served /openapi.json "
                                 "may have (a fixed limit) (16777216 bytes)");
    cr_assert_lt(atomic_load(&s.sent), strlen(many), "all of the document was sent");
    canned_set(&s, doc("\"x\": " ARRAY3), 200, NULL);
    tsr_component *c = open_ok(canned_url(&s, ""), NULL); /* a good server next */
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(run_apply(call), 0, "%s", tsr_call_errmsg(call));
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
    free(many);
}

Test(remote_answers, a_document_of_too_many_values_is_refused_before_it_is_parsed) {
    /* 1.5 million numbers in 3 MB, under the byte cap: counted, not parsed. */
    size_t n = 1500000, cap = 2 * n + 64;
    char *pad = malloc(cap);
    cr_assert_not_null(pad);
    size_t used = (size_t)snprintf(pad, cap, "\"Pad\": {\"enum\": [0");
    for (size_t k = 1; k < n; k++) used += (size_t)snprintf(pad + used, cap - used, ",0");
    snprintf(pad + used, cap - used, "]}");
    static char text[4u << 20];
    snprintf(text, sizeof text,
             "{\"openapi\": \"3.1.0\", \"info\": {\"title\": \"pad\"}, \"paths\": "
             "{\"/apply\": {\"post\": {}}}, \"components\": {\"schemas\": {%s, "
             "\"Apply_InputSchema\": {\"properties\": {\"x\": " ARRAY3 "}}, "
             "\"Apply_OutputSchema\": {\"properties\": {\"y\": " ARRAY3 "}}}}}",
             pad);
    free(pad);
    canned s;
    canned_start(&s, text);
    tsr_error err = open_fails(canned_url(&s, ""), NULL);
    assert_code(err.code, TSR_E_LIMIT, err.message);
    assert_contains(err.message, "holds more than 1048576 JSON values");
    assert_contains(err.message, "refused before parsing it");
    canned_stop(&s);
}

/* ---- a server that never answers --------------------------------------------------- */

static double seconds_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

Test(remote_answers, timeout_ms_ends_a_request_left_unanswered) {
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    canned_set(&s, NULL, 0, NULL);
    tsr_options *o = options("timeout_ms", "300");
    tsr_component *c = open_ok(canned_url(&s, ""), o);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *msg = expect_failure(call, run_apply(call), TSR_E_TIMEOUT);
    cr_assert_lt(seconds_since(&t0), 5.0);
    assert_contains(msg, canned_url(&s, "/apply"));
    assert_contains(msg, "no answer in time");
    tsr_call_free(call);
    tsr_close(c);
    tsr_options_free(o);
    canned_stop(&s);
}

static void *cancel_later(void *call) {
    struct timespec pause = {0, 200 * 1000000L};
    nanosleep(&pause, NULL);
    tsr_call_cancel(call);
    return NULL;
}

Test(remote_answers, a_cancel_ends_a_request_left_unanswered_at_once) {
    canned s;
    canned_start(&s, doc("\"x\": " ARRAY3));
    canned_set(&s, NULL, 0, NULL);
    tsr_component *c = open_ok(canned_url(&s, ""), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    pthread_t t;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(pthread_create(&t, NULL, cancel_later, call), 0);
    const char *msg = expect_failure(call, run_apply(call), TSR_E_CANCELLED);
    double took = seconds_since(&t0);
    pthread_join(t, NULL);
    cr_assert_lt(took, 2.0, "the cancel took %.2f s", took);
    assert_contains(msg, "cancelled");
    canned_set(&s, NULL, 200, NULL);
    cr_assert_eq(run_apply(call), 0, "%s", tsr_call_errmsg(call)); /* a new connection */
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
}

/* ---- TEXT and JSON results a server gets wrong ------------------------------ */

#define TEXT_DOC "\"name\": {\"type\": \"string\"}"

Test(remote_answers, a_text_result_that_is_not_a_string_is_refused) {
    canned s;
    canned_start(&s, doc_with(TEXT_DOC, "\"greeting\": {\"type\": \"string\"}", "",
                              "\"/apply\": {\"post\": {}}"));
    tsr_component *c = open_ok(canned_url(&s, ""), NULL);
    cr_assert_eq(tsr_component_output(c, 0)->kind, TSR_KIND_TEXT);
    char name[] = "Ada";
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    text_ok(call, "name", name);
    canned_set(&s, NULL, 200, "{\"greeting\": [\"Hello\"]}");
    const char *msg = run_fails(call, TSR_E_PLUGIN_RESULT);
    assert_contains(msg, "the answer's output 'greeting' is not a string");
    assert_contains(last_request(&s), "{\"inputs\":{\"name\":\"Ada\"}}");
    canned_set(&s, NULL, 200, "{\"greeting\": \"Hello, Ada \\u2713\"}");
    run_ok(call);
    size_t len;
    cr_assert_str_eq(tsr_call_output_text(call, "greeting", &len), "Hello, Ada \xe2\x9c\x93");
    cr_assert_eq(len, 14);
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
}

Test(remote_answers, a_json_result_over_max_array_bytes_is_refused) {
    canned s;
    canned_start(&s, doc_with(TEXT_DOC, "\"info\": {\"type\": \"object\", "
                              "\"additionalProperties\": {\"type\": \"number\"}}", "",
                              "\"/apply\": {\"post\": {}}"));
    tsr_options *o = options("max_array_bytes", "64");
    tsr_component *c = open_ok(canned_url(&s, ""), o);
    tsr_options_free(o);
    cr_assert_eq(tsr_component_output(c, 0)->kind, TSR_KIND_JSON);
    char name[] = "Ada";
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    text_ok(call, "name", name);
    char big[512];
    snprintf(big, sizeof big, "{\"info\": {\"a\": 0.1, \"%080d\": 1}}", 0);
    canned_set(&s, NULL, 200, big);
    const char *msg = run_fails(call, TSR_E_LIMIT);
    assert_contains(msg, "info");
    canned_set(&s, NULL, 200, "{\"info\": {\"a\": 0.1,  \"b\": [1, null]}}");
    run_ok(call);
    cr_assert_str_eq(tsr_call_output_text(call, "info", NULL), "{\"a\":0.1,\"b\":[1,null]}");
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
}

Test(remote_answers, a_json_input_that_is_not_one_value_is_refused_before_sending) {
    canned s;
    canned_start(&s, doc_with("\"k\": {\"type\": \"integer\"}", "\"y\": " ARRAY3, "",
                              "\"/apply\": {\"post\": {}}"));
    tsr_component *c = open_ok(canned_url(&s, ""), NULL);
    char smuggled[] = "1, \"extra\": 2";
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    text_ok(call, "k", smuggled);
    const char *msg = run_fails(call, TSR_E_PAYLOAD);
    assert_contains(msg, "'k'");
    assert_contains(msg, "is not one JSON value");
    tsr_call_free(call);
    tsr_close(c);
    canned_stop(&s);
}
