/* SPDX-License-Identifier: MIT */
/*
 * The command's stdout is its results and nothing else: what a component
 * prints (a C plugin's printf in init and in its endpoints, in-process and
 * isolated, never flushed and without a newline; a Python component's
 * print, with Python's stdout block-buffered as it is on a pipe) lands on
 * stderr. Each result on stdout is parsed as JSON; `tessera serve` writes
 * nothing of the component's on stdout; a failure still writes nothing on
 * stdout; -o /dev/stdout still names the results' stream.
 */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli_run.h"
#include "net_util.h"
#include "test_util.h"

#define PRINTING TEST_PLUGIN("printing")
#define PYPRINTING TSR_SOURCE_DIR "/tests/pycomponents/printing"
#define X "{\"inputs\": {\"x\": [1.0, 2.0]}"
#define APPLY_PAYLOAD X "}"
#define JAC_PAYLOAD X ", \"jac_inputs\": [\"x\"], \"jac_outputs\": [\"y\"]}"
#define JVP_PAYLOAD X ", \"jvp_inputs\": [\"x\"], \"jvp_outputs\": [\"y\"], " \
    "\"tangent_vector\": {\"x\": [1.0, 1.0]}}"
#define VJP_PAYLOAD X ", \"vjp_inputs\": [\"x\"], \"vjp_outputs\": [\"y\"], " \
    "\"cotangent_vector\": {\"y\": [1.0, 1.0]}}"

/* Python's stdout as most runs have it: block-buffered on a pipe or file,
 * so nothing reaches fd 1 until someone flushes it. */
static void python_buffers(void) { unsetenv("PYTHONUNBUFFERED"); }

static cli_run run_in(const char *const *args) { return run_cli_with(NULL, python_buffers, args); }

/* stdout is exactly one JSON document (and its newline); the parsed root. */
static json_t *only_json(const cli_run *r) {
    cr_assert_eq(r->status, 0, "exit %d; stdout: %s; stderr: %s", r->status, r->out, r->err);
    json_error_t jerr;
    json_t *root = json_loads(r->out, 0, &jerr);
    cr_assert_not_null(root, "stdout is not only JSON (%s): [%s]; stderr: %s", jerr.text, r->out,
                       r->err);
    size_t len = strlen(r->out);
    cr_assert(len > 0 && r->out[len - 1] == '\n' && r->out[0] == '{', "stdout: [%s]", r->out);
    return root;
}

/* The array of result key (a dotted pair for the Jacobian) is 2 x's. */
static void expect_doubled(json_t *root, const char *key1, const char *key2, double scale) {
    json_t *v = json_object_get(root, key1);
    if (key2) v = json_object_get(v, key2);
    json_t *buffer = json_object_get(json_object_get(v, "data"), "buffer");
    cr_assert(json_is_array(buffer), "no %s buffer", key1);
    json_t *first = json_array_get(buffer, 0);
    /* the Jacobian's first row is [2, 0]; every other result's first is 2 x[0] */
    double got = json_is_array(first) ? json_real_value(json_array_get(first, 0))
                                      : json_real_value(first);
    cr_assert_float_eq(got, 2.0 * scale, 1e-12);
    json_decref(root);
}

static void c_plugin_endpoints(const char *mode) {
    static const struct {
        const char *command, *payload, *key1, *key2, *said;
    } calls[] = {
        {"apply", APPLY_PAYLOAD, "y", NULL, "printing: apply "},
        {"jacobian", JAC_PAYLOAD, "y", "x", "printing: jacobian "},
        {"jvp", JVP_PAYLOAD, "y", NULL, "printing: jvp "},
        {"vjp", VJP_PAYLOAD, "x", NULL, "printing: vjp "},
    };
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        cli_run r = run_in((const char *const[]){calls[k].command, "--mode", mode, PRINTING,
                                                 calls[k].payload, NULL});
        expect_doubled(only_json(&r), calls[k].key1, calls[k].key2, 1.0);
        assert_contains(r.err, "printing: init ");
        assert_contains(r.err, calls[k].said);
        run_free(&r);
    }
}

Test(cli_stdout, a_c_plugins_printf_goes_to_stderr_in_process) { c_plugin_endpoints("inproc"); }

Test(cli_stdout, an_isolated_c_plugins_printf_goes_to_stderr_not_lost) {
    c_plugin_endpoints("isolated");
}

Test(cli_stdout, schema_stdout_is_only_the_schema_while_init_prints) {
    const char *modes[] = {"inproc", "isolated"};
    for (size_t k = 0; k < 2; k++) {
        cli_run r = run_in((const char *const[]){"schema", "--mode", modes[k], PRINTING, NULL});
        json_t *root = only_json(&r);
        cr_assert_not_null(json_object_get(root, "inputs"), "%s: %s", modes[k], r.out);
        json_decref(root);
        assert_contains(r.err, "printing: init ");
        run_free(&r);
    }
}

Test(cli_stdout, a_failed_call_writes_nothing_on_stdout_while_init_prints) {
    cli_run r = run_in((const char *const[]){"apply", PRINTING, "{\"inputs\": {}}", NULL});
    assert_fails(&r, EXIT_PAYLOAD, "required input is missing");
    /* the component's text comes before the command's message */
    const char *said = strstr(r.err, "printing: init "), *error = strstr(r.err, "tessera: error:");
    cr_assert(said && error && said < error, "stderr: %s", r.err);
    run_free(&r);
}

