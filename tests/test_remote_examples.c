/* SPDX-License-Identifier: MIT */
/*
 * Field kinds through the remote backend against real `tesseract-runtime
 * serve` servers: tesseract-core's helloworld (text in, text out),
 * meshstats (a nested model with plain counts and dicts of arrays),
 * binref_passthrough (plain inputs with defaults, a list of arrays out),
 * empty (no fields at all) and univariate (float32 scalars, every
 * derivative endpoint), and tests/pycomponents/remote_kinds (a Literal option,
 * free text, any-rank arrays, a dict of differentiable arrays). Each call
 * through the backend is compared with a direct POST of the same inputs
 * to the same server; text outside its choices and text that is not
 * UTF-8 are refused before anything is sent. Then the /openapi.json of
 * `tessera serve` of the kinds component beside tesseract-core's document
 * for the same tesseract_api.py.
 *
 * The servers start once for the whole program, side by side, and stop at
 * its end. Without tesseract-runtime on PATH, or without the fetched
 * examples (scripts/fetch_tesseract_examples.sh), the tests skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "net_util.h"
#include "temp_dir.h"
#include "test_util.h"

#define PYCOMPONENT(name) TSR_SOURCE_DIR "/tests/pycomponents/" name "/tesseract_api.py"
#define EXAMPLE(name) TSR_BINARY_DIR "/third_party/tesseract-examples/" name "/tesseract_api.py"
#define START_LIMIT_S 180 /* seven Python servers importing at once (univariate: jax) */
#define ANSWER_MAX (1 << 20)

typedef struct server {
    const char *name, *api;
    int tessera; /* served by `tessera serve` (Python components built in) */
    test_server s;
} server;

enum { HELLOWORLD, MESHSTATS, BINREF, EMPTY, UNIVARIATE, KINDS, KINDS_TESSERA, N_SERVERS };
static server servers[N_SERVERS] = {
    [HELLOWORLD] = {.name = "helloworld", .api = EXAMPLE("helloworld")},
    [MESHSTATS] = {.name = "meshstats", .api = EXAMPLE("meshstats")},
    [BINREF] = {.name = "binref_passthrough", .api = EXAMPLE("binref_passthrough")},
    [EMPTY] = {.name = "empty", .api = EXAMPLE("empty")},
    [UNIVARIATE] = {.name = "univariate", .api = EXAMPLE("univariate")},
    [KINDS] = {.name = "kinds", .api = PYCOMPONENT("remote_kinds")},
    [KINDS_TESSERA] = {.name = "kinds_tessera", .api = PYCOMPONENT("remote_kinds"), .tessera = 1},
};

/* ---- the servers ----------------------------------------------------------- */

static char scratch[256];
static char logs[N_SERVERS][512];

static void start(server *s, const char *runtime) {
    char *log = logs[s - servers];
    snprintf(log, sizeof logs[0], TSR_BINARY_DIR "/tests/remote-example-%s.log", s->name);
    const char *const env[] = {"TESSERACT_API_PATH", s->api, "TESSERACT_OUTPUT_PATH", scratch,
                               NULL};
    server_spec tessera = {.args = (const char *const[]){"serve", "--port", "{port}", s->api, NULL},
                           .out = log, .err = log, .dir = scratch, .env = env};
    server_spec runtime_spec = {
        .program = runtime,
        .args = (const char *const[]){"serve", "--host", "127.0.0.1", "--port", "{port}", NULL},
        .out = log, .err = log, .dir = scratch, .env = env};
    if (server_start(&s->s, s->tessera ? &tessera : &runtime_spec) != 0) s->s.pid = 0;
}

static void wait_up(server *s, time_t deadline) {
    char key[64], value[700];
    snprintf(key, sizeof key, "TSR_TEST_EXAMPLE_%s", s->name);
    if (server_wait_healthy(&s->s, deadline) == 0) {
        setenv(key, s->s.url, 1);
        return;
    }
    snprintf(value, sizeof value, "!the server of %s did not start (log: %s)", s->api,
             logs[s - servers]);
    setenv(key, value, 1);
}

ReportHook(PRE_ALL)(struct criterion_test_set *tests) {
    (void)tests;
    char runtime[4096];
    if (try_make_temp_dir(scratch, sizeof scratch, "tessera-remote-examples") != 0) {
        scratch[0] = '\0';
        return; /* every test skips */
    }
    if (find_program("tesseract-runtime", runtime, sizeof runtime) != 0) return;
    setenv("TSR_TEST_EXAMPLE_RUNTIME", runtime, 1);
    for (int k = 0; k < N_SERVERS; k++)
        if (access(servers[k].api, R_OK) == 0 && (!servers[k].tessera || TSR_HAVE_PYTHON_COMPONENTS))
            start(&servers[k], runtime);
    time_t deadline = time(NULL) + START_LIMIT_S;
    for (int k = 0; k < N_SERVERS; k++)
        if (servers[k].s.pid > 0) wait_up(&servers[k], deadline);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
    (void)stats;
    for (int k = 0; k < N_SERVERS; k++)
        if (servers[k].s.pid > 0) kill(-servers[k].s.pid, SIGTERM);
    for (int k = 0; k < N_SERVERS; k++) server_stop(&servers[k].s);
    if (scratch[0]) remove_tree_quietly(scratch);
}

