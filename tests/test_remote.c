/* SPDX-License-Identifier: MIT */
/*
 * Remote components against a real `tesseract-runtime serve` (tesseract-
 * core's own server): tesseract-core's vectoradd example (fetched by
 * scripts/fetch_tesseract_examples.sh) and this project's fixtures in
 * tests/pycomponents (nested: nested models, plain fields, every endpoint;
 * raising; sleeping), opened from their URLs through the C API, the
 * command line and worker mode, each endpoint against closed forms; the
 * server's refusals (422), its failures (500), a timeout, a server that is
 * not there, and calls from several threads over several connections.
 * Then `tessera serve` of a bundled plugin behind a bearer token, every
 * endpoint against the same plugin in this process.
 *
 * The servers start once for the whole program, side by side (each takes
 * a second or two to import its Python), in a scratch folder (their run
 * folders go there), and stop at its end; their URLs reach the tests
 * through the environment. Without tesseract-runtime on PATH its tests are
 * skipped, saying so; so are vectoradd's without the fetched examples.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "cli_run.h"
#include "net_util.h"
#include "temp_dir.h"
#include "test_util.h"

#define PYCOMPONENT(name) TSR_SOURCE_DIR "/tests/pycomponents/" name "/tesseract_api.py"
#define EXAMPLE(name) TSR_BINARY_DIR "/third_party/tesseract-examples/" name "/tesseract_api.py"
#define START_LIMIT_S 120

typedef struct server {
    const char *name, *api;
    test_server s;
} server;

/* tesseract-runtime serves the first four; `tessera serve` the last, a
 * bundled plugin behind a bearer token. */
enum { VECTORADD, NESTED, RAISING, SLEEPING, TESSERA_SERVE, N_SERVERS };
static server servers[N_SERVERS] = {
    [VECTORADD] = {.name = "vectoradd", .api = EXAMPLE("vectoradd")},
    [NESTED] = {.name = "nested", .api = PYCOMPONENT("nested")},
    [RAISING] = {.name = "raising", .api = PYCOMPONENT("raising")},
    [SLEEPING] = {.name = "sleeping", .api = PYCOMPONENT("sleeping")},
    [TESSERA_SERVE] = {.name = "tessera_serve", .api = BUNDLED_PLUGIN("vectoradd")},
};

/* ---- the servers ----------------------------------------------------------- */

/* Where the servers run: tesseract-runtime writes a run_<id> folder per
 * request into its output path (its current directory by default). */
static char scratch[256];

static char logs[N_SERVERS][512];

/* Its output in a log of its own; running in the scratch folder. */
static void start(server *s, const char *runtime) {
    char *log = logs[s - servers];
    snprintf(log, sizeof logs[0], TSR_BINARY_DIR "/tests/remote-server-%s.log", s->name);
    const char *const env[] = {"TESSERACT_API_PATH", s->api, "TESSERACT_OUTPUT_PATH", scratch,
                               NULL};
    server_spec tessera = {
        .args = (const char *const[]){"serve", "--port", "{port}", "--token-file", "token",
                                      s->api, NULL},
        .out = log, .err = log, .dir = scratch, .env = env};
    server_spec runtime_spec = {
        .program = runtime,
        .args = (const char *const[]){"serve", "--host", "127.0.0.1", "--port", "{port}", NULL},
        .out = log, .err = log, .dir = scratch, .env = env};
    if (server_start(&s->s, s == &servers[TESSERA_SERVE] ? &tessera : &runtime_spec) != 0)
        s->s.pid = 0;
}

/* Wait until its /health answers (uvicorn listens once the component is
 * imported); the URL into the environment, or why not. */
