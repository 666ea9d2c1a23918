/* SPDX-License-Identifier: MIT */
/* Worker processes seen from the host (worker_start, worker_roundtrip,
 * worker_stop) and the worker's serving loop behind them: real plugins
 * run in tessera-worker (and in fork mode), requests written by hand into
 * the channel with binrefs into a real arena. Internal functions: linked
 * against the objects. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/arena.h"
#include "shm/channel.h"
#include "backends/worker/worker_proc.h"

#include "worker_util.h"

#define WORKER_EXE TSR_BINARY_DIR "/bin/tessera-worker"

static char why[TSR_ERRMSG_MAX];
static arena *A;
static worker_proc W;

/* ---- collected output -------------------------------------------------------- */

typedef struct lines {
    int n;
    char *text[256];
} lines;
static lines out;

static void collect(void *user, const char *line) {
    lines *l = user;
    if (l->n < 256) l->text[l->n++] = strdup(line);
}

static int find_line(const char *text) {
    for (int i = 0; i < out.n; i++)
        if (strcmp(out.text[i], text) == 0) return i;
    return -1;
}

static void show_lines(void) {
    for (int i = 0; i < out.n; i++) cr_log_info("line %d: %.80s", i, out.text[i]);
}

/* ---- fixture ---------------------------------------------------------------- */

static void setup(void) {
    memset(&W, 0, sizeof W);
    memset(&out, 0, sizeof out);
    int rc = arena_create(&A, 0, why, sizeof why);
    cr_assert_eq(rc, 0, "arena_create: %s", why);
}

static void teardown(void) {
    worker_stop(&W);
    arena_destroy(A);
    A = NULL;
    expect_no_own_segments();
    for (int i = 0; i < out.n; i++) free(out.text[i]);
}

TestSuite(worker, .init = setup, .fini = teardown, .timeout = 60);

static worker_spawn_opts opts_for(const char *plugin, const char *config_json) {
    return (worker_spawn_opts){
        .worker_exe = WORKER_EXE,
        .plugin_path = plugin,
        .arena = A,
        .config_json = config_json,
        .spin_ns = 20000,
        .start_timeout_ms = 20000,
        .output = collect,
        .output_user = &out,
    };
}

static char *start_ok(worker_proc *w, const worker_spawn_opts *o) {
    char *schema = NULL;
    int rc = worker_start(w, o, &schema, why, sizeof why);
    cr_assert_eq(rc, 0, "worker_start: %d %s", rc, why);
    cr_assert_not_null(schema);
    cr_assert(w->alive);
    return schema;
}

static void start_plain(const char *plugin, const char *config_json) {
    worker_spawn_opts o = opts_for(plugin, config_json);
    free(start_ok(&W, &o));
}

/* ---- requests written by hand ---------------------------------------------- */

static void wire_f64(wire_array *w, void *p, int32_t rank, const int64_t *shape) {
    memset(w, 0, sizeof *w);
    w->dtype = TSR_FLOAT64;
    w->rank = rank;
    int64_t count = 1;
    for (int32_t d = 0; d < rank; d++) count *= (w->shape[d] = shape[d]);
    if (p) {
        cr_assert_eq(arena_locate(A, p, count ? (size_t)count * 8 : 1, &w->ref), 0);
        w->ref.bytes = (uint64_t)count * 8;
    }
}

static double *arena_f64(int64_t n) {
    double *p = arena_alloc(A, (size_t)n * 8, why, sizeof why);
    cr_assert_not_null(p, "arena_alloc: %s", why);
    return p;
}

static chan_request_view request(worker_proc *w, tsr_endpoint ep, int32_t n_in, int32_t n_res) {
    chan_block *b = w->end.blk;
    b->endpoint = ep;
    b->n_inputs = n_in;
    b->n_wrt_in = b->n_wrt_out = b->n_seeds = 0;
    b->n_results = n_res;
    b->status = 0;
    b->message[0] = '\0';
    chan_request_view v;
    cr_assert_eq(chan_request_layout(b, &v), 0);
    return v;
}

/* apply of a one-input, one-output plugin (x -> y, float64 (n,)); y's
 * place in the arena is returned. */
static double *write_apply(worker_proc *w, const double *x, int64_t n) {
    chan_request_view v = request(w, TSR_EP_APPLY, 1, 1);
    double *xa = arena_f64(n), *ya = arena_f64(n);
    memcpy(xa, x, (size_t)n * 8);
    memset(ya, 0, (size_t)n * 8);
    wire_f64(&v.inputs[0], xa, 1, &n);
    wire_f64(&v.results[0], ya, 1, &n);
    return ya;
}

