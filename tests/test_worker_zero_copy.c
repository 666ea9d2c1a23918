/* SPDX-License-Identifier: MIT */
/*
 * What crosses between host and worker, and how: inputs allocated with
 * tsr_component_alloc are passed by reference (the counters say so) and are read
 * where the host wrote them; other inputs are copied once per call;
 * results are views of shared memory that the worker wrote. And what the
 * worker's process sees of its host: output lines reach the output
 * callback labelled with the component, environment and working directory
 * are the ones asked for.
 */
#define _GNU_SOURCE /* nftw, in temp_dir.h */
#include <fcntl.h>

#include "temp_dir.h"
#include "worker_util.h"

TestSuite(zero_copy, .fini = expect_no_own_segments, .timeout = 60);

/* ---- inputs ------------------------------------------------------------------ */

Test(zero_copy, arena_inputs_cross_by_reference_and_others_are_copied) {
    tsr_component *c = open_worker_cfg(BUNDLED_PLUGIN("noop"), NULL, NULL, NULL, NULL);
    const int64_t n = 100;
    double *shared = tsr_component_alloc(c, (size_t)n * sizeof(double));
    cr_assert_not_null(shared);
    cr_expect_eq((uintptr_t)shared % 64, 0, "tsr_component_alloc is 64-byte aligned");
    cr_expect(in_own_shared_memory(shared, (size_t)n * sizeof(double)),
              "tsr_component_alloc in worker mode gives shared memory");
    double *plain = malloc((size_t)n * sizeof(double));
    cr_assert_not_null(plain);
    fill_random(shared, n, 1);
    fill_random(plain, n, 2);

    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(shared, n));
    run_ok(call);
    cr_expect_arr_eq(tsr_call_output(call, "y")->data, shared, (size_t)n * sizeof(double));
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.bytes_by_ref, (uint64_t)n * 8);
    cr_expect_eq(s.bytes_copied, 0);
    cr_expect_eq(s.calls, 1);

    bind_ok(call, "x", f64_vec(plain, n));
    run_ok(call);
    cr_expect_arr_eq(tsr_call_output(call, "y")->data, plain, (size_t)n * sizeof(double));
    s = stats_of(c);
    cr_expect_eq(s.bytes_by_ref, (uint64_t)n * 8, "an ordinary input is not by reference");
    cr_expect_eq(s.bytes_copied, (uint64_t)n * 8, "an ordinary input is copied once");

    /* a slice inside an arena block is in the arena too */
    bind_ok(call, "x", f64_vec(shared + 8, 16));
    run_ok(call);
    cr_expect_arr_eq(tsr_call_output(call, "y")->data, shared + 8, 16 * sizeof(double));
    s = stats_of(c);
    cr_expect_eq(s.bytes_by_ref, (uint64_t)(n + 16) * 8);
    cr_expect_eq(s.bytes_copied, (uint64_t)n * 8);

    tsr_call_free(call);
    tsr_component_free_buffer(c, shared);
    free(plain);
    tsr_close(c);
}

Test(zero_copy, each_input_and_seed_is_counted_where_it_lies) {
    tsr_component *c = open_worker_cfg(BUNDLED_PLUGIN("vectoradd"), NULL, NULL, NULL, NULL);
    const int64_t n = 8;
    double *a = tsr_component_alloc(c, n * sizeof(double)), *t = tsr_component_alloc(c, n * sizeof(double));
    double b[8], s = 3, tb[8];
    cr_assert(a && t);
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 10 * i;
        t[i] = 1;
        tb[i] = 2;
    }
    tsr_call *call = new_call(c, TSR_EP_JVP);
    const char *in[] = {"a", "b"}, *out[] = {"result"};
    bind_ok(call, "a", f64_vec(a, n));
    bind_ok(call, "b", f64_vec(b, n));
    bind_ok(call, "s", f64_scalar(&s));
    wrt_ok(call, in, 2, out, 1);
    seed_ok(call, "a", f64_vec(t, n));
    seed_ok(call, "b", f64_vec(tb, n));
    run_ok(call);
    const double *r = tsr_call_output(call, "result")->data;
    for (int i = 0; i < n; i++) cr_expect_eq(r[i], 1 * s + 2, "jvp[%d]", i);
    tsr_stats st = stats_of(c);
    cr_expect_eq(st.bytes_by_ref, 2 * n * 8, "a and its tangent");
    cr_expect_eq(st.bytes_copied, 2 * n * 8 + 8, "b, its tangent and s");
    tsr_call_free(call);
    tsr_component_free_buffer(c, a);
    tsr_component_free_buffer(c, t);
    tsr_close(c);
}

