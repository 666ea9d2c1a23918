/* SPDX-License-Identifier: MIT */
/*
 * `tessera check-gradients`, end to end: it passes on every bundled plugin
 * in process and in a worker, fails with exit 1 and a report naming the
 * wrong endpoint on a plugin with one wrong derivative, in both methods
 * (finite differences and Taylor) and both formats; its options restrict
 * what is checked; bad options, fields and payloads are clear errors.
 */
#include <criterion/criterion.h>

#include <jansson.h>

#include "cli_run.h"
#include "test_util.h"

#define MATRIX_CONFIG "matrix=" LINEAR_MATRIX_FILE
#define WRONG TEST_PLUGIN("wrong_grad")

static const char wrong_payload[] = "{\"inputs\": {\"x\": [0.5, 2, -1, 1.5, 3], \"c\": 0.3}}";
static const char rosenbrock_payload[] =
    "{\"inputs\": {\"x\": [0.5, 2, -1, 1.5, 0.25, -0.75], \"a\": 1, \"b\": 100}}";
static const char heat_payload[] =
    "{\"inputs\": {\"conductivity\": [1, 1.5, 0.8, 1.2, 2, 1.1, 0.9, 1.3],"
    " \"source\": [0.5, 1, 0, -0.5, 1, 0.25, 0, 0.75],"
    " \"initial_temperature\": [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],"
    " \"observations\": [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35], \"dt\": 0.01, \"steps\": 20}}";

typedef struct case_ {
    const char *plugin;
    const char *config; /* NULL: none */
    const char *payload;
} case_;

static const case_ bundled[] = {
    {BUNDLED_PLUGIN("rosenbrock"), NULL, rosenbrock_payload},
    {BUNDLED_PLUGIN("vectoradd"), NULL, "{\"inputs\": {\"a\": [1, 2, 3], \"b\": [0.5, 0.25, -1], \"s\": -2}}"},
    {BUNDLED_PLUGIN("noop"), NULL, "{\"inputs\": {\"x\": [0.1, -2, 3]}}"},
    {BUNDLED_PLUGIN("linear"), MATRIX_CONFIG, "{\"inputs\": {\"x\": [1, 2, 3, 4]}}"},
    {BUNDLED_PLUGIN("heat"), NULL, heat_payload},
};

/* check-gradients [extra...] on a case; extra is NULL-terminated. */
static cli_run check(const case_ *c, const char *const *extra) {
    const char *args[32];
    int n = 0;
    args[n++] = "check-gradients";
    if (c->config) {
        args[n++] = "--config";
        args[n++] = c->config;
    }
    for (; extra && *extra; extra++) args[n++] = *extra;
    args[n++] = c->plugin;
    args[n++] = c->payload;
    args[n] = NULL;
    return run_cli_v(NULL, args);
}

#define EXTRA(...) ((const char *const[]){__VA_ARGS__, NULL})

static json_t *parse_json(const char *text) {
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    cr_assert_not_null(root, "not JSON (%s): %s", jerr.text, text);
    return root;
}

static json_int_t endpoint_int(json_t *root, const char *ep, const char *key) {
    json_t *v = json_object_get(json_object_get(json_object_get(root, "endpoints"), ep), key);
    cr_assert(json_is_integer(v), "no endpoints.%s.%s", ep, key);
    return json_integer_value(v);
}

/* ---- bundled plugins pass ------------------------------------------------------- */

static void all_bundled_pass(const char *const *extra) {
    for (size_t k = 0; k < sizeof bundled / sizeof bundled[0]; k++) {
        cli_run r = check(&bundled[k], extra);
        assert_ok(&r);
        assert_contains(r.out, "result: passed");
        cr_assert_null(strstr(r.out, "not checked"), "%s: %s", bundled[k].plugin, r.out);
        run_free(&r);
    }
}

Test(cli_gradcheck, every_bundled_plugin_passes_in_process) {
    all_bundled_pass(EXTRA("--mode", "inproc"));
}

Test(cli_gradcheck, every_bundled_plugin_passes_in_a_worker) {
    all_bundled_pass(EXTRA("--mode", "worker"));
}

Test(cli_gradcheck, every_bundled_plugin_passes_the_taylor_test) {
    all_bundled_pass(EXTRA("--taylor"));
    all_bundled_pass(EXTRA("--taylor", "--mode", "worker"));
}

