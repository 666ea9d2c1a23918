/* SPDX-License-Identifier: MIT */
/*
 * TEXT and JSON fields through the request layer (tsr_payload_*): every
 * kind in a request and in a response, a JSON result's arrays in each
 * encoding, components without outputs, and the refusals with their loc
 * and their 422 body as tesseract-core's server writes it: a number for a
 * TEXT field, a value outside the choices, a malformed array object and a
 * binref leading outside the base directory inside a JSON value.
 */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "temp_dir.h"
#include "test_util.h"

#define KINDS_JSON TEST_PLUGIN("kinds_json")
#define NO_OUTPUTS TEST_PLUGIN("no_outputs")

/* [1.5, -2] as an encoded float64 array in base64 (little-endian). */
#define W_BASE64                                                                        \
    "{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"float64\",\"data\":{\"buffer\":" \
    "\"AAAAAAAA+D8AAAAAAAAAwA==\",\"encoding\":\"base64\"}}"
#define W_JSON                                                                           \
    "{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"float64\",\"data\":{\"buffer\":" \
    "[1.5,-2.0],\"encoding\":\"json\"}}"
#define X_JSON                                                                           \
    "{\"object_type\":\"array\",\"shape\":[3],\"dtype\":\"float64\",\"data\":{\"buffer\":" \
    "[1.0,2.0,3.0],\"encoding\":\"json\"}}"

typedef struct run_result {
    int rc;              /* the first failure's code, 0 when every step passed */
    tsr_error err;       /* its message and loc */
    char type[64];       /* the run's tsr_error_type (the 422's type) */
    char *answer;        /* the response on success */
} run_result;

/* Parse request against the component, bind, run and write the results
 * in opts' encoding (base_dir for binref inputs). */
static run_result run_request(tsr_component *c, tsr_endpoint ep, const char *request,
                              const char *base_dir, const tsr_output_options *out) {
    run_result r = {.err = TSR_ERROR_INIT};
    tsr_input_options in = {.struct_size = sizeof in, .base_dir = base_dir};
    tsr_payload *p = NULL;
    r.rc = tsr_payload_parse_ex(c, ep, request, strlen(request), &in, &p, &r.err);
    if (r.rc) return r;
    tsr_call *call = tsr_call_new(c, ep);
    cr_assert_not_null(call);
    r.rc = tsr_payload_bind(p, call, &r.err);
    if (!r.rc && (r.rc = tsr_call_run(call)) != 0) {
        r.err.code = r.rc;
        snprintf(r.err.message, sizeof r.err.message, "%s", tsr_call_errmsg(call));
        snprintf(r.err.loc, sizeof r.err.loc, "%s", tsr_call_errloc(call));
    }
    if (!r.rc) r.rc = tsr_payload_format_results_ex(p, call, out, &r.answer, &r.err);
    tsr_call_free(call);
    tsr_payload_free(p);
    return r;
}

static json_t *answer_ok(run_result *r) {
    cr_assert_eq(r->rc, 0, "the request failed: %d %s", r->rc, r->err.message);
    json_error_t jerr;
    json_t *v = json_loads(r->answer, 0, &jerr);
    cr_assert_not_null(v, "the answer is not JSON: %s (%s)", r->answer, jerr.text);
    tsr_json_free(r->answer);
    r->answer = NULL;
    return v;
}

/* The 422 body of a failed request as the server writes it. */
static json_t *detail_of(const run_result *r, const char *request) {
    char *body = NULL;
    cr_assert_eq(tsr_error_detail_json(r->err.code, r->err.loc, r->err.message, request,
                                       strlen(request), &body),
                 0);
    json_t *v = json_loads(body, 0, NULL);
    cr_assert_not_null(v);
    tsr_json_free(body);
    json_t *item = json_array_get(json_object_get(v, "detail"), 0);
    cr_assert_not_null(item, "no detail item");
    json_incref(item);
    json_decref(v);
    return item;
}

