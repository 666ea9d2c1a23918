/* SPDX-License-Identifier: MIT */
/* Machine-readable errors: where in a request a failure lies (its loc)
 * from the C API (tsr_call_errloc) and the payload parser (tsr_error.loc),
 * the short type of a code (tsr_error_type), Tesseract's 422 body
 * (tsr_error_detail_json) and the CLI's --error-format json, which writes
 * that body. */
#include <tessera/payload.h>

#include "cli_run.h"

#define VECTORADD BUNDLED_PLUGIN("vectoradd")

static const char *const vjp_a[] = {"a"}, *const result_only[] = {"result"};

/* A vectoradd call with a, b, s bound to n-element vectors. */
static tsr_call *bound_call(tsr_component *c, tsr_endpoint ep, double *a, double *b, double *s,
                            int64_t nb) {
    tsr_call *call = new_call(c, ep);
    bind_ok(call, "a", f64_vec(a, 2));
    bind_ok(call, "b", f64_vec(b, nb));
    bind_ok(call, "s", f64_scalar(s));
    return call;
}

/* ---- the C API ------------------------------------------------------------ */

Test(errloc_call, binding_names_the_input) {
    tsr_component *c = open_ok(VECTORADD, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double x[2] = {1, 2};
    expect_failure(call, tsr_call_set_input(call, "nope", &(tsr_array){.data = x, .dtype = TSR_FLOAT64}),
                   TSR_E_UNKNOWN_FIELD);
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.nope");
    tsr_array bad_rank = f64_vec(x, 2);
    bad_rank.rank = TSR_MAX_RANK + 1;
    expect_failure(call, tsr_call_set_input(call, "b", &bad_rank), TSR_E_SHAPE);
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.b");
    expect_failure(call, tsr_call_set_input_at(call, 7, &bad_rank), TSR_E_UNKNOWN_FIELD);
    cr_assert_str_eq(tsr_call_errloc(call), "inputs");
    tsr_call_free(call);
    tsr_close(c);
}

Test(errloc_call, validation_names_the_input_and_success_clears_it) {
    tsr_component *c = open_ok(VECTORADD, NULL);
    double a[2] = {1, 2}, b[3] = {1, 2, 3}, s = 2;
    tsr_call *call = bound_call(c, TSR_EP_APPLY, a, b, &s, 3);
    run_fails(call, TSR_E_SHAPE);
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.b");
    int32_t ints[2] = {1, 2};
    int64_t two = 2;
    bind_ok(call, "b", make_array(ints, TSR_INT32, 1, &two));
    run_fails(call, TSR_E_DTYPE);
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.b");
    bind_ok(call, "b", f64_vec(b, 2));
    run_ok(call);
    cr_assert_str_eq(tsr_call_errloc(call), "");
    cr_assert_str_eq(tsr_call_errloc(NULL), "");
    tsr_call_free(call);
    tsr_close(c);
}

Test(errloc_call, a_limit_names_the_array) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "max_array_bytes", "8", &err), 0);
    tsr_component *c = open_ok(VECTORADD, o);
    tsr_options_free(o);
    double a[2] = {1, 2}, b[2] = {3, 4}, s = 2;
    tsr_call *call = bound_call(c, TSR_EP_APPLY, a, b, &s, 2);
    assert_contains(run_fails(call, TSR_E_LIMIT), "max_array_bytes");
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.a");
    tsr_call_free(call);
    tsr_close(c);
}

/* A list item is named by its index: "vjp_inputs.1". */
Test(errloc_call, wrt_lists_name_the_item) {
    tsr_component *c = open_ok(VECTORADD, NULL);
    tsr_call *call = new_call(c, TSR_EP_VJP);
    const char *twice[] = {"a", "a"}, *unknown[] = {"b", "q"};
    expect_failure(call, tsr_call_set_wrt(call, twice, 2, result_only, 1), TSR_E_ARGUMENT);
    assert_contains(tsr_call_errmsg(call), "'a' is named twice");
    cr_assert_str_eq(tsr_call_errloc(call), "vjp_inputs.1");
    expect_failure(call, tsr_call_set_wrt(call, unknown, 2, result_only, 1), TSR_E_UNKNOWN_FIELD);
    cr_assert_str_eq(tsr_call_errloc(call), "vjp_inputs.1");
    expect_failure(call, tsr_call_set_wrt(call, vjp_a, 1, unknown, 1), TSR_E_UNKNOWN_FIELD);
    cr_assert_str_eq(tsr_call_errloc(call), "vjp_outputs.0");
    tsr_call_free(call);
    tsr_close(c);
}