Test(cli_gradcheck, the_table_shows_each_endpoint_and_the_cost) {
    cli_run r = check(&bundled[0], NULL);
    assert_ok(&r);
    assert_contains(r.out, "tessera check-gradients: component 'rosenbrock', central differences");
    assert_contains(r.out, "endpoint  compared with   checks  failures  max abs err  max rel err  calls");
    assert_contains(r.out, "\njvp       jacobian ");
    assert_contains(r.out, "\nvjp       jacobian ");
    assert_contains(r.out, "\njacobian  finite diff. ");
    /* its native hvp, against differences of its vjp: x (6), a, b */
    assert_contains(r.out, "\nhvp       vjp diff.            8         0 ");
    /* 1 + 6 * 3 noise probes + 2 * (6 elements of x, a, b) */
    assert_contains(r.out, "apply evaluations: 35\n");
    run_free(&r);
}

/* ---- a wrong derivative fails, in that endpoint only ---------------------------------- */

Test(cli_gradcheck, a_wrong_vjp_exits_1_and_names_it) {
    const case_ c = {WRONG, "wrong=vjp", wrong_payload};
    cli_run r = check(&c, NULL);
    cr_assert_eq(r.status, EXIT_CALL, "exit %d: %s %s", r.status, r.out, r.err);
    cr_assert_str_eq(r.err, "", "a failed check is a report, not an error");
    assert_contains(r.out, "\njvp       jacobian             6         0 ");
    assert_contains(r.out, "\nvjp       jacobian             5         5 ");
    assert_contains(r.out, "\njacobian  finite diff.        30         0 ");
    assert_contains(r.out, "failures (5 of 5 listed):");
    assert_contains(r.out, "  vjp       d (c^T, random c) / d x[3]");
    assert_contains(r.out, "result: FAILED: vjp (5 of 5)\n");
    run_free(&r);
}

/* A wrong hvp: caught against the vjp, each element of x listed, exit 1;
 * --endpoints hvp checks it alone. */
Test(cli_gradcheck, a_wrong_hvp_exits_1_and_names_it) {
    const case_ c = {WRONG, "wrong=hvp", wrong_payload};
    cli_run r = check(&c, NULL);
    cr_assert_eq(r.status, EXIT_CALL, "exit %d: %s %s", r.status, r.out, r.err);
    assert_contains(r.out, "\nvjp       jacobian             5         0 ");
    assert_contains(r.out, "\nhvp       vjp diff.            5         5 ");
    assert_contains(r.out, "  hvp       (w.Hv) at x[0]");
    assert_contains(r.out, "result: FAILED: hvp (5 of 5)\n");
    run_free(&r);
    r = check(&c, EXTRA("--endpoints", "hvp"));
    cr_assert_eq(r.status, EXIT_CALL, "exit %d: %s %s", r.status, r.out, r.err);
    assert_contains(r.out, "\njvp       not checked");
    assert_contains(r.out, "result: FAILED: hvp (5 of 5)\n");
    run_free(&r);
}

Test(cli_gradcheck, a_wrong_jacobian_lists_the_elements) {
    const case_ c = {WRONG, "wrong=jacobian", wrong_payload};
    cli_run r = check(&c, NULL);
    cr_assert_eq(r.status, EXIT_CALL);
    assert_contains(r.out, "\njacobian  finite diff.        30         5 ");
    assert_contains(r.out, "\njvp       finite diff.        30         0 ");
    /* got cos(2.3) + 0.02, want cos(2.3) */
    assert_contains(r.out, "  jacobian  d y[1] / d x[1]                  finite diff.     -0.646276021");
    assert_contains(r.out, "result: FAILED: jacobian (5 of 30)\n");
    run_free(&r);
}