static void assert_json_eq(json_t *got, const char *want_text) {
    json_t *want = json_loads(want_text, JSON_DECODE_ANY, NULL);
    cr_assert_not_null(want, "bad expectation %s", want_text);
    char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    cr_assert(json_equal(got, want), "got %s, want %s", g, w);
    free(g);
    free(w);
    json_decref(want);
}

static const tsr_output_options json_out = {.struct_size = sizeof json_out,
                                            .encoding = TSR_ENCODING_JSON};

/* Every kind in and out: the TEXT option reaches the endpoint and comes
 * back as a JSON string; the JSON value's numbers, bools, null, strings,
 * lists and dicts come back unchanged, its array object in the encoding
 * the request asked for. */
Test(payload_kinds, text_and_json_inputs_and_outputs_round_trip) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *request =
        "{\"inputs\":{\"x\":" X_JSON ",\"method\":\"twice\",\"opts\":{\"steps\":3,\"tol\":0.25,"
        "\"fast\":true,\"none\":null,\"name\":\"caf\\u00e9\",\"layers\":[{\"k\":1},[2,3]],"
        "\"w\":" W_JSON "}}}";
    run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
    json_t *v = answer_ok(&r);
    assert_json_eq(json_object_get(v, "tag"), "\"twice\"");
    assert_json_eq(json_object_get(json_object_get(json_object_get(v, "y"), "data"), "buffer"),
                   "[2.0,4.0,6.0]");
    assert_json_eq(json_object_get(v, "echo"),
                   "{\"steps\":3,\"tol\":0.25,\"fast\":true,\"none\":null,\"name\":\"caf\\u00e9\","
                   "\"layers\":[{\"k\":1},[2,3]],\"w\":" W_JSON "}");
    json_decref(v);
    tsr_close(c);
}

/* The endpoint gets a JSON value with every array object in base64,
 * whatever encoding the request used; its own text (echo) shows it. */
Test(payload_kinds, a_json_input_reaches_the_endpoint_with_its_arrays_in_base64) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *request = "{\"inputs\":{\"x\":" X_JSON ",\"opts\":{\"w\":" W_JSON "}}}";
    tsr_output_options b64 = {.struct_size = sizeof b64, .encoding = TSR_ENCODING_BASE64};
    run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &b64);
    json_t *v = answer_ok(&r);
    assert_json_eq(json_object_get(v, "echo"), "{\"w\":" W_BASE64 "}");
    /* the default of method */
    assert_json_eq(json_object_get(v, "tag"), "\"plain\"");
    json_decref(v);
    tsr_close(c);
}

/* A JSON result's array object written as binref: a file in the output
 * directory that reads back to the same values. */
Test(payload_kinds, a_json_result_written_as_binref_reads_back) {
    char dir[256];
    make_temp_dir(dir, sizeof dir, "payload_kinds");
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *request = "{\"inputs\":{\"x\":" X_JSON ",\"opts\":[" W_BASE64 "]}}";
    tsr_output_options bin = {.struct_size = sizeof bin, .encoding = TSR_ENCODING_BINREF,
                              .output_dir = dir};
    run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &bin);
    json_t *v = answer_ok(&r);
    json_t *w = json_array_get(json_object_get(v, "echo"), 0);
    cr_assert_not_null(w);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(w, "data"), "encoding")),
                     "binref");
    char *text = json_dumps(w, JSON_COMPACT);
    tsr_input_options in = {.struct_size = sizeof in, .base_dir = dir};
    tsr_array a;
    void *buffer = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_array_from_json_ex(text, strlen(text), TSR_FLOAT64, &in, &a, &buffer, &err),
                 0, "%s", err.message);
    cr_assert_eq(a.shape[0], 2);
    cr_assert_eq(((const double *)a.data)[0], 1.5);
    cr_assert_eq(((const double *)a.data)[1], -2.0);
    tsr_array_buffer_free(buffer);
    free(text);
    json_decref(v);
    tsr_close(c);
    remove_tree(dir);
}