static int roundtrip(worker_proc *w, int timeout_ms) {
    return worker_roundtrip(w, CHAN_REQUEST, timeout_ms, why, sizeof why);
}

static void expect_done(worker_proc *w, int st) {
    cr_assert_eq(st, CHAN_DONE, "round trip: %d %s", st, st < 0 ? why : "");
    cr_assert_eq(w->end.blk->status, 0, "status %d: %s", w->end.blk->status,
                 w->end.blk->message);
}

/* ---- start ------------------------------------------------------------------- */

Test(worker, start_sends_the_schema_with_what_only_the_plugin_knows) {
    worker_spawn_opts o = opts_for(BUNDLED_PLUGIN("noop"), NULL);
    char *schema = start_ok(&W, &o);
    json_error_t jerr;
    json_t *root = json_loads(schema, 0, &jerr);
    cr_assert_not_null(root, "schema is not JSON: %s\n%s", jerr.text, schema);
    cr_expect_str_eq(json_string_value(json_object_get(root, "name")), "noop");
    cr_expect(json_is_true(json_object_get(root, "thread_safe")), "%s", schema);
    json_t *impl = json_object_get(root, "implemented");
    cr_assert(json_is_array(impl), "%s", schema);
    cr_expect_eq(json_array_size(impl), 5);
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(root, "inputs"), 0), "name")),
                     "x");
    json_decref(root);
    free(schema);
    cr_expect_gt(W.pid, 0);
    cr_expect_geq(W.pidfd, 0);
}

Test(worker, schema_says_not_thread_safe_and_lists_only_implemented_endpoints) {
    worker_spawn_opts o = opts_for(TEST_PLUGIN("crash"), NULL);
    char *schema = start_ok(&W, &o);
    cr_expect(strstr(schema, "\"thread_safe\":false") != NULL, "%s", schema);
    cr_expect(strstr(schema, "\"implemented\":[\"apply\"]") != NULL, "%s", schema);
    free(schema);
}

Test(worker, missing_plugin_fails_with_the_workers_load_message) {
    worker_spawn_opts o = opts_for("/nonexistent/dir/nothing.so", NULL);
    char *schema = NULL;
    int rc = worker_start(&W, &o, &schema, why, sizeof why);
    cr_expect_eq(rc, TSR_E_LOAD, "%d %s", rc, why);
    cr_expect(strstr(why, "cannot load '/nonexistent/dir/nothing.so'") != NULL, "%s", why);
    cr_expect(strstr(why, "No such file") != NULL, "%s", why);
    cr_expect_null(schema);
    cr_expect_eq(W.open, 0, "nothing is left behind");
}

Test(worker, failing_init_fails_with_the_plugins_message) {
    worker_spawn_opts o = opts_for(TEST_PLUGIN("init_fails"), NULL);
    char *schema = NULL;
    int rc = worker_start(&W, &o, &schema, why, sizeof why);
    cr_expect_eq(rc, TSR_E_INIT, "%d %s", rc, why);
    cr_expect(strstr(why, "cannot open mesh 'missing.msh'") != NULL, "%s", why);
}

Test(worker, configuration_reaches_the_plugins_init) {
    worker_spawn_opts o = opts_for(TEST_PLUGIN("init_fails"), "{\"quiet\":\"1\"}");
    char *schema = NULL;
    int rc = worker_start(&W, &o, &schema, why, sizeof why);
    cr_expect_eq(rc, TSR_E_INIT, "%d %s", rc, why);
    cr_expect(strstr(why, "gave no message") != NULL, "quiet=1 changes the failure: %s", why);
}

Test(worker, malformed_configuration_is_refused) {
    worker_spawn_opts o = opts_for(BUNDLED_PLUGIN("noop"), "{\"a\": 3}");
    char *schema = NULL;
    cr_expect_eq(worker_start(&W, &o, &schema, why, sizeof why), TSR_E_ARGUMENT);
    cr_expect(strstr(why, "'a'") != NULL, "%s", why);
    o.config_json = "[1,";
    cr_expect_eq(worker_start(&W, &o, &schema, why, sizeof why), TSR_E_ARGUMENT);
}

Test(worker, missing_executable_is_a_worker_error) {
    worker_spawn_opts o = opts_for(BUNDLED_PLUGIN("noop"), NULL);
    o.worker_exe = "/nonexistent/tessera-worker";
    char *schema = NULL;
    int rc = worker_start(&W, &o, &schema, why, sizeof why);
    cr_expect_eq(rc, TSR_E_WORKER, "%d %s", rc, why);
    cr_expect(strstr(why, "/nonexistent/tessera-worker") != NULL, "%s", why);
}

