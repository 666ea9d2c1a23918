/* SPDX-License-Identifier: MIT */
/*
 * Requests and responses of the hvp endpoint (include/tessera/payload.h):
 * {"inputs", "hvp_inputs", "hvp_outputs", "cotangent_vector",
 * "tangent_vector"} parsed, bound and run against rosenbrock's hvp, the
 * answer {"<hvp_input>": array} in every encoding, and every malformed
 * request refused with the path of the field at fault.
 */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "temp_dir.h"
#include "test_util.h"

/* rosenbrock at x = [1, 2], a = 1, b = 100: f = (a - x0)^2 + b (x1 - x0^2)^2,
 * whose Hessian in x is [[402, -400], [-400, 200]]. */
#define ROSEN_INPUTS "\"inputs\": {\"x\": [1, 2], \"a\": 1, \"b\": 100}"

static tsr_payload *parse_ok(tsr_component *c, tsr_endpoint ep, const char *text) {
    tsr_payload *p = NULL;
    tsr_error err = {0};
    int rc = tsr_payload_parse(c, ep, text, strlen(text), &p, &err);
    cr_assert_eq(rc, 0, "parsing %s failed: %d %s", text, rc, err.message);
    cr_assert_not_null(p);
    return p;
}

/* Parsing must fail with code, a message naming component, endpoint and
 * needle, and the loc of the field at fault. */
static void parse_fails(tsr_component *c, tsr_endpoint ep, const char *text, int code,
                        const char *loc, const char *needle) {
    tsr_payload *p = (tsr_payload *)0x1;
    tsr_error err = {0};
    int rc = tsr_payload_parse(c, ep, text, strlen(text), &p, &err);
    assert_code(rc, code, err.message);
    cr_assert_null(p, "a failed parse leaves no payload");
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "endpoint '%s'", tsr_endpoint_name(ep));
    assert_contains(err.message, tsr_component_name(c));
    assert_contains(err.message, endpoint);
    assert_contains(err.message, needle);
    cr_assert_str_eq(err.loc, loc, "loc of %s: got '%s'", text, err.loc);
}

/* Parse, bind, run and format with opts: the response text. */
static char *respond(tsr_component *c, const char *request, const tsr_output_options *opts) {
    tsr_payload *p = parse_ok(c, TSR_EP_HVP, request);
    tsr_call *call = new_call(c, TSR_EP_HVP);
    tsr_error err = {0};
    int rc = tsr_payload_bind(p, call, &err);
    cr_assert_eq(rc, 0, "bind failed: %d %s", rc, err.message);
    run_ok(call);
    char *out = NULL;
    rc = tsr_payload_format_results_ex(p, call, opts, &out, &err);
    cr_assert_eq(rc, 0, "formatting failed: %d %s", rc, err.message);
    tsr_call_free(call);
    tsr_payload_free(p);
    return out;
}

Test(payload_hvp, both_vectors_are_parsed_by_name_and_typed_like_their_fields) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    tsr_payload *p = parse_ok(c, TSR_EP_HVP,
                              "{" ROSEN_INPUTS ", \"hvp_inputs\": [\"x\", \"a\"],"
                              " \"hvp_outputs\": [\"value\"], \"cotangent_vector\": {\"value\": 2},"
                              " \"tangent_vector\": {\"a\": 3, \"x\": [1, 0]}}");
    cr_assert_eq(tsr_payload_endpoint(p), TSR_EP_HVP);
    cr_assert_eq(tsr_payload_n_wrt_inputs(p), 2);
    cr_assert_str_eq(tsr_payload_wrt_input(p, 1), "a");
    cr_assert_eq(tsr_payload_n_wrt_outputs(p), 1);
    const tsr_array *w = tsr_payload_seed(p, "value");
    cr_assert_not_null(w, "hvp's cotangent is its seed, by output name");
    cr_assert_eq(w->dtype, TSR_FLOAT64, "an integer cotangent takes its output's dtype");
    cr_assert_eq(((const double *)w->data)[0], 2.0);
    const tsr_array *vx = tsr_payload_tangent(p, "x"), *va = tsr_payload_tangent(p, "a");
    cr_assert_not_null(vx);
    cr_assert_not_null(va);
    cr_assert_eq(vx->rank, 1);
    cr_assert_eq(vx->shape[0], 2);
    cr_assert_eq(((const double *)vx->data)[0], 1.0);
    cr_assert_eq(((const double *)va->data)[0], 3.0);
    cr_assert_null(tsr_payload_tangent(p, "value"), "an output has no tangent");
    cr_assert_null(tsr_payload_tangent(p, "b"), "an input not listed has no tangent");
    cr_assert_null(tsr_payload_seed(p, "x"), "an input has no cotangent");
    cr_assert_null(tsr_payload_tangent(p, NULL));
    cr_assert_null(tsr_payload_tangent(NULL, "x"));
    tsr_payload_free(p);

    p = parse_ok(c, TSR_EP_VJP,
                 "{" ROSEN_INPUTS ", \"vjp_inputs\": [\"x\"], \"vjp_outputs\": [\"value\"],"
                 " \"cotangent_vector\": {\"value\": 1}}");
    cr_assert_null(tsr_payload_tangent(p, "x"), "a vjp payload has no tangents");
    tsr_payload_free(p);
    tsr_close(c);
}