/* A JSON value that is a bare number, string or null passes as it is. */
Test(payload_kinds, a_json_value_may_be_any_json_value) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *values[] = {"7", "-0.5", "\"text\"", "null", "[]", "{}", "false"};
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
        char *request = NULL;
        cr_assert(asprintf(&request, "{\"inputs\":{\"x\":" X_JSON ",\"opts\":%s}}", values[k]) > 0);
        run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
        json_t *v = answer_ok(&r);
        assert_json_eq(json_object_get(v, "echo"), values[k]);
        json_decref(v);
        free(request);
    }
    tsr_close(c);
}

/* abstract_eval gets the TEXT and JSON values and sizes the results by
 * them: the answer describes the arrays only (TEXT/JSON have no shape
 * worth telling), as for every output. */
Test(payload_kinds, abstract_eval_reads_text_and_json_values) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *request = "{\"inputs\":{\"x\":" X_JSON ",\"method\":\"twice\",\"opts\":[1,2]}}";
    run_result r = run_request(c, TSR_EP_ABSTRACT_EVAL, request, NULL, &json_out);
    json_t *v = answer_ok(&r);
    assert_json_eq(json_object_get(json_object_get(v, "y"), "shape"), "[3]");
    json_decref(v);
    tsr_close(c);
}

/* A number (or a list, or an object) for a TEXT field: TSR_E_VALUE at the
 * field, pydantic's string_type with its msg and the input given. */
Test(payload_kinds, a_number_for_a_text_field_is_string_type) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *bad[] = {"5", "[1,2]", "{\"a\":1}", "true", "null"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char *request = NULL;
        cr_assert(asprintf(&request, "{\"inputs\":{\"x\":" X_JSON ",\"method\":%s,\"opts\":1}}",
                           bad[k]) > 0);
        run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
        assert_code(r.rc, TSR_E_VALUE, r.err.message);
        cr_assert_str_eq(r.err.loc, "inputs.method");
        json_t *item = detail_of(&r, request);
        assert_json_eq(json_object_get(item, "type"), "\"string_type\"");
        assert_json_eq(json_object_get(item, "loc"), "[\"body\",\"inputs\",\"method\"]");
        assert_json_eq(json_object_get(item, "msg"), "\"Input should be a valid string\"");
        assert_json_eq(json_object_get(item, "input"), bad[k]);
        json_decref(item);
        free(request);
    }
    tsr_close(c);
}

/* A value outside the choices: the run fails before the endpoint with
 * TSR_E_VALUE; the 422 is pydantic's literal_error, its ctx the expected
 * values, exactly as tesseract-core's server answers. */
Test(payload_kinds, a_value_outside_the_choices_is_literal_error) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *request = "{\"inputs\":{\"x\":" X_JSON ",\"method\":\"thrice\",\"opts\":1}}";
    run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
    assert_code(r.rc, TSR_E_VALUE, r.err.message);
    cr_assert_str_eq(r.err.loc, "inputs.method");
    assert_contains(r.err.message, "kinds_json");
    char *body = NULL;
    cr_assert_eq(tsr_error_detail_json(r.err.code, r.err.loc, r.err.message, request,
                                       strlen(request), &body),
                 0);
    cr_assert_str_eq(body, "{\"detail\":[{\"type\":\"literal_error\",\"loc\":[\"body\",\"inputs\","
                           "\"method\"],\"msg\":\"Input should be 'plain' or 'twice'\",\"input\":"
                           "\"thrice\",\"ctx\":{\"expected\":\"'plain' or 'twice'\"}}]}");
    tsr_json_free(body);
    tsr_close(c);
}

/* An array object inside a JSON value that does not hold what it says is
 * refused at parse time, its loc the path inside the field. */