Test(worker, missing_working_directory_is_refused_before_starting) {
    worker_spawn_opts o = opts_for(BUNDLED_PLUGIN("noop"), NULL);
    o.cwd = "/nonexistent/dir";
    char *schema = NULL;
    cr_expect_eq(worker_start(&W, &o, &schema, why, sizeof why), TSR_E_ARGUMENT);
    cr_expect(strstr(why, "/nonexistent/dir") != NULL, "%s", why);
}

Test(worker, crash_in_init_is_a_death_before_ready) {
    worker_spawn_opts o = opts_for(TEST_PLUGIN("crash"), "{\"fault\":\"exit:5\",\"when\":\"init\"}");
    char *schema = NULL;
    int rc = worker_start(&W, &o, &schema, why, sizeof why);
    cr_expect_eq(rc, TSR_E_WORKER, "%d %s", rc, why);
    cr_expect(strstr(why, "died before it was ready: exited with status 5") != NULL, "%s", why);
    cr_expect_geq(find_line("crash: about to exit:5"), 0, "the last words are forwarded");
}

Test(worker, slow_init_times_out_and_the_worker_is_killed) {
    worker_spawn_opts o = opts_for(TEST_PLUGIN("hang"), "{\"when\":\"init\"}");
    o.start_timeout_ms = 300;
    char *schema = NULL;
    int rc = worker_start(&W, &o, &schema, why, sizeof why);
    cr_expect_eq(rc, TSR_E_TIMEOUT, "%d %s", rc, why);
    cr_expect(strstr(why, "did not load the plugin within 300 ms") != NULL, "%s", why);
    cr_expect(strstr(why, "was killed") != NULL, "%s", why);
}

/* ---- calls ------------------------------------------------------------------ */

Test(worker, apply_round_trip_on_noop_through_the_arena) {
    start_plain(BUNDLED_PLUGIN("noop"), NULL);
    const double x[4] = {1, -2, 3.5, 1e300};
    double *y = write_apply(&W, x, 4);
    expect_done(&W, roundtrip(&W, 5000));
    cr_expect_arr_eq(y, x, sizeof x);
    /* many more, in the same buffers */
    chan_request_view v;
    cr_assert_eq(chan_request_layout(W.end.blk, &v), 0);
    double *xa = arena_address(A, &v.inputs[0].ref);
    for (int i = 0; i < 2000; i++) {
        xa[0] = i;
        expect_done(&W, roundtrip(&W, 5000));
        cr_assert_eq(y[0], (double)i);
    }
}

Test(worker, results_come_back_with_their_final_shapes) {
    start_plain(BUNDLED_PLUGIN("noop"), NULL);
    chan_request_view v = request(&W, TSR_EP_ABSTRACT_EVAL, 1, 1);
    int64_t n = 7, unknown = -1;
    wire_f64(&v.inputs[0], NULL, 1, &n);
    wire_f64(&v.results[0], NULL, 1, &unknown);
    expect_done(&W, roundtrip(&W, 5000));
    cr_expect_eq(v.results[0].rank, 1);
    cr_expect_eq(v.results[0].shape[0], 7);
    cr_expect_eq(v.results[0].dtype, TSR_FLOAT64);
}

/* The plugin allocates results whose shape depends on values: the host
 * answers each CHAN_ALLOC with a binref (or refuses it). */
static int serve_allocs(worker_proc *w, int st, int refuse) {
    chan_block *b = w->end.blk;
    while (st == CHAN_ALLOC) {
        chan_request_view v;
        cr_assert_eq(chan_request_layout(b, &v), 0);
        wire_array *r = &v.results[b->alloc_index];
        if (refuse) {
            b->status = TSR_E_SHM;
            snprintf(b->message, sizeof b->message, "the arena is full (test)");
        } else {
            int64_t count = 1;
            for (int32_t d = 0; d < r->rank; d++) count *= r->shape[d];
            double *p = arena_f64(count ? count : 1);
            int64_t shape[TSR_MAX_RANK];
            memcpy(shape, r->shape, sizeof shape);
            wire_f64(r, p, r->rank, shape);
            b->status = 0;
        }
        st = worker_roundtrip(w, CHAN_ALLOC_DONE, 5000, why, sizeof why);
    }
    return st;
}