static void wait_up(server *s, time_t deadline) {
    char key[64], value[700];
    snprintf(key, sizeof key, "TSR_TEST_REMOTE_%s", s->name);
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
    char runtime[4096], token[300];
    if (try_make_temp_dir(scratch, sizeof scratch, "tessera-remote") != 0) {
        scratch[0] = '\0';
        return; /* every test skips */
    }
    snprintf(token, sizeof token, "%s/token", scratch);
    FILE *f = fopen(token, "w");
    if (f) {
        fputs("s3cret-token\n", f);
        fclose(f);
        setenv("TSR_TEST_REMOTE_TOKEN", token, 1);
    }
    int have_runtime = find_program("tesseract-runtime", runtime, sizeof runtime) == 0;
    if (have_runtime) setenv("TSR_TEST_REMOTE_RUNTIME", runtime, 1);
    for (int k = 0; k < N_SERVERS; k++)
        if ((have_runtime || k == TESSERA_SERVE) && access(servers[k].api, R_OK) == 0)
            start(&servers[k], runtime);
    time_t deadline = time(NULL) + START_LIMIT_S;
    for (int k = 0; k < N_SERVERS; k++)
        if (servers[k].s.pid > 0) wait_up(&servers[k], deadline);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
    (void)stats;
    /* All asked to stop at once, then each waited for. */
    for (int k = 0; k < N_SERVERS; k++)
        if (servers[k].s.pid > 0) kill(-servers[k].s.pid, SIGTERM);
    for (int k = 0; k < N_SERVERS; k++) server_stop(&servers[k].s);
    if (scratch[0]) remove_tree_quietly(scratch);
}

/* The URL of a server, or the test skips (nothing to test against) or
 * fails (a server that should have started did not). */
static const char *need(int which) {
    if (which != TESSERA_SERVE && !getenv("TSR_TEST_REMOTE_RUNTIME"))
        cr_skip_test("tesseract-runtime is not on PATH (pip install 'tesseract-core[runtime]')");
    char key[64];
    snprintf(key, sizeof key, "TSR_TEST_REMOTE_%s", servers[which].name);
    const char *url = getenv(key);
    if (!url)
        cr_skip_test("%s is missing (scripts/fetch_tesseract_examples.sh fetches the examples), "
                     "or no temporary folder could be made",
                     servers[which].api);
    cr_assert(url[0] != '!', "%s", url + 1);
    return url;
}

static tsr_options *options(const char *key, const char *value) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    if (key) cr_assert_eq(tsr_options_set(o, key, value, NULL), 0);
    return o;
}

static tsr_component *open_with(const char *url, const char *key, const char *value) {
    tsr_options *o = options(key, value);
    tsr_component *c = open_ok(url, o);
    tsr_options_free(o);
    return c;
}

static tsr_array f32_vec(float *v, int64_t n) { return make_array(v, TSR_FLOAT32, 1, &n); }

/* A TEXT or JSON input bound to its text. */
static void text_ok(tsr_call *call, const char *name, const char *text) {
    int rc = tsr_call_set_text(call, name, text);
    cr_assert_eq(rc, 0, "binding %s failed: %d %s", name, rc, tsr_call_errmsg(call));
}

/* ---- vectoradd: tesseract-core's example ------------------------------------ */

Test(remote, vectoradd_schema_comes_from_openapi_json) {
    tsr_component *c = open_ok(need(VECTORADD), NULL);
    cr_assert_eq(tsr_component_n_inputs(c), 4);
    cr_assert_eq(tsr_component_n_outputs(c), 1);
    const tsr_field *a = tsr_component_input(c, 0), *s = tsr_component_input(c, 2),
                    *norm = tsr_component_input(c, 3), *r = tsr_component_output(c, 0);
    cr_assert_str_eq(a->name, "a");
    cr_assert_eq(a->dtype, TSR_FLOAT32);
    cr_assert_eq(a->rank, 1);
    cr_assert_eq(a->dims[0].size, TSR_DIM_ANY);
    cr_assert(a->flags & TSR_FIELD_DIFFERENTIABLE);
    cr_assert_str_eq(a->doc, "An arbitrary vector.");
    cr_assert_str_eq(s->name, "s");
    cr_assert_eq(s->rank, 0);
    cr_assert_str_eq(norm->name, "normalize");
    cr_assert_eq(norm->kind, TSR_KIND_JSON); /* a plain bool */
    cr_assert_eq(norm->flags, 0u);
    cr_assert_str_eq(r->name, "result");
    cr_assert_eq(r->dtype, TSR_FLOAT64);
    cr_assert(tsr_component_has_endpoint(c, TSR_EP_APPLY));
    cr_assert(tsr_component_has_endpoint(c, TSR_EP_JACOBIAN));
    cr_assert_not(tsr_component_has_endpoint(c, TSR_EP_JVP));
    cr_assert_not(tsr_component_has_endpoint(c, TSR_EP_VJP));
    tsr_close(c);
}

