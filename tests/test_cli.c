/* SPDX-License-Identifier: MIT */
/*
 * The `tessera` command line, end to end: every subcommand on the bundled
 * plugins in both encodings with the numbers checked, payloads from text,
 * files and stdin, help and version, and every usage, load, payload, call
 * and output error with its exit status and message.
 */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "cli_run.h"
#include "test_util.h"

#define PAYLOAD_FILE(name) TSR_SOURCE_DIR "/tests/payloads/" name
#define MATRIX_CONFIG "matrix=" LINEAR_MATRIX_FILE

/* The array at key (dotted path of object keys, e.g. "y.x") in the JSON
 * printed on stdout, decoded through the library as float64. */
static double *result_values(const char *stdout_text, const char *key1, const char *key2,
                             tsr_array *a) {
    json_error_t jerr;
    json_t *root = json_loads(stdout_text, 0, &jerr);
    cr_assert_not_null(root, "stdout is not JSON (%s): %s", jerr.text, stdout_text);
    json_t *v = json_object_get(root, key1);
    if (key2 != NULL) v = json_object_get(v, key2);
    cr_assert_not_null(v, "no %s%s%s in %s", key1, key2 ? "." : "", key2 ? key2 : "", stdout_text);
    char *text = json_dumps(v, JSON_ENCODE_ANY);
    json_decref(root);
    void *buffer = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_array_from_json(text, strlen(text), TSR_FLOAT64, a, &buffer, &err);
    cr_assert_eq(rc, 0, "cannot decode %s: %s", text, err.message);
    free(text);
    return buffer;
}

static void assert_values(const double *got, const double *want, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        cr_assert(fabs(got[i] - want[i]) <= 1e-12 * (1.0 + fabs(want[i])),
                  "value %ld: got %.17g, want %.17g", (long)i, got[i], want[i]);
}

static const char *const formats[] = {"json", "json+base64"};

/* ---- help and version ---------------------------------------------------------- */

Test(cli_help, main_help_documents_commands_and_exit_statuses) {
    const char *flags[] = {"--help", "-h", "help"};
    for (size_t k = 0; k < 3; k++) {
        cli_run r = run_cli(NULL, flags[k]);
        assert_ok(&r);
        assert_contains(r.out, "Usage: tessera");
        for (const char *const *cmd = (const char *const[]){"schema PLUGIN", "apply PLUGIN PAYLOAD",
                                                            "jvp PLUGIN", "vjp PLUGIN", "jacobian PLUGIN",
                                                            "abstract-eval PLUGIN", NULL};
             *cmd; cmd++)
            assert_contains(r.out, *cmd);
        assert_contains(r.out, "Exit status (every command):");
        assert_contains(r.out, "  2  usage error");
        assert_contains(r.out, "  3  the plugin could not be loaded");
        assert_contains(r.out, "  4  the payload could not be read");
        assert_contains(r.out, "  5  the results could not be encoded or written");
        run_free(&r);
    }
}

/* One table of exit statuses: every command's help prints the main help's
 * table, word for word. */
Test(cli_help, every_command_prints_the_same_exit_status_table) {
    cli_run main_help = run_cli(NULL, "--help");
    assert_ok(&main_help);
    const char *table = strstr(main_help.out, "Exit status (every command):");
    cr_assert_not_null(table, "no exit status table in: %s", main_help.out);
    const char *cmds[] = {"schema", "apply", "jvp", "vjp", "jacobian", "abstract-eval",
                          "check-gradients", "info"};
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        cli_run r = run_cli(NULL, cmds[k], "--help");
        assert_ok(&r);
        assert_contains(r.out, table);
        run_free(&r);
    }
    run_free(&main_help);
}