static chan_request_view write_misbehave_apply(void) {
    chan_request_view v = request(&W, TSR_EP_APPLY, 1, 3);
    int64_t n = 3, unknown = -1, rows[2] = {-1, 3};
    double *x = arena_f64(3), *dense = arena_f64(3);
    for (int i = 0; i < 3; i++) x[i] = i + 1;
    wire_f64(&v.inputs[0], x, 1, &n);
    wire_f64(&v.results[0], dense, 1, &n);
    wire_f64(&v.results[1], NULL, 1, &unknown);
    wire_f64(&v.results[2], NULL, 2, rows);
    return v;
}

Test(worker, plugin_allocated_results_go_through_the_host) {
    start_plain(TEST_PLUGIN("misbehave"), NULL);
    chan_request_view v = write_misbehave_apply();
    expect_done(&W, serve_allocs(&W, roundtrip(&W, 5000), 0));
    const double *dense = arena_address(A, &v.results[0].ref);
    cr_expect_eq(dense[2], 6.0);
    cr_expect_eq(v.results[1].rank, 1);
    cr_expect_eq(v.results[1].shape[0], 2);
    const double *ragged = arena_address(A, &v.results[1].ref);
    cr_assert_not_null(ragged);
    cr_expect(ragged[0] == 1.0 && ragged[1] == 2.0);
    cr_expect_eq(v.results[2].shape[0], 1);
    cr_expect_eq(v.results[2].shape[1], 3);
}

Test(worker, refused_allocation_fails_the_call_with_the_hosts_message) {
    start_plain(TEST_PLUGIN("misbehave"), NULL);
    write_misbehave_apply();
    int st = serve_allocs(&W, roundtrip(&W, 5000), 1);
    cr_assert_eq(st, CHAN_DONE);
    cr_expect_eq(W.end.blk->status, TSR_E_SHM);
    cr_expect_str_eq(W.end.blk->message, "the arena is full (test)");
}

Test(worker, plugin_failures_read_as_in_process) {
    start_plain(TEST_PLUGIN("misbehave"), "{\"behave\":\"fail_msg\"}");
    write_misbehave_apply();
    cr_assert_eq(roundtrip(&W, 5000), CHAN_DONE);
    cr_expect_eq(W.end.blk->status, TSR_E_PLUGIN);
    cr_expect_eq(W.end.blk->plugin_status, 7);
    cr_expect_str_eq(W.end.blk->message, "the plugin failed: the solver diverged");
    worker_stop(&W);
    start_plain(TEST_PLUGIN("misbehave"), "{\"behave\":\"fail_silent\"}");
    write_misbehave_apply();
    cr_assert_eq(roundtrip(&W, 5000), CHAN_DONE);
    cr_expect_eq(W.end.blk->status, TSR_E_PLUGIN);
    cr_expect_str_eq(W.end.blk->message, "the plugin failed (status 3) without a message");
}

Test(worker, a_result_whose_dtype_the_plugin_changed_is_refused) {
    start_plain(TEST_PLUGIN("misbehave"), "{\"behave\":\"change_dtype\"}");
    write_misbehave_apply();
    int st = serve_allocs(&W, roundtrip(&W, 5000), 0);
    cr_assert_eq(st, CHAN_DONE);
    cr_expect_eq(W.end.blk->status, TSR_E_PLUGIN_RESULT, "%s", W.end.blk->message);
    cr_expect(strstr(W.end.blk->message, "output 'dense'") != NULL, "%s", W.end.blk->message);
}

/* ---- malformed requests ------------------------------------------------------ */

/* A bad request is answered with an error; the worker lives on. */
static void expect_refused(int code, const char *needle) {
    cr_assert_eq(roundtrip(&W, 5000), CHAN_DONE, "%s", why);
    cr_expect_eq(W.end.blk->status, code, "%s", W.end.blk->message);
    cr_expect(strstr(W.end.blk->message, needle) != NULL, "expected \"%s\" in \"%s\"", needle,
              W.end.blk->message);
    const double x[2] = {5, 6};
    double *y = write_apply(&W, x, 2);
    expect_done(&W, roundtrip(&W, 5000));
    cr_expect_eq(y[1], 6.0);
}