static const char *need(int which) {
    if (!getenv("TSR_TEST_EXAMPLE_RUNTIME"))
        cr_skip_test("tesseract-runtime is not on PATH (pip install 'tesseract-core[runtime]')");
    if (servers[which].tessera && !TSR_HAVE_PYTHON_COMPONENTS)
        cr_skip_test("built without Python components");
    char key[64];
    snprintf(key, sizeof key, "TSR_TEST_EXAMPLE_%s", servers[which].name);
    const char *url = getenv(key);
    if (!url)
        cr_skip_test("%s is missing (scripts/fetch_tesseract_examples.sh fetches the examples)",
                     servers[which].api);
    cr_assert(url[0] != '!', "%s", url + 1);
    return url;
}

/* ---- a direct request, beside the backend's ----------------------------------- */

/* POST body to path (GET when body is NULL) of the server, Connection:
 * close; its answer's body, parsed, and its status. */
static json_t *http_json(int which, const char *path, const char *accept, const char *body,
                         int *status) {
    /* The tests run in processes of their own: the port comes in the URL. */
    int port = 0;
    cr_assert(sscanf(need(which), "http://127.0.0.1:%d", &port) == 1);
    int fd = connect_port(port);
    cr_assert_geq(fd, 0, "cannot connect to %s", servers[which].name);
    char head[512];
    int n = body ? snprintf(head, sizeof head,
                            "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                            "Content-Type: application/json\r\nAccept: %s\r\n"
                            "Content-Length: %zu\r\n\r\n",
                            path, accept ? accept : "application/json", strlen(body))
                 : snprintf(head, sizeof head,
                            "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                            path);
    cr_assert_eq(send(fd, head, (size_t)n, MSG_NOSIGNAL), n);
    if (body) cr_assert_eq(send(fd, body, strlen(body), MSG_NOSIGNAL), (ssize_t)strlen(body));
    char *buf = malloc(ANSWER_MAX);
    cr_assert_not_null(buf);
    size_t got = 0;
    for (ssize_t r; got + 1 < ANSWER_MAX && (r = recv(fd, buf + got, ANSWER_MAX - 1 - got, 0)) != 0;) {
        if (r < 0 && errno == EINTR) continue;
        cr_assert_gt(r, 0, "recv: %s", strerror(errno));
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    cr_assert(sscanf(buf, "HTTP/1.1 %d", status) == 1, "not an HTTP answer: %.200s", buf);
    const char *start = strstr(buf, "\r\n\r\n");
    cr_assert_not_null(start);
    json_error_t err;
    json_t *v = json_loads(start + 4, JSON_DECODE_ANY, &err);
    if (!v && *status != 200) v = json_null(); /* a failure's body may be plain text */
    cr_assert_not_null(v, "%s: %s in %.300s", path, err.text, start + 4);
    free(buf);
    return v;
}

static json_t *post_ok(int which, const char *path, const char *accept, const char *body) {
    int status = 0;
    json_t *v = http_json(which, path, accept, body, &status);
    cr_assert_eq(status, 200, "%s %s: HTTP %d", servers[which].name, path, status);
    return v;
}

/* The numbers of a json-encoded array object, its nested lists flattened. */
static size_t flatten(const json_t *v, double *out, size_t cap, size_t n) {
    if (json_is_number(v)) {
        cr_assert_lt(n, cap);
        out[n] = json_number_value(v);
        return n + 1;
    }
    if (json_is_boolean(v)) {
        cr_assert_lt(n, cap);
        out[n] = json_is_true(v);
        return n + 1;
    }
    cr_assert(json_is_array(v), "not a number or list");
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) n = flatten(x, out, cap, n);
    return n;
}

/* An array of the backend's result against the array object of a direct
 * answer: shape and every element. */
static void assert_same_array(const tsr_array *a, const json_t *obj, const char *what) {
    cr_assert_not_null(a, "%s: no result", what);
    cr_assert(json_is_object(obj), "%s: the direct answer has no array", what);
    const json_t *shape = json_object_get(obj, "shape");
    cr_assert_eq((size_t)a->rank, json_array_size(shape), "%s: rank", what);
    for (int32_t d = 0; d < a->rank; d++)
        cr_assert_eq(a->shape[d], json_integer_value(json_array_get(shape, (size_t)d)),
                     "%s: axis %d", what, (int)d);
    double want[256];
    size_t n = flatten(json_object_get(json_object_get(obj, "data"), "buffer"), want, 256, 0);
    cr_assert_eq((int64_t)n, tsr_array_count(a), "%s: count", what);
    for (size_t i = 0; i < n; i++) {
        double got = a->dtype == TSR_FLOAT32   ? ((const float *)a->data)[i]
                     : a->dtype == TSR_FLOAT64 ? ((const double *)a->data)[i]
                     : a->dtype == TSR_INT32   ? ((const int32_t *)a->data)[i]
                                               : NAN;
        cr_assert_eq(got, want[i], "%s[%zu]: %g, the direct answer %g", what, i, got, want[i]);
    }
}

/* A TEXT or JSON result of the backend, parsed, against a direct answer's value. */
static void assert_same_value(const tsr_call *call, const char *name, const json_t *want) {
    size_t len;
    const char *text = tsr_call_output_text(call, name, &len);
    cr_assert_not_null(text, "%s is not a text or JSON output", name);
    cr_assert_eq(strlen(text), len);
    json_t *got = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!got) got = json_string(text); /* a TEXT result is the text itself */
    char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_SORT_KEYS);
    cr_assert(json_equal(got, want), "%s: %s, the direct answer %s", name, text, w);
    free(w);
    json_decref(got);
}