Test(cli_help, every_subcommand_has_help) {
    const char *cmds[] = {"schema", "apply", "jvp", "vjp", "jacobian", "abstract-eval"};
    for (size_t k = 0; k < 6; k++) {
        cli_run r = run_cli(NULL, cmds[k], "--help");
        assert_ok(&r);
        char usage[64];
        snprintf(usage, sizeof usage, "Usage: tessera %s [OPTIONS] PLUGIN", cmds[k]);
        assert_contains(r.out, usage);
        assert_contains(r.out, "--config KEY=VALUE");
        assert_contains(r.out, "--mode MODE");
        run_free(&r);
    }
    cli_run r = run_cli(NULL, "vjp", "-h");
    assert_contains(r.out, "\"cotangent_vector\": {OUT: ARRAY, ...}");
    assert_contains(r.out, "-f, --format FORMAT");
    run_free(&r);
}

Test(cli_help, version) {
    cli_run r = run_cli(NULL, "--version");
    assert_ok(&r);
    char want[64];
    snprintf(want, sizeof want, "tessera %d.%d.%d (plugin ABI %u)\n", TSR_VERSION_MAJOR,
             TSR_VERSION_MINOR, TSR_VERSION_PATCH, TSR_PLUGIN_ABI_VERSION);
    cr_assert_str_eq(r.out, want);
    run_free(&r);
}

/* ---- schema -------------------------------------------------------------------------- */

Test(cli_schema, prints_the_schema_as_one_json_line) {
    cli_run r = run_cli(NULL, "schema", BUNDLED_PLUGIN("vectoradd"));
    assert_ok(&r);
    json_t *root = json_loads(r.out, 0, NULL);
    cr_assert_not_null(root, "not JSON: %s", r.out);
    cr_assert_str_eq(json_string_value(json_object_get(root, "name")), "vectoradd");
    json_t *inputs = json_object_get(root, "inputs");
    cr_assert_eq(json_array_size(inputs), 3);
    json_t *a = json_array_get(inputs, 0);
    cr_assert_str_eq(json_string_value(json_object_get(a, "name")), "a");
    cr_assert_str_eq(json_string_value(json_object_get(a, "dtype")), "float64");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(a, "shape"), 0)), "n");
    cr_assert(json_is_true(json_object_get(a, "differentiable")));
    cr_assert_eq(json_array_size(json_object_get(json_array_get(inputs, 2), "shape")), 0, "s is a scalar");
    /* the five of Tesseract, and hvp from differences of its vjp */
    cr_assert_eq(json_array_size(json_object_get(root, "endpoints")), 6);
    json_decref(root);
    cr_assert_eq(strchr(r.out, '\n'), r.out + strlen(r.out) - 1, "one line, ended by a newline");
    run_free(&r);
}

/* Each field says its kind; a TEXT field lists its choices; an array of
 * any rank has a null shape. */
Test(cli_schema, prints_kinds_and_choices) {
    cli_run r = run_cli(NULL, "schema", TEST_PLUGIN("kinds"));
    assert_ok(&r);
    json_t *root = json_loads(r.out, 0, NULL);
    cr_assert_not_null(root, "not JSON: %s", r.out);
    json_t *inputs = json_object_get(root, "inputs"), *outputs = json_object_get(root, "outputs");
    const char *in_kinds[] = {"array", "text", "json", "array"};
    for (size_t k = 0; k < 4; k++)
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(inputs, k), "kind")),
                         in_kinds[k], "input %zu", k);
    json_t *choices = json_object_get(json_array_get(inputs, 1), "choices");
    cr_assert_eq(json_array_size(choices), 3);
    cr_assert_str_eq(json_string_value(json_array_get(choices, 1)), "double");
    cr_assert_str_eq(json_string_value(json_array_get(choices, 2)), "caf\xc3\xa9");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(inputs, 1), "default")),
                     "single");
    cr_assert_null(json_object_get(json_array_get(inputs, 2), "choices"), "json has no choices");
    cr_assert(json_is_null(json_object_get(json_array_get(inputs, 3), "shape")), "any rank");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(outputs, 1), "kind")),
                     "text");
    json_decref(root);
    run_free(&r);
    r = run_cli(NULL, "schema", TEST_PLUGIN("no_outputs"));
    assert_ok(&r);
    assert_contains(r.out, "\"outputs\":[]");
    run_free(&r);
}