Test(cli_gradcheck, a_wrong_jvp_in_json_and_in_a_worker) {
    const case_ c = {WRONG, "wrong=jvp", wrong_payload};
    const char *modes[] = {"inproc", "worker"};
    for (int m = 0; m < 2; m++) {
        cli_run r = check(&c, EXTRA("-f", "json", "--mode", modes[m], "--endpoints", "jvp,vjp"));
        cr_assert_eq(r.status, EXIT_CALL, "%s: exit %d, %s", modes[m], r.status, r.err);
        json_t *root = parse_json(r.out);
        cr_assert(json_is_false(json_object_get(root, "passed")));
        cr_assert_eq(endpoint_int(root, "jvp", "failures"), 5);
        cr_assert_eq(endpoint_int(root, "vjp", "failures"), 0);
        cr_assert_eq(endpoint_int(root, "jacobian", "calls"), 0);
        cr_assert(json_is_false(json_object_get(json_object_get(json_object_get(root, "endpoints"),
                                                                "jacobian"),
                                                "checked")));
        json_t *f = json_array_get(json_object_get(root, "failures"), 2);
        cr_assert_str_eq(json_string_value(json_object_get(f, "endpoint")), "jvp");
        cr_assert_str_eq(json_string_value(json_object_get(f, "output")), "y");
        cr_assert_eq(json_integer_value(json_object_get(f, "in_index")), 2);
        cr_assert_eq(json_integer_value(json_array_get(json_object_get(f, "out_multi"), 0)), 2);
        json_decref(root);
        run_free(&r);
    }
}

Test(cli_gradcheck, taylor_flags_the_wrong_endpoint) {
    const case_ c = {WRONG, "wrong=jvp", wrong_payload};
    cli_run r = check(&c, EXTRA("--taylor"));
    cr_assert_eq(r.status, EXIT_CALL);
    assert_contains(r.out, "Taylor remainder convergence");
    assert_contains(r.out, "  jvp       d y / d x FAILED  1.00  1.00");
    assert_contains(r.out, "  jvp       d s / d x ok      2.00");
    assert_contains(r.out, "  vjp       d y / d x ok      2.00");
    assert_contains(r.out, "  jacobian  d y / d x ok      2.00");
    assert_contains(r.out, "result: FAILED: jvp (1 of 2)\n");
    run_free(&r);
    r = check(&c, EXTRA("--taylor", "-f", "json", "--taylor-steps", "4"));
    json_t *root = parse_json(r.out);
    json_t *t = json_array_get(json_object_get(root, "taylor_tests"), 0);
    cr_assert_eq(json_array_size(json_object_get(t, "steps")), 4);
    cr_assert_eq(json_array_size(json_object_get(t, "orders")), 3);
    json_decref(root);
    run_free(&r);
}

/* ---- options restrict what is checked ------------------------------------------------- */

Test(cli_gradcheck, input_and_output_paths_and_endpoints) {
    cli_run r = check(&bundled[0], EXTRA("-f", "json", "--input-paths", "a,b", "--endpoints", "jacobian"));
    assert_ok(&r);
    json_t *root = parse_json(r.out);
    cr_assert_eq(endpoint_int(root, "jacobian", "checks"), 2);
    cr_assert_eq(endpoint_int(root, "jvp", "calls"), 0);
    cr_assert_eq(json_integer_value(json_object_get(root, "apply_evals")), 1 + 2 * 6 + 2 * 2);
    json_decref(root);
    run_free(&r);
    /* The wrong dy/dx goes unseen when only s is checked. */
    const case_ c = {WRONG, "wrong=vjp", wrong_payload};
    r = check(&c, EXTRA("--output-paths", "s"));
    assert_ok(&r);
    run_free(&r);
}

Test(cli_gradcheck, max_evals_seed_and_steps) {
    cli_run r = check(&bundled[0], EXTRA("-f", "json", "--max-evals", "2", "--seed", "7", "--eps",
                                         "1e-5", "--absolute-step", "--rtol", "1e-4", "--atol", "1e-6"));
    assert_ok(&r);
    json_t *root = parse_json(r.out);
    /* x sampled at 2 of its 6 elements, a and b whole; a noise probe each. */
    cr_assert_eq(json_integer_value(json_object_get(root, "apply_evals")), 1 + 3 * 6 + 2 * 4);
    json_decref(root);
    run_free(&r);
}

Test(cli_gradcheck, served_by_finite_differences_only_when_named) {
    const case_ c = {TEST_PLUGIN("fd_central"), NULL, "{\"inputs\": {\"x\": [1, 2], \"a\": 2}}"};
    cli_run r = check(&c, NULL);
    cr_assert_eq(r.status, 1, "a check that compared nothing has not passed: %s", r.out);
    assert_contains(r.out, "nothing checked: the plugin implements no derivative endpoint");
    assert_contains(r.out, "result: NOTHING CHECKED");
    run_free(&r);
    r = check(&c, EXTRA("--endpoints", "jvp,vjp,jacobian"));
    assert_ok(&r);
    cr_assert_null(strstr(r.out, "not checked"));
    run_free(&r);
}