Test(payload_kinds, a_malformed_array_object_inside_a_json_value_names_its_path) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    static const struct {
        const char *array;
        int code;
        const char *needle;
    } bad[] = {
        {"{\"object_type\":\"array\",\"shape\":[3],\"dtype\":\"float64\",\"data\":{\"buffer\":"
         "[1.0,2.0],\"encoding\":\"json\"}}",
         TSR_E_SHAPE, ""},
        {"{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"float64\",\"data\":{\"buffer\":"
         "\"@@@\",\"encoding\":\"base64\"}}",
         TSR_E_PAYLOAD, "base64"},
        {"{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"complex999\",\"data\":{\"buffer\":"
         "[1,2],\"encoding\":\"json\"}}",
         TSR_E_DTYPE, "complex999"},
        {"{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"float64\"}", TSR_E_PAYLOAD, "data"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char *request = NULL;
        cr_assert(asprintf(&request,
                           "{\"inputs\":{\"x\":" X_JSON ",\"opts\":{\"layers\":[{\"w\":%s}]}}}",
                           bad[k].array) > 0);
        run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
        cr_assert_neq(r.rc, 0, "case %zu was taken", k);
        if (bad[k].code != TSR_E_SHAPE) assert_code(r.rc, bad[k].code, r.err.message);
        cr_assert_str_eq(r.err.loc, "inputs.opts.layers.0.w", "case %zu: loc %s (%s)", k,
                         r.err.loc, r.err.message);
        assert_contains(r.err.message, bad[k].needle);
        json_t *item = detail_of(&r, request);
        assert_json_eq(json_object_get(item, "loc"),
                       "[\"body\",\"inputs\",\"opts\",\"layers\",0,\"w\"]");
        json_decref(item);
        free(request);
    }
    tsr_close(c);
}

/* A binref inside a JSON value follows the binref rules of array fields:
 * one leading outside the base directory is refused (no file is read),
 * and with files refused altogether none is read either. */
Test(payload_kinds, a_binref_inside_a_json_value_may_not_leave_the_base_dir) {
    char dir[256], outside[300];
    make_temp_dir(dir, sizeof dir, "payload_kinds_base");
    snprintf(outside, sizeof outside, "%s.bin", dir);
    FILE *f = fopen(outside, "wb");
    cr_assert_not_null(f);
    double vals[2] = {1, 2};
    cr_assert_eq(fwrite(vals, sizeof vals, 1, f), 1);
    fclose(f);
    const char *base = strrchr(dir, '/') + 1;
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    for (size_t k = 0; k < 2; k++) {
        char ref[300], *request = NULL;
        if (k == 0) snprintf(ref, sizeof ref, "../%s.bin:0", base);
        else snprintf(ref, sizeof ref, "%s/../../etc/passwd:0", base);
        cr_assert(asprintf(&request,
                           "{\"inputs\":{\"x\":" X_JSON ",\"opts\":{\"w\":{\"object_type\":"
                           "\"array\",\"shape\":[2],\"dtype\":\"float64\",\"data\":{\"buffer\":"
                           "\"%s\",\"encoding\":\"binref\"}}}}}",
                           ref) > 0);
        run_result r = run_request(c, TSR_EP_APPLY, request, dir, &json_out);
        cr_assert_neq(r.rc, 0, "%s was read", ref);
        cr_assert_str_eq(r.err.loc, "inputs.opts.w", "loc %s (%s)", r.err.loc, r.err.message);
        assert_contains(r.err.message, "outside");
        free(request);
    }
    /* inside the base directory it is read */
    char inside[400];
    snprintf(inside, sizeof inside, "%s/in.bin", dir);
    f = fopen(inside, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(vals, sizeof vals, 1, f), 1);
    fclose(f);
    const char *request =
        "{\"inputs\":{\"x\":" X_JSON ",\"opts\":{\"w\":{\"object_type\":\"array\",\"shape\":[2],"
        "\"dtype\":\"float64\",\"data\":{\"buffer\":\"in.bin:0\",\"encoding\":\"binref\"}}}}}";
    run_result r = run_request(c, TSR_EP_APPLY, request, dir, &json_out);
    json_t *v = answer_ok(&r);
    assert_json_eq(json_object_get(json_object_get(json_object_get(json_object_get(v, "echo"), "w"),
                                                   "data"),
                                   "buffer"),
                   "[1.0,2.0]");
    json_decref(v);
    tsr_close(c);
    unlink(outside);
    remove_tree(dir);
}