Test(zero_copy, the_worker_reads_arena_inputs_where_the_host_writes_them) {
    tsr_component *c = open_worker_cfg(BUNDLED_PLUGIN("noop"), NULL, NULL, NULL, NULL);
    double *x = tsr_component_alloc(c, 4 * sizeof(double));
    cr_assert_not_null(x);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 4));
    for (int round = 0; round < 50; round++) {
        /* written between runs, never bound again */
        for (int i = 0; i < 4; i++) x[i] = round * 4 + i;
        run_ok(call);
        const double *y = tsr_call_output(call, "y")->data;
        for (int i = 0; i < 4; i++) cr_assert_eq(y[i], round * 4 + i, "round %d", round);
    }
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.bytes_copied, 0);
    cr_expect_eq(s.bytes_by_ref, 50 * 4 * 8);
    tsr_call_free(call);
    tsr_component_free_buffer(c, x);
    tsr_close(c);
}

Test(zero_copy, a_large_arena_input_crosses_by_reference) {
    tsr_component *c = open_worker_cfg(BUNDLED_PLUGIN("noop"), NULL, NULL, NULL, NULL);
    const int64_t n = 1 << 20; /* 8 MiB, more than the first segment */
    double *x = tsr_component_alloc(c, (size_t)n * sizeof(double));
    cr_assert_not_null(x);
    cr_expect(in_own_shared_memory(x, (size_t)n * sizeof(double)));
    for (int64_t i = 0; i < n; i++) x[i] = (double)i;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, n));
    run_ok(call);
    const double *y = tsr_call_output(call, "y")->data;
    cr_expect(memcmp(y, x, (size_t)n * sizeof(double)) == 0);
    cr_expect_eq(stats_of(c).bytes_copied, 0);
    tsr_call_free(call);
    tsr_component_free_buffer(c, x);
    tsr_close(c);
}

Test(zero_copy, inproc_tsr_alloc_is_aligned_memory_and_nothing_is_staged) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    double *x = tsr_component_alloc(c, 3 * sizeof(double));
    cr_assert_not_null(x);
    cr_expect_eq((uintptr_t)x % 64, 0);
    void *empty = tsr_component_alloc(c, 0);
    cr_expect_not_null(empty, "a zero-byte allocation is a valid pointer");
    x[0] = 1;
    x[1] = 2;
    x[2] = 3;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 3));
    run_ok(call);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.bytes_copied, 0);
    cr_expect_eq(s.worker_starts, 0);
    tsr_call_free(call);
    tsr_component_free_buffer(c, x);
    tsr_component_free_buffer(c, empty);
    tsr_component_free_buffer(c, NULL);
    tsr_close(c);
}

/* ---- results ----------------------------------------------------------------------- */

Test(zero_copy, results_are_views_of_shared_memory_the_worker_wrote) {
    tsr_component *c = open_worker_cfg(TEST_PLUGIN("whoami"), NULL, NULL, NULL, NULL);
    pid_t worker = only_worker();
    double *x = tsr_component_alloc(c, 5 * sizeof(double));
    cr_assert_not_null(x);
    for (int i = 0; i < 5; i++) x[i] = i + 0.5;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 5));
    run_ok(call);
    const tsr_array *y = tsr_call_output(call, "y"), *pid = tsr_call_output(call, "pid");
    /* the worker process wrote its own pid into a page mapped here */
    cr_expect(in_own_shared_memory(pid->data, sizeof(int64_t)),
              "the result is not in this process's shared memory");
    cr_expect_eq(*(const int64_t *)pid->data, (int64_t)worker);
    cr_expect(in_own_shared_memory(y->data, 5 * sizeof(double)));
    cr_expect_eq((uintptr_t)y->data % 64, 0, "results are 64-byte aligned");
    cr_expect_arr_eq(y->data, x, 5 * sizeof(double));
    /* the next run writes into the same buffers */
    const void *y_at = y->data;
    x[0] = 42;
    run_ok(call);
    cr_expect_eq(tsr_call_output(call, "y")->data, y_at, "the result buffer was not reused");
    cr_expect_eq(((const double *)y_at)[0], 42.0);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.bytes_copied, 0, "nothing was copied either way");
    tsr_call_free(call);
    tsr_component_free_buffer(c, x);
    tsr_close(c);
}