static void text_ok(tsr_call *call, const char *name, const char *text) {
    int rc = tsr_call_set_text(call, name, text);
    cr_assert_eq(rc, 0, "binding %s failed: %d %s", name, rc, tsr_call_errmsg(call));
}

static tsr_array f32_scalar(float *v) { return make_array(v, TSR_FLOAT32, 0, NULL); }

/* ---- helloworld: text in, text out ------------------------------------------ */

Test(remote_examples, helloworld_greets_through_the_backend_as_its_server_does) {
    tsr_component *c = open_ok(need(HELLOWORLD), NULL);
    cr_assert_eq(tsr_component_n_inputs(c), 1);
    cr_assert_eq(tsr_component_input(c, 0)->kind, TSR_KIND_TEXT);
    cr_assert_null(tsr_component_input(c, 0)->choices);
    cr_assert_eq(tsr_component_output(c, 0)->kind, TSR_KIND_TEXT);
    cr_assert_str_eq(tsr_component_output(c, 0)->name, "greeting");
    /* quotes, a backslash and a character beyond ASCII survive both ways */
    const char *name = "Ada \"the\" \\ Lovelace \xe2\x9c\x93";
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    text_ok(call, "name", name);
    run_ok(call);
    json_t *body = json_pack("{s:{s:s}}", "inputs", "name", name);
    char *text = json_dumps(body, 0);
    json_t *direct = post_ok(HELLOWORLD, "/apply", NULL, text);
    assert_same_value(call, "greeting", json_object_get(direct, "greeting"));
    char want[128];
    snprintf(want, sizeof want, "Hello %s!", name);
    cr_assert_str_eq(tsr_call_output_text(call, "greeting", NULL), want);
    free(text);
    json_decref(body);
    json_decref(direct);
    tsr_call_free(call);
    tsr_close(c);
}

