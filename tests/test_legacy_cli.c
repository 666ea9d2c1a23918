/* SPDX-License-Identifier: MIT */
/*
 * The `tessera` command line on manifest components: schema, apply, vjp
 * and check-gradients take a manifest path wherever they take a plugin,
 * in every mode, and a bad manifest is a load error (exit 3) naming the
 * manifest's entry.
 */
#include <jansson.h>

#include "cli_run.h"

#define EXAMPLE(name) TSR_PLUGIN_DIR "/" name ".json"

/* The float64 numbers of an encoded array at out[key] (JSON encoding). */
static json_t *result_buffer(const char *out, const char *key) {
    json_error_t jerr;
    json_t *root = json_loads(out, 0, &jerr);
    cr_assert_not_null(root, "stdout is not JSON: %s (%s)", jerr.text, out);
    json_t *buf = json_object_get(json_object_get(json_object_get(root, key), "data"), "buffer");
    cr_assert(json_is_array(buf), "no array for '%s' in %s", key, out);
    json_incref(buf);
    json_decref(root);
    return buf;
}

Test(legacy_cli, schema_of_a_manifest) {
    cli_run r = run_cli(NULL, "schema", EXAMPLE("rdstep"));
    assert_ok(&r);
    assert_contains(r.out, "\"name\":\"rdstep\"");
    assert_contains(r.out, "{\"name\":\"u\",\"dtype\":\"float64\",\"shape\":[\"n\"],"
                           "\"differentiable\":true");
    assert_contains(r.out,
                    "\"endpoints\":[\"apply\",\"jvp\",\"vjp\",\"jacobian\",\"abstract_eval\","
                    "\"hvp\"]");
    run_free(&r);
}

Test(legacy_cli, apply_solves_with_lapack_in_every_mode) {
    static const char *const modes[] = {"inproc", "isolated", "worker"};
    for (int m = 0; m < 3; m++) {
        cli_run r = run_cli(NULL, "apply", "--mode", modes[m], EXAMPLE("dgesv"),
                            "{\"inputs\": {\"a\": [[4, 1], [2, 3]], \"b\": [1, 2]}}");
        assert_ok(&r);
        json_t *x = result_buffer(r.out, "x");
        cr_expect(fabs(json_real_value(json_array_get(x, 0)) - 0.1) < 1e-15, "%s: %s", modes[m],
                  r.out);
        cr_expect(fabs(json_real_value(json_array_get(x, 1)) - 0.6) < 1e-15, "%s: %s", modes[m],
                  r.out);
        json_decref(x);
        run_free(&r);
    }
}

Test(legacy_cli, vjp_runs_the_fortran_adjoint) {
    /* u = (0.1, 0.5, -0.3), dt = 0.1, k = 0.5, cotangent e_1:
     * ubar = (1 + dt (1 - 2k - 3 u1^2), dt k, 0), kbar = dt (u2 - 2 u1) */
    cli_run r = run_cli(NULL, "vjp", EXAMPLE("rdstep"),
                        "{\"inputs\": {\"u\": [0.1, 0.5, -0.3], \"dt\": 0.1, \"k\": 0.5}, "
                        "\"vjp_inputs\": [\"u\", \"k\"], \"vjp_outputs\": [\"u_next\"], "
                        "\"cotangent_vector\": {\"u_next\": [1, 0, 0]}}");
    assert_ok(&r);
    json_t *u = result_buffer(r.out, "u");
    double want[3] = {1 + 0.1 * (1 - 1 - 3 * 0.01), 0.05, 0};
    for (int i = 0; i < 3; i++)
        cr_expect(fabs(json_number_value(json_array_get(u, (size_t)i)) - want[i]) < 1e-15,
                  "ubar[%d]: %s", i, r.out);
    json_decref(u);
    json_error_t jerr;
    json_t *root = json_loads(r.out, 0, &jerr);
    double kb = json_number_value(
        json_object_get(json_object_get(json_object_get(root, "k"), "data"), "buffer"));
    cr_expect(fabs(kb - 0.03) < 1e-15, "kbar = %g: %s", kb, r.out);
    json_decref(root);
    run_free(&r);
}

Test(legacy_cli, check_gradients_passes_on_the_examples) {
    cli_run r = run_cli(NULL, "check-gradients", EXAMPLE("rdstep"),
                        "{\"inputs\": {\"u\": [0.1, 0.5, -0.3, 0.7], \"dt\": 0.1, \"k\": 0.5}}");
    assert_ok(&r);
    assert_contains(r.out, "component 'rdstep'");
    assert_contains(r.out, "result: passed");
    run_free(&r);
    r = run_cli(NULL, "check-gradients", "--mode", "worker", EXAMPLE("dgemv"),
                "{\"inputs\": {\"a\": [[1, 2, 3], [4, 5, 6]], \"x\": [1, -1, 0.5]}}");
    assert_ok(&r);
    assert_contains(r.out, "result: passed");
    run_free(&r);
}

Test(legacy_cli, a_bad_manifest_is_a_load_error_naming_the_entry) {
    cli_run r = run_cli(NULL, "apply", TSR_TEST_MANIFEST_DIR "/bad_dim_field.json",
                        "{\"inputs\": {\"x\": [1]}}");
    assert_fails(&r, EXIT_LOAD,
                 "bad_dim_field.json: endpoints.apply.args[0]: dimension of unknown field 'm'");
    run_free(&r);
}