/* A result taken over stays in shared memory, untouched by later runs
 * (which get another buffer), until the host frees it. */
Test(zero_copy, a_taken_result_stays_in_shared_memory_past_later_runs) {
    tsr_component *c = open_worker_cfg(BUNDLED_PLUGIN("noop"), NULL, NULL, NULL, NULL);
    double x[300];
    for (int i = 0; i < 300; i++) x[i] = i;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 300));
    run_ok(call);
    double *kept = tsr_call_take_result(call, 0);
    cr_assert_not_null(kept);
    cr_expect(in_own_shared_memory(kept, sizeof x));
    for (int k = 1; k <= 3; k++) {
        x[0] = -k;
        run_ok(call);
        const tsr_array *y = tsr_call_output(call, "y");
        cr_assert_neq(y->data, kept);
        cr_expect_eq(((const double *)y->data)[0], -k);
        cr_expect_eq(kept[0], 0.0, "run %d wrote into the taken result", k);
        cr_expect_eq(kept[299], 299.0);
    }
    tsr_call_free(call);
    tsr_component_free_buffer(c, kept);
    tsr_close(c);
}

Test(zero_copy, plugin_allocated_results_are_in_shared_memory_too) {
    tsr_component *c = open_worker_cfg(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE,
                                       NULL, NULL);
    double x[4] = {1, 0, 0, 0};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 4));
    run_ok(call);
    const tsr_array *y = tsr_call_output(call, "y");
    cr_assert_eq(y->rank, 1);
    cr_assert_eq(y->shape[0], 3);
    cr_expect(in_own_shared_memory(y->data, 3 * sizeof(double)));
    /* the first column of the example matrix */
    const double want[3] = {1.0, 0.5, -2.0};
    cr_expect_arr_eq(y->data, want, sizeof want);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- output, environment, working directory ------------------------------------- */

/* Run talk's apply once in a worker opened with these options, close it,
 * and return what reached the output callback. */
static void talk_once(tsr_options *o, out_lines *lines) {
    out_init(lines);
    tsr_options_set_output(o, out_collect, lines);
    tsr_component *c = open_ok(TEST_PLUGIN("talk"), o);
    double x[1] = {1};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 1));
    run_ok(call);
    tsr_call_free(call);
    tsr_close(c); /* lines still in the pipe come out here at the latest */
    out_show(lines);
}

Test(zero_copy, printed_lines_reach_the_output_callback_labelled_and_in_order) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_config(o, "lines", "3");
    set_config(o, "init_say", "hello from init");
    out_lines l;
    talk_once(o, &l);
    tsr_options_free(o);
    int init = out_find(&l, "hello from init"), o1 = out_find(&l, "out 1"),
        o3 = out_find(&l, "out 3"), err = out_find(&l, "err line");
    cr_expect(init >= 0 && o1 > init && o3 > o1 && err > o3, "lines missing or out of order");
    cr_expect_eq(out_find(&l, "a warning from talk"), -1,
                 "the plugin's log line goes to the log function, not to the output");
    for (int i = 0; i < l.n; i++)
        if (i != init) cr_expect_str_eq(l.component[i], "talk", "line %d: %s", i, l.text[i]);
    /* a line printed during init, before the worker has sent the schema,
     * is labelled with the plugin's name or at least its path */
    if (init >= 0)
        cr_expect(strcmp(l.component[init], "talk") == 0 ||
                      strcmp(l.component[init], TEST_PLUGIN("talk")) == 0,
                  "init's line is labelled '%s'", l.component[init]);
    out_free(&l);
}

