/* SPDX-License-Identifier: MIT */
/*
 * Loading manifests: a bad manifest is refused at tsr_open, in every mode,
 * with a message that starts with the manifest's path and names the entry
 * at fault; a good one is recognised by its extension or by its content.
 */
#include "worker_util.h"

#define MANIFEST(name) TSR_TEST_MANIFEST_DIR "/" name ".json"

/* tsr_open(mode) must refuse the manifest with `code`; the message starts
 * with the manifest's path and contains `needle` (entry and cause). */
static void refused_in(tsr_mode mode, const char *name, int code, const char *needle) {
    char path[512], prefix[520];
    snprintf(path, sizeof path, "%s/%s.json", TSR_TEST_MANIFEST_DIR, name);
    snprintf(prefix, sizeof prefix, "%s: ", path);
    tsr_options *o = mode_options(mode);
    tsr_error err = open_fails(path, o);
    tsr_options_free(o);
    assert_code(err.code, code, err.message);
    assert_contains(err.message, prefix);
    assert_contains(err.message, needle);
}

static void refused(const char *name, int code, const char *needle) {
    refused_in(TSR_MODE_INPROC, name, code, needle);
}

TestSuite(bad_manifest, .fini = expect_no_own_segments);

Test(bad_manifest, malformed_json_gives_the_line_and_column) {
    refused("bad_json", TSR_E_DESCRIPTOR, "line 6, column");
    refused("bad_json", TSR_E_DESCRIPTOR, "the manifest is not valid JSON");
}

Test(bad_manifest, json_without_the_format_member_is_not_a_manifest) {
    refused("bad_not_manifest", TSR_E_DESCRIPTOR,
            "not a Tessera manifest: the top-level object has no \"tessera_manifest\": 1");
}

Test(bad_manifest, an_unknown_format_version_is_refused) {
    refused("bad_version", TSR_E_DESCRIPTOR, "tessera_manifest: format version 2 is not supported");
}

Test(bad_manifest, an_unknown_library_is_a_load_error) {
    refused("bad_library", TSR_E_LOAD,
            "library: cannot load 'libno_such_library.so' (looked for beside the manifest, then "
            "by the loader's search path)");
}

Test(bad_manifest, an_unknown_symbol_is_a_load_error) {
    refused("bad_symbol", TSR_E_LOAD,
            "endpoints.apply.symbol: 'fx_no_such_routine' is not exported by ");
}

Test(bad_manifest, a_fortran_source_name_gets_the_exported_name_as_a_hint) {
    refused("bad_symbol_fortran", TSR_E_LOAD,
            "'FX_CHARS' is not exported by '" TSR_TEST_MANIFEST_DIR
            "/libmanifest_fixture.so' (did you mean 'fx_chars_'? gfortran lowercases names and "
            "appends '_')");
}

Test(bad_manifest, a_type_that_disagrees_with_the_schema) {
    refused("bad_type", TSR_E_DESCRIPTOR,
            "endpoints.apply.args[1].type: type int32 disagrees with the schema: input 'x' is "
            "float64");
}

Test(bad_manifest, a_dimension_of_an_unknown_field) {
    refused("bad_dim_field", TSR_E_DESCRIPTOR,
            "endpoints.apply.args[0]: dimension of unknown field 'm' (inputs: x; outputs: y)");
}

Test(bad_manifest, an_output_dimension_no_input_carries_is_missing) {
    refused("bad_missing_dimension", TSR_E_DESCRIPTOR,
            "outputs[0].shape[0]: missing dimension: symbol 'm' of output 'y' is carried by no "
            "input");
}

Test(bad_manifest, a_size_expression_with_an_unknown_dimension) {
    refused("bad_expr_symbol", TSR_E_DESCRIPTOR,
            "endpoints.apply.args[3]: size expression 'n*m': unknown dimension 'm' (the schema's "
            "symbolic dimensions: n)");
}

Test(bad_manifest, a_size_expression_that_does_not_parse) {
    refused("bad_expr_syntax", TSR_E_DESCRIPTOR,
            "endpoints.apply.args[3]: size expression 'n*': expected a number, a dimension name "
            "or '(' at position 3");
}

Test(bad_manifest, wrong_arity_an_output_no_argument_writes) {
    refused("bad_arity_output", TSR_E_DESCRIPTOR,
            "endpoints.apply.args: wrong arity: output 'y' is passed to no 'out' argument");
}

Test(bad_manifest, wrong_arity_an_input_no_argument_passes) {
    refused("bad_arity_input", TSR_E_DESCRIPTOR,
            "endpoints.apply.args: wrong arity: input 'k' is passed to no 'in' argument");
}

Test(bad_manifest, wrong_arity_a_vjp_without_a_gradient_the_schema_promises) {
    refused("bad_arity_vjp", TSR_E_DESCRIPTOR,
            "endpoints.vjp.args: wrong arity: differentiable input 'k' is passed to no 'result' "
            "argument");
}

Test(bad_manifest, an_array_passed_by_value) {
    refused("bad_pass_array", TSR_E_DESCRIPTOR,
            "endpoints.apply.args[1].pass: an array is passed by reference");
}

Test(bad_manifest, an_axis_beyond_the_rank) {
    refused("bad_axis", TSR_E_DESCRIPTOR,
            "endpoints.apply.args[0].axis: axis 2 is out of range for 'x', which has rank 1");
}