/* NUL inside a TEXT value cannot cross the ABI as text: the request is
 * refused as malformed, naming the escape. */
Test(payload_kinds, a_text_value_with_a_nul_is_refused) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *request = "{\"inputs\":{\"x\":" X_JSON ",\"method\":\"pl\\u0000ain\",\"opts\":1}}";
    run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
    assert_code(r.rc, TSR_E_PAYLOAD, r.err.message);
    assert_contains(r.err.message, "\\u0000");
    tsr_close(c);
}

/* A JSON field is required like an array field: missing is a 422. */
Test(payload_kinds, a_missing_json_field_is_missing) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *request = "{\"inputs\":{\"x\":" X_JSON "}}";
    run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
    assert_code(r.rc, TSR_E_MISSING, r.err.message);
    cr_assert_str_eq(r.err.loc, "inputs.opts");
    tsr_close(c);
}

/* A component without outputs answers an empty object. */
Test(payload_kinds, zero_outputs_answer_an_empty_object) {
    tsr_component *c = open_ok(NO_OUTPUTS, NULL);
    const char *request = "{\"inputs\":{\"x\":" X_JSON "}}";
    run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
    json_t *v = answer_ok(&r);
    assert_json_eq(v, "{}");
    json_decref(v);
    /* and its failure is still reported */
    const char *negative = "{\"inputs\":{\"x\":{\"object_type\":\"array\",\"shape\":[1],\"dtype\":"
                           "\"float64\",\"data\":{\"buffer\":[-1.0],\"encoding\":\"json\"}}}}";
    r = run_request(c, TSR_EP_APPLY, negative, NULL, &json_out);
    assert_code(r.rc, TSR_E_PLUGIN, r.err.message);
    assert_contains(r.err.message, "negative");
    tsr_close(c);
}

/* tsr_error_detail_json_typed: a type the endpoint gave wins; the code's
 * own name, NULL or "" let the sentence decide; other codes keep their
 * message whole. */
Test(payload_kinds, detail_types_of_invalid_values) {
    static const struct {
        const char *type;
        int code;
        const char *message, *want_type, *want_msg;
    } cases[] = {
        {"greater_than_equal", TSR_E_VALUE,
         "component 'c', endpoint 'apply': Input should be greater than or equal to 0",
         "greater_than_equal", "Input should be greater than or equal to 0"},
        {"literal_error", TSR_E_VALUE,
         "component 'c', endpoint 'apply': input 'm': Input should be a valid string, unable to "
         "parse raw data as a unicode string",
         "string_unicode",
         "Input should be a valid string, unable to parse raw data as a unicode string"},
        {NULL, TSR_E_VALUE, "component 'c', endpoint 'apply', field 'inputs.m': Input should be "
                            "a valid string",
         "string_type", "Input should be a valid string"},
        {"", TSR_E_VALUE, "something else\nsecond line", "value_error", "something else"},
        {NULL, TSR_E_SHAPE, "component 'c': wrong shape", "shape_error",
         "component 'c': wrong shape"},
        {"missing", TSR_E_MISSING, "component 'c': no x", "missing", "component 'c': no x"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *body = NULL;
        cr_assert_eq(tsr_error_detail_json_typed(cases[k].type, cases[k].code, "inputs.m",
                                                 cases[k].message, NULL, 0, &body),
                     0);
        json_t *v = json_loads(body, 0, NULL);
        json_t *item = json_array_get(json_object_get(v, "detail"), 0);
        cr_assert_str_eq(json_string_value(json_object_get(item, "type")), cases[k].want_type,
                         "case %zu: %s", k, body);
        cr_assert_str_eq(json_string_value(json_object_get(item, "msg")), cases[k].want_msg,
                         "case %zu: %s", k, body);
        cr_assert_null(json_object_get(item, "ctx"), "case %zu: %s", k, body);
        json_decref(v);
        tsr_json_free(body);
    }
    cr_assert_eq(tsr_error_detail_json_typed("x", TSR_E_VALUE, "a", "m", NULL, 0, NULL),
                 TSR_E_ARGUMENT);
}

/* An endpoint's own refusal of a value inside a JSON input
 * (tsr_ctx_invalid): TSR_E_VALUE, the path it gave as loc and its type
 * in the 422 (tsr_call_errtype), msg its sentence alone. */
Test(payload_kinds, an_endpoint_refusal_keeps_its_type_and_path) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    const char *request = "{\"inputs\":{\"x\":" X_JSON ",\"opts\":{\"steps\":-2}}}";
    tsr_payload *p = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_payload_parse(c, TSR_EP_APPLY, request, strlen(request), &p, &err), 0, "%s",
                 err.message);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(tsr_payload_bind(p, call, &err), 0, "%s", err.message);
    run_fails(call, TSR_E_VALUE);
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.opts.steps");
    cr_assert_str_eq(tsr_call_errtype(call), "greater_than_equal");
    char *body = NULL;
    cr_assert_eq(tsr_error_detail_json_typed(tsr_call_errtype(call), tsr_call_errcode(call),
                                             tsr_call_errloc(call), tsr_call_errmsg(call),
                                             request, strlen(request), &body),
                 0);
    cr_assert_str_eq(body, "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":[\"body\","
                           "\"inputs\",\"opts\",\"steps\"],\"msg\":\"Input should be greater than "
                           "or equal to 0\",\"input\":-2}]}");
    tsr_json_free(body);
    tsr_call_free(call);
    tsr_payload_free(p);
    tsr_close(c);
}