static void bind_vectoradd(tsr_call *call, float *a, float *b, int64_t n, float *s, uint8_t *norm) {
    bind_ok(call, "a", f32_vec(a, n));
    bind_ok(call, "b", f32_vec(b, n));
    bind_ok(call, "s", make_array(s, TSR_FLOAT32, 0, NULL));
    text_ok(call, "normalize", *norm ? "true" : "false");
}

Test(remote, vectoradd_apply_and_jacobian_match_the_closed_form) {
    tsr_component *c = open_ok(need(VECTORADD), NULL);
    float a[3] = {1, 2, 3}, b[3] = {0.5f, -1, 2}, s = 2;
    uint8_t norm = 0;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_vectoradd(call, a, b, 3, &s, &norm);
    for (int round = 0; round < 3; round++) { /* the same call again: one connection */
        a[0] = (float)round;
        run_ok(call);
        const tsr_array *r = tsr_call_output(call, "result");
        cr_assert_eq(r->rank, 1);
        cr_assert_eq(r->shape[0], 3);
        for (int i = 0; i < 3; i++) cr_assert_eq(((double *)r->data)[i], a[i] * s + b[i]);
    }
    text_ok(call, "normalize", "true");
    run_ok(call);
    const double *y = tsr_call_output(call, "result")->data;
    double norm2 = 0;
    for (int i = 0; i < 3; i++) norm2 += (double)(a[i] * s + b[i]) * (a[i] * s + b[i]);
    for (int i = 0; i < 3; i++)
        cr_assert_float_eq(y[i], (a[i] * s + b[i]) / sqrt(norm2), 1e-6);
    tsr_call_free(call);

    norm = 0;
    const char *in[] = {"a", "b", "s"}, *out[] = {"result"};
    call = new_call(c, TSR_EP_JACOBIAN);
    bind_vectoradd(call, a, b, 3, &s, &norm);
    wrt_ok(call, in, 3, out, 1);
    run_ok(call);
    const tsr_array *ja = tsr_call_jacobian(call, "result", "a"),
                    *jb = tsr_call_jacobian(call, "result", "b"),
                    *js = tsr_call_jacobian(call, "result", "s");
    cr_assert_eq(ja->rank, 2);
    cr_assert_eq(js->rank, 1);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            cr_assert_eq(((double *)ja->data)[3 * i + j], i == j ? s : 0);
            cr_assert_eq(((double *)jb->data)[3 * i + j], i == j ? 1 : 0);
        }
        cr_assert_eq(((double *)js->data)[i], a[i]);
    }
    tsr_call_free(call);
    tsr_close(c);
}

/* Arrays only (JSON fields in requests are the request layer's). */
Test(remote, the_command_line_takes_a_url) {
    const char *url = need(RAISING);
    cli_run r = run_cli(NULL, "apply", url, "{\"inputs\": {\"x\": [4, 9, 0.25]}}");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_contains(r.out, "\"buffer\":[2.0,3.0,0.5]");
    run_free(&r);
    r = run_cli(NULL, "schema", need(VECTORADD));
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_contains(r.out, "\"endpoints\":[\"apply\",\"jacobian\"]");
    run_free(&r);
}