Test(worker, malformed_requests_are_answered_not_crashed_on) {
    start_plain(BUNDLED_PLUGIN("noop"), NULL);
    const double x[2] = {1, 2};
    chan_block *b = W.end.blk;

    write_apply(&W, x, 2);
    b->endpoint = 42;
    expect_refused(TSR_E_ARGUMENT, "endpoint 42");

    write_apply(&W, x, 2);
    b->n_inputs = 3;
    expect_refused(TSR_E_PAYLOAD, "3 inputs");

    write_apply(&W, x, 2);
    b->n_results = INT32_MAX;
    expect_refused(TSR_E_PAYLOAD, "do not fit the channel");

    chan_request_view v;
    write_apply(&W, x, 2);
    chan_request_layout(b, &v);
    v.inputs[0].ref.offset = 1ull << 40;
    expect_refused(TSR_E_PAYLOAD, "out of bounds");

    write_apply(&W, x, 2);
    v.inputs[0].ref.bytes = 8;
    expect_refused(TSR_E_PAYLOAD, "binref of 8 bytes for 2 elements");

    write_apply(&W, x, 2);
    v.inputs[0].ref.seg = 60;
    expect_refused(TSR_E_PAYLOAD, "input 'x'");

    write_apply(&W, x, 2);
    v.inputs[0].dtype = TSR_FLOAT32;
    expect_refused(TSR_E_PAYLOAD, "float64");

    write_apply(&W, x, 2);
    v.inputs[0].rank = 99;
    expect_refused(TSR_E_PAYLOAD, "rank 99");

    write_apply(&W, x, 2);
    v.inputs[0].shape[0] = -4;
    expect_refused(TSR_E_PAYLOAD, "dimension 0 is -4");

    write_apply(&W, x, 2);
    v.inputs[0].shape[0] = INT64_MAX / 2;
    expect_refused(TSR_E_PAYLOAD, "input 'x'");
}

Test(worker, differentiation_indices_are_checked) {
    start_plain(BUNDLED_PLUGIN("noop"), NULL);
    chan_block *b = W.end.blk;
    b->endpoint = TSR_EP_JVP;
    b->n_inputs = 1;
    b->n_wrt_in = 1;
    b->n_wrt_out = 1;
    b->n_seeds = 1;
    b->n_results = 1;
    chan_request_view v;
    cr_assert_eq(chan_request_layout(b, &v), 0);
    int64_t n = 2;
    double *x = arena_f64(2), *t = arena_f64(2), *y = arena_f64(2);
    x[0] = x[1] = 0;
    t[0] = 3;
    t[1] = 4;
    wire_f64(&v.inputs[0], x, 1, &n);
    wire_f64(&v.seeds[0], t, 1, &n);
    wire_f64(&v.results[0], y, 1, &n);
    v.wrt_in[0] = 0;
    v.wrt_out[0] = 0;
    expect_done(&W, roundtrip(&W, 5000));
    cr_expect(y[0] == 3 && y[1] == 4, "jvp of the identity is the tangent");
    v.wrt_in[0] = 1;
    cr_assert_eq(roundtrip(&W, 5000), CHAN_DONE);
    cr_expect_eq(b->status, TSR_E_PAYLOAD);
    cr_expect(strstr(b->message, "wrt_in[0] = 1") != NULL, "%s", b->message);
    v.wrt_in[0] = 0;
    b->n_seeds = 0;
    cr_assert_eq(roundtrip(&W, 5000), CHAN_DONE);
    cr_expect_eq(b->status, TSR_E_PAYLOAD, "a jvp without its tangent: %s", b->message);
}

/* ---- output ------------------------------------------------------------------ */

Test(worker, output_is_forwarded_line_by_line) {
    worker_spawn_opts o = opts_for(TEST_PLUGIN("talk"),
                                   "{\"lines\":\"2\",\"env\":\"TSR_TALK_VAR\",\"long\":\"5000\","
                                   "\"partial\":\"no newline\",\"init_say\":\"hello from init\"}");
    const char *env[] = {"TSR_TALK_VAR=from the host", NULL};
    o.env_set = env;
    o.cwd = "/tmp";
    o.spin_ns = 0; /* a sleeping host drains output before the answer */
    free(start_ok(&W, &o));
    const double x[1] = {1};
    write_apply(&W, x, 1);
    expect_done(&W, roundtrip(&W, 5000));
    worker_stop(&W); /* the last, unterminated line comes out at the end */
    show_lines();
    int init = find_line("hello from init"), o1 = find_line("out 1"), o2 = find_line("out 2");
    int err = find_line("err line"), cwd = find_line("cwd=/tmp");
    int env_line = find_line("env=from the host"), warn = find_line(WORKER_LOG_MARKER "2 a warning from talk");
    int tail = find_line("no newline");
    cr_expect(init >= 0 && o1 > init && o2 > o1 && err > o2 && cwd > err, "order");
    cr_expect(env_line > cwd && warn > env_line && tail > warn, "order");
    /* the 5000-character line arrives in two pieces */
    int pieces = 0, chars = 0;
    for (int i = 0; i < out.n; i++)
        if (out.text[i][0] == 'x') {
            pieces++;
            chars += (int)strlen(out.text[i]);
        }
    cr_expect_eq(chars, 5000);
    cr_expect_eq(pieces, 2);
}