Test(cli_schema, linear_needs_its_matrix_even_for_the_schema) {
    cli_run r = run_cli(NULL, "schema", "--config", MATRIX_CONFIG, BUNDLED_PLUGIN("linear"));
    assert_ok(&r);
    assert_contains(r.out, "\"name\":\"linear\"");
    run_free(&r);
    r = run_cli(NULL, "schema", BUNDLED_PLUGIN("linear"));
    assert_fails(&r, EXIT_LOAD, "tessera: error: ");
    assert_contains(r.err, "matrix");
    run_free(&r);
}

/* ---- apply on each bundled plugin, both encodings ------------------------------------ */

Test(cli_apply, noop_copies_its_input_exactly_in_both_encodings) {
    cli_run r = run_cli(NULL, "apply", BUNDLED_PLUGIN("noop"), "{\"inputs\": {\"x\": [0.1, -2, 3e-300]}}");
    assert_ok(&r);
    cr_assert_str_eq(r.out, "{\"y\":{\"object_type\":\"array\",\"shape\":[3],\"dtype\":\"float64\","
                            "\"data\":{\"buffer\":[0.1,-2.0,3e-300],\"encoding\":\"json\"}}}\n");
    run_free(&r);
    r = run_cli(NULL, "apply", "-f", "json+base64", BUNDLED_PLUGIN("noop"), "{\"inputs\": {\"x\": [1]}}");
    assert_ok(&r);
    cr_assert_str_eq(r.out, "{\"y\":{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                            "\"data\":{\"buffer\":\"AAAAAAAA8D8=\",\"encoding\":\"base64\"}}}\n");
    run_free(&r);
}

Test(cli_apply, vectoradd_computes_a_times_s_plus_b) {
    for (int f = 0; f < 2; f++) {
        cli_run r = run_cli(NULL, "apply", "--format", formats[f], BUNDLED_PLUGIN("vectoradd"),
                            "{\"inputs\": {\"a\": [1, 2, 3], \"b\": [0.5, 0.25, -1], \"s\": -2}}");
        assert_ok(&r);
        tsr_array a;
        double *v = result_values(r.out, "result", NULL, &a);
        cr_assert(a.rank == 1 && a.shape[0] == 3);
        assert_values(v, (double[]){-1.5, -3.75, -7.0}, 3);
        tsr_array_buffer_free(v);
        run_free(&r);
    }
}

Test(cli_apply, rosenbrock_value) {
    for (int f = 0; f < 2; f++) {
        cli_run r = run_cli(NULL, "apply", "-f", formats[f], BUNDLED_PLUGIN("rosenbrock"),
                            "{\"inputs\": {\"x\": [0.5, 2, -1], \"a\": 1, \"b\": 100}}");
        assert_ok(&r);
        tsr_array a;
        double *v = result_values(r.out, "value", NULL, &a);
        cr_assert_eq(a.rank, 0);
        /* sum over i of (a - x_i)^2 + b (x_{i+1} - x_i^2)^2:
         * (0.25 + 100 * 1.75^2) + (1 + 100 * 5^2) */
        assert_values(v, (double[]){0.25 + 100 * 1.75 * 1.75 + 1 + 100 * 25.0}, 1);
        tsr_array_buffer_free(v);
        run_free(&r);
    }
}