Test(remote, a_refusal_of_the_server_names_the_field_and_its_reason) {
    tsr_component *c = open_ok(need(VECTORADD), NULL);
    float a[3] = {1, 2, 3}, b[2] = {1, 1}, s = 1;
    uint8_t norm = 0;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "a", f32_vec(a, 3));
    bind_ok(call, "b", f32_vec(b, 2)); /* Tessera cannot tell: the model's validator can */
    bind_ok(call, "s", make_array(&s, TSR_FLOAT32, 0, NULL));
    text_ok(call, "normalize", norm ? "true" : "false");
    const char *msg = run_fails(call, TSR_E_PAYLOAD);
    assert_contains(msg, "/apply");
    assert_contains(msg, "HTTP 422: inputs: Value error, a and b must have the same shape");
    tsr_call_free(call);
    tsr_close(c);
}

/* Several threads on one component with two connections: every answer is
 * its own thread's. */
typedef struct worker_arg {
    tsr_component *c;
    int id;
} worker_arg;

static void *apply_many(void *p) {
    const worker_arg *arg = p;
    tsr_component *c = arg->c;
    float a[4], b[4] = {0, 0, 0, 0}, s = 1;
    uint8_t norm = 0;
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    int bad = !call;
    for (int k = 0; !bad && k < 20; k++) {
        for (int i = 0; i < 4; i++) a[i] = (float)(1000 * arg->id + 4 * k + i);
        int64_t n = 4;
        tsr_array xa = make_array(a, TSR_FLOAT32, 1, &n), xb = make_array(b, TSR_FLOAT32, 1, &n),
                  xs = make_array(&s, TSR_FLOAT32, 0, NULL);
        bad = tsr_call_set_input(call, "a", &xa) || tsr_call_set_input(call, "b", &xb) ||
              tsr_call_set_input(call, "s", &xs) || tsr_call_set_text(call, "normalize", norm ? "true" : "false") ||
              tsr_call_run(call) != 0;
        for (int i = 0; !bad && i < 4; i++)
            bad = ((const double *)tsr_call_output(call, "result")->data)[i] != a[i];
    }
    tsr_call_free(call);
    return (void *)(uintptr_t)bad;
}

Test(remote, threads_share_the_connections_of_workers) {
    tsr_component *c = open_with(need(VECTORADD), "workers", "2");
    pthread_t t[4];
    worker_arg args[4];
    for (int k = 0; k < 4; k++) {
        args[k] = (worker_arg){c, k};
        cr_assert_eq(pthread_create(&t[k], NULL, apply_many, &args[k]), 0);
    }
    for (int k = 0; k < 4; k++) {
        void *bad;
        pthread_join(t[k], &bad);
        cr_assert_null(bad, "thread %d got a wrong answer or a failure", k);
    }
    tsr_stats st = TSR_STATS_INIT;
    cr_assert_eq(tsr_component_stats(c, &st), 0);
    cr_assert_eq(st.calls, 80u);
    tsr_close(c);
}