Test(errloc_call, seeds_name_their_vector) {
    tsr_component *c = open_ok(VECTORADD, NULL);
    double a[2] = {1, 2}, b[2] = {3, 4}, s = 2, t[3] = {1, 1, 1};
    tsr_call *jvp = bound_call(c, TSR_EP_JVP, a, b, &s, 2);
    wrt_ok(jvp, vjp_a, 1, result_only, 1);
    expect_failure(jvp, tsr_call_set_seed(jvp, "zz", &(tsr_array){.data = t}), TSR_E_UNKNOWN_FIELD);
    cr_assert_str_eq(tsr_call_errloc(jvp), "tangent_vector.zz");
    run_fails(jvp, TSR_E_MISSING);
    cr_assert_str_eq(tsr_call_errloc(jvp), "tangent_vector.a");
    seed_ok(jvp, "a", f64_vec(t, 3));
    run_fails(jvp, TSR_E_SHAPE);
    cr_assert_str_eq(tsr_call_errloc(jvp), "tangent_vector.a");
    tsr_call *vjp = bound_call(c, TSR_EP_VJP, a, b, &s, 2);
    wrt_ok(vjp, vjp_a, 1, result_only, 1);
    run_fails(vjp, TSR_E_MISSING);
    cr_assert_str_eq(tsr_call_errloc(vjp), "cotangent_vector.result");
    tsr_call_free(jvp);
    tsr_call_free(vjp);
    tsr_close(c);
}

/* A failure about no one place of the request has no loc, also after one
 * that had. */