Test(payload_hvp, the_response_is_one_array_per_hvp_input_in_json) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    /* 0.5 * H [1, 0] = [201, -200] */
    char *out = respond(c,
                        "{" ROSEN_INPUTS ", \"hvp_inputs\": [\"x\"], \"hvp_outputs\": [\"value\"],"
                        " \"cotangent_vector\": {\"value\": 0.5},"
                        " \"tangent_vector\": {\"x\": [1, 0]}}",
                        NULL);
    cr_assert_str_eq(out, "{\"x\":{\"object_type\":\"array\",\"shape\":[2],\"dtype\":\"float64\","
                          "\"data\":{\"buffer\":[201.0,-200.0],\"encoding\":\"json\"}}}");
    tsr_json_free(out);
    tsr_close(c);
}

/* The array under key in a response, decoded (reading binref files from dir). */
static void decode_result(const char *response, const char *key, const char *dir, double *dst,
                          size_t n) {
    json_error_t jerr;
    json_t *root = json_loads(response, 0, &jerr);
    cr_assert_not_null(root, "the response is JSON: %s", response);
    json_t *entry = json_object_get(root, key);
    cr_assert_not_null(entry, "the response has key %s: %s", key, response);
    char *text = json_dumps(entry, JSON_COMPACT);
    tsr_input_options in = {.struct_size = sizeof in, .base_dir = dir};
    tsr_array a;
    void *buffer = NULL;
    tsr_error err = {0};
    int rc = tsr_array_from_json_ex(text, strlen(text), TSR_FLOAT64, &in, &a, &buffer, &err);
    cr_assert_eq(rc, 0, "decoding %s failed: %s", text, err.message);
    cr_assert_eq(tsr_array_count(&a), (int64_t)n);
    memcpy(dst, a.data, n * sizeof *dst);
    tsr_array_buffer_free(buffer);
    free(text);
    json_decref(root);
}

Test(payload_hvp, the_response_round_trips_in_base64_and_binref_with_lz4_and_checksums) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    const char *req = "{" ROSEN_INPUTS ", \"hvp_inputs\": [\"x\", \"b\"], \"hvp_outputs\": [\"value\"],"
                      " \"cotangent_vector\": {\"value\": 1},"
                      " \"tangent_vector\": {\"x\": [0, 1], \"b\": 0}}";
    char dir[64];
    make_temp_dir(dir, sizeof dir, "hvp-binref");
    tsr_output_options cases[] = {
        {.struct_size = sizeof cases[0], .encoding = TSR_ENCODING_BASE64},
        {.struct_size = sizeof cases[0], .encoding = TSR_ENCODING_BASE64, .lz4 = 1, .checksum = 1},
        {.struct_size = sizeof cases[0], .encoding = TSR_ENCODING_BINREF, .output_dir = dir},
        {.struct_size = sizeof cases[0], .encoding = TSR_ENCODING_BINREF, .output_dir = dir,
         .lz4 = 1, .checksum = 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *out = respond(c, req, &cases[k]);
        const char *name = tsr_encoding_name(cases[k].encoding);
        assert_contains(out, name);
        if (cases[k].lz4) assert_contains(out, "\"compression\":\"lz4\"");
        if (cases[k].checksum) assert_contains(out, "\"checksum\":\"xxh3:");
        double x[2], b[1];
        decode_result(out, "x", dir, x, 2);
        decode_result(out, "b", dir, b, 1);
        /* H [0, 1] in x = [-400, 200]; d/db of grad_b = 0 and d/db of
         * grad_x along tangent 0 adds nothing */
        cr_assert_eq(x[0], -400.0, "%s: x[0] = %g", name, x[0]);
        cr_assert_eq(x[1], 200.0, "%s: x[1] = %g", name, x[1]);
        /* d^2 f / db dx1 = 2 (x1 - x0^2) = 2 */
        cr_assert_eq(b[0], 2.0, "%s: b = %g", name, b[0]);
        tsr_json_free(out);
    }
    remove_tree(dir);
    tsr_close(c);
}