/* A host that slept through a call (spin_ns 0) forwards the call's
 * output before it returns. A call answered before the host could sleep
 * (rare: the worker beat it) shows nothing, so it is tried again rather
 * than passed unchecked. */
Test(worker, a_slow_calls_output_arrives_before_its_answer) {
    worker_spawn_opts o = opts_for(TEST_PLUGIN("talk"), "{\"lines\":\"1\"}");
    o.spin_ns = 0;
    free(start_ok(&W, &o));
    const double x[1] = {1};
    for (int i = 0; i < 20; i++) {
        write_apply(&W, x, 1);
        expect_done(&W, roundtrip(&W, 5000));
        if (W.end.slept) break;
    }
    cr_assert(W.end.slept, "the host never slept through a call: nothing was checked");
    cr_expect_geq(find_line("out 1"), 0);
    cr_expect_geq(find_line(WORKER_LOG_MARKER "2 a warning from talk"), 0);
}

Test(worker, cleared_environment_keeps_only_what_is_set) {
    setenv("TSR_TALK_VAR", "inherited", 1);
    worker_spawn_opts o = opts_for(TEST_PLUGIN("talk"), "{\"lines\":\"0\",\"env\":\"TSR_TALK_VAR\"}");
    free(start_ok(&W, &o));
    write_apply(&W, (const double[]){1}, 1);
    expect_done(&W, roundtrip(&W, 5000));
    worker_stop(&W);
    cr_expect_geq(find_line("env=inherited"), 0, "inherited by default");
    o.clear_env = 1;
    free(start_ok(&W, &o));
    write_apply(&W, (const double[]){1}, 1);
    expect_done(&W, roundtrip(&W, 5000));
    worker_stop(&W);
    cr_expect_geq(find_line("env=(unset)"), 0, "cleared");
}

Test(worker, host_fds_left_inheritable_do_not_reach_the_worker) {
    int leaked = dup2(STDERR_FILENO, 100); /* no FD_CLOEXEC */
    cr_assert_eq(leaked, 100);
    worker_spawn_opts o = opts_for(TEST_PLUGIN("talk"), "{\"lines\":\"0\",\"list_fds\":\"1\"}");
    free(start_ok(&W, &o));
    write_apply(&W, (const double[]){1}, 1);
    expect_done(&W, roundtrip(&W, 5000));
    worker_stop(&W);
    close(leaked);
    show_lines();
    cr_expect_geq(find_line("fd 3"), 0, "the channel is at fd 3");
    cr_expect_geq(find_line("fd 5"), 0, "the host's doorbell is at fd 5");
    cr_expect_geq(find_line("fd 6"), 0, "the socket the arena's segments arrive on is at fd 6");
    cr_expect_lt(find_line("fd 100"), 0, "the host's fd 100 was closed in the worker");
}

/* ---- deaths and timeouts --------------------------------------------------- */

static void expect_death(const char *fault, const char *needle) {
    char config[128];
    snprintf(config, sizeof config, "{\"fault\":\"%s\"}", fault);
    start_plain(TEST_PLUGIN("crash"), config);
    write_apply(&W, (const double[]){1, 2}, 2);
    int st = roundtrip(&W, 5000);
    cr_expect_eq(st, TSR_E_WORKER, "%d %s", st, why);
    cr_expect(strstr(why, needle) != NULL, "expected \"%s\" in \"%s\"", needle, why);
    cr_expect_eq(W.alive, 0);
    cr_expect(W.reaped);
    char about[64];
    snprintf(about, sizeof about, "crash: about to %s", fault);
    cr_expect_geq(find_line(about), 0, "output just before the death is forwarded");
    /* the worker is gone; calls fail at once */
    cr_expect_eq(roundtrip(&W, 5000), TSR_E_WORKER);
}

Test(worker, segfault_is_reported_with_its_signal) {
    expect_death("segv", "killed by signal 11 (Segmentation fault)");
}

Test(worker, abort_is_reported_with_its_signal) { expect_death("abort", "killed by signal 6"); }

Test(worker, exit_is_reported_with_its_status) { expect_death("exit", "exited with status 3"); }

Test(worker, worker_killed_during_a_call) {
    start_plain(TEST_PLUGIN("hang"), NULL);
    write_apply(&W, (const double[]){1}, 1);
    pid_t killer = fork();
    cr_assert_geq(killer, 0);
    if (killer == 0) {
        usleep(200 * 1000);
        kill(W.pid, SIGKILL);
        _exit(0);
    }
    int st = roundtrip(&W, 20000);
    waitpid(killer, NULL, 0);
    cr_expect_eq(st, TSR_E_WORKER, "%d %s", st, why);
    cr_expect(strstr(why, "killed by signal 9") != NULL, "%s", why);
}

