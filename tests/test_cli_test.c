/* SPDX-License-Identifier: MIT */
/* `tessera test`: Tesseract regression cases against the bundled vectoradd
 * plugin (result = a * s + b): passing and failing outputs, expected
 * exceptions and their regex, the default test_cases/ folder, usage
 * errors. */
#define _GNU_SOURCE /* nftw */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_run.h"
#include "temp_dir.h"
#include "test_util.h"

#define INPUTS "\"payload\": {\"inputs\": {\"a\": [1, 2], \"b\": [3, 4], \"s\": 2.0}}"

static void write_case(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* A failed case still prints its line and the summary on stdout. */
static void expect_status(const cli_run *r, int status) {
    cr_assert_eq(r->status, status, "status %d, stdout:\n%s\nstderr:\n%s", r->status, r->out, r->err);
}

static char dir[256];

static void setup(void) {
    make_temp_dir(dir, sizeof dir, "cli_test");
}

static void teardown(void) {
    remove_tree(dir);
}

static cli_run run_case(const char *name, const char *text) {
    write_case(dir, name, text);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return run_cli(NULL, "test", BUNDLED_PLUGIN("vectoradd"), path);
}

TestSuite(cli_test, .init = setup, .fini = teardown);

Test(cli_test, a_case_whose_outputs_match_passes_and_exits_0) {
    cli_run r = run_case("ok.json", "{\"endpoint\": \"apply\", " INPUTS ", \"expected_outputs\": "
                                    "{\"result\": [5.0, 8.0]}}");
    assert_ok(&r);
    cr_assert(strstr(r.out, "PASS ok.json") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "1 passed, 0 failed") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_test, an_encoded_expected_array_within_rtol_passes) {
    /* 5 + 4e-5 and 8: within rtol 1e-5 of neither? 4e-5 / 5 = 8e-6 < 1e-5. */
    cli_run r = run_case("close.json",
                         "{\"endpoint\": \"apply\", " INPUTS ", \"expected_outputs\": {\"result\": "
                         "{\"object_type\": \"array\", \"shape\": [2], \"dtype\": \"float64\", "
                         "\"data\": {\"buffer\": [5.00004, 8.0], \"encoding\": \"json\"}}}}");
    assert_ok(&r);
    run_free(&r);
}

Test(cli_test, a_case_whose_output_differs_fails_and_exits_1) {
    cli_run r = run_case("bad.json", "{\"endpoint\": \"apply\", " INPUTS ", \"expected_outputs\": "
                                     "{\"result\": [5.0, 8.5]}}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "FAIL bad.json: Values are not sufficiently close: result") != NULL,
              "%s", r.out);
    cr_assert(strstr(r.out, "0 passed, 1 failed") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_test, a_shape_or_missing_key_is_a_structure_mismatch) {
    cli_run r = run_case("shape.json", "{\"endpoint\": \"apply\", " INPUTS
                                       ", \"expected_outputs\": {\"result\": [5.0, 8.0, 1.0]}}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "Structure mismatch: shape mismatch for array at result") != NULL, "%s",
              r.out);
    run_free(&r);
    r = run_case("key.json", "{\"endpoint\": \"apply\", " INPUTS ", \"expected_outputs\": {}}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "unexpected key 'result'") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_test, an_expected_validation_error_passes_when_the_request_is_refused) {
    cli_run r = run_case("exc.json", "{\"endpoint\": \"apply\", \"payload\": {\"inputs\": {\"a\": "
                                     "[1, 2], \"b\": [3], \"s\": 1.0}}, \"expected_exception\": "
                                     "\"pydantic.ValidationError\"}");
    assert_ok(&r);
    run_free(&r);
    /* ValidationError is a ValueError, as in pydantic. */
    r = run_case("exc2.json", "{\"endpoint\": \"apply\", \"payload\": {\"inputs\": {\"a\": [1, 2]}},"
                              " \"expected_exception\": \"ValueError\", "
                              "\"expected_exception_regex\": \"missing\"}");
    assert_ok(&r);
    run_free(&r);
}

/* A value outside a TEXT field's choices and an endpoint's own refusal
 * (TSR_E_VALUE) are ValidationErrors, as pydantic's are in tesseract-core;
 * a case expecting outputs fails on them, naming the class. */
Test(cli_test, a_refused_value_is_a_validation_error) {
    static const char x[] = "\"x\": [1.0, 2.0]";
    const char *payloads[] = {"\"method\": \"thrice\", \"opts\": 1", "\"opts\": {\"steps\": -1}"};
    for (size_t k = 0; k < 2; k++) {
        char text[512], path[512];
        snprintf(text, sizeof text,
                 "{\"endpoint\": \"apply\", \"payload\": {\"inputs\": {%s, %s}}, "
                 "\"expected_exception\": \"pydantic.ValidationError\"}",
                 x, payloads[k]);
        write_case(dir, "refused.json", text);
        snprintf(path, sizeof path, "%s/refused.json", dir);
        cli_run r = run_cli(NULL, "test", TEST_PLUGIN("kinds_json"), path);
        assert_ok(&r);
        run_free(&r);
        snprintf(text, sizeof text,
                 "{\"endpoint\": \"apply\", \"payload\": {\"inputs\": {%s, %s}}, "
                 "\"expected_outputs\": {\"y\": [1.0, 2.0]}}",
                 x, payloads[k]);
        write_case(dir, "refused.json", text);
        r = run_cli(NULL, "test", TEST_PLUGIN("kinds_json"), path);
        expect_status(&r, 1);
        assert_contains(r.out, "ValidationError");
        run_free(&r);
    }
    /* A regex written against pydantic's message (its type, its loc)
     * matches the refusal; one naming another type does not. */
    static const struct {
        const char *inputs, *regex;
        int status;
    } regexes[] = {
        {"\"method\": \"thrice\", \"opts\": 1", "type=literal_error", 0},
        {"\"method\": \"thrice\", \"opts\": 1", "inputs\\\\.method", 0},
        {"\"method\": 3, \"opts\": 1", "string_type", 0},
        {"\"opts\": {\"steps\": -1}", "greater_than_equal", 0},
        {"\"opts\": {\"steps\": -1}", "literal_error", 1},
    };
    for (size_t k = 0; k < sizeof regexes / sizeof regexes[0]; k++) {
        char text[512], path[512];
        snprintf(text, sizeof text,
                 "{\"endpoint\": \"apply\", \"payload\": {\"inputs\": {%s, %s}}, "
                 "\"expected_exception\": \"pydantic.ValidationError\", "
                 "\"expected_exception_regex\": \"%s\"}",
                 x, regexes[k].inputs, regexes[k].regex);
        write_case(dir, "regex.json", text);
        snprintf(path, sizeof path, "%s/regex.json", dir);
        cli_run r = run_cli(NULL, "test", TEST_PLUGIN("kinds_json"), path);
        expect_status(&r, regexes[k].status);
        run_free(&r);
    }
}

Test(cli_test, an_expected_exception_that_does_not_happen_or_does_not_match_fails) {
    cli_run r = run_case("none.json", "{\"endpoint\": \"apply\", " INPUTS
                                      ", \"expected_exception\": \"ValueError\"}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "Expected ValueError, but no exception was raised") != NULL, "%s", r.out);
    run_free(&r);
    r = run_case("regex.json", "{\"endpoint\": \"apply\", \"payload\": {\"inputs\": {\"a\": [1, 2]}},"
                               " \"expected_exception\": \"ValueError\", "
                               "\"expected_exception_regex\": \"^nothing like it$\"}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "does not match regex") != NULL, "%s", r.out);
    run_free(&r);
    r = run_case("type.json", "{\"endpoint\": \"apply\", \"payload\": {\"inputs\": {\"a\": [1, 2]}},"
                              " \"expected_exception\": \"KeyError\"}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "Expected KeyError, but got ValidationError") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_test, a_bare_non_builtin_exception_name_is_an_invalid_case) {
    cli_run r = run_case("bare.json", "{\"endpoint\": \"apply\", \"payload\": {\"inputs\": {}}, "
                                      "\"expected_exception\": \"ValidationError\"}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "packagename.exceptionname") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_test, an_unknown_endpoint_or_malformed_case_fails) {
    cli_run r = run_case("ep.json", "{\"endpoint\": \"fly\", " INPUTS ", \"expected_outputs\": {}}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "Endpoint fly not found") != NULL, "%s", r.out);
    run_free(&r);
    r = run_case("both.json", "{\"endpoint\": \"apply\", " INPUTS ", \"expected_outputs\": {}, "
                              "\"expected_exception\": \"ValueError\"}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "exactly one of") != NULL, "%s", r.out);
    run_free(&r);
    r = run_case("broken.json", "{\"endpoint\": ");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "FAIL broken.json: invalid case: malformed JSON") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_test, jacobian_cases_compare_each_block) {
    cli_run r = run_case("jac.json",
                         "{\"endpoint\": \"jacobian\", \"payload\": {\"inputs\": {\"a\": [1, 2], "
                         "\"b\": [3, 4], \"s\": 2.0}, \"jac_inputs\": [\"b\"], \"jac_outputs\": "
                         "[\"result\"]}, \"expected_outputs\": {\"result\": {\"b\": [[1, 0], [0, "
                         "1]]}}}");
    assert_ok(&r);
    run_free(&r);
    r = run_case("jac_bad.json",
                 "{\"endpoint\": \"jacobian\", \"payload\": {\"inputs\": {\"a\": [1, 2], "
                 "\"b\": [3, 4], \"s\": 2.0}, \"jac_inputs\": [\"b\"], \"jac_outputs\": "
                 "[\"result\"]}, \"expected_outputs\": {\"result\": {\"b\": [[1, 0], [0, 2]]}}}");
    expect_status(&r, 1);
    cr_assert(strstr(r.out, "result.b") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_test, without_cases_it_runs_the_test_cases_folder_beside_the_plugin) {
    char sub[512], plugin[600], cmd[1400];
    snprintf(sub, sizeof sub, "%s/test_cases", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    snprintf(plugin, sizeof plugin, "%s/vectoradd.so", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", BUNDLED_PLUGIN("vectoradd"), plugin);
    cr_assert_eq(system(cmd), 0);
    write_case(sub, "b.json", "{\"endpoint\": \"apply\", " INPUTS ", \"expected_outputs\": "
                              "{\"result\": [5.0, 8.0]}}");
    write_case(sub, "a.json", "{\"endpoint\": \"apply\", " INPUTS ", \"expected_outputs\": "
                              "{\"result\": [0.0, 8.0]}}");
    write_case(sub, "notes.txt", "not a case");
    cli_run r = run_cli(NULL, "test", plugin);
    expect_status(&r, 1);
    /* In name order, a line each, then the summary. */
    const char *a = strstr(r.out, "FAIL a.json"), *b = strstr(r.out, "PASS b.json");
    cr_assert(a != NULL && b != NULL && a < b, "%s", r.out);
    cr_assert(strstr(r.out, "1 passed, 1 failed, 2 cases") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_test, no_component_or_no_cases_is_a_usage_error) {
    cli_run r = run_cli(NULL, "test");
    assert_fails(&r, 2, "missing COMPONENT");
    run_free(&r);
    char plugin[600], cmd[1400];
    snprintf(plugin, sizeof plugin, "%s/vectoradd.so", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", BUNDLED_PLUGIN("vectoradd"), plugin);
    cr_assert_eq(system(cmd), 0);
    r = run_cli(NULL, "test", plugin);
    assert_fails(&r, 2, "no cases");
    run_free(&r);
}

Test(cli_test, the_help_texts_name_the_command) {
    cli_run r = run_cli(NULL, "--help");
    cr_assert(strstr(r.out, "test PLUGIN [CASE.json ...]") != NULL);
    run_free(&r);
    r = run_cli(NULL, "test", "--help");
    assert_ok(&r);
    cr_assert(strstr(r.out, "Usage: tessera test") != NULL);
    run_free(&r);
}

/* Text and JSON outputs compared as tesseract-runtime compares them: the
 * same keys, list lengths and kinds, strings and bools exactly, integers
 * exactly, floats within atol/rtol (an int where a float is expected
 * counts as that float). kinds_json echoes opts and its method as tag. */
Test(cli_test, text_and_json_outputs_are_compared_value_by_value) {
    static const char opts[] =
        "{\"a\": [1, 2.5, true, null, \"s\"], \"b\": {\"c\": 3, \"d\": 0.1}}";
    static const struct {
        const char *expect;   /* expected_outputs, beside y */
        const char *why;      /* NULL: passes; else in the FAIL line */
    } cases[] = {
        {"\"echo\": {\"a\": [1, 2.5, true, null, \"s\"], \"b\": {\"c\": 3, \"d\": 0.1}}, "
         "\"tag\": \"twice\"", NULL},
        {"\"echo\": {\"a\": [1.0, 2.5000000001, true, null, \"s\"], \"b\": {\"c\": 3, "
         "\"d\": 0.1}}, \"tag\": \"twice\"", NULL},
        {"\"echo\": {\"a\": [1, 2.5, true, null, \"s\"], \"b\": {\"c\": 3, \"d\": 0.2}}, "
         "\"tag\": \"twice\"", "Values are not sufficiently close: echo.b.d"},
        {"\"echo\": {\"a\": [1, 2.5, true, null, \"s\"], \"b\": {\"c\": 4, \"d\": 0.1}}, "
         "\"tag\": \"twice\"", "echo.b.c: expected 4"},
        {"\"echo\": {\"a\": [1, 2.5, false, null, \"s\"], \"b\": {\"c\": 3, \"d\": 0.1}}, "
         "\"tag\": \"twice\"", "expected False, obtained True"},
        {"\"echo\": {\"a\": [1, 2.5, true, null, \"t\"], \"b\": {\"c\": 3, \"d\": 0.1}}, "
         "\"tag\": \"twice\"", "expected 't', obtained 's'"},
        {"\"echo\": {\"a\": [1, 2.5, true, null], \"b\": {\"c\": 3, \"d\": 0.1}}, "
         "\"tag\": \"twice\"", "length of list at echo.a: expected 4, obtained 5"},
        {"\"echo\": {\"a\": [1, 2.5, true, null, 5], \"b\": {\"c\": 3, \"d\": 0.1}}, "
         "\"tag\": \"twice\"", "type mismatch at echo.a.[4]: expected int, obtained str"},
        {"\"echo\": {\"a\": [1, 2.5, true, null, \"s\"], \"b\": {\"c\": 3}}, \"tag\": \"twice\"",
         "unexpected key 'd'"},
        {"\"echo\": {\"a\": [1, 2.5, true, null, \"s\"], \"b\": {\"c\": 3, \"d\": 0.1, "
         "\"e\": 1}}, \"tag\": \"twice\"", "missing key 'e'"},
        {"\"echo\": {\"a\": [1, 2.5, true, null, \"s\"], \"b\": {\"c\": 3, \"d\": 0.1}}, "
         "\"tag\": \"plain\"", "tag: expected 'plain', obtained 'twice'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[2048], path[512];
        snprintf(text, sizeof text,
                 "{\"endpoint\": \"apply\", \"payload\": {\"inputs\": {\"x\": [1.0, 2.0], "
                 "\"method\": \"twice\", \"opts\": %s}}, \"expected_outputs\": {\"y\": [2.0, 4.0], "
                 "%s}}",
                 opts, cases[k].expect);
        write_case(dir, "values.json", text);
        snprintf(path, sizeof path, "%s/values.json", dir);
        cli_run r = run_cli(NULL, "test", TEST_PLUGIN("kinds_json"), path);
        if (!cases[k].why) {
            assert_ok(&r);
        } else {
            expect_status(&r, 1);
            cr_assert(strstr(r.out, cases[k].why) != NULL, "case %zu: want '%s' in:\n%s", k,
                      cases[k].why, r.out);
        }
        run_free(&r);
    }
}
