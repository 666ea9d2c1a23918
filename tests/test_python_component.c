/* SPDX-License-Identifier: MIT */
/*
 * Python components (a Tesseract's tesseract_api.py) through the C API, in
 * this process and in worker mode: every endpoint against closed forms;
 * a component's exception, crash, hang, unsupported schema and failed
 * import as clear errors that the host survives; isolated mode and a bad
 * interpreter refused. Then one of tesseract-core's own examples, fetched
 * by scripts/fetch_tesseract_examples.sh, unchanged.
 */
#include "test_util.h"

#define PYCOMPONENT(name) TSR_SOURCE_DIR "/tests/pycomponents/" name
#define EXAMPLES TSR_BINARY_DIR "/third_party/tesseract-examples"

static tsr_options *options(const char *mode) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    cr_assert_eq(tsr_options_set(o, "mode", mode, NULL), 0);
    return o;
}

static tsr_component *open_in(const char *path, const char *mode) {
    tsr_options *o = options(mode);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* y = a x + 1 and its derivatives, in one mode. */
static void affine_endpoints(const char *mode) {
    tsr_component *c = open_in(PYCOMPONENT("affine"), mode);
    cr_assert(tsr_component_has_endpoint(c, TSR_EP_JACOBIAN));
    cr_assert(tsr_component_has_endpoint(c, TSR_EP_ABSTRACT_EVAL));
    double x[3] = {1, 2, 3}, a = 2, tx[3] = {1, 0, -1}, ta = 0.5, g[3] = {1, 1, 2};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 3));
    bind_ok(call, "a", f64_scalar(&a));
    run_ok(call);
    const double *y = tsr_call_output(call, "y")->data;
    for (int i = 0; i < 3; i++) cr_assert_float_eq(y[i], 2 * x[i] + 1, 1e-15);
    tsr_call_free(call);

    const char *both[] = {"x", "a"}, *out[] = {"y"};
    call = new_call(c, TSR_EP_JVP);
    bind_ok(call, "x", f64_vec(x, 3));
    bind_ok(call, "a", f64_scalar(&a));
    wrt_ok(call, both, 2, out, 1);
    seed_ok(call, "x", f64_vec(tx, 3));
    seed_ok(call, "a", f64_scalar(&ta));
    run_ok(call);
    const double *t = tsr_call_result(call, 0)->data;
    for (int i = 0; i < 3; i++) cr_assert_float_eq(t[i], a * tx[i] + x[i] * ta, 1e-15);
    tsr_call_free(call);

    call = new_call(c, TSR_EP_VJP);
    bind_ok(call, "x", f64_vec(x, 3));
    bind_ok(call, "a", f64_scalar(&a));
    wrt_ok(call, both, 2, out, 1);
    seed_ok(call, "y", f64_vec(g, 3));
    run_ok(call);
    const double *gx = tsr_call_result(call, 0)->data, *ga = tsr_call_result(call, 1)->data;
    for (int i = 0; i < 3; i++) cr_assert_float_eq(gx[i], a * g[i], 1e-15);
    cr_assert_float_eq(*ga, 1 + 2 + 6, 1e-15);
    tsr_call_free(call);

    call = new_call(c, TSR_EP_JACOBIAN);
    bind_ok(call, "x", f64_vec(x, 3));
    bind_ok(call, "a", f64_scalar(&a));
    wrt_ok(call, both, 2, out, 1);
    run_ok(call);
    const tsr_array *jx = tsr_call_result(call, 0), *ja = tsr_call_result(call, 1);
    cr_assert_eq(jx->rank, 2);
    cr_assert_eq(ja->rank, 1);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            cr_assert_float_eq(((double *)jx->data)[3 * i + j], i == j ? a : 0, 1e-15);
    for (int i = 0; i < 3; i++) cr_assert_float_eq(((double *)ja->data)[i], x[i], 1e-15);
    tsr_call_free(call);
    tsr_close(c);
}

Test(python_component, every_endpoint_in_process) { affine_endpoints("inproc"); }
Test(python_component, every_endpoint_in_a_worker) { affine_endpoints("worker"); }

Test(python_component, the_schema_comes_from_the_pydantic_models) {
    tsr_component *c = open_in(PYCOMPONENT("affine"), "inproc");
    cr_assert_eq(tsr_component_n_inputs(c), 2);
    const tsr_field *x = tsr_component_input(c, 0);
    cr_assert_str_eq(x->name, "x");
    cr_assert_eq(x->dtype, TSR_FLOAT64);
    cr_assert_eq(x->rank, 1);
    cr_assert_eq(x->dims[0].size, TSR_DIM_ANY);
    cr_assert(x->flags & TSR_FIELD_DIFFERENTIABLE);
    cr_assert_str_eq(x->doc, "A vector.");
    cr_assert_eq(tsr_component_input(c, 1)->rank, 0);
    cr_assert_str_eq(tsr_component_output(c, 0)->name, "y");
    tsr_close(c);
}

