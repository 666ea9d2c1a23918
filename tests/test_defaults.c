/* SPDX-License-Identifier: MIT */
/*
 * Defaults and optional inputs (tsr_field.default_value,
 * TSR_FIELD_OPTIONAL): a left-out input takes its default, a given one
 * overrides it, an absent optional input reaches the plugin as absent and
 * cannot be differentiated; in every mode and over the files transport.
 * Descriptors that misuse them are refused at load; a plugin built with
 * the older field layout loads and runs unchanged. The schema JSON, the
 * worker's imported schema and the command line show them, and a remote
 * component reads them from the server's OpenAPI document (tessera serve
 * of the test plugin; tesseract-runtime serve of the same component
 * written as a tesseract_api.py, where tesseract-runtime is installed).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

#include <tessera/payload.h>

#include "cli_run.h"
#include "net_util.h"
#include "temp_dir.h"
#include "worker_util.h"

#define DEFAULTS TEST_PLUGIN("defaults")

/* The ways a component is run here: the three modes, and worker mode over
 * binref files instead of shared memory. */
enum { RUN_INPROC, RUN_ISOLATED, RUN_WORKER, RUN_FILES, RUN_COUNT };
static const char *const run_names[] = {"inproc", "isolated", "worker", "worker+files"};
static char spool_parent[4096];

static tsr_component *open_as(const char *path, int how) {
    if (how != RUN_FILES) return open_mode(path, (tsr_mode)how);
    if (!spool_parent[0]) make_temp_dir(spool_parent, sizeof spool_parent, "tessera-defaults");
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "transport", "files");
    set_option(o, "spool_dir", spool_parent);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* The servers first: they run in spool_parent. */
static void cleanup(void) {
    stop_servers();
    if (spool_parent[0]) remove_tree(spool_parent);
    spool_parent[0] = '\0';
}

TestSuite(defaults, .fini = cleanup, .timeout = 60);

static void expect_values(const tsr_array *a, const double *want, int64_t n, const char *what,
                          const char *how) {
    cr_assert_not_null(a, "%s: %s missing", how, what);
    cr_assert_eq(a->rank, 1, "%s: %s rank", how, what);
    cr_assert_eq(a->shape[0], n, "%s: %s shape", how, what);
    for (int64_t i = 0; i < n; i++)
        cr_expect_float_eq(((const double *)a->data)[i], want[i], 1e-12, "%s: %s[%lld] = %g, want %g",
                           how, what, (long long)i, ((const double *)a->data)[i], want[i]);
}

/* ---- apply: defaults taken, overridden, and taken again ------------------- */

static void apply_in(int how) {
    const char *name = run_names[how];
    tsr_component *c = open_as(DEFAULTS, how);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double x[2] = {1, 2};
    bind_ok(call, "x", f64_vec(x, 2));
    /* s = 2, w = [1, 2, 3] by default; bias absent */
    run_ok(call);
    expect_values(tsr_call_output(call, "y"), (double[]){8, 10}, 2, "y", name);
    expect_values(tsr_call_output(call, "seen"), (double[]){2, 6, 0}, 3, "seen", name);
    /* the same call again (the validated fast path) keeps the defaults */
    run_ok(call);
    expect_values(tsr_call_output(call, "seen"), (double[]){2, 6, 0}, 3, "seen again", name);
    /* given values override every default; bias given */
    double s = 3, w[3] = {0, 0, 1}, bias[2] = {10, 20};
    bind_ok(call, "s", f64_scalar(&s));
    bind_ok(call, "w", f64_vec(w, 3));
    bind_ok(call, "bias", f64_vec(bias, 2));
    run_ok(call);
    expect_values(tsr_call_output(call, "y"), (double[]){14, 27}, 2, "y given", name);
    expect_values(tsr_call_output(call, "seen"), (double[]){3, 1, 1}, 3, "seen given", name);
    /* unbinding s and bias brings the default and the absence back */
    cr_assert_eq(tsr_call_set_input(call, "s", NULL), 0);
    cr_assert_eq(tsr_call_set_input(call, "bias", NULL), 0);
    run_ok(call);
    expect_values(tsr_call_output(call, "seen"), (double[]){2, 1, 0}, 3, "seen unbound", name);
    tsr_call_free(call);
    tsr_close(c);
}

/* A batch binds the leading axis on given inputs only: each item takes
 * the defaults itself. */