Test(cli_gradcheck, skipped_fields_are_listed) {
    const case_ c = {TEST_PLUGIN("mixed_dtypes"), NULL,
                     "{\"inputs\": {\"x\": [0.5, -1], \"w\": [[1, 2, 3], [4, 5, 6]],"
                     " \"z\": {\"object_type\": \"array\", \"shape\": [2], \"dtype\": \"complex128\","
                     " \"data\": {\"buffer\": \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\","
                     " \"encoding\": \"base64\"}}, \"h\": 0.5, \"k\": 2}}"};
    cli_run r = check(&c, NULL);
    assert_ok(&r);
    assert_contains(r.out, "skipped input 'z': complex128 fields are not checked");
    assert_contains(r.out, "skipped input 'h': float16 fields are not checked");
    assert_contains(r.out, "skipped output 'c': complex128");
    run_free(&r);
}

/* ---- errors -------------------------------------------------------------------------- */

Test(cli_gradcheck, usage_errors_exit_2) {
    struct {
        const char *const *extra;
        const char *needle;
    } cases[] = {
        {EXTRA("--input-paths", "y"), "no input field 'y' (differentiable inputs: x)"},
        {EXTRA("--input-paths", "c"), "input 'c' is not differentiable (differentiable inputs: x)"},
        {EXTRA("--output-paths", "x"), "no output field 'x' (differentiable outputs: y, s)"},
        {EXTRA("--output-paths", "y,y"), "output 'y' is named twice"},
        {EXTRA("--input-paths", "x,"), "--input-paths: empty field name in 'x,'"},
        {EXTRA("--endpoints", "jvp,hessian"), "--endpoints: unknown endpoint 'hessian' (jvp, vjp, jacobian, hvp)"},
        {EXTRA("--rtol", "abc"), "--rtol takes a number > 0, got 'abc'"},
        {EXTRA("--atol", "0"), "--atol takes a number > 0, got '0'"},
        {EXTRA("--eps", "-1e-6"), "--eps takes a number > 0, got '-1e-6'"},
        {EXTRA("--eps", "inf"), "--eps takes a number > 0, got 'inf'"},
        {EXTRA("--max-evals", "0"), "--max-evals takes an integer from 1 to"},
        {EXTRA("--max-evals", "12x"), "--max-evals takes an integer"},
        {EXTRA("--seed", "-1"), "--seed takes an integer from 0 to 2^64-1, got '-1'"},
        {EXTRA("--taylor-steps", "41"), "--taylor-steps takes an integer from 3 to 40"},
        {EXTRA("-f", "yaml"), "unsupported format 'yaml' (text or json)"},
        {EXTRA("--frobnicate"), "unknown option '--frobnicate'"},
        {EXTRA("--mode", "remote"), "unknown mode 'remote'"},
        {EXTRA("--absolute-step", "--eps", "1e-30", "--input-paths", "x"), "does not move input 'x'"},
    };
    const case_ c = {WRONG, "wrong=none", wrong_payload};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cli_run r = check(&c, cases[k].extra);
        assert_fails(&r, EXIT_USAGE, cases[k].needle);
        assert_contains(r.err, "Try 'tessera check-gradients --help'.");
        run_free(&r);
    }
    cli_run r = run_cli(NULL, "check-gradients", WRONG);
    assert_fails(&r, EXIT_USAGE, "tessera check-gradients: error: missing PAYLOAD");
    run_free(&r);
    r = run_cli(NULL, "check-gradients", "--max-evals");
    assert_fails(&r, EXIT_USAGE, "option '--max-evals' needs a value");
    run_free(&r);
    /* The plugin lacks the endpoint named. */
    r = run_cli(NULL, "check-gradients", "--endpoints", "vjp", TEST_PLUGIN("stateful"),
                "{\"inputs\": {\"x\": [1]}}");
    assert_fails(&r, EXIT_USAGE, "component 'stateful' has no vjp endpoint to check");
    run_free(&r);
}