/* apply of a one-input component on x; the call (run) for the caller. */
static tsr_call *apply_on(tsr_component *c, double *x, int64_t n, int *rc) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, n));
    *rc = tsr_call_run(call);
    return call;
}

static void exception_reaches_the_host(const char *mode) {
    tsr_component *c = open_in(PYCOMPONENT("raising"), mode);
    double x[2] = {4, -1};
    int rc;
    tsr_call *call = apply_on(c, x, 2, &rc);
    const char *msg = expect_failure(call, rc, TSR_E_PLUGIN);
    assert_contains(msg, "ValueError: negative input at index 1");
    assert_contains(msg, "tesseract_api.py");
    assert_contains(msg, "check_positive");
    tsr_call_free(call);
    x[1] = 9; /* the component lives on */
    call = apply_on(c, x, 2, &rc);
    cr_assert_eq(rc, 0, "%s", tsr_call_errmsg(call));
    cr_assert_float_eq(((double *)tsr_call_output(call, "y")->data)[1], 3, 1e-15);
    tsr_call_free(call);
    tsr_close(c);
}

Test(python_component, an_exception_is_a_plugin_error_with_its_traceback) {
    exception_reaches_the_host("inproc");
}
Test(python_component, an_exception_in_a_worker_too) { exception_reaches_the_host("worker"); }

/* A KeyboardInterrupt out of a component (spinning with seconds < 0
 * raises it, as Ctrl-C does in a Python host) is a cancelled call, not
 * the component's failure, and the component serves on. */
static void interrupt_cancels(const char *mode) {
    tsr_component *c = open_in(PYCOMPONENT("spinning"), mode);
    double x[2] = {1, 2}, seconds = -1;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 2));
    bind_ok(call, "seconds", f64_scalar(&seconds));
    const char *msg = expect_failure(call, tsr_call_run(call), TSR_E_CANCELLED);
    assert_contains(msg, "KeyboardInterrupt");
    seconds = 0;
    bind_ok(call, "seconds", f64_scalar(&seconds));
    run_ok(call);
    cr_assert_float_eq(((double *)tsr_call_output(call, "y")->data)[1], 2, 0);
    tsr_call_free(call);
    tsr_close(c);
}

Test(python_component, a_keyboard_interrupt_in_it_cancels_the_call) { interrupt_cancels("inproc"); }
Test(python_component, a_keyboard_interrupt_in_a_worker_cancels_the_call_too) {
    interrupt_cancels("worker");
}

Test(python_component, a_crash_kills_the_worker_not_the_host) {
    tsr_options *o = options("worker");
    cr_assert_eq(tsr_options_set(o, "restart", "auto", NULL), 0);
    cr_assert_eq(tsr_options_set(o, "log_level", "off", NULL), 0);
    tsr_component *c = open_ok(PYCOMPONENT("crashing"), o);
    tsr_options_free(o);
    double x[1] = {-1};
    int rc;
    tsr_call *call = apply_on(c, x, 1, &rc);
    assert_contains(expect_failure(call, rc, TSR_E_WORKER), "killed by signal 6");
    tsr_call_free(call);
    x[0] = 5;
    call = apply_on(c, x, 1, &rc);
    cr_assert_eq(rc, 0, "%s", tsr_call_errmsg(call));
    cr_assert_float_eq(((double *)tsr_call_output(call, "y")->data)[0], 10, 1e-15);
    tsr_call_free(call);
    tsr_close(c);
}

Test(python_component, a_hang_ends_at_the_timeout) {
    tsr_options *o = options("worker");
    cr_assert_eq(tsr_options_set(o, "timeout_ms", "500", NULL), 0);
    cr_assert_eq(tsr_options_set(o, "restart", "auto", NULL), 0);
    cr_assert_eq(tsr_options_set(o, "log_level", "off", NULL), 0);
    tsr_component *c = open_ok(PYCOMPONENT("hanging"), o);
    tsr_options_free(o);
    double x[1] = {-1};
    int rc;
    tsr_call *call = apply_on(c, x, 1, &rc);
    expect_failure(call, rc, TSR_E_TIMEOUT);
    tsr_call_free(call);
    x[0] = 1;
    call = apply_on(c, x, 1, &rc);
    cr_assert_eq(rc, 0, "%s", tsr_call_errmsg(call));
    tsr_call_free(call);
    tsr_close(c);
}