Test(errloc_call, a_plugin_failure_has_none) {
    tsr_component *c = open_with_config(TEST_PLUGIN("misbehave"), "behave", "fail_msg");
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double x[2] = {1, 2};
    expect_failure(call, tsr_call_set_input(call, "nope", &(tsr_array){.data = x}), TSR_E_UNKNOWN_FIELD);
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.nope");
    bind_ok(call, "xin", f64_vec(x, 2));
    assert_contains(run_fails(call, TSR_E_PLUGIN), "the solver diverged");
    cr_assert_str_eq(tsr_call_errloc(call), "");
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- the payload parser --------------------------------------------------- */

static void parse_loc(const char *plugin, tsr_endpoint ep, const char *text, int code,
                      const char *loc) {
    tsr_component *c = open_ok(plugin, NULL);
    tsr_payload *p = NULL;
    tsr_error err = TSR_ERROR_INIT;
    memset(&err, 0x55, sizeof err);   /* every byte of loc must be written */
    int rc = tsr_payload_parse(c, ep, text, strlen(text), &p, &err);
    assert_code(rc, code, err.message);
    cr_assert_eq(err.code, code);
    cr_assert_str_eq(err.loc, loc, "payload %s: loc \"%s\", expected \"%s\" (%s)", text, err.loc,
                     loc, err.message);
    cr_assert_null(p);
    tsr_close(c);
}

Test(errloc_payload, top_level) {
    parse_loc(VECTORADD, TSR_EP_APPLY, "{\"inputs\": {", TSR_E_PAYLOAD, "");
    parse_loc(VECTORADD, TSR_EP_APPLY, "[1]", TSR_E_PAYLOAD, "");
    parse_loc(VECTORADD, TSR_EP_APPLY, "{}", TSR_E_PAYLOAD, "inputs");
    parse_loc(VECTORADD, TSR_EP_APPLY, "{\"inputs\": 1}", TSR_E_PAYLOAD, "inputs");
    parse_loc(VECTORADD, TSR_EP_APPLY, "{\"inputs\": {}, \"extra\": 1}", TSR_E_PAYLOAD, "extra");
    parse_loc(VECTORADD, TSR_EP_VJP, "{\"inputs\": {}}", TSR_E_PAYLOAD, "vjp_inputs");
}

Test(errloc_payload, inputs_name_the_field_not_the_element) {
    parse_loc(VECTORADD, TSR_EP_APPLY, "{\"inputs\": {\"a\": [1, \"x\"], \"b\": [1, 2], \"s\": 1}}",
              TSR_E_PAYLOAD, "inputs.a");
    parse_loc(VECTORADD, TSR_EP_APPLY, "{\"inputs\": {\"a\": [[1], [2, 3]], \"b\": [1], \"s\": 1}}",
              TSR_E_PAYLOAD, "inputs.a");
    parse_loc(VECTORADD, TSR_EP_APPLY, "{\"inputs\": {\"a\": [1], \"b\": [1], \"s\": 1, \"q\": 2}}",
              TSR_E_UNKNOWN_FIELD, "inputs.q");
    parse_loc(VECTORADD, TSR_EP_APPLY, "{\"inputs\": {\"a\": [1], \"b\": [1]}}", TSR_E_MISSING,
              "inputs.s");
    parse_loc(VECTORADD, TSR_EP_APPLY,
              "{\"inputs\": {\"a\": {\"object_type\": \"array\", \"shape\": [1], \"dtype\": "
              "\"float99\", \"data\": {\"buffer\": [1], \"encoding\": \"json\"}}, \"b\": [1], "
              "\"s\": 1}}",
              TSR_E_DTYPE, "inputs.a");
}

Test(errloc_payload, nested_inputs_name_the_whole_path) {
    parse_loc(TEST_PLUGIN("payload_fields"), TSR_EP_APPLY,
              "{\"inputs\": {\"mesh\": {\"nodes\": [[1, \"x\"]]}}}", TSR_E_PAYLOAD,
              "inputs.mesh.nodes");
}

/* The same field twice in a wrt list is refused at its second mention. */
Test(errloc_payload, wrt_lists_name_the_item) {
    const char *cot = "\"cotangent_vector\": {\"result\": [1, 1]}";
    char text[512];
    snprintf(text, sizeof text,
             "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2], \"s\": 1}, \"vjp_inputs\": [\"a\", "
             "\"b\", \"a\"], \"vjp_outputs\": [\"result\"], %s}",
             cot);
    parse_loc(VECTORADD, TSR_EP_VJP, text, TSR_E_PAYLOAD, "vjp_inputs.2");
    snprintf(text, sizeof text,
             "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2], \"s\": 1}, \"vjp_inputs\": [\"a\"], "
             "\"vjp_outputs\": [\"result\", \"result\"], %s}",
             cot);
    parse_loc(VECTORADD, TSR_EP_VJP, text, TSR_E_PAYLOAD, "vjp_outputs.1");
    parse_loc(VECTORADD, TSR_EP_JACOBIAN,
              "{\"inputs\": {\"a\": [1], \"b\": [1], \"s\": 1}, \"jac_inputs\": [\"a\", \"q\"], "
              "\"jac_outputs\": [\"result\"]}",
              TSR_E_UNKNOWN_FIELD, "jac_inputs.1");
}

Test(errloc_payload, seeds_name_their_vector) {
    const char *head = "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2], \"s\": 1}, \"jvp_inputs\": "
                       "[\"a\"], \"jvp_outputs\": [\"result\"], \"tangent_vector\": ";
    char text[512];
    snprintf(text, sizeof text, "%s{\"zz\": [1, 2]}}", head);
    parse_loc(VECTORADD, TSR_EP_JVP, text, TSR_E_UNKNOWN_FIELD, "tangent_vector.zz");
    snprintf(text, sizeof text, "%s{}}", head);
    parse_loc(VECTORADD, TSR_EP_JVP, text, TSR_E_MISSING, "tangent_vector.a");
    snprintf(text, sizeof text, "%s{\"a\": [1, true, {}]}}", head);
    parse_loc(VECTORADD, TSR_EP_JVP, text, TSR_E_PAYLOAD, "tangent_vector.a");
}

/* A failure found once the payload is bound and run carries the call's loc. */
Test(errloc_payload, bind_and_run_keep_the_calls_loc) {
    tsr_component *c = open_ok(VECTORADD, NULL);
    const char *text = "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2, 3], \"s\": 1}}";
    tsr_payload *p = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_payload_parse(c, TSR_EP_APPLY, text, strlen(text), &p, &err), 0);
    cr_assert_str_eq(err.loc, "");
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(tsr_payload_bind(p, call, &err), 0);
    run_fails(call, TSR_E_SHAPE);
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.b");
    tsr_call_free(call);
    tsr_payload_free(p);
    tsr_close(c);
}