Test(cli_apply, linear_multiplies_by_the_configured_matrix) {
    for (int f = 0; f < 2; f++) {
        cli_run r = run_cli(NULL, "apply", "--config", MATRIX_CONFIG, "-f", formats[f],
                            BUNDLED_PLUGIN("linear"), "{\"inputs\": {\"x\": [1, 2, 3, 4]}}");
        assert_ok(&r);
        tsr_array a;
        double *v = result_values(r.out, "y", NULL, &a);
        cr_assert(a.rank == 1 && a.shape[0] == 3);
        assert_values(v, (double[]){1.0, 17.5, 4.0}, 3);
        tsr_array_buffer_free(v);
        run_free(&r);
    }
}

Test(cli_apply, explicit_inproc_mode) {
    cli_run r = run_cli(NULL, "apply", "--mode", "inproc", BUNDLED_PLUGIN("noop"), "{\"inputs\": {\"x\": []}}");
    assert_ok(&r);
    assert_contains(r.out, "\"shape\":[0]");
    run_free(&r);
}

/* ---- derivatives ------------------------------------------------------------------------ */

Test(cli_derivatives, jvp_of_rosenbrock_from_a_payload_file) {
    const char *names[] = {"jvp", "jacobian-vector-product"};
    for (int k = 0; k < 2; k++) {
        cli_run r = run_cli(NULL, names[k], BUNDLED_PLUGIN("rosenbrock"), "@" PAYLOAD_FILE("rosenbrock_jvp.json"));
        assert_ok(&r);
        tsr_array a;
        double *v = result_values(r.out, "value", NULL, &a);
        assert_values(v, (double[]){-400.0}, 1); /* d value / d x0 at (1, 2) */
        tsr_array_buffer_free(v);
        run_free(&r);
    }
}

Test(cli_derivatives, vjp_of_rosenbrock) {
    const char *names[] = {"vjp", "vector-jacobian-product"};
    for (int k = 0; k < 2; k++) {
        cli_run r = run_cli(NULL, names[k], "-f", formats[k], BUNDLED_PLUGIN("rosenbrock"),
                            "{\"inputs\": {\"x\": [1, 2], \"a\": 1, \"b\": 100}, \"vjp_inputs\": [\"x\", \"a\"],"
                            " \"vjp_outputs\": [\"value\"], \"cotangent_vector\": {\"value\": 2}}");
        assert_ok(&r);
        tsr_array a;
        double *v = result_values(r.out, "x", NULL, &a);
        assert_values(v, (double[]){-800.0, 400.0}, 2);
        tsr_array_buffer_free(v);
        v = result_values(r.out, "a", NULL, &a);
        assert_values(v, (double[]){0.0}, 1); /* 2 (a - x0) * 2 at a = x0 */
        tsr_array_buffer_free(v);
        run_free(&r);
    }
}

Test(cli_derivatives, jacobian_of_linear_is_its_matrix) {
    for (int f = 0; f < 2; f++) {
        cli_run r = run_cli(NULL, "jacobian", "--config", MATRIX_CONFIG, "-f", formats[f],
                            BUNDLED_PLUGIN("linear"), "@" PAYLOAD_FILE("linear_jacobian.json"));
        assert_ok(&r);
        tsr_array a;
        double *v = result_values(r.out, "y", "x", &a);
        cr_assert(a.rank == 2 && a.shape[0] == 3 && a.shape[1] == 4);
        assert_values(v, (double[]){1, 2, 0, -1, 0.5, 0, 3, 2, -2, 1, 1, 0.25}, 12);
        tsr_array_buffer_free(v);
        run_free(&r);
    }
}

Test(cli_derivatives, abstract_eval_gives_shapes_and_dtypes) {
    cli_run r = run_cli(NULL, "abstract-eval", "--config", MATRIX_CONFIG, BUNDLED_PLUGIN("linear"),
                        "{\"inputs\": {\"x\": {\"shape\": [4], \"dtype\": \"float64\"}}}");
    assert_ok(&r);
    cr_assert_str_eq(r.out, "{\"y\":{\"shape\":[3],\"dtype\":\"float64\"}}\n");
    run_free(&r);
    r = run_cli(NULL, "abstract_eval", BUNDLED_PLUGIN("vectoradd"),
                "{\"inputs\": {\"a\": {\"shape\": [7], \"dtype\": \"float64\"},"
                " \"b\": {\"shape\": [7], \"dtype\": \"float64\"}, \"s\": {\"shape\": [], \"dtype\": \"float64\"}}}");
    assert_ok(&r);
    cr_assert_str_eq(r.out, "{\"result\":{\"shape\":[7],\"dtype\":\"float64\"}}\n");
    run_free(&r);
}