Test(remote, worker_mode_opens_the_url_in_the_worker) {
    tsr_component *c = open_with(need(VECTORADD), "mode", "worker");
    float a[2] = {1, 2}, b[2] = {3, 4}, s = 3;
    uint8_t norm = 0;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_vectoradd(call, a, b, 2, &s, &norm);
    run_ok(call);
    const double *y = tsr_call_output(call, "result")->data;
    cr_assert_eq(y[0], 6.0);
    cr_assert_eq(y[1], 10.0);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- nested: every endpoint, nested models, plain fields ------------------------ */

typedef struct nested_in {
    double v[2], scale, gain;
    float w[3];
    int64_t count;
    uint8_t flag;
    char text[3][32];   /* count, flag and gain as the JSON fields they are */
} nested_in;

static void bind_nested(tsr_call *call, nested_in *x) {
    int64_t three = 3;
    snprintf(x->text[0], sizeof x->text[0], "%lld", (long long)x->count);
    snprintf(x->text[1], sizeof x->text[1], "%s", x->flag ? "true" : "false");
    snprintf(x->text[2], sizeof x->text[2], "%.17g", x->gain);
    bind_ok(call, "p.v", f64_vec(x->v, 2));
    bind_ok(call, "p.w", make_array(x->w, TSR_FLOAT32, 1, &three));
    bind_ok(call, "scale", f64_scalar(&x->scale));
    text_ok(call, "count", x->text[0]);
    text_ok(call, "flag", x->text[1]);
    text_ok(call, "gain", x->text[2]);
}

Test(remote, nested_models_and_plain_fields_through_every_endpoint) {
    tsr_component *c = open_ok(need(NESTED), NULL);
    const char *names[] = {"p.v", "p.w", "scale", "count", "flag", "gain"};
    const uint32_t kinds[] = {TSR_KIND_ARRAY, TSR_KIND_ARRAY, TSR_KIND_ARRAY, TSR_KIND_JSON,
                              TSR_KIND_JSON, TSR_KIND_JSON};
    for (int i = 0; i < 6; i++) {
        cr_assert_str_eq(tsr_component_input(c, i)->name, names[i]);
        cr_assert_eq(tsr_component_input(c, i)->kind, kinds[i]);
    }
    cr_assert_eq(tsr_component_input(c, 1)->dims[0].size, 3);
    cr_assert_str_eq(tsr_component_output(c, 0)->name, "stats.total");
    for (int e = 0; e < TSR_EP_COUNT; e++)
        cr_assert(tsr_component_has_endpoint(c, (tsr_endpoint)e), "endpoint %d", e);
    nested_in x = {.v = {1, 2}, .w = {1, 2, 3}, .scale = 2, .gain = 0.5, .count = 3, .flag = 1};
    double k = x.scale * x.gain;

    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_nested(call, &x);
    run_ok(call);
    const double *total = tsr_call_output(call, "stats.total")->data;
    const float *twice = tsr_call_output(call, "stats.twice")->data;
    cr_assert_eq(total[0], k * 1);
    cr_assert_eq(total[1], k * 2);
    for (int i = 0; i < 3; i++) cr_assert_eq(twice[i], 2 * x.w[i]);
    size_t len;
    cr_assert_str_eq(tsr_call_output_text(call, "n", &len), "5");
    cr_assert_eq(len, 1);
    cr_assert_str_eq(tsr_call_output_text(call, "negated", NULL), "false");
    tsr_call_free(call);

    const char *in2[] = {"p.v", "scale"}, *out2[] = {"stats.total", "stats.twice"};
    double tv[2] = {1, 1}, ts = 1;
    call = new_call(c, TSR_EP_JVP);
    bind_nested(call, &x);
    wrt_ok(call, in2, 2, out2, 2);
    seed_ok(call, "p.v", f64_vec(tv, 2));
    seed_ok(call, "scale", f64_scalar(&ts));
    run_ok(call);
    const double *jt = tsr_call_output(call, "stats.total")->data;
    cr_assert_eq(jt[0], k * tv[0] + x.gain * x.v[0] * ts);
    cr_assert_eq(jt[1], k * tv[1] + x.gain * x.v[1] * ts);
    cr_assert_eq(((const float *)tsr_call_output(call, "stats.twice")->data)[2], 0.0f);
    tsr_call_free(call);

    const char *in3[] = {"p.w", "scale"}, *out3[] = {"stats.twice"};
    float ct[3] = {1, 2, 3};
    int64_t three = 3;
    call = new_call(c, TSR_EP_VJP);
    bind_nested(call, &x);
    wrt_ok(call, in3, 2, out3, 1);
    seed_ok(call, "stats.twice", make_array(ct, TSR_FLOAT32, 1, &three));
    run_ok(call);
    const float *gw = tsr_call_output(call, "p.w")->data;
    for (int i = 0; i < 3; i++) cr_assert_eq(gw[i], 2 * ct[i]);
    cr_assert_eq(*(const double *)tsr_call_output(call, "scale")->data, 0.0);
    tsr_call_free(call);

    const char *in4[] = {"p.v", "p.w", "scale"}, *out4[] = {"stats.total", "stats.twice"};
    call = new_call(c, TSR_EP_JACOBIAN);
    bind_nested(call, &x);
    wrt_ok(call, in4, 3, out4, 2);
    run_ok(call);
    const tsr_array *tv_block = tsr_call_jacobian(call, "stats.total", "p.v"),
                    *tw_block = tsr_call_jacobian(call, "stats.twice", "p.w"),
                    *tw_v = tsr_call_jacobian(call, "stats.twice", "p.v");
    cr_assert_eq(tv_block->shape[0], 2);
    cr_assert_eq(tv_block->shape[1], 2);
    cr_assert_eq(((const double *)tv_block->data)[0], k);
    cr_assert_eq(((const double *)tv_block->data)[1], 0.0);
    cr_assert_eq(((const float *)tw_block->data)[4], 2.0f);
    cr_assert_eq(tw_v->shape[0], 3);
    cr_assert_eq(tw_v->shape[1], 2);
    tsr_call_free(call);

    call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    nested_in shapes = {0};
    int64_t seven = 7;
    bind_nested(call, &shapes);
    bind_ok(call, "p.v", make_array(NULL, TSR_FLOAT64, 1, &seven));
    run_ok(call);
    cr_assert_eq(tsr_call_output(call, "stats.total")->shape[0], 7);
    cr_assert_eq(tsr_call_output(call, "stats.twice")->shape[0], 3);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- failures ------------------------------------------------------------------ */

Test(remote, an_exception_in_the_component_is_a_plugin_error_and_the_server_lives_on) {
    const char *url = need(RAISING);
    tsr_component *c = open_ok(url, NULL);
    double bad[2] = {1, -4}, good[1] = {4};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(bad, 2));
    const char *msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "HTTP 500");
    assert_contains(msg, url);
    assert_contains(msg, "/apply");
    bind_ok(call, "x", f64_vec(good, 1));
    run_ok(call);
    cr_assert_eq(*(const double *)tsr_call_output(call, "y")->data, 2.0);
    tsr_call_free(call);
    tsr_close(c);
}