/* A call that does not answer within its timeout ends in TSR_E_TIMEOUT,
 * not before the timeout, with the worker killed and reaped. */
Test(worker, hanging_endpoint_times_out_and_is_killed) {
    start_plain(TEST_PLUGIN("hang"), "{\"how\":\"spin\"}");
    write_apply(&W, (const double[]){1}, 1);
    pid_t pid = W.pid;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = roundtrip(&W, 250);
    /* A lower bound only (load can only lengthen a wait); how long the
     * timeout and the kill take is bench_waits' to say. */
    double ms = ms_since(&t0);
    cr_expect_eq(st, TSR_E_TIMEOUT, "%d %s", st, why);
    char expect[128];
    snprintf(expect, sizeof expect, "did not answer within 250 ms; the worker (pid %ld) was killed",
             (long)pid);
    cr_expect_str_eq(why, expect);
    cr_expect_geq(ms, 249.0, "gave up after %.0f ms of 250", ms);
    cr_expect_eq(kill(pid, 0), -1, "killed and reaped");
    cr_expect_eq(errno, ESRCH);
}

Test(worker, a_slow_answer_within_the_timeout_is_fine) {
    start_plain(TEST_PLUGIN("hang"), "{\"hang_ms\":\"100\"}");
    double *y = write_apply(&W, (const double[]){9}, 1);
    expect_done(&W, roundtrip(&W, 5000));
    cr_expect_eq(y[0], 9.0);
}

Test(worker, exit_status_unknown_when_the_host_ignores_sigchld) {
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGCHLD, &ign, &old);
    start_plain(TEST_PLUGIN("crash"), "{\"fault\":\"segv\"}");
    write_apply(&W, (const double[]){1}, 1);
    int st = roundtrip(&W, 5000);
    sigaction(SIGCHLD, &old, NULL);
    cr_expect_eq(st, TSR_E_WORKER, "%d %s", st, why);
    cr_expect(strstr(why, "exit status unknown") != NULL, "%s", why);
}

/* An idle worker leaves by itself, with status 0, at CHAN_EXIT (what
 * worker_stop posts first; its kill is for a worker that lingers). Stop
 * is safe to repeat and on a worker never started. How long a stop takes:
 * bench_waits. */
Test(worker, idle_worker_leaves_at_chan_exit_and_stop_is_safe_to_repeat) {
    start_plain(BUNDLED_PLUGIN("noop"), NULL);
    pid_t pid = W.pid;
    chan_post(&W.end, CHAN_EXIT);
    /* 20 s only so that a worker that stays does not hang the test */
    struct pollfd gone = {.fd = W.pidfd, .events = POLLIN};
    cr_assert_eq(poll(&gone, 1, 20000), 1, "the worker did not leave at CHAN_EXIT");
    siginfo_t si;
    memset(&si, 0, sizeof si);
    cr_assert_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT), 0);
    cr_expect(si.si_code == CLD_EXITED && si.si_status == 0, "the worker %s",
              worker_describe_exit(si.si_code, si.si_status, why, sizeof why));
    worker_stop(&W);
    cr_expect_eq(kill(pid, 0), -1, "stopped and reaped");
    worker_stop(&W);
    worker_proc never;
    memset(&never, 0, sizeof never);
    worker_stop(&never); /* never started: nothing to do, fd 0 untouched */
    cr_expect_neq(fcntl(0, F_GETFD), -1);
}

Test(worker, worker_exits_when_its_host_dies) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t host = fork();
    cr_assert_geq(host, 0);
    if (host == 0) {
        /* a host of its own: its own arena and worker */
        arena *a = NULL;
        worker_proc w;
        char *schema = NULL;
        if (arena_create(&a, 0, why, sizeof why) != 0) _exit(2);
        worker_spawn_opts o = {.worker_exe = WORKER_EXE, .plugin_path = BUNDLED_PLUGIN("noop"),
                               .arena = a, .spin_ns = 20000,
                               .start_timeout_ms = 20000};
        if (worker_start(&w, &o, &schema, why, sizeof why) != 0) _exit(3);
        pid_t worker = w.pid;
        if (write(p[1], &worker, sizeof worker) != sizeof worker) _exit(4);
        for (;;) pause();
    }
    close(p[1]);
    pid_t worker = 0;
    cr_assert_eq(read(p[0], &worker, sizeof worker), (ssize_t)sizeof worker,
                 "the child host could not start its worker");
    close(p[0]);
    cr_assert_gt(worker, 0);
    cr_expect_eq(process_gone(worker), 0, "the worker runs while its host does");
    kill(host, SIGKILL);
    waitpid(host, NULL, 0);
    /* 10 s only so that a worker that stays does not hang the test */
    int left = wait_gone(worker, 10000);
    cr_expect(left, "the worker (pid %ld) outlived its host", (long)worker);
    if (!left) kill(worker, SIGKILL);
    /* Its segments had no names: nothing is left to clear. */
    int segments = shm_entries_of(host);
    cr_expect_eq(segments, 0, "%d segments of the dead host remain", segments);
}