/* ---- where payloads come from and results go ----------------------------------------------- */

Test(cli_io, payload_from_file_and_stdin_agree) {
    char *file_text = cli_slurp(PAYLOAD_FILE("vectoradd_apply.json"));
    const char *sources[] = {"@" PAYLOAD_FILE("vectoradd_apply.json"), "-", "@-"};
    for (int k = 0; k < 3; k++) {
        cli_run r = run_cli(file_text, "apply", BUNDLED_PLUGIN("vectoradd"), sources[k]);
        assert_ok(&r);
        cr_assert_str_eq(r.out, "{\"result\":{\"object_type\":\"array\",\"shape\":[3],\"dtype\":\"float64\","
                                "\"data\":{\"buffer\":[6.0,9.0,12.0],\"encoding\":\"json\"}}}\n",
                         "source %s", sources[k]);
        run_free(&r);
    }
    free(file_text);
}

Test(cli_io, output_to_a_file) {
    char path[256];
    temp_path(path, sizeof path);
    cli_run r = run_cli(NULL, "apply", BUNDLED_PLUGIN("noop"), "-o", path, "{\"inputs\": {\"x\": [5]}}");
    assert_ok(&r);
    cr_assert_str_eq(r.out, "", "with -o nothing goes to stdout");
    char *text = cli_slurp(path);
    cr_assert_str_eq(text, "{\"y\":{\"object_type\":\"array\",\"shape\":[1],\"dtype\":\"float64\","
                           "\"data\":{\"buffer\":[5.0],\"encoding\":\"json\"}}}\n");
    free(text);
    unlink(path);
    run_free(&r);
}

Test(cli_io, bare_plugin_name_in_the_current_directory) {
    cr_assert_eq(chdir(TSR_PLUGIN_DIR), 0);
    cli_run r = run_cli(NULL, "apply", "noop.so", "{\"inputs\": {\"x\": [1]}}");
    assert_ok(&r);
    run_free(&r);
}

/* ---- errors, with exit status and message -------------------------------------------------- */