Test(remote_examples, text_that_is_not_utf8_is_refused_before_it_is_sent) {
    tsr_component *c = open_ok(need(HELLOWORLD), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    text_ok(call, "name", "Ada \xff\xfe");
    const char *msg = run_fails(call, TSR_E_VALUE);
    assert_contains(msg, "name");
    assert_contains(msg, "valid string");
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.name");
    tsr_stats st = TSR_STATS_INIT;
    cr_assert_eq(tsr_component_stats(c, &st), 0);
    cr_assert_eq(st.calls, 0u, "nothing reached the server"); /* refused by the host */
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- meshstats: a nested model with counts and dicts of arrays --------------- */

/* A four-point mesh, its point_data a dict with one array in it. */
static float points[12] = {0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 4};
static float per_cell[1] = {4};
static int32_t connectivity[4] = {0, 1, 2, 3};
#define POINT_DATA                                                                             \
    "{\"temp\": {\"object_type\": \"array\", \"shape\": [4, 1], \"dtype\": \"float32\", "      \
    "\"data\": {\"buffer\": [[1.0], [2.0], [3.0], [4.5]], \"encoding\": \"json\"}}}"

static void bind_mesh(tsr_call *call, int abstract) {
    int64_t pshape[2] = {4, 3}, one = 1, four = 4;
    bind_ok(call, "mesh.points", make_array(abstract ? NULL : points, TSR_FLOAT32, 2, pshape));
    bind_ok(call, "mesh.num_points_per_cell",
            make_array(abstract ? NULL : per_cell, TSR_FLOAT32, 1, &one));
    bind_ok(call, "mesh.cell_connectivity",
            make_array(abstract ? NULL : connectivity, TSR_INT32, 1, &four));
    text_ok(call, "mesh.n_points", "4");
    text_ok(call, "mesh.n_cells", "1");
    text_ok(call, "mesh.cell_data", "{}");
    text_ok(call, "mesh.point_data", POINT_DATA);
}

static const char *mesh_body(const char *extra) {
    static char body[2048];
    snprintf(body, sizeof body,
             "{\"inputs\": {\"mesh\": {\"n_points\": 4, \"n_cells\": 1, "
             "\"points\": {\"object_type\": \"array\", \"shape\": [4, 3], \"dtype\": \"float32\", "
             "\"data\": {\"buffer\": [0,0,0, 1,0,0, 0,2,0, 0,0,4], \"encoding\": \"json\"}}, "
             "\"num_points_per_cell\": {\"object_type\": \"array\", \"shape\": [1], "
             "\"dtype\": \"float32\", \"data\": {\"buffer\": [4], \"encoding\": \"json\"}}, "
             "\"cell_connectivity\": {\"object_type\": \"array\", \"shape\": [4], "
             "\"dtype\": \"int32\", \"data\": {\"buffer\": [0,1,2,3], \"encoding\": \"json\"}}, "
             "\"cell_data\": {}, \"point_data\": " POINT_DATA "}}%s}",
             extra);
    return body;
}

Test(remote_examples, meshstats_apply_and_jacobian_match_its_server) {
    tsr_component *c = open_ok(need(MESHSTATS), NULL);
    const char *names[] = {"mesh.n_points", "mesh.n_cells", "mesh.points",
                           "mesh.num_points_per_cell", "mesh.cell_connectivity",
                           "mesh.cell_data", "mesh.point_data"};
    const uint32_t kinds[] = {TSR_KIND_JSON, TSR_KIND_JSON, TSR_KIND_ARRAY, TSR_KIND_ARRAY,
                              TSR_KIND_ARRAY, TSR_KIND_JSON, TSR_KIND_JSON};
    cr_assert_eq(tsr_component_n_inputs(c), 7);
    for (int i = 0; i < 7; i++) {
        cr_assert_str_eq(tsr_component_input(c, i)->name, names[i]);
        cr_assert_eq(tsr_component_input(c, i)->kind, kinds[i], "%s", names[i]);
    }
    cr_assert(tsr_component_input(c, 2)->flags & TSR_FIELD_DIFFERENTIABLE);
    cr_assert_not(tsr_component_input(c, 6)->flags & TSR_FIELD_DIFFERENTIABLE);
    cr_assert(tsr_component_has_endpoint(c, TSR_EP_JACOBIAN));
    cr_assert(tsr_component_has_endpoint(c, TSR_EP_ABSTRACT_EVAL));

    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_mesh(call, 0);
    run_ok(call);
    json_t *direct = post_ok(MESHSTATS, "/apply", NULL, mesh_body(""));
    json_t *stats = json_object_get(direct, "statistics");
    assert_same_array(tsr_call_output(call, "statistics.barycenter"),
                      json_object_get(stats, "barycenter"), "barycenter");
    assert_same_array(tsr_call_output(call, "statistics.first_point_coordinates"),
                      json_object_get(stats, "first_point_coordinates"), "first point");
    cr_assert_eq(((const float *)tsr_call_output(call, "statistics.barycenter")->data)[2], 1.0f);
    json_decref(direct);
    tsr_call_free(call);

    const char *in[] = {"mesh.points"},
               *out[] = {"statistics.barycenter", "statistics.first_point_coordinates"};
    call = new_call(c, TSR_EP_JACOBIAN);
    bind_mesh(call, 0);
    wrt_ok(call, in, 1, out, 2);
    run_ok(call);
    direct = post_ok(MESHSTATS, "/jacobian", NULL,
                     mesh_body(", \"jac_inputs\": [\"mesh.points\"], \"jac_outputs\": "
                               "[\"statistics.barycenter\", "
                               "\"statistics.first_point_coordinates\"]"));
    assert_same_array(tsr_call_jacobian(call, "statistics.barycenter", "mesh.points"),
                      json_object_get(json_object_get(direct, "statistics.barycenter"),
                                      "mesh.points"),
                      "d barycenter / d points");
    assert_same_array(tsr_call_jacobian(call, "statistics.first_point_coordinates",
                                        "mesh.points"),
                      json_object_get(json_object_get(direct, "statistics.first_point_coordinates"),
                                      "mesh.points"),
                      "d first point / d points");
    json_decref(direct);
    tsr_call_free(call);
    tsr_close(c);
}

/* The arrays inside a JSON field go as {"shape", "dtype"}, as tesseract-
 * core's abstract inputs describe them, and the server takes them. */
Test(remote_examples, meshstats_abstract_eval_takes_json_fields_with_arrays_inside) {
    tsr_component *c = open_ok(need(MESHSTATS), NULL);
    tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    bind_mesh(call, 1);
    run_ok(call);
    const tsr_array *b = tsr_call_output(call, "statistics.barycenter");
    cr_assert_eq(b->rank, 1);
    cr_assert_eq(b->shape[0], 3);
    cr_assert_eq(b->dtype, TSR_FLOAT32);
    cr_assert_null(b->data);
    tsr_call_free(call);
    tsr_close(c);
}

Test(remote_examples, a_json_field_the_server_refuses_is_named_with_its_path) {
    tsr_component *c = open_ok(need(MESHSTATS), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_mesh(call, 0);
    text_ok(call, "mesh.point_data", "{\"temp\": [1, 2]}"); /* not an array object */
    const char *msg = run_fails(call, TSR_E_PAYLOAD);
    assert_contains(msg, "HTTP 422");
    assert_contains(msg, "point_data");
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- binref_passthrough: plain inputs with defaults, a list of arrays out ------- */

Test(remote_examples, binref_passthrough_gives_its_list_of_arrays_as_its_server_does) {
    tsr_component *c = open_ok(need(BINREF), NULL);
    cr_assert_eq(tsr_component_n_inputs(c), 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(tsr_component_input(c, i)->kind, TSR_KIND_JSON);
        cr_assert_not_null(tsr_component_input(c, i)->default_value);
    }
    const tsr_field *traj = tsr_component_output(c, 0), *final = tsr_component_output(c, 1);
    cr_assert_str_eq(traj->name, "trajectory");
    cr_assert_eq(traj->kind, TSR_KIND_JSON);
    cr_assert_eq(final->kind, TSR_KIND_ARRAY);
    cr_assert_eq(final->rank, 2);

    tsr_call *call = new_call(c, TSR_EP_APPLY);
    text_ok(call, "size", "4");
    text_ok(call, "steps", "2"); /* diffusivity left out: its default */
    run_ok(call);
    /* The backend asks for base64 arrays; so does this request. */
    json_t *direct = post_ok(BINREF, "/apply", "application/json+base64",
                             "{\"inputs\": {\"size\": 4, \"steps\": 2}}");
    assert_same_value(call, "trajectory", json_object_get(direct, "trajectory"));
    cr_assert_eq(json_array_size(json_object_get(direct, "trajectory")), 3);
    json_decref(direct);
    direct = post_ok(BINREF, "/apply", NULL, "{\"inputs\": {\"size\": 4, \"steps\": 2}}");
    assert_same_array(tsr_call_output(call, "final"), json_object_get(direct, "final"), "final");
    json_decref(direct);
    tsr_call_free(call);

    /* Nothing bound: every input takes its default (size 16). */
    call = new_call(c, TSR_EP_APPLY);
    run_ok(call);
    cr_assert_eq(tsr_call_output(call, "final")->shape[0], 16);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- empty: no inputs, no outputs ---------------------------------------------- */

Test(remote_examples, a_tesseract_without_fields_is_applied_and_gives_nothing) {
    tsr_component *c = open_ok(need(EMPTY), NULL);
    cr_assert_eq(tsr_component_n_inputs(c), 0);
    cr_assert_eq(tsr_component_n_outputs(c), 0);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), 0);
    json_t *direct = post_ok(EMPTY, "/apply", NULL, "{\"inputs\": {}}");
    cr_assert_eq(json_object_size(direct), 0);
    json_decref(direct);
    run_ok(call); /* again, on the same connection */
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- univariate: float32 scalars, every derivative endpoint --------------------- */

Test(remote_examples, univariate_every_endpoint_matches_its_server) {
    tsr_component *c = open_ok(need(UNIVARIATE), NULL);
    cr_assert_eq(tsr_component_n_inputs(c), 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(tsr_component_input(c, i)->kind, TSR_KIND_ARRAY);
        cr_assert_eq(tsr_component_input(c, i)->rank, 0);
        cr_assert_eq(tsr_component_input(c, i)->dtype, TSR_FLOAT32);
    }
    for (int e = 0; e < TSR_EP_COUNT; e++)
        cr_assert(tsr_component_has_endpoint(c, (tsr_endpoint)e), "endpoint %d", e);
    float x = 0.5f, y = 2, a = 1, b = 100, t = 1, g = 2;
    const char *inputs = "{\"x\": 0.5, \"y\": 2.0, \"a\": 1.0, \"b\": 100.0}";
    const char *in[] = {"x", "y"}, *out[] = {"result"};
    char body[512];

    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f32_scalar(&x));
    bind_ok(call, "y", f32_scalar(&y));
    bind_ok(call, "a", f32_scalar(&a));
    bind_ok(call, "b", f32_scalar(&b));
    run_ok(call);
    snprintf(body, sizeof body, "{\"inputs\": %s}", inputs);
    json_t *direct = post_ok(UNIVARIATE, "/apply", NULL, body);
    assert_same_array(tsr_call_output(call, "result"), json_object_get(direct, "result"), "apply");
    float want = (a - x) * (a - x) + b * (y - x * x) * (y - x * x);
    cr_assert_eq(*(const float *)tsr_call_output(call, "result")->data, want);
    json_decref(direct);
    tsr_call_free(call);

    static const struct {
        tsr_endpoint ep;
        const char *route, *lists;
    } derivs[] = {
        {TSR_EP_JACOBIAN, "/jacobian", "\"jac_inputs\": [\"x\", \"y\"], \"jac_outputs\": [\"result\"]"},
        {TSR_EP_JVP, "/jacobian_vector_product",
         "\"jvp_inputs\": [\"x\", \"y\"], \"jvp_outputs\": [\"result\"], "
         "\"tangent_vector\": {\"x\": 1.0, \"y\": 1.0}"},
        {TSR_EP_VJP, "/vector_jacobian_product",
         "\"vjp_inputs\": [\"x\", \"y\"], \"vjp_outputs\": [\"result\"], "
         "\"cotangent_vector\": {\"result\": 2.0}"},
    };
    for (size_t d = 0; d < 3; d++) {
        call = new_call(c, derivs[d].ep);
        bind_ok(call, "x", f32_scalar(&x));
        bind_ok(call, "y", f32_scalar(&y)); /* a and b left out: their defaults */
        wrt_ok(call, in, 2, out, 1);
        if (derivs[d].ep == TSR_EP_JVP) {
            seed_ok(call, "x", f32_scalar(&t));
            seed_ok(call, "y", f32_scalar(&t));
        }
        if (derivs[d].ep == TSR_EP_VJP) seed_ok(call, "result", f32_scalar(&g));
        run_ok(call);
        snprintf(body, sizeof body, "{\"inputs\": %s, %s}", inputs, derivs[d].lists);
        direct = post_ok(UNIVARIATE, derivs[d].route, NULL, body);
        if (derivs[d].ep == TSR_EP_JACOBIAN) {
            json_t *row = json_object_get(direct, "result");
            assert_same_array(tsr_call_jacobian(call, "result", "x"), json_object_get(row, "x"),
                              "d result / dx");
            assert_same_array(tsr_call_jacobian(call, "result", "y"), json_object_get(row, "y"),
                              "d result / dy");
        } else if (derivs[d].ep == TSR_EP_JVP) {
            assert_same_array(tsr_call_output(call, "result"), json_object_get(direct, "result"),
                              "jvp");
        } else {
            assert_same_array(tsr_call_output(call, "x"), json_object_get(direct, "x"), "vjp x");
            assert_same_array(tsr_call_output(call, "y"), json_object_get(direct, "y"), "vjp y");
        }
        json_decref(direct);
        tsr_call_free(call);
    }

    /* Its abstract_eval names the dtype "Float32", which tesseract-core's
     * ShapeDType refuses: the server fails it, to the backend as to a
     * direct request. */
    call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    bind_ok(call, "x", f32_scalar(NULL));
    bind_ok(call, "y", f32_scalar(NULL));
    const char *msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "/abstract_eval: HTTP 500");
    int status = 0;
    direct = http_json(UNIVARIATE, "/abstract_eval", NULL,
                       "{\"inputs\": {\"x\": {\"shape\": [], \"dtype\": \"float32\"}, "
                       "\"y\": {\"shape\": [], \"dtype\": \"float32\"}}}",
                       &status);
    cr_assert_eq(status, 500);
    json_decref(direct);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- kinds: a Literal option, free text, any-rank arrays, dicts ------------------- */

#define WEIGHTS                                                                                 \
    "{\"a\": {\"object_type\": \"array\", \"shape\": [2], \"dtype\": \"float64\", "             \
    "\"data\": {\"buffer\": [1.0, -2.0], \"encoding\": \"json\"}}, "                            \
    "\"b\": {\"object_type\": \"array\", \"shape\": [1], \"dtype\": \"float64\", "              \
    "\"data\": {\"buffer\": [0.25], \"encoding\": \"json\"}}}"

Test(remote_examples, kinds_any_rank_arrays_text_and_dicts_match_its_server) {
    tsr_component *c = open_ok(need(KINDS), NULL);
    const tsr_field *mode = tsr_component_input(c, 0), *x = tsr_component_input(c, 2),
                    *weights = tsr_component_input(c, 3), *total = tsr_component_output(c, 1);
    cr_assert_str_eq(mode->name, "mode");
    cr_assert_eq(mode->kind, TSR_KIND_TEXT);
    cr_assert_eq(mode->n_choices, 2);
    cr_assert_str_eq(mode->choices[0], "sum");
    cr_assert_str_eq(mode->choices[1], "prod");
    cr_assert_eq(x->rank, TSR_RANK_ANY);
    cr_assert_eq(weights->kind, TSR_KIND_JSON);
    cr_assert(weights->flags & TSR_FIELD_DIFFERENTIABLE);
    cr_assert_eq(total->rank, TSR_RANK_ANY);

    /* rank 3, then rank 0, through the same call */
    double xs[6] = {1, 2, 3, -4, 5.5, 6}, scalar = 7;
    int64_t shape3[3] = {2, 1, 3};
    const char *xjson[2] = {"{\"object_type\": \"array\", \"shape\": [2, 1, 3], \"dtype\": "
                            "\"float64\", \"data\": {\"buffer\": [1, 2, 3, -4, 5.5, 6], "
                            "\"encoding\": \"json\"}}",
                            "{\"object_type\": \"array\", \"shape\": [], \"dtype\": \"float64\", "
                            "\"data\": {\"buffer\": 7, \"encoding\": \"json\"}}"};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    text_ok(call, "mode", "prod");
    text_ok(call, "label", "run \xc3\xa9t\xc3\xa9");
    text_ok(call, "weights", WEIGHTS);
    text_ok(call, "count", "3");
    text_ok(call, "scale", "2.5");
    for (int round = 0; round < 2; round++) {
        bind_ok(call, "x",
                round ? f64_scalar(&scalar) : make_array(xs, TSR_FLOAT64, 3, shape3));
        run_ok(call);
        char body[2048];
        snprintf(body, sizeof body,
                 "{\"inputs\": {\"mode\": \"prod\", \"label\": \"run \xc3\xa9t\xc3\xa9\", "
                 "\"x\": %s, \"weights\": " WEIGHTS ", \"count\": 3, \"scale\": 2.5}}",
                 xjson[round]);
        json_t *direct = post_ok(KINDS, "/apply", NULL, body);
        assert_same_array(tsr_call_output(call, "total"), json_object_get(direct, "total"),
                          round ? "total of rank 0" : "total of rank 3");
        assert_same_value(call, "summary", json_object_get(direct, "summary"));
        assert_same_value(call, "n", json_object_get(direct, "n"));
        json_decref(direct);
        direct = post_ok(KINDS, "/apply", "application/json+base64", body);
        assert_same_value(call, "parts", json_object_get(direct, "parts"));
        json_decref(direct);
    }
    cr_assert_str_eq(tsr_call_output_text(call, "summary", NULL), "run \xc3\xa9t\xc3\xa9/prod");
    cr_assert_str_eq(tsr_call_output_text(call, "n", NULL), "5");

    /* Optional count left out, mode and scale to their defaults. */
    cr_assert_eq(tsr_call_set_input(call, "count", NULL), 0);
    cr_assert_eq(tsr_call_set_input(call, "mode", NULL), 0);
    cr_assert_eq(tsr_call_set_input(call, "scale", NULL), 0);
    run_ok(call);
    cr_assert_str_eq(tsr_call_output_text(call, "n", NULL), "2");
    cr_assert_str_eq(tsr_call_output_text(call, "summary", NULL), "run \xc3\xa9t\xc3\xa9/sum");
    cr_assert_eq(*(const double *)tsr_call_output(call, "total")->data, scalar);
    tsr_call_free(call);
    tsr_close(c);
}

Test(remote_examples, text_outside_its_choices_is_refused_naming_them) {
    tsr_component *c = open_ok(need(KINDS), NULL);
    double x = 1;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    text_ok(call, "mode", "mean");
    text_ok(call, "label", "l");
    text_ok(call, "weights", "{}");
    bind_ok(call, "x", f64_scalar(&x));
    const char *msg = run_fails(call, TSR_E_VALUE);
    assert_contains(msg, "Input should be 'sum' or 'prod'");
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.mode");
    text_ok(call, "mode", "sum");
    run_ok(call);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- /openapi.json of tessera serve beside tesseract-core's ----------------------- */

static json_t *schema_of(json_t *doc, const char *name) {
    json_t *s = json_object_get(json_object_get(json_object_get(doc, "components"), "schemas"),
                                name);
    cr_assert_not_null(s, "no components.schemas.%s", name);
    return s;
}

/* What a client reads of the document is the same in both: the paths, the
 * fields in order, which are required, TEXT fields with their choices and
 * defaults, array models by title and shape, the differentiable flags
 * of arrays. */
Test(remote_examples, tessera_serve_writes_the_openapi_json_tesseract_core_writes) {
    need(KINDS);
    need(KINDS_TESSERA);
    json_t *docs[2];
    int status;
    docs[0] = http_json(KINDS, "/openapi.json", NULL, NULL, &status);
    cr_assert_eq(status, 200);
    docs[1] = http_json(KINDS_TESSERA, "/openapi.json", NULL, NULL, &status);
    cr_assert_eq(status, 200);
    const char *path;
    json_t *v;
    json_object_foreach(json_object_get(docs[0], "paths"), path, v)
        cr_assert_not_null(json_object_get(json_object_get(docs[1], "paths"), path), "%s", path);
    /* Tessera lists its /docs page too; tesseract-core leaves its own
     * docs page out of the document. */
    json_object_foreach(json_object_get(docs[1], "paths"), path, v)
        if (strcmp(path, "/docs") != 0)
            cr_assert_not_null(json_object_get(json_object_get(docs[0], "paths"), path), "%s",
                               path);
    cr_assert_not_null(json_object_get(json_object_get(docs[1], "paths"), "/docs"));
    static const char *const models[] = {"Apply_InputSchema", "Apply_OutputSchema"};
    for (int m = 0; m < 2; m++) {
        json_t *want = schema_of(docs[0], models[m]), *got = schema_of(docs[1], models[m]);
        cr_assert(json_equal(json_object_get(want, "required"), json_object_get(got, "required")),
                  "%s: required", models[m]);
        json_t *wp = json_object_get(want, "properties"), *gp = json_object_get(got, "properties");
        cr_assert_eq(json_object_size(wp), json_object_size(gp), "%s", models[m]);
        const char *key;
        json_object_foreach(wp, key, v) {
            json_t *g = json_object_get(gp, key);
            cr_assert_not_null(g, "%s.%s", models[m], key);
            /* A JSON field is any JSON value in Tessera's document (it knows
             * no more of it): its title, description and default agree. */
            int any_value = !json_object_get(g, "type") && !json_object_get(g, "properties");
            static const char *const same[] = {"title", "description", "type", "enum",
                                               "additionalProperties", "required", "array_flags"};
            for (size_t k = 0; k < (any_value ? 2 : sizeof same / sizeof same[0]); k++) {
                json_t *a = json_object_get(v, same[k]), *b = json_object_get(g, same[k]);
                char *at = json_dumps(a, JSON_ENCODE_ANY), *bt = json_dumps(b, JSON_ENCODE_ANY);
                cr_assert(json_equal(a, b) || (!a && !b), "%s.%s.%s: %s, tesseract-core: %s",
                          models[m], key, same[k], bt ? bt : "(none)", at ? at : "(none)");
                free(at);
                free(bt);
            }
            json_t *wa = json_object_get(v, "properties"), *ga = json_object_get(g, "properties");
            static const char *const parts[] = {"object_type", "shape", "dtype"};
            for (size_t k = 0; wa && k < 3; k++) {
                json_t *a = json_object_get(wa, parts[k]), *b = json_object_get(ga, parts[k]);
                char *at = json_dumps(a, 0), *bt = json_dumps(b, 0);
                cr_assert(json_equal(a, b), "%s.%s: %s %s, tesseract-core: %s", models[m], key,
                          parts[k], bt ? bt : "(none)", at);
                free(at);
                free(bt);
            }
            cr_assert_eq(!json_object_get(v, "default"), !json_object_get(g, "default"),
                         "%s.%s: a default in one only", models[m], key);
            if (json_object_get(v, "default"))
                cr_assert(json_equal(json_object_get(v, "default"), json_object_get(g, "default")),
                          "%s.%s: default", models[m], key);
        }
    }
    cr_assert(json_equal(json_object_get(schema_of(docs[0], "ApplyInputSchema"), "field_order"),
                         json_object_get(schema_of(docs[1], "ApplyInputSchema"), "field_order")));
    cr_assert(json_equal(json_object_get(schema_of(docs[0], "ApplyOutputSchema"), "field_order"),
                         json_object_get(schema_of(docs[1], "ApplyOutputSchema"), "field_order")));
    static const char *const wrappers[] = {"ApplyInputSchema", "ApplyOutputSchema"};
    for (int m = 0; m < 2; m++)
        cr_assert_str_eq(json_string_value(json_object_get(schema_of(docs[1], wrappers[m]),
                                                           "title")),
                         json_string_value(json_object_get(schema_of(docs[0], wrappers[m]),
                                                           "title")));
    cr_assert(json_equal(json_object_get(json_object_get(json_object_get(
                             schema_of(docs[0], "ApplyInputSchema"), "properties"), "inputs"),
                             "description"),
                         json_object_get(json_object_get(json_object_get(
                             schema_of(docs[1], "ApplyInputSchema"), "properties"), "inputs"),
                             "description")));
    json_decref(docs[0]);
    json_decref(docs[1]);
}