/* ---- types and the 422 body ------------------------------------------------ */

Test(error_type, pydantic_names_where_they_fit) {
    cr_assert_str_eq(tsr_error_type(TSR_E_MISSING), "missing");
    cr_assert_str_eq(tsr_error_type(TSR_E_UNKNOWN_FIELD), "extra_forbidden");
    cr_assert_str_eq(tsr_error_type(TSR_E_DTYPE), "dtype_error");
    cr_assert_str_eq(tsr_error_type(TSR_E_SHAPE), "shape_error");
    cr_assert_str_eq(tsr_error_type(TSR_E_PAYLOAD), "value_error");
    cr_assert_str_eq(tsr_error_type(TSR_E_LIMIT), "too_large");
    cr_assert_str_eq(tsr_error_type(TSR_E_PLUGIN), "plugin_error");
    cr_assert_str_eq(tsr_error_type(12345), "value_error");
    /* every code has a name of its own but the two that are plain value errors */
    for (int a = TSR_E_VALUE; a <= TSR_OK; a++)
        for (int b = a + 1; b <= TSR_OK; b++)
            if (!(a == TSR_E_PAYLOAD && b == TSR_E_ARGUMENT))
                cr_assert_str_neq(tsr_error_type(a), tsr_error_type(b), "%d and %d", a, b);
}

static char *detail(int code, const char *loc, const char *msg, const char *request) {
    char *out = (char *)1;
    int rc = tsr_error_detail_json(code, loc, msg, request, request ? strlen(request) : 0, &out);
    cr_assert_eq(rc, 0);
    cr_assert_not_null(out);
    return out;
}

Test(error_detail, the_422_body) {
    const char *request = "{\"inputs\": {\"a\": [1, 2], \"mesh\": {\"nodes\": [[1, 2]]}}, "
                          "\"vjp_inputs\": [\"a\", \"a\"]}";
    char *out = detail(TSR_E_SHAPE, "inputs.a", "input 'a': {bad}", request);
    cr_assert_str_eq(out, "{\"detail\":[{\"type\":\"shape_error\",\"loc\":[\"body\",\"inputs\",\"a\"],"
                          "\"msg\":\"input 'a': (bad)\",\"input\":[1,2]}]}");
    tsr_json_free(out);
    out = detail(TSR_E_PAYLOAD, "vjp_inputs.1", "named twice", request);
    cr_assert_str_eq(out, "{\"detail\":[{\"type\":\"value_error\",\"loc\":[\"body\",\"vjp_inputs\",1],"
                          "\"msg\":\"named twice\",\"input\":\"a\"}]}");
    tsr_json_free(out);
    out = detail(TSR_E_MISSING, "inputs.mesh.nodes", "m", request);
    assert_contains(out, "\"loc\":[\"body\",\"inputs\",\"mesh\",\"nodes\"],\"msg\":\"m\",\"input\":[[1,2]]");
    tsr_json_free(out);
    /* no place, no request, a place the request lacks, a request that is not JSON */
    out = detail(TSR_E_PAYLOAD, "", "malformed", request);
    assert_contains(out, "\"loc\":[\"body\"],\"msg\":\"malformed\",\"input\":null");
    tsr_json_free(out);
    out = detail(TSR_E_MISSING, "inputs.s", "missing", request);
    assert_contains(out, "\"input\":null");
    tsr_json_free(out);
    out = detail(TSR_E_MISSING, "inputs.a", "x", NULL);
    assert_contains(out, "\"input\":null");
    tsr_json_free(out);
    out = detail(TSR_E_MISSING, "inputs.a", "x", "{\"inputs\": {\"a\": [1");
    assert_contains(out, "\"input\":null");
    tsr_json_free(out);
}