Test(payload_hvp, missing_and_misplaced_keys_are_refused_by_name) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    parse_fails(c, TSR_EP_HVP,
                "{" ROSEN_INPUTS ", \"hvp_inputs\": [\"x\"], \"hvp_outputs\": [\"value\"],"
                " \"cotangent_vector\": {\"value\": 1}}",
                TSR_E_PAYLOAD, "tangent_vector", "the payload lacks \"tangent_vector\"");
    parse_fails(c, TSR_EP_HVP,
                "{" ROSEN_INPUTS ", \"hvp_inputs\": [\"x\"], \"hvp_outputs\": [\"value\"],"
                " \"tangent_vector\": {\"x\": [1, 0]}}",
                TSR_E_PAYLOAD, "cotangent_vector", "the payload lacks \"cotangent_vector\"");
    parse_fails(c, TSR_EP_HVP,
                "{" ROSEN_INPUTS ", \"vjp_inputs\": [\"x\"], \"hvp_outputs\": [\"value\"],"
                " \"cotangent_vector\": {\"value\": 1}, \"tangent_vector\": {\"x\": [1, 0]}}",
                TSR_E_PAYLOAD, "vjp_inputs",
                "unknown key \"vjp_inputs\" in the payload (this endpoint takes \"inputs\", "
                "\"hvp_inputs\", \"hvp_outputs\", \"cotangent_vector\", \"tangent_vector\")");
    /* and vjp takes no tangent */
    parse_fails(c, TSR_EP_VJP,
                "{" ROSEN_INPUTS ", \"vjp_inputs\": [\"x\"], \"vjp_outputs\": [\"value\"],"
                " \"cotangent_vector\": {\"value\": 1}, \"tangent_vector\": {\"x\": [1, 0]}}",
                TSR_E_PAYLOAD, "tangent_vector", "unknown key \"tangent_vector\"");
    tsr_close(c);
}