static void batch_in(int how) {
    tsr_component *c = open_as(DEFAULTS, how);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double x[4] = {1, 2, 3, 4};
    tsr_array xs = {.data = x, .dtype = TSR_FLOAT64, .rank = 2, .shape = {2, 2}};
    bind_ok(call, "x", xs);
    cr_assert_eq(tsr_call_run_batch(call, 2), 0, "%s: %s", run_names[how], tsr_call_errmsg(call));
    const tsr_array *y = tsr_call_output(call, "y");
    cr_assert_eq(y->rank, 2);
    const double want[4] = {8, 10, 12, 14};
    for (int i = 0; i < 4; i++)
        cr_expect_float_eq(((const double *)y->data)[i], want[i], 1e-12, "%s: y[%d]",
                           run_names[how], i);
    tsr_call_free(call);
    tsr_close(c);
}

Test(defaults, batch_inproc) { batch_in(RUN_INPROC); }
Test(defaults, batch_worker) { batch_in(RUN_WORKER); }

/* casting=same_kind converts what is given and leaves an absent optional
 * input absent. */
Test(defaults, casting_keeps_an_absent_input_absent) {
    const int runs[] = {RUN_INPROC, RUN_WORKER};
    for (int r = 0; r < 2; r++) {
        int how = runs[r];
        tsr_options *o = mode_options((tsr_mode)how);
        set_option(o, "casting", "same_kind");
        tsr_component *c = open_ok(DEFAULTS, o);
        tsr_options_free(o);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        int32_t x[2] = {1, 2};
        tsr_array xs = {.data = x, .dtype = TSR_INT32, .rank = 1, .shape = {2}};
        bind_ok(call, "x", xs);
        run_ok(call);
        expect_values(tsr_call_output(call, "y"), (double[]){8, 10}, 2, "y", run_names[how]);
        expect_values(tsr_call_output(call, "seen"), (double[]){2, 6, 0}, 3, "seen",
                      run_names[how]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(defaults, apply_inproc) { apply_in(RUN_INPROC); }
Test(defaults, apply_isolated) { apply_in(RUN_ISOLATED); }
Test(defaults, apply_worker) { apply_in(RUN_WORKER); }
Test(defaults, apply_worker_files) { apply_in(RUN_FILES); }

Test(defaults, a_required_input_left_out_is_missing) {
    for (int how = 0; how < RUN_COUNT; how++) {
        tsr_component *c = open_as(DEFAULTS, how);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double s = 1;
        bind_ok(call, "s", f64_scalar(&s));
        const char *msg = run_fails(call, TSR_E_MISSING);
        assert_contains(msg, "input 'x' is missing");
        cr_assert_str_eq(tsr_call_errloc(call), "inputs.x");
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* A default is checked like a given input: its dims bind symbols (none
 * here) and its dtype is the field's; a wrong given value is still refused. */
Test(defaults, a_given_input_is_validated_as_before) {
    tsr_component *c = open_as(DEFAULTS, RUN_INPROC);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double x[2] = {1, 2}, w[2] = {1, 1};
    bind_ok(call, "x", f64_vec(x, 2));
    const char *msg = bind_or_run_fails(call, "w", f64_vec(w, 2), TSR_E_SHAPE);
    assert_contains(msg, "input 'w'");
    /* an optional input, when given, binds its symbol like any other */
    cr_assert_eq(tsr_call_set_input(call, "w", NULL), 0);
    double bias[3] = {0, 0, 0};
    msg = bind_or_run_fails(call, "bias", f64_vec(bias, 3), TSR_E_SHAPE);
    assert_contains(msg, "input 'bias'");
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- derivatives ----------------------------------------------------------- */

static void derivatives_in(int how) {
    const char *name = run_names[how];
    tsr_component *c = open_as(DEFAULTS, how);
    double x[2] = {1, 2}, ones[2] = {1, 1}, t = 1;
    const char *y[] = {"y"};

    /* jvp with respect to the defaulted s: d y / d s = x */
    tsr_call *call = new_call(c, TSR_EP_JVP);
    bind_ok(call, "x", f64_vec(x, 2));
    wrt_ok(call, (const char *[]){"s"}, 1, y, 1);
    seed_ok(call, "s", f64_scalar(&t));
    run_ok(call);
    expect_values(tsr_call_output(call, "y"), x, 2, "jvp y", name);
    tsr_call_free(call);

    /* naming the absent optional bias fails, naming it when given works */
    call = new_call(c, TSR_EP_JVP);
    bind_ok(call, "x", f64_vec(x, 2));
    wrt_ok(call, (const char *[]){"bias"}, 1, y, 1);
    seed_ok(call, "bias", f64_vec(ones, 2));
    const char *msg = run_fails(call, TSR_E_MISSING);
    assert_contains(msg, "jvp_inputs");
    assert_contains(msg, "'bias'");
    cr_assert_str_eq(tsr_call_errloc(call), "inputs.bias");
    double bias[2] = {5, 5};
    bind_ok(call, "bias", f64_vec(bias, 2));
    run_ok(call);
    expect_values(tsr_call_output(call, "y"), ones, 2, "jvp bias", name);
    tsr_call_free(call);

    call = new_call(c, TSR_EP_VJP);
    bind_ok(call, "x", f64_vec(x, 2));
    wrt_ok(call, (const char *[]){"x", "bias"}, 2, y, 1);
    seed_ok(call, "y", f64_vec(ones, 2));
    msg = run_fails(call, TSR_E_MISSING);
    assert_contains(msg, "vjp_inputs");
    assert_contains(msg, "'bias'");
    wrt_ok(call, (const char *[]){"x", "s"}, 2, y, 1);
    seed_ok(call, "y", f64_vec(ones, 2));
    run_ok(call);
    expect_values(tsr_call_output(call, "x"), (double[]){2, 2}, 2, "vjp x", name);
    const tsr_array *ds = tsr_call_output(call, "s");
    cr_assert_not_null(ds);
    cr_expect_float_eq(*(const double *)ds->data, 3.0, 1e-12, "%s: vjp s", name);
    tsr_call_free(call);
    tsr_close(c);
}

Test(defaults, derivatives_inproc) { derivatives_in(RUN_INPROC); }
Test(defaults, derivatives_worker) { derivatives_in(RUN_WORKER); }
Test(defaults, derivatives_worker_files) { derivatives_in(RUN_FILES); }

/* ---- descriptors refused at load ------------------------------------------- */

static void refused(const char *plugin, const char *field, const char *cause) {
    char path[512];
    snprintf(path, sizeof path, TSR_TEST_PLUGIN_DIR "/%s.so", plugin);
    for (int how = RUN_INPROC; how <= RUN_WORKER; how++) {
        tsr_options *o = mode_options((tsr_mode)how);
        tsr_error err = open_fails(path, o);
        tsr_options_free(o);
        assert_code(err.code, TSR_E_DESCRIPTOR, err.message);
        char component[128];
        snprintf(component, sizeof component, "component '%s'", plugin);
        assert_contains(err.message, component);
        assert_contains(err.message, field);
        assert_contains(err.message, cause);
    }
}

Test(defaults, optional_with_a_default_is_refused) {
    refused("default_and_optional", "input 's'", "both optional and has a default");
}
Test(defaults, default_of_another_dtype_is_refused) {
    refused("default_dtype", "input 's'", "default has dtype int32, the field is float64");
}
Test(defaults, default_of_another_rank_is_refused) {
    refused("default_rank", "input 's'", "default has rank 1, the field 0");
}
Test(defaults, default_disagreeing_with_a_fixed_dim_is_refused) {
    refused("default_dims", "input 'w'", "size 2 in dimension 0, the field declares 3");
}
Test(defaults, default_on_an_output_is_refused) {
    refused("default_output", "output 'z'", "an output cannot have a default");
}
Test(defaults, optional_output_is_refused) {
    refused("optional_output", "output 'z'", "an output cannot be optional");
}
Test(defaults, huge_default_is_refused) {
    refused("default_huge", "input 'w'", "default is larger than 1048576 bytes");
}

/* ---- the older field layout -------------------------------------------------- */

Test(defaults, a_plugin_with_the_v1_field_layout_runs_unchanged) {
    for (int how = 0; how < RUN_COUNT; how++) {
        tsr_component *c = open_as(TEST_PLUGIN("field_v1"), how);
        const tsr_field *x = tsr_component_input(c, 0);
        cr_assert_str_eq(x->name, "x");
        cr_assert_null(x->default_value, "%s: a v1 field has no default", run_names[how]);
        cr_assert_eq(x->flags, TSR_FIELD_DIFFERENTIABLE);
        cr_assert_str_eq(tsr_component_output(c, 0)->doc, "twice x");
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double v[3] = {1, 2, 3};
        bind_ok(call, "x", f64_vec(v, 3));
        run_ok(call);
        expect_values(tsr_call_output(call, "y"), (double[]){2, 4, 6}, 3, "y", run_names[how]);
        /* left out, x is still required */
        cr_assert_eq(tsr_call_set_input(call, "x", NULL), 0);
        assert_contains(run_fails(call, TSR_E_MISSING), "input 'x' is missing");
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* ---- the schema: C, JSON, the worker's imported copy ------------------------- */

static json_t *schema_json(tsr_component *c) {
    char *text = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_schema_to_json(c, &text, &err), 0, "%s", err.message);
    json_t *root = json_loads(text, 0, NULL);
    cr_assert_not_null(root, "not JSON: %s", text);
    tsr_json_free(text);
    return root;
}

static json_t *input_named(json_t *root, const char *name) {
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(root, "inputs"), i, f)
        if (strcmp(json_string_value(json_object_get(f, "name")), name) == 0) return f;
    cr_assert_fail("no input '%s' in the schema", name);
    return NULL;
}

Test(defaults, the_schema_shows_defaults_and_optional_inputs) {
    for (int how = 0; how < RUN_COUNT; how++) {
        tsr_component *c = open_as(DEFAULTS, how);
        const tsr_field *s = tsr_component_input(c, 1), *bias = tsr_component_input(c, 3);
        cr_assert_not_null(s->default_value, "%s", run_names[how]);
        cr_assert_float_eq(*(const double *)s->default_value->data, 2.0, 0);
        cr_assert(bias->flags & TSR_FIELD_OPTIONAL, "%s: bias is optional", run_names[how]);
        cr_assert_null(bias->default_value);

        json_t *root = schema_json(c);
        json_t *x = input_named(root, "x"), *js = input_named(root, "s"),
               *w = input_named(root, "w"), *jb = input_named(root, "bias");
        cr_assert(json_is_true(json_object_get(x, "required")), "%s", run_names[how]);
        cr_assert_null(json_object_get(x, "default"));
        cr_assert(json_is_false(json_object_get(js, "required")));
        cr_assert(json_is_real(json_object_get(js, "default")));
        cr_assert_float_eq(json_real_value(json_object_get(js, "default")), 2.0, 0);
        json_t *wd = json_object_get(w, "default");
        cr_assert(json_is_array(wd) && json_array_size(wd) == 3, "%s", run_names[how]);
        cr_assert_float_eq(json_number_value(json_array_get(wd, 2)), 3.0, 0);
        cr_assert(json_is_false(json_object_get(jb, "required")));
        cr_assert_null(json_object_get(jb, "default"));
        json_t *y = json_array_get(json_object_get(root, "outputs"), 0);
        cr_assert_null(json_object_get(y, "required"), "outputs have no 'required'");
        json_decref(root);
        tsr_close(c);
    }
}

/* ---- the command line ----------------------------------------------------------- */

Test(defaults, cli_schema_prints_defaults) {
    cli_run r = run_cli(NULL, "schema", DEFAULTS);
    assert_ok(&r);
    assert_contains(r.out, "\"name\":\"s\"");
    assert_contains(r.out, "\"required\":false,\"default\":2.0");
    assert_contains(r.out, "\"default\":[1.0,2.0,3.0]");
    run_free(&r);
}

/* check-gradients takes a default for an input left out, and asks for an
 * optional one (its checks perturb every input they are given). */
Test(defaults, cli_check_gradients_takes_defaults) {
    cli_run r = run_cli(NULL, "check-gradients", DEFAULTS,
                        "{\"inputs\": {\"x\": [1.0, 2.0], \"bias\": [0.5, 0.5]}}");
    assert_ok(&r);
    assert_contains(r.out, "result: passed");
    run_free(&r);
    r = run_cli(NULL, "check-gradients", DEFAULTS, "{\"inputs\": {\"x\": [1.0, 2.0]}}");
    assert_fails(&r, 4, "optional inputs must be given to check gradients");
    run_free(&r);
}

Test(defaults, cli_apply_leaves_defaulted_and_optional_inputs_out) {
    const char *modes[] = {"inproc", "worker"};
    for (int m = 0; m < 2; m++) {
        cli_run r = run_cli(NULL, "apply", "--mode", modes[m], DEFAULTS,
                            "{\"inputs\": {\"x\": [1, 2]}}");
        assert_ok(&r);
        json_t *root = json_loads(r.out, 0, NULL);
        cr_assert_not_null(root, "not JSON: %s", r.out);
        json_t *seen = json_object_get(root, "seen");
        if (json_is_object(seen)) seen = json_object_get(json_object_get(seen, "data"), "buffer");
        cr_assert(json_is_array(seen), "%s: no seen in %s", modes[m], r.out);
        cr_expect_float_eq(json_number_value(json_array_get(seen, 0)), 2.0, 0, "%s", r.out);
        cr_expect_float_eq(json_number_value(json_array_get(seen, 1)), 6.0, 0, "%s", r.out);
        cr_expect_float_eq(json_number_value(json_array_get(seen, 2)), 0.0, 0, "%s", r.out);
        json_decref(root);
        run_free(&r);
    }
    cli_run r = run_cli(NULL, "apply", DEFAULTS, "{\"inputs\": {\"s\": 1}}");
    assert_fails(&r, EXIT_PAYLOAD, "inputs.x");
    run_free(&r);
}

/* ---- remote components: defaults read from the served OpenAPI document -------- */

/* A server of the component (program: NULL for tessera; api: its
 * TESSERACT_API_PATH) in spool_parent, until cleanup; its URL. */
static const char *serve(const char *program, const char *const *args, const char *api) {
    server_spec spec = {.program = program, .args = args, .dir = spool_parent,
                        .env = (const char *const[]){"TESSERACT_API_PATH", api, NULL}};
    if (!api) spec.env = NULL;
    return serve_ok(&spec)->url;
}

/* The served component as a remote one: s and w have their defaults,
 * bias is optional; left out, the first two are sent with their defaults,
 * bias not at all. */
static void remote_defaults(const char *url) {
    tsr_component *c = open_ok(url, NULL);
    int32_t s = tsr_component_find_input(c, "s"), w = tsr_component_find_input(c, "w"),
            b = tsr_component_find_input(c, "bias"), x = tsr_component_find_input(c, "x");
    cr_assert(s >= 0 && w >= 0 && b >= 0 && x >= 0);
    /* A served Tesseract's plain float is a JSON field (a Python number);
     * the C plugin's is a float64 scalar. */
    int s_is_json = tsr_component_input(c, s)->kind == TSR_KIND_JSON;
    const tsr_array *sd = tsr_component_input(c, s)->default_value;
    cr_assert_not_null(sd, "%s: s has its default", url);
    cr_assert_float_eq(s_is_json ? strtod((const char *)sd->data, NULL)
                                 : *(const double *)sd->data,
                       2.0, 0);
    cr_assert_not_null(tsr_component_input(c, w)->default_value);
    cr_assert(tsr_component_input(c, b)->flags & TSR_FIELD_OPTIONAL);
    cr_assert_null(tsr_component_input(c, x)->default_value);
    cr_assert_eq(tsr_component_input(c, x)->flags & TSR_FIELD_OPTIONAL, 0u);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double xv[2] = {1, 2}, bias[2] = {1, 1}, three = 3;
    bind_ok(call, "x", f64_vec(xv, 2));
    run_ok(call);
    expect_values(tsr_call_output(call, "seen"), (double[]){2, 6, 0}, 3, "seen", url);
    bind_ok(call, "bias", f64_vec(bias, 2));
    if (s_is_json) cr_assert_eq(tsr_call_set_text(call, "s", "3"), 0);
    else bind_ok(call, "s", f64_scalar(&three));
    run_ok(call);
    expect_values(tsr_call_output(call, "y"), (double[]){10, 13}, 2, "y", url);
    expect_values(tsr_call_output(call, "seen"), (double[]){3, 6, 1}, 3, "seen given", url);
    tsr_call_free(call);
    tsr_close(c);
}

Test(defaults, a_remote_component_reads_them_from_tessera_serve) {
    make_temp_dir(spool_parent, sizeof spool_parent, "tessera-defaults");
    remote_defaults(serve(NULL, (const char *const[]){"serve", "--port", "{port}", DEFAULTS, NULL},
                          NULL));
}

Test(defaults, a_remote_component_reads_them_from_tesseract_runtime) {
    char runtime[4096];
    if (find_program("tesseract-runtime", runtime, sizeof runtime) != 0)
        cr_skip_test("tesseract-runtime is not on PATH");
    make_temp_dir(spool_parent, sizeof spool_parent, "tessera-defaults");
    remote_defaults(serve(runtime,
                          (const char *const[]){"serve", "--host", "127.0.0.1", "--port", "{port}",
                                                NULL},
                          TSR_SOURCE_DIR "/tests/pycomponents/defaults/tesseract_api.py"));
}