Test(bad_manifest, a_misspelt_key) {
    refused("bad_unknown_key", TSR_E_DESCRIPTOR, "endpoints.apply.args[1]: unknown key 'copi'");
}

Test(bad_manifest, an_argument_with_two_kinds) {
    refused("bad_two_kinds", TSR_E_DESCRIPTOR,
            "endpoints.apply.args[1]: both 'in' and 'out': an argument has exactly one kind");
}

Test(bad_manifest, a_kind_in_the_wrong_endpoint) {
    refused("bad_kind_endpoint", TSR_E_DESCRIPTOR,
            "endpoints.apply.args[1]: a 'cotangent' argument has no meaning in apply");
}

Test(bad_manifest, an_unknown_convention) {
    refused("bad_convention", TSR_E_DESCRIPTOR, "convention: unknown convention 'pascal'");
}

Test(bad_manifest, status_messages_without_a_status) {
    refused("bad_errors_without_status", TSR_E_DESCRIPTOR,
            "endpoints.apply: 'errors' explains a status, but the routine reports none");
}

Test(bad_manifest, a_schema_the_descriptor_checks_refuse) {
    refused("bad_schema_name", TSR_E_DESCRIPTOR,
            "the schema: component 'bad': input 0 has an invalid name 'x y'");
}

Test(bad_manifest, an_output_initialised_from_an_input_of_another_shape) {
    refused("bad_init_shape", TSR_E_DESCRIPTOR,
            "endpoints.apply.args[2].init: input 'b' (float64 (n, 2)) cannot initialise output "
            "'y' (float64 (n,))");
}

Test(bad_manifest, no_apply_endpoint) {
    refused("bad_no_apply", TSR_E_DESCRIPTOR, "endpoints: 'apply' is required");
}

Test(bad_manifest, an_unknown_finite_difference_method) {
    refused("bad_fd_method", TSR_E_DESCRIPTOR, "fd.method: unknown method 'backward'");
}

Test(bad_manifest, is_refused_the_same_way_in_isolated_and_worker_modes) {
    refused_in(TSR_MODE_ISOLATED, "bad_type", TSR_E_DESCRIPTOR,
               "endpoints.apply.args[1].type: type int32 disagrees with the schema");
    refused_in(TSR_MODE_WORKER, "bad_type", TSR_E_DESCRIPTOR,
               "endpoints.apply.args[1].type: type int32 disagrees with the schema");
    refused_in(TSR_MODE_WORKER, "bad_symbol", TSR_E_LOAD,
               "endpoints.apply.symbol: 'fx_no_such_routine' is not exported by ");
}

Test(bad_manifest, a_missing_file_is_a_load_error) {
    tsr_error err = open_fails(TSR_TEST_MANIFEST_DIR "/no_such_manifest.json", NULL);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, "no_such_manifest.json': No such file or directory");
}

/* ---- recognising a manifest ------------------------------------------- */

Test(manifest_detect, a_manifest_without_the_json_extension_is_recognised_by_its_content) {
    char path[512];
    snprintf(path, sizeof path, "%s/fx_clobber_copy_%ld.manifest", TSR_TEST_MANIFEST_DIR,
             (long)getpid());
    const char *text = read_file_text(MANIFEST("fx_clobber"));
    cr_assert_not_null(text);
    char *indented = malloc(strlen(text) + 8);
    cr_assert_not_null(indented);
    sprintf(indented, "\n  \t%s", text);   /* blanks before the '{' */
    write_file(path, indented);
    free(indented);
    tsr_component *c = open_ok(path, NULL);
    cr_expect_str_eq(tsr_component_name(c), "fx_clobber");
    tsr_close(c);
    unlink(path);
}

Test(manifest_detect, a_shared_object_is_still_a_plugin) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    cr_expect_str_eq(tsr_component_name(c), "noop");
    tsr_close(c);
}

Test(manifest_detect, the_schema_of_a_manifest_is_the_components_schema) {
    tsr_component *c = open_ok(MANIFEST("fx_model"), NULL);
    cr_assert_eq(tsr_component_n_inputs(c), 2);
    cr_assert_eq(tsr_component_n_outputs(c), 2);
    const tsr_field *x = tsr_component_input(c, 0), *s = tsr_component_output(c, 1);
    cr_expect_str_eq(x->name, "x");
    cr_expect_eq(x->dtype, TSR_FLOAT64);
    cr_expect_eq(x->rank, 1);
    cr_expect_str_eq(x->dims[0].symbol, "n");
    cr_expect(x->flags & TSR_FIELD_DIFFERENTIABLE);
    cr_expect_str_eq(s->name, "s");
    cr_expect_eq(s->rank, 0);
    for (int ep = TSR_EP_APPLY; ep <= TSR_EP_JACOBIAN; ep++)
        cr_expect(tsr_component_has_native_endpoint(c, (tsr_endpoint)ep), "endpoint %d", ep);
    cr_expect(tsr_component_has_endpoint(c, TSR_EP_ABSTRACT_EVAL), "shapes follow from the schema");
    cr_expect_eq(tsr_component_fd_method(c), TSR_FD_NONE);
    tsr_close(c);
}