Test(cli_stdout, output_dev_stdout_still_names_the_results_stream) {
    const char *names[] = {"/dev/stdout", "/dev/fd/1", "-"};
    for (size_t k = 0; k < 3; k++) {
        cli_run r = run_in((const char *const[]){"apply", "-o", names[k], PRINTING, APPLY_PAYLOAD,
                                                 NULL});
        expect_doubled(only_json(&r), "y", NULL, 1.0);
        assert_contains(r.err, "printing: apply ");
        run_free(&r);
    }
}

Test(cli_stdout, help_and_version_stay_on_stdout) {
    cli_run r = run_in((const char *const[]){"--version", NULL});
    assert_ok(&r);
    assert_contains(r.out, "tessera ");
    run_free(&r);
    r = run_in((const char *const[]){"apply", "--help", NULL});
    assert_ok(&r);
    assert_contains(r.out, "Usage: tessera apply");
    run_free(&r);
}

/* ---- Python components --------------------------------------------------------- */

/* Tested where Python components are (not in the sanitizers' build: the
 * embedded interpreter lives until the process ends, tests/CMakeLists.txt). */
#if TSR_HAVE_PYTHON_COMPONENTS

Test(cli_stdout, a_python_components_print_goes_to_stderr, .timeout = 120) {
    static const struct {
        const char *command, *payload, *key1, *key2, *said;
    } calls[] = {
        {"apply", APPLY_PAYLOAD, "y", NULL, "printing: apply partial"},
        {"jacobian", JAC_PAYLOAD, "y", "x", "printing: jacobian partial"},
        {"vjp", VJP_PAYLOAD, "x", NULL, "printing: vjp partial"},
    };
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        cli_run r = run_in((const char *const[]){calls[k].command, PYPRINTING, calls[k].payload,
                                                 NULL});
        expect_doubled(only_json(&r), calls[k].key1, calls[k].key2, 1.0);
        assert_contains(r.err, "printing: imported\n");
        assert_contains(r.err, calls[k].said);
        run_free(&r);
    }
    cli_run r = run_in((const char *const[]){"schema", PYPRINTING, NULL});
    json_decref(only_json(&r));
    assert_contains(r.err, "printing: imported\n");
    run_free(&r);
}

Test(cli_stdout, a_python_components_print_in_a_worker_is_not_lost, .timeout = 120) {
    cli_run r = run_in((const char *const[]){"apply", "--mode", "worker", PYPRINTING,
                                             APPLY_PAYLOAD, NULL});
    expect_doubled(only_json(&r), "y", NULL, 1.0);
    assert_contains(r.err, "printing: imported");
    assert_contains(r.err, "printing: apply line");
    run_free(&r);
}
#endif

/* ---- tessera serve ------------------------------------------------------------- */

/* `tessera serve ARGS... --port P` with stdout and stderr in files, one
 * apply through the library against it, then SIGTERM; its exit status. */
static int serve_once(const char *const *args, const char *out_path, const char *err_path) {
    const char *argv[16] = {"serve", "--port", "{port}"};
    for (int k = 0; args[k] && k < 12; k++) argv[3 + k] = args[k];
    test_server *s = serve_ok(&(server_spec){
        .args = argv, .out = out_path, .err = err_path, .in_child = python_buffers});
    const char *url = s->url;
    tsr_component *c = open_ok(url, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double x[2] = {1, 2};
    bind_ok(call, "x", f64_vec(x, 2));
    run_ok(call);
    cr_assert_float_eq(((const double *)tsr_call_output(call, "y")->data)[1], 4.0, 1e-12);
    tsr_call_free(call);
    tsr_close(c);
    int status = serve_stop_ok(s);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void served_prints_go_to_stderr(const char *const *args, const char *said) {
    char out_path[256], err_path[256];
    temp_path(out_path, sizeof out_path);
    temp_path(err_path, sizeof err_path);
    write_file(out_path, "");
    write_file(err_path, "");
    int status = serve_once(args, out_path, err_path);
    char *out = cli_slurp(out_path), *err = cli_slurp(err_path);
    cr_expect_eq(status, 0, "tessera serve ended with %d; stderr: %s", status, err);
    cr_expect_str_eq(out, "", "tessera serve's stdout: [%s]", out);
    assert_contains(err, said);
    free(out);
    free(err);
    unlink(out_path);
    unlink(err_path);
}

Test(cli_stdout, tessera_serve_writes_nothing_of_a_c_plugin_on_stdout, .fini = stop_servers) {
    served_prints_go_to_stderr((const char *const[]){PRINTING, NULL}, "printing: apply ");
    served_prints_go_to_stderr((const char *const[]){"--mode", "isolated", PRINTING, NULL},
                               "printing: init ");
}

#if TSR_HAVE_PYTHON_COMPONENTS
Test(cli_stdout, tessera_serve_writes_nothing_of_a_python_component_on_stdout, .timeout = 120,
     .fini = stop_servers) {
    served_prints_go_to_stderr((const char *const[]){PYPRINTING, NULL}, "printing: apply partial");
}
#endif