static double seconds_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* tesseract-runtime serve answers one request at a time: the next call
 * waits until the server is done with the slow one. */
Test(remote, timeout_ms_ends_a_slow_call_and_the_next_call_works) {
    tsr_component *c = open_with(need(SLEEPING), "timeout_ms", "500");
    double x[2] = {1, 2};
    char seconds[8] = "1.5";
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    text_ok(call, "seconds", seconds);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *msg = run_fails(call, TSR_E_TIMEOUT);
    cr_assert_lt(seconds_since(&t0), 2.5);
    assert_contains(msg, "/apply");
    assert_contains(msg, "no answer in time");
    nanosleep(&(struct timespec){1, 500 * 1000000L}, NULL);
    snprintf(seconds, sizeof seconds, "0");
    text_ok(call, "seconds", seconds);
    run_ok(call);
    cr_assert_eq(((const double *)tsr_call_output(call, "y")->data)[1], 2.0);
    tsr_call_free(call);
    tsr_close(c);
}

Test(remote, a_server_that_is_not_there_is_a_worker_error_naming_the_url) {
    need(RAISING); /* only for the skip: this test starts no server */
    char url[64];
    int port = free_port();
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    tsr_error err = open_fails(url, NULL);
    assert_code(err.code, TSR_E_WORKER, err.message);
    assert_contains(err.message, url);
    assert_contains(err.message, "openapi.json");
}