Test(zero_copy, without_a_callback_lines_go_to_stderr_prefixed_with_the_component) {
    char path[256];
    temp_path(path, sizeof path);
    int file = open(path, O_WRONLY | O_TRUNC);
    cr_assert_geq(file, 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    cr_assert_geq(saved, 0);
    cr_assert_eq(dup2(file, STDERR_FILENO), STDERR_FILENO);
    close(file);

    tsr_component *c = open_worker_cfg(TEST_PLUGIN("talk"), "lines", "2", NULL, NULL);
    double x[1] = {1};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 1));
    int rc = tsr_call_run(call);
    tsr_call_free(call);
    tsr_close(c);

    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    cr_assert_eq(rc, 0);
    const char *text = read_file_text(path);
    unlink(path);
    cr_assert_not_null(text);
    assert_contains(text, "talk: out 1\ntalk: out 2\n");
    assert_contains(text, "talk: err line\n");
}

Test(zero_copy, environment_and_working_directory_reach_the_worker) {
    setenv("TSR_TALK_VAR", "inherited", 1);
    char dir[256];
    make_temp_dir(dir, sizeof dir, "tessera-cwd");
    char want_cwd[300], host_cwd[4096];
    snprintf(want_cwd, sizeof want_cwd, "cwd=%s", dir);

    /* inherited, and the host's working directory */
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_config(o, "env", "TSR_TALK_VAR");
    out_lines l;
    talk_once(o, &l);
    cr_expect_geq(out_find(&l, "env=inherited"), 0);
    cr_assert_not_null(getcwd(host_cwd, sizeof host_cwd));
    char line[4200];
    snprintf(line, sizeof line, "cwd=%s", host_cwd);
    cr_expect_geq(out_find(&l, line), 0, "the worker starts in the host's directory");
    out_free(&l);

    /* replaced, and another directory */
    cr_assert_eq(tsr_options_set_env(o, "TSR_TALK_VAR", "from the host"), 0);
    set_option(o, "cwd", dir);
    talk_once(o, &l);
    cr_expect_geq(out_find(&l, "env=from the host"), 0);
    cr_expect_geq(out_find(&l, want_cwd), 0);
    out_free(&l);
    tsr_options_free(o);
    rmdir(dir);
    cr_expect_str_eq(getenv("TSR_TALK_VAR"), "inherited", "the host's own environment is untouched");
}

Test(zero_copy, a_cleared_environment_holds_only_the_variables_set) {
    setenv("TSR_INHERITED_VAR", "yes", 1);
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_config(o, "lines", "0");
    set_config(o, "list_env", "1");
    cr_assert_eq(tsr_options_set_env(o, "TSR_TALK_VAR", "set"), 0);
    cr_assert_eq(tsr_options_set_env(o, "TSR_OTHER_VAR", "a=b"), 0);
    out_lines l;
    talk_once(o, &l);
    cr_expect_geq(out_find(&l, "environ TSR_INHERITED_VAR=yes"), 0, "inherited by default");
    cr_expect_geq(out_find(&l, "environ TSR_TALK_VAR=set"), 0);
    out_free(&l);

    set_option(o, "clear_env", "1");
    talk_once(o, &l);
    tsr_options_free(o);
    int vars = 0;
    for (int i = 0; i < l.n; i++)
        if (strncmp(l.text[i], "environ ", 8) == 0 && strcmp(l.text[i], "environ end") != 0)
            vars++;
    cr_expect_geq(out_find(&l, "environ end"), 0, "the list was printed");
    cr_expect_eq(vars, 2, "the cleared environment has %d variables", vars);
    cr_expect_geq(out_find(&l, "environ TSR_TALK_VAR=set"), 0);
    cr_expect_geq(out_find(&l, "environ TSR_OTHER_VAR=a=b"), 0);
    out_free(&l);
}

/* ---- the same in fork mode -------------------------------------------------------- */