/* A request whose input a is a list of n ones. */
static void ones_request(char *buf, size_t cap, int n) {
    size_t used = (size_t)snprintf(buf, cap, "{\"inputs\": {\"a\": [");
    for (int i = 0; i < n; i++) used += (size_t)snprintf(buf + used, cap - used, "%s1", i ? "," : "");
    snprintf(buf + used, cap - used, "]}}");
}

/* An input is quoted up to TSR_ERROR_INPUT_MAX bytes, no more: [1,...,1]
 * of 128 ones is 257 bytes, of 127 ones 255. */
Test(error_detail, a_large_input_is_left_out) {
    char request[4096];
    ones_request(request, sizeof request, 200);
    char *out = detail(TSR_E_SHAPE, "inputs.a", "m", request);
    assert_contains(out, "\"input\":null");
    tsr_json_free(out);
    ones_request(request, sizeof request, 128);
    out = detail(TSR_E_SHAPE, "inputs.a", "m", request);
    assert_contains(out, "\"input\":null");
    tsr_json_free(out);
    ones_request(request, sizeof request, 127);
    out = detail(TSR_E_SHAPE, "inputs.a", "m", request);
    assert_contains(out, "\"input\":[1,1,");
    tsr_json_free(out);
}

/* A plugin's message need not be UTF-8; the body must be. */
Test(error_detail, a_message_that_is_not_utf8_still_makes_a_body) {
    char *out = detail(TSR_E_PLUGIN, "", "bad byte \xff here {x}", NULL);
    assert_contains(out, "\"msg\":\"bad byte ? here (x)\"");
    tsr_json_free(out);
}

Test(error_detail, bad_arguments) {
    cr_assert_eq(tsr_error_detail_json(TSR_E_SHAPE, "inputs.a", "m", "{}", 2, NULL), TSR_E_ARGUMENT);
    char *out = detail(TSR_E_SHAPE, NULL, NULL, NULL);
    cr_assert_str_eq(out, "{\"detail\":[{\"type\":\"shape_error\",\"loc\":[\"body\"],\"msg\":\"\","
                          "\"input\":null}]}");
    tsr_json_free(out);
}

/* ---- the CLI ----------------------------------------------------------------- */

/* The last line of stderr, without its newline. */
static char *last_line(const char *text) {
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '\n') n--;
    size_t start = n;
    while (start > 0 && text[start - 1] != '\n') start--;
    return strndup(text + start, n - start);
}

/* --error-format json writes the same body tsr_error_detail_json makes for
 * the same request, and the exit status stays the text format's. */
static void cli_json_error(const char *command, const char *request, int status, int code,
                           const char *loc) {
    cli_run text = run_cli(NULL, command, VECTORADD, request);
    cr_assert_eq(text.status, status, "%s", text.err);
    cr_assert(strncmp(text.err, "tessera: error: ", 16) == 0, "%s", text.err);
    cli_run json = run_cli(NULL, command, "--error-format", "json", VECTORADD, request);
    cr_assert_eq(json.status, status, "%s", json.err);
    cr_assert_str_eq(json.out, "");
    /* the message of the text line, as the body carries it */
    char *message = last_line(text.err + 16);
    char *want = NULL;
    cr_assert_eq(tsr_error_detail_json(code, loc, message, request, strlen(request), &want), 0);
    char *got = last_line(json.err);
    cr_assert_str_eq(got, want);
    cr_assert_eq(strchr(json.err, '\n'), json.err + strlen(json.err) - 1, "one line: %s", json.err);
    free(got);
    free(message);
    tsr_json_free(want);
    run_free(&text);
    run_free(&json);
}