Test(remote, a_server_that_is_not_a_tesseract_is_refused) {
    char url[256];
    snprintf(url, sizeof url, "%s/not/here", need(RAISING));
    tsr_error err = open_fails(url, NULL);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, "HTTP 404");
}

/* ---- tessera serve: the other side of the same API ------------------------------ */

/* Every endpoint of the bundled vectoradd plugin, served by `tessera serve`
 * behind a bearer token and opened from its URL, against the same plugin
 * opened in this process. */
Test(remote, tessera_serve_answers_as_the_plugin_in_process_behind_a_token) {
    const char *url = need(TESSERA_SERVE);
    tsr_error err = open_fails(url, NULL);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, "HTTP 401");
    assert_contains(err.message, "token_file");
    tsr_options *o = options(NULL, NULL);
    cr_assert_not_null(getenv("TSR_TEST_REMOTE_TOKEN"));
    cr_assert_eq(tsr_options_set_config(o, "token_file", getenv("TSR_TEST_REMOTE_TOKEN")), 0);
    tsr_component *remote = open_ok(url, o), *local = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_options_free(o);
    double a[3] = {1, -2, 0.5}, b[3] = {3, 4, 5}, s = 1.5, ta[3] = {1, 0, 2}, ts = -1;
    double g[3] = {0.5, 1, -1};
    const char *in[] = {"a", "s"}, *out[] = {"result"};
    for (int e = 0; e < TSR_EP_COUNT; e++) {
        cr_assert(tsr_component_has_endpoint(remote, (tsr_endpoint)e), "endpoint %d", e);
        tsr_call *calls[2] = {new_call(remote, (tsr_endpoint)e), new_call(local, (tsr_endpoint)e)};
        for (int k = 0; k < 2; k++) {
            int abstract = e == TSR_EP_ABSTRACT_EVAL;
            bind_ok(calls[k], "a", f64_vec(abstract ? NULL : a, 3));
            bind_ok(calls[k], "b", f64_vec(abstract ? NULL : b, 3));
            bind_ok(calls[k], "s", f64_scalar(abstract ? NULL : &s));
            if (e != TSR_EP_APPLY && !abstract) wrt_ok(calls[k], in, 2, out, 1);
            if (e == TSR_EP_JVP) {
                seed_ok(calls[k], "a", f64_vec(ta, 3));
                seed_ok(calls[k], "s", f64_scalar(&ts));
            }
            if (e == TSR_EP_VJP || e == TSR_EP_HVP) seed_ok(calls[k], "result", f64_vec(g, 3));
            if (e == TSR_EP_HVP) {
                tsr_array t = f64_vec(ta, 3), t_s = f64_scalar(&ts);
                cr_assert_eq(tsr_call_set_tangent(calls[k], "a", &t), 0);
                cr_assert_eq(tsr_call_set_tangent(calls[k], "s", &t_s), 0);
            }
            run_ok(calls[k]);
        }
        cr_assert_eq(tsr_call_n_results(calls[0]), tsr_call_n_results(calls[1]));
        for (int32_t r = 0; r < tsr_call_n_results(calls[0]); r++) {
            const tsr_array *x = tsr_call_result(calls[0], r), *y = tsr_call_result(calls[1], r);
            cr_assert_eq(x->rank, y->rank, "endpoint %d, result %d", e, (int)r);
            cr_assert_eq(memcmp(x->shape, y->shape, (size_t)x->rank * sizeof(int64_t)), 0);
            if (e == TSR_EP_ABSTRACT_EVAL) continue;
            size_t n = (size_t)tsr_array_count(x);
            cr_assert_eq(memcmp(x->data, y->data, n * sizeof(double)), 0,
                         "endpoint %d, result %d differs", e, (int)r);
        }
        tsr_call_free(calls[0]);
        tsr_call_free(calls[1]);
    }
    tsr_close(remote);
    tsr_close(local);
}