Test(payload_hvp, tangents_and_cotangents_must_match_their_lists) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    const char *lists = "{" ROSEN_INPUTS ", \"hvp_inputs\": [\"x\", \"a\"], \"hvp_outputs\": [\"value\"],";
    struct {
        const char *rest;
        int code;
        const char *loc, *needle;
    } cases[] = {
        {"\"cotangent_vector\": {\"value\": 1}, \"tangent_vector\": {\"a\": 1}}", TSR_E_MISSING,
         "tangent_vector.x", "missing; every field of \"hvp_inputs\" needs one"},
        {"\"cotangent_vector\": {}, \"tangent_vector\": {\"x\": [1, 0], \"a\": 1}}", TSR_E_MISSING,
         "cotangent_vector.value", "missing; every field of \"hvp_outputs\" needs one"},
        {"\"cotangent_vector\": {\"value\": 1}, \"tangent_vector\": {\"x\": [1, 0], \"a\": 1, "
         "\"b\": 1}}",
         TSR_E_UNKNOWN_FIELD, "tangent_vector.b", "\"b\" is not among \"hvp_inputs\""},
        {"\"cotangent_vector\": {\"value\": 1}, \"tangent_vector\": {\"x\": [1, 0], \"a\": 1, "
         "\"value\": 1}}",
         TSR_E_UNKNOWN_FIELD, "tangent_vector.value", "\"value\" is not among \"hvp_inputs\""},
        {"\"cotangent_vector\": {\"value\": 1, \"x\": [1, 0]}, \"tangent_vector\": {\"x\": [1, 0], "
         "\"a\": 1}}",
         TSR_E_UNKNOWN_FIELD, "cotangent_vector.x", "\"x\" is not among \"hvp_outputs\""},
        {"\"cotangent_vector\": {\"value\": 1}, \"tangent_vector\": [1, 0]}", TSR_E_PAYLOAD,
         "tangent_vector", "\"tangent_vector\" must be an object keyed by the fields of \"hvp_inputs\""},
        {"\"cotangent_vector\": 1, \"tangent_vector\": {\"x\": [1, 0], \"a\": 1}}", TSR_E_PAYLOAD,
         "cotangent_vector",
         "\"cotangent_vector\" must be an object keyed by the fields of \"hvp_outputs\""},
        {"\"cotangent_vector\": {\"value\": 1}, \"tangent_vector\": {\"x\": [1, \"y\"], \"a\": 1}}",
         TSR_E_PAYLOAD, "tangent_vector.x", "field 'tangent_vector.x[1]': a string is not a number"},
        {"\"cotangent_vector\": {\"value\": 1}, \"tangent_vector\": {\"x\": \"fast\", \"a\": 1}}",
         TSR_E_PAYLOAD, "tangent_vector.x", "expected an array"},
        {"\"cotangent_vector\": {\"value\": 1}, \"tangent_vector\": {\"x\": [1, 0], \"a\": "
         "{\"object_type\": \"array\", \"shape\": [], \"dtype\": \"complex128\", \"data\": "
         "{\"buffer\": \"AAAAAAAAAAAAAAAAAAAAAA==\", \"encoding\": \"base64\"}}}}",
         TSR_E_DTYPE, "tangent_vector.a", "field 'tangent_vector.a'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *req = NULL;
        cr_assert(asprintf(&req, "%s %s", lists, cases[k].rest) > 0);
        parse_fails(c, TSR_EP_HVP, req, cases[k].code, cases[k].loc, cases[k].needle);
        free(req);
    }
    tsr_close(c);
}

Test(payload_hvp, wrt_lists_name_differentiable_fields_once) {
    tsr_component *c = open_ok(TEST_PLUGIN("payload_fields"), NULL);
    const char *inputs = "{\"inputs\": {\"mesh\": {\"nodes\": [[1, 2]], \"cells\": [[0, 1, 2]]},"
                         " \"flags\": [true], \"scale\": 1, \"z\": []},";
    const char *seeds = "\"cotangent_vector\": {\"total\": 1}, \"tangent_vector\": {\"scale\": 1}}";
    struct {
        const char *lists;
        int code;
        const char *loc, *needle;
    } cases[] = {
        {"\"hvp_inputs\": [\"scale\", \"scale\"], \"hvp_outputs\": [\"total\"],", TSR_E_PAYLOAD,
         "hvp_inputs.1", "\"scale\" is named twice in \"hvp_inputs\""},
        {"\"hvp_inputs\": [\"scale\", \"mesh.cells\"], \"hvp_outputs\": [\"total\"],",
         TSR_E_NOT_DIFFERENTIABLE, "hvp_inputs.1", "\"mesh.cells\" is not differentiable"},
        {"\"hvp_inputs\": [\"scale\", \"speed\"], \"hvp_outputs\": [\"total\"],", TSR_E_UNKNOWN_FIELD,
         "hvp_inputs.1", "\"speed\" is not an input field"},
        {"\"hvp_inputs\": [], \"hvp_outputs\": [\"total\"],", TSR_E_PAYLOAD, "hvp_inputs",
         "\"hvp_inputs\" must name at least one field"},
        {"\"hvp_inputs\": [\"scale\"], \"hvp_outputs\": \"total\",", TSR_E_PAYLOAD, "hvp_outputs",
         "\"hvp_outputs\" must be a list of field names"},
        {"\"hvp_inputs\": [\"scale\"], \"hvp_outputs\": [\"scale\"],", TSR_E_UNKNOWN_FIELD,
         "hvp_outputs.0", "\"scale\" is not an output field"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *req = NULL;
        cr_assert(asprintf(&req, "%s %s %s", inputs, cases[k].lists, seeds) > 0);
        parse_fails(c, TSR_EP_HVP, req, cases[k].code, cases[k].loc, cases[k].needle);
        free(req);
    }
    tsr_close(c);
}