Test(python_component, a_field_tessera_cannot_carry_is_named) {
    tsr_error err = open_fails(PYCOMPONENT("badschema"), NULL);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, "TypeError");
    assert_contains(err.message, "'label'");
}

Test(python_component, a_failed_import_says_what_is_missing) {
    tsr_error err = open_fails(PYCOMPONENT("broken"), NULL);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, "ModuleNotFoundError");
    assert_contains(err.message, "a_package_that_is_not_installed");
}

Test(python_component, isolated_mode_is_refused_for_worker_mode) {
    tsr_options *o = options("isolated");
    tsr_error err = open_fails(PYCOMPONENT("affine"), o);
    tsr_options_free(o);
    assert_code(err.code, TSR_E_UNSUPPORTED, err.message);
    assert_contains(err.message, "use worker mode");
}

Test(python_component, an_interpreter_that_cannot_run_is_named) {
    tsr_options *o = options("worker");
    cr_assert_eq(tsr_options_set(o, "python", "/nonexistent/python3", NULL), 0);
    tsr_error err = open_fails(PYCOMPONENT("affine"), o);
    tsr_options_free(o);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, "/nonexistent/python3");
}

Test(python_component, tesseract_core_vectoradd_unchanged) {
    if (access(EXAMPLES "/vectoradd/tesseract_api.py", R_OK) != 0)
        cr_skip_test("tesseract-core's examples are not fetched (scripts/fetch_tesseract_examples.sh)");
    tsr_options *o = options("worker");
    cr_assert_eq(tsr_options_set(o, "python_env", "none", NULL), 0);
    tsr_component *c = open_ok(EXAMPLES "/vectoradd", o);
    tsr_options_free(o);
    float a[4] = {1, 2, 3, 4}, b[4] = {4, 3, 2, 1}, s = 2;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "a", make_array(a, TSR_FLOAT32, 1, (int64_t[]){4}));
    bind_ok(call, "b", make_array(b, TSR_FLOAT32, 1, (int64_t[]){4}));
    bind_ok(call, "s", make_array(&s, TSR_FLOAT32, 0, NULL));
    /* a plain bool is a JSON field */
    cr_assert_eq(tsr_call_set_text(call, "normalize", "false"), 0, "%s", tsr_call_errmsg(call));
    run_ok(call);
    const tsr_array *r = tsr_call_output(call, "result");
    cr_assert_eq(r->dtype, TSR_FLOAT64);
    for (int i = 0; i < 4; i++) cr_assert_float_eq(((double *)r->data)[i], 2 * a[i] + b[i], 1e-12);
    tsr_call_free(call);
    tsr_close(c);
}

static char logged[1024];
static void keep_log(void *user, tsr_log_level level, const char *component, const char *msg) {
    (void)user;
    (void)component;
    if (level == TSR_LOG_WARN) snprintf(logged, sizeof logged, "%s", msg);
}

Test(python_component, an_input_kept_after_the_call_is_reported) {
    tsr_options *o = options("inproc");
    tsr_options_set_log(o, keep_log, NULL);
    tsr_component *c = open_ok(PYCOMPONENT("keeping"), o);
    tsr_options_free(o);
    double x[2] = {1, 2};
    int rc;
    tsr_call *call = apply_on(c, x, 2, &rc);
    cr_assert_eq(rc, 0, "%s", tsr_call_errmsg(call));
    assert_contains(logged, "the component kept input 'x' after the call");
    tsr_call_free(call);
    tsr_close(c);
}

/* Two components whose requirements clash (NumPy 1 and NumPy 2), each in
 * its own worker and environment, called from this one C host. */
Test(python_component, clashing_environments_in_one_c_host, .timeout = 600) {
    tsr_component *old = open_in(TSR_SOURCE_DIR "/plugins/python/cumprod_numpy1", "worker");
    tsr_component *new = open_in(TSR_SOURCE_DIR "/plugins/python/cumsum_numpy2", "worker");
    double x[3] = {1.5, 2, 4};
    tsr_call *call = new_call(old, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 3));
    run_ok(call);
    double p[3];
    memcpy(p, tsr_call_output(call, "p")->data, sizeof p);
    cr_assert_float_eq(*(double *)tsr_call_output(call, "numpy_major")->data, 1, 0);
    tsr_call *sum = new_call(new, TSR_EP_APPLY);
    bind_ok(sum, "y", f64_vec(p, 3));
    run_ok(sum);
    const double *s = tsr_call_output(sum, "s")->data;
    cr_assert_float_eq(*(double *)tsr_call_output(sum, "numpy_major")->data, 2, 0);
    cr_assert_float_eq(s[2], 1.5 + 3 + 12, 1e-12);
    tsr_call_free(sum);
    tsr_call_free(call);
    tsr_close(old);
    tsr_close(new);
}