/* Long numeric lists and long strings inside a JSON value, which the
 * parser cuts out of the tree (json_hoist), reach the endpoint and come
 * back unchanged. */
Test(payload_kinds, long_lists_and_strings_inside_a_json_value_round_trip) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    char list[2048] = "[", text[1200] = "", request[8192], want[8192];
    for (int k = 0; k < 100; k++) {
        char item[16];
        snprintf(item, sizeof item, "%s%d.5", k ? ", " : "", k);
        strcat(list, item);
    }
    strcat(list, "]");
    memset(text, 'q', 1000);
    text[1000] = '\0';
    snprintf(request, sizeof request,
             "{\"inputs\":{\"x\":" X_JSON ",\"opts\":{\"series\":%s,\"note\":\"%s\"}}}", list, text);
    run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
    json_t *v = answer_ok(&r);
    snprintf(want, sizeof want, "{\"series\":%s,\"note\":\"%s\"}", list, text);
    assert_json_eq(json_object_get(v, "echo"), want);
    json_decref(v);
    tsr_close(c);
}

/* A JSON result that is not JSON, and a TEXT result with a NUL byte
 * inside, are refused as results the schema forbids, naming the output. */
Test(payload_kinds, a_malformed_json_result_or_a_text_result_with_a_nul_is_refused) {
    tsr_component *c = open_ok(KINDS_JSON, NULL);
    static const struct {
        const char *hostile, *why, *field;
    } cases[] = {
        {"malformed", "the JSON result is malformed", "echo"},
        {"nul", "the text holds a NUL byte", "tag"},
    };
    for (size_t k = 0; k < 2; k++) {
        char request[512];
        snprintf(request, sizeof request,
                 "{\"inputs\":{\"x\":" X_JSON ",\"opts\":{\"hostile\":\"%s\"}}}", cases[k].hostile);
        run_result r = run_request(c, TSR_EP_APPLY, request, NULL, &json_out);
        cr_assert_eq(r.rc, TSR_E_PLUGIN_RESULT, "%s: %d %s", cases[k].hostile, r.rc,
                     r.err.message);
        cr_assert(strstr(r.err.message, cases[k].why) != NULL, "%s", r.err.message);
        cr_assert(strstr(r.err.loc, cases[k].field) != NULL || strstr(r.err.message,
                                                                        cases[k].field) != NULL,
                  "%s / %s", r.err.loc, r.err.message);
        tsr_json_free(r.answer);
    }
    tsr_close(c);
}