Test(errloc_cli, error_format_json) {
    cli_json_error("apply", "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2, 3], \"s\": 2}}", EXIT_CALL,
                   TSR_E_SHAPE, "inputs.b");
    cli_json_error("apply", "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2]}}", EXIT_PAYLOAD,
                   TSR_E_MISSING, "inputs.s");
    cli_json_error("vjp",
                   "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2], \"s\": 1}, \"vjp_inputs\": [\"a\", "
                   "\"a\"], \"vjp_outputs\": [\"result\"], \"cotangent_vector\": {\"result\": [1, 1]}}",
                   EXIT_PAYLOAD, TSR_E_PAYLOAD, "vjp_inputs.1");
    cli_json_error("apply", "{\"inputs\": ", EXIT_PAYLOAD, TSR_E_PAYLOAD, "");
}

Test(errloc_cli, error_format_json_quotes_the_input) {
    cli_run r = run_cli(NULL, "apply", "--error-format", "json", VECTORADD,
                        "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2, 3], \"s\": 2}}");
    assert_contains(r.err, "{\"detail\":[{\"type\":\"shape_error\",\"loc\":[\"body\",\"inputs\",\"b\"],");
    assert_contains(r.err, ",\"input\":[1,2,3]}]}\n");
    run_free(&r);
}

Test(errloc_cli, error_format_json_without_a_request) {
    cli_run r = run_cli(NULL, "apply", "--error-format", "json", TEST_PLUGIN("no_such_plugin"), "{}");
    cr_assert_eq(r.status, EXIT_LOAD);
    assert_contains(r.err, "{\"detail\":[{\"type\":\"load_error\",\"loc\":[\"body\"],");
    run_free(&r);
    r = run_cli(NULL, "apply", "--error-format", "json", VECTORADD, "@/nonexistent/request.json");
    cr_assert_eq(r.status, EXIT_PAYLOAD);
    assert_contains(r.err, "{\"detail\":[{\"type\":\"io_error\",\"loc\":[\"body\"],\"msg\":\"cannot open payload file");
    run_free(&r);
    r = run_cli(NULL, "apply", "--error-format", "json", "-o", "/nonexistent/out.json", VECTORADD,
                "{\"inputs\": {\"a\": [1], \"b\": [1], \"s\": 1}}");
    cr_assert_eq(r.status, EXIT_OUTPUT);
    assert_contains(r.err, "{\"detail\":[{\"type\":\"io_error\",\"loc\":[\"body\"],\"msg\":\"cannot open output file");
    run_free(&r);
}

Test(errloc_cli, error_format_text_is_the_default_and_others_are_refused) {
    const char *request = "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2, 3], \"s\": 2}}";
    cli_run r = run_cli(NULL, "apply", "--error-format", "text", VECTORADD, request);
    assert_fails(&r, EXIT_CALL, "tessera: error: component 'vectoradd', endpoint 'apply': input 'b'");
    run_free(&r);
    r = run_cli(NULL, "apply", "--error-format", "xml", VECTORADD, request);
    assert_fails(&r, EXIT_USAGE, "unknown --error-format 'xml' (text or json)");
    run_free(&r);
    r = run_cli(NULL, "schema", "--error-format", "json", VECTORADD);
    assert_fails(&r, EXIT_USAGE, "unknown option '--error-format'");
    run_free(&r);
}

Test(errloc_cli, casting_option_reaches_the_library) {
    const char *request = "{\"inputs\": {\"a\": [1, 2], \"b\": [1, 2], \"s\": 2}}";
    cli_run r = run_cli(NULL, "apply", "--option", "casting=same_kind", VECTORADD, request);
    assert_ok(&r);
    assert_contains(r.out, "\"result\"");
    run_free(&r);
    r = run_cli(NULL, "apply", "--option", "casting=unsafe", VECTORADD, request);
    assert_fails(&r, EXIT_USAGE, "option 'casting': invalid value 'unsafe' (expected exact or same_kind)");
    run_free(&r);
}