/* ---- fork mode --------------------------------------------------------------- */

/* Criterion runs each test in a process with threads of its own, so fork
 * mode is tried in a forked child, which has one (child_verdict.h). */

static const char *fork_mode_apply(void) {
    CHECK(process_thread_count() == 1, "the child has %d threads", process_thread_count());
    worker_spawn_opts o = opts_for(BUNDLED_PLUGIN("noop"), NULL);
    o.use_fork = 1;
    o.worker_exe = NULL;
    char *schema = NULL;
    CHECK(worker_start(&W, &o, &schema, why, sizeof why) == 0, "worker_start: %s", why);
    free(schema);
    const double x[3] = {4, 5, 6};
    double *y = write_apply(&W, x, 3);
    int st = roundtrip(&W, 5000);
    CHECK(st == CHAN_DONE && W.end.blk->status == 0, "round trip %d: %s %s", st, why,
          W.end.blk->message);
    CHECK(memcmp(y, x, sizeof x) == 0, "y != x");
    worker_stop(&W);
    return "ok";
}

Test(worker, fork_mode_serves_in_a_single_threaded_host) {
    run_in_child(fork_mode_apply, NULL);
}

static const char *fork_mode_death(void) {
    worker_spawn_opts o = opts_for(TEST_PLUGIN("crash"), "{\"fault\":\"exit:4\"}");
    o.use_fork = 1;
    char *schema = NULL;
    CHECK(worker_start(&W, &o, &schema, why, sizeof why) == 0, "worker_start: %s", why);
    free(schema);
    write_apply(&W, (const double[]){1}, 1);
    int st = roundtrip(&W, 5000);
    worker_stop(&W);
    CHECK(st == TSR_E_WORKER && strstr(why, "exited with status 4"), "round trip %d: %s", st,
          why);
    return "ok";
}

Test(worker, fork_mode_worker_dies_too) { run_in_child(fork_mode_death, NULL); }

static void *blocked_thread(void *arg) {
    int fd = *(int *)arg;
    char c;
    while (read(fd, &c, 1) < 0 && errno == EINTR) {
    }
    return NULL;
}

Test(worker, fork_mode_is_refused_in_a_threaded_host) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, blocked_thread, &p[0]), 0);
    int threads = process_thread_count();
    cr_expect_geq(threads, 2);
    worker_spawn_opts o = opts_for(BUNDLED_PLUGIN("noop"), NULL);
    o.use_fork = 1;
    char *schema = NULL;
    int rc = worker_start(&W, &o, &schema, why, sizeof why);
    cr_expect_eq(rc, TSR_E_ARGUMENT, "%d %s", rc, why);
    cr_expect(strstr(why, "single-threaded") != NULL, "%s", why);
    char count[32];
    snprintf(count, sizeof count, "%d threads", threads);
    cr_expect(strstr(why, count) != NULL, "%s", why);
    cr_assert_eq(write(p[1], "x", 1), 1);
    pthread_join(t, NULL);
    close(p[0]);
    close(p[1]);
}

/* ---- small parts ---------------------------------------------------------------- */

Test(worker, exits_are_described_plainly) {
    char buf[128];
    cr_expect_str_eq(worker_describe_exit(CLD_EXITED, 3, buf, sizeof buf), "exited with status 3");
    cr_expect_str_eq(worker_describe_exit(CLD_KILLED, 9, buf, sizeof buf),
                     "killed by signal 9 (Killed)");
    cr_expect_str_eq(worker_describe_exit(CLD_DUMPED, 11, buf, sizeof buf),
                     "killed by signal 11 (Segmentation fault), core dumped");
}

Test(worker, worker_executable_refuses_bad_arguments) {
    int status = system(WORKER_EXE " --plugin x --chan-fd nope 2>/dev/null");
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status %#x", status);
    status = system(WORKER_EXE " 2>/dev/null");
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status %#x", status);
}