Test(cli_gradcheck, load_payload_and_call_errors) {
    cli_run r = run_cli(NULL, "check-gradients", TSR_PLUGIN_DIR "/missing.so", "{\"inputs\": {}}");
    assert_fails(&r, EXIT_LOAD, "missing.so");
    run_free(&r);
    r = run_cli(NULL, "check-gradients", BUNDLED_PLUGIN("noop"), "{\"inputs\": {\"x\": [1,}}");
    assert_fails(&r, EXIT_PAYLOAD, "malformed JSON");
    run_free(&r);
    r = run_cli(NULL, "check-gradients", BUNDLED_PLUGIN("vectoradd"), "{\"inputs\": {\"a\": [1]}}");
    assert_fails(&r, EXIT_PAYLOAD, "required input is missing");
    run_free(&r);
    r = run_cli(NULL, "check-gradients", BUNDLED_PLUGIN("vectoradd"),
                "{\"inputs\": {\"a\": [1, 2], \"b\": [1], \"s\": 1}}");
    assert_fails(&r, EXIT_CALL, "gradient check, apply at the given inputs: component 'vectoradd'");
    run_free(&r);
}

Test(cli_gradcheck, payload_from_stdin) {
    cli_run r = run_cli(rosenbrock_payload, "check-gradients", BUNDLED_PLUGIN("rosenbrock"), "-");
    assert_ok(&r);
    assert_contains(r.out, "result: passed");
    run_free(&r);
}

Test(cli_gradcheck, help) {
    cli_run r = run_cli(NULL, "check-gradients", "--help");
    assert_ok(&r);
    assert_contains(r.out, "Usage: tessera check-gradients [OPTIONS] PLUGIN PAYLOAD");
    const char *options[] = {"--endpoints LIST", "--input-paths LIST", "--output-paths LIST",
                             "--max-evals N", "--seed N", "--rtol X", "--eps X",
                             "--absolute-step", "--taylor", "--mode MODE", "--config KEY=VALUE",
                             "-f, --format FORMAT", "  0  success; check-gradients: every check passed"};
    for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) assert_contains(r.out, options[k]);
    run_free(&r);
    r = run_cli(NULL, "--help");
    assert_ok(&r);
    assert_contains(r.out, "  check-gradients PLUGIN PAYLOAD\n");
    assert_contains(r.out, "derivative disagrees with the reference");
    run_free(&r);
}

/* A component with TEXT and JSON inputs beside its arrays: those are held
 * fixed at the payload's values (mode "double" triples the derivative,
 * so a check that lost the text would fail), the arrays still checked. */
Test(cli_gradcheck, text_and_json_inputs_are_held_fixed_and_arrays_checked) {
    static const char payload[] =
        "{\"inputs\": {\"x\": [1.0, 2.0, 3.0], \"mode\": \"double\", \"config\": {\"k\": [1, 2]}, "
        "\"a\": {\"object_type\": \"array\", \"shape\": [2, 2], \"dtype\": \"float64\", "
        "\"data\": {\"buffer\": [[1.0, 2.0], [3.0, -1.0]], \"encoding\": \"json\"}}}}";
    const case_ c = {.plugin = TEST_PLUGIN("kinds"), .payload = payload};
    cli_run r = check(&c, EXTRA("-f", "json"));
    assert_ok(&r);
    json_t *root = parse_json(r.out);
    cr_assert(json_is_true(json_object_get(root, "passed")), "%s", r.out);
    cr_assert_gt(endpoint_int(root, "jvp", "checks"), 0, "%s", r.out);
    cr_assert_gt(endpoint_int(root, "vjp", "checks"), 0, "%s", r.out);
    cr_assert_eq(endpoint_int(root, "jvp", "failures"), 0, "%s", r.out);
    cr_assert_eq(endpoint_int(root, "vjp", "failures"), 0, "%s", r.out);
    json_decref(root);
    run_free(&r);
    /* a value outside the choices is refused, naming the field */
    static const char bad[] =
        "{\"inputs\": {\"x\": [1.0], \"mode\": \"triple\", \"config\": 1, \"a\": [1.0]}}";
    const case_ b = {.plugin = TEST_PLUGIN("kinds"), .payload = bad};
    r = check(&b, NULL);
    cr_assert_neq(r.status, 0);
    assert_contains(r.err, "mode");
    run_free(&r);
}