static const char *fork_worker_sees_what_it_is_given(void) {
    static out_lines l;
    out_init(&l);
    char dir[256];
    if (try_make_temp_dir(dir, sizeof dir, "tessera-cwd") != 0) return "mkdtemp failed";
    setenv("TSR_INHERITED_VAR", "yes", 1);
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_options_set(o, "mode", "worker", &err) || tsr_options_set(o, "spawn", "fork", &err) ||
        tsr_options_set(o, "clear_env", "1", &err) || tsr_options_set(o, "cwd", dir, &err) ||
        tsr_options_set_env(o, "TSR_TALK_VAR", "forked") ||
        tsr_options_set_config(o, "env", "TSR_TALK_VAR") ||
        tsr_options_set_config(o, "list_env", "1") || tsr_options_set_config(o, "lines", "1"))
        return "options refused";
    tsr_options_set_output(o, out_collect, &l);
    tsr_component *c = NULL;
    int rc = tsr_open(TEST_PLUGIN("talk"), o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == 0, "tsr_open: %s", err.message);
    double *x = tsr_component_alloc(c, sizeof(double));
    *x = 7;
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    tsr_array xa = {.data = x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {1}};
    tsr_call_set_input(call, "x", &xa);
    rc = tsr_call_run(call);
    double y = rc ? 0 : *(const double *)tsr_call_output(call, "y")->data;
    tsr_stats s = TSR_STATS_INIT;
    tsr_component_stats(c, &s);
    tsr_call_free(call);
    tsr_component_free_buffer(c, x);
    tsr_close(c);
    rmdir(dir);
    char cwd_line[300];
    snprintf(cwd_line, sizeof cwd_line, "cwd=%s", dir);
    int vars = 0;
    for (int i = 0; i < l.n; i++)
        if (strncmp(l.text[i], "environ ", 8) == 0 && strcmp(l.text[i], "environ end") != 0)
            vars++;
    if (rc) return "the call failed";
    if (y != 7) return "wrong result";
    if (s.bytes_copied != 0 || s.bytes_by_ref != 8) return "x was not passed by reference";
    if (out_find(&l, "out 1") < 0) return "no output line";
    if (strcmp(l.component[out_find(&l, "out 1")], "talk") != 0) return "wrong label";
    if (out_find(&l, "env=forked") < 0) return "the variable set did not arrive";
    if (vars != 1) return "the cleared environment holds more than the variable set";
    if (out_find(&l, cwd_line) < 0) return "the working directory was not set";
    return "ok";
}

Test(zero_copy, a_forked_worker_gets_the_same_environment_directory_and_output_handling) {
    run_in_child(fork_worker_sees_what_it_is_given, NULL);
}

/* tsr_ctx_log in a worker reaches the host's log function with its level,
 * filtered by the host's log_level, like in-process. */
typedef struct logged {
    int n;
    tsr_log_level level[8];
    char text[8][128];
} logged;

static void keep_log(void *user, tsr_log_level level, const char *component, const char *msg) {
    logged *l = user;
    if (strcmp(component, "talk") != 0 || l->n == 8) return;
    l->level[l->n] = level;
    snprintf(l->text[l->n++], sizeof l->text[0], "%s", msg);
}

static int log_count(const char *log_level) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "log_level", log_level, &err), 0, "%s", err.message);
    logged l = {0};
    tsr_options_set_log(o, keep_log, &l);
    tsr_component *c = open_ok(TEST_PLUGIN("talk"), o);
    tsr_options_free(o);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double x[1] = {1};
    bind_ok(call, "x", f64_vec(x, 1));
    run_ok(call);
    tsr_call_free(call);
    tsr_close(c); /* the worker's last lines are read at the latest here */
    for (int i = 0; i < l.n; i++)
        if (strcmp(l.text[i], "a warning from talk") == 0) {
            cr_expect_eq(l.level[i], TSR_LOG_WARN);
            return 1;
        }
    return 0;
}

Test(zero_copy, plugin_log_messages_reach_the_log_function_with_their_level) {
    cr_expect_eq(log_count("warn"), 1, "a WARN message passes log_level=warn");
    cr_expect_eq(log_count("error"), 0, "and is filtered by log_level=error");
}