Test(cli_errors, usage_errors_exit_2) {
    struct {
        const char *const *args;
        const char *needle;
    } cases[] = {
        {(const char *const[]){NULL}, "tessera: error: missing command"},
        {(const char *const[]){"frobnicate", NULL}, "tessera: error: unknown command 'frobnicate'"},
        {(const char *const[]){"--frob", NULL}, "tessera: error: unknown option '--frob'"},
        {(const char *const[]){"apply", NULL}, "tessera apply: error: missing PLUGIN and PAYLOAD"},
        {(const char *const[]){"apply", BUNDLED_PLUGIN("noop"), NULL}, "missing PAYLOAD"},
        {(const char *const[]){"apply", "p", "{}", "extra", NULL}, "too many arguments"},
        {(const char *const[]){"schema", NULL}, "tessera schema: error: missing PLUGIN"},
        {(const char *const[]){"apply", "-f", "msgpack", "p", "{}", NULL},
         "unsupported format 'msgpack' (json, json+base64 or json+binref)"},
        {(const char *const[]){"apply", "--mode", "remote", "p", "{}", NULL},
         "unknown mode 'remote' (inproc, isolated or worker)"},
        {(const char *const[]){"apply", "--config", "matrix", "p", "{}", NULL},
         "--config takes KEY=VALUE, got 'matrix'"},
        {(const char *const[]){"apply", "p", "{}", "--mode", NULL}, "option '--mode' needs a value"},
        {(const char *const[]){"jvp", "-x", "p", "{}", NULL}, "tessera jvp: error: unknown option '-x'"},
        {(const char *const[]){"schema", "-f", "json", "p", NULL}, "unknown option '-f'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cli_run r = run_cli_v(NULL, cases[k].args);
        assert_fails(&r, EXIT_USAGE, cases[k].needle);
        assert_contains(r.err, "--help'");
        run_free(&r);
    }
}

Test(cli_errors, load_failures_exit_3) {
    cli_run r = run_cli(NULL, "apply", TSR_PLUGIN_DIR "/missing.so", "{\"inputs\": {}}");
    assert_fails(&r, EXIT_LOAD, "tessera: error: ");
    assert_contains(r.err, "missing.so");
    run_free(&r);
    r = run_cli(NULL, "apply", TSR_SOURCE_DIR "/tests/payloads/vectoradd_apply.json", "{\"inputs\": {}}");
    assert_fails(&r, EXIT_LOAD, "vectoradd_apply.json");
    run_free(&r);
}

Test(cli_errors, payload_errors_exit_4) {
    struct {
        const char *plugin;
        const char *payload;
        const char *needle;
    } cases[] = {
        {"noop", "{\"inputs\": {\"x\": [1,}}",
         "tessera: error: component 'noop', endpoint 'apply': malformed JSON at line 1, column"},
        {"noop", "{\"inputs\": {\"w\": [1]}}", "field 'inputs.w': no input field \"w\" in the schema (inputs: x)"},
        {"noop", "{\"inputs\": {\"x\": [1]}, \"extra\": 1}", "unknown key \"extra\" in the payload"},
        {"noop", "{}", "the payload lacks \"inputs\""},
        {"vectoradd", "{\"inputs\": {\"a\": [1], \"b\": [1]}}", "field 'inputs.s': required input is missing"},
        {"noop", "{\"inputs\": {\"x\": {\"object_type\": \"array\", \"shape\": [2], \"dtype\": \"float64\","
                 " \"data\": {\"buffer\": \"AAAAAAAA8D8=\", \"encoding\": \"base64\"}}}}",
         "shape [2] of float64 needs 16 bytes but the base64 buffer holds 8"},
        {"noop", "@/nonexistent/payload.json", "cannot open payload file '/nonexistent/payload.json'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char plugin[512];
        snprintf(plugin, sizeof plugin, "%s/%s.so", TSR_PLUGIN_DIR, cases[k].plugin);
        cli_run r = run_cli(NULL, "apply", plugin, cases[k].payload);
        assert_fails(&r, EXIT_PAYLOAD, cases[k].needle);
        run_free(&r);
    }
    cli_run r = run_cli(NULL, "jacobian", BUNDLED_PLUGIN("rosenbrock"),
                        "{\"inputs\": {\"x\": [1, 2], \"a\": 1, \"b\": 1}, \"jac_inputs\": [\"y\"],"
                        " \"jac_outputs\": [\"value\"]}");
    assert_fails(&r, EXIT_PAYLOAD, "endpoint 'jacobian', field 'jac_inputs[0]': \"y\" is not an input field");
    run_free(&r);
    /* What tsr_call_set_wrt refuses, the command refuses too. */
    r = run_cli(NULL, "vjp", BUNDLED_PLUGIN("noop"),
                "{\"inputs\": {\"x\": [1, 2]}, \"vjp_inputs\": [\"x\", \"x\"],"
                " \"vjp_outputs\": [\"y\"], \"cotangent_vector\": {\"y\": [1, 2]}}");
    assert_fails(&r, EXIT_PAYLOAD, "field 'vjp_inputs[1]': \"x\" is named twice in \"vjp_inputs\"");
    run_free(&r);
}

Test(cli_errors, call_failures_exit_1) {
    cli_run r = run_cli(NULL, "apply", BUNDLED_PLUGIN("vectoradd"),
                        "{\"inputs\": {\"a\": [1, 2, 3], \"b\": [1, 2], \"s\": 1}}");
    assert_fails(&r, EXIT_CALL, "tessera: error: component 'vectoradd', endpoint 'apply'");
    run_free(&r);
    r = run_cli(NULL, "apply", "--config", MATRIX_CONFIG, BUNDLED_PLUGIN("linear"), "{\"inputs\": {\"x\": [1, 2]}}");
    assert_fails(&r, EXIT_CALL, "component 'linear', endpoint 'apply'");
    assert_contains(r.err, "x");
    run_free(&r);
}

Test(cli_errors, unwritable_results_exit_5) {
    /* 1e308 * 10 overflows to infinity, which json cannot carry... */
    const char *payload = "{\"inputs\": {\"a\": [1e308], \"b\": [0], \"s\": 10}}";
    cli_run r = run_cli(NULL, "apply", BUNDLED_PLUGIN("vectoradd"), payload);
    assert_fails(&r, EXIT_OUTPUT, "field 'result': element 0 is infinite, which JSON cannot represent; use base64");
    run_free(&r);
    /* ...and base64 can. */
    r = run_cli(NULL, "apply", "-f", "json+base64", BUNDLED_PLUGIN("vectoradd"), payload);
    assert_ok(&r);
    assert_contains(r.out, "\"buffer\":\"AAAAAAAA8H8=\"");
    run_free(&r);
    r = run_cli(NULL, "apply", "-o", "/nonexistent/dir/out.json", BUNDLED_PLUGIN("noop"), "{\"inputs\": {\"x\": [1]}}");
    assert_fails(&r, EXIT_OUTPUT, "cannot open output file '/nonexistent/dir/out.json'");
    run_free(&r);
}

/* ---- interchange with Tesseract --------------------------------------------------------- */

/* d result / d a = I(3) as float64, the bytes Tesseract's vectoradd
 * example records for this jacobian. */
static const char identity3_base64[] =
    "AAAAAAAA8D8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "AADwPwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAPA/";

Test(cli_interchange, tesseract_style_int64_base64_inputs_give_tesseracts_jacobian_bytes) {
    /* int64 inputs into float64 fields: a same_kind cast, as Tesseract allows. */
    cli_run r = run_cli(NULL, "jacobian", "-f", "json+base64", BUNDLED_PLUGIN("vectoradd"),
                        "{\"inputs\": {"
                        "\"a\": {\"object_type\": \"array\", \"shape\": [3], \"dtype\": \"int64\", \"data\":"
                        " {\"buffer\": \"AQAAAAAAAAACAAAAAAAAAAMAAAAAAAAA\", \"encoding\": \"base64\"}},"
                        "\"b\": {\"object_type\": \"array\", \"shape\": [3], \"dtype\": \"int64\", \"data\":"
                        " {\"buffer\": \"BAAAAAAAAAAFAAAAAAAAAAYAAAAAAAAA\", \"encoding\": \"base64\"}},"
                        "\"s\": 1}, \"jac_inputs\": [\"s\", \"a\"], \"jac_outputs\": [\"result\"]}");
    assert_ok(&r);
    char want[512];
    snprintf(want, sizeof want,
             "\"a\":{\"object_type\":\"array\",\"shape\":[3,3],\"dtype\":\"float64\","
             "\"data\":{\"buffer\":\"%s\",\"encoding\":\"base64\"}}",
             identity3_base64);
    assert_contains(r.out, want);
    tsr_array a;
    double *ds = result_values(r.out, "result", "s", &a);
    assert_values(ds, (double[]){1.0, 2.0, 3.0}, 3); /* d result / d s = a */
    tsr_array_buffer_free(ds);
    run_free(&r);
}
