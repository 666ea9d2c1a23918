/* SPDX-License-Identifier: MIT */
/* The bundled interp1d plugin: its method, a TEXT option read per call,
 * in every endpoint (apply, jvp, vjp, abstract_eval) and every mode
 * (inproc, isolated, worker with spawn=exec over shared memory and over
 * files, and spawn=fork in a single-threaded child). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "worker_util.h"

#define INTERP BUNDLED_PLUGIN("interp1d")

typedef struct variant {
    tsr_mode mode;
    const char *spawn, *transport, *name;
} variant;

static const variant variants[] = {
    {TSR_MODE_INPROC, NULL, NULL, "inproc"},
    {TSR_MODE_ISOLATED, NULL, NULL, "isolated"},
    {TSR_MODE_WORKER, "exec", "shm", "worker exec"},
    {TSR_MODE_WORKER, "exec", "files", "worker files"},
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

static tsr_component *open_variant(size_t v) {
    tsr_options *o = mode_options(variants[v].mode);
    if (variants[v].spawn) set_option(o, "spawn", variants[v].spawn);
    if (variants[v].transport) set_option(o, "transport", variants[v].transport);
    tsr_component *c = open_ok(INTERP, o);
    tsr_options_free(o);
    return c;
}

/* Knots 0, 1, 3 with values 10, 20, 0; points below, between, on and
 * above them. Expected y by method, worked by hand. */
static double xp[3] = {0, 1, 3}, fp[3] = {10, 20, 0};
static double x[6] = {-1, 0.25, 1, 1.5, 2.5, 4};
static const char *const methods[] = {"linear", "nearest", "previous"};
static const double want[3][6] = {
    {10, 12.5, 20, 15, 5, 0},    /* linear */
    {10, 10, 20, 20, 0, 0},      /* nearest (1.5 is nearer 1; 2.5 nearer 3) */
    {10, 10, 20, 20, 20, 0},     /* previous */
};

static void bind_all(tsr_call *call, const char *method) {
    bind_ok(call, "x", f64_vec(x, 6));
    bind_ok(call, "xp", f64_vec(xp, 3));
    bind_ok(call, "fp", f64_vec(fp, 3));
    if (method) cr_assert_eq(tsr_call_set_text(call, "method", method), 0);
}

/* apply, jvp, vjp, jacobian and abstract_eval for each method in one mode; the
 * method is changed on the same call between runs. */
static void every_endpoint(tsr_component *c, const char *mode) {
    static const char *in[] = {"fp"}, *out[] = {"y"};
    tsr_call *ap = new_call(c, TSR_EP_APPLY), *jv = new_call(c, TSR_EP_JVP),
             *vj = new_call(c, TSR_EP_VJP), *ae = new_call(c, TSR_EP_ABSTRACT_EVAL),
             *jc = new_call(c, TSR_EP_JACOBIAN);
    bind_all(ap, NULL);   /* the default: linear */
    run_ok(ap);
    for (int i = 0; i < 6; i++)
        cr_assert_float_eq(((const double *)tsr_call_output(ap, "y")->data)[i], want[0][i], 1e-12,
                           "%s: default method, y[%d]", mode, i);
    double t[3] = {1, -2, 0.5}, cot[6] = {1, 2, 3, -1, 0.5, 4};
    wrt_ok(jv, in, 1, out, 1);
    wrt_ok(vj, in, 1, out, 1);
    wrt_ok(jc, in, 1, out, 1);
    for (int m = 0; m < 3; m++) {
        bind_all(ap, methods[m]);
        run_ok(ap);
        const double *y = tsr_call_output(ap, "y")->data;
        for (int i = 0; i < 6; i++)
            cr_assert_float_eq(y[i], want[m][i], 1e-12, "%s: %s, y[%d] = %g", mode, methods[m],
                               i, y[i]);
        /* jvp: y is linear in fp, so J t is apply with fp = t */
        bind_all(jv, methods[m]);
        seed_ok(jv, "fp", f64_vec(t, 3));
        run_ok(jv);
        double *jt = tsr_call_output(jv, "y")->data;
        bind_ok(ap, "fp", f64_vec(t, 3));
        run_ok(ap);
        for (int i = 0; i < 6; i++)
            cr_assert_float_eq(jt[i], ((const double *)tsr_call_output(ap, "y")->data)[i], 1e-12,
                               "%s: %s, jvp[%d]", mode, methods[m], i);
        /* jacobian: the (6, 3) block times t is the jvp */
        bind_all(jc, methods[m]);
        run_ok(jc);
        const tsr_array *J = tsr_call_jacobian(jc, "y", "fp");
        cr_assert(J && J->rank == 2 && J->shape[0] == 6 && J->shape[1] == 3, "%s", mode);
        for (int i = 0; i < 6; i++) {
            const double *row = (const double *)J->data + 3 * i;
            cr_assert_float_eq(row[0] * t[0] + row[1] * t[1] + row[2] * t[2], jt[i], 1e-12,
                               "%s: %s, (J t)[%d]", mode, methods[m], i);
        }
        /* vjp: <c, J t> == <J^T c, t> */
        bind_all(vj, methods[m]);
        seed_ok(vj, "y", f64_vec(cot, 6));
        run_ok(vj);
        const double *g = tsr_call_output(vj, "fp")->data;
        double lhs = 0, rhs = 0;
        for (int i = 0; i < 6; i++) lhs += cot[i] * jt[i];
        for (int k = 0; k < 3; k++) rhs += g[k] * t[k];
        cr_assert_float_eq(lhs, rhs, 1e-12, "%s: %s, the vjp is not the jvp's adjoint", mode,
                           methods[m]);
        /* abstract_eval: y shaped like x, the method read there too */
        int64_t n = 7, k3 = 3;
        bind_ok(ae, "x", make_array(NULL, TSR_FLOAT64, 1, &n));
        bind_ok(ae, "xp", make_array(NULL, TSR_FLOAT64, 1, &k3));
        bind_ok(ae, "fp", make_array(NULL, TSR_FLOAT64, 1, &k3));
        cr_assert_eq(tsr_call_set_text(ae, "method", methods[m]), 0);
        run_ok(ae);
        cr_assert_eq(tsr_call_output(ae, "y")->shape[0], 7, "%s", mode);
    }
    /* a method outside the choices, refused before any endpoint runs */
    tsr_call *calls[] = {ap, jv, vj, ae, jc};
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(tsr_call_set_text(calls[k], "method", "cubic"), 0);
        const char *msg = run_fails(calls[k], TSR_E_VALUE);
        assert_contains(msg, "Input should be 'linear', 'nearest' or 'previous'");
        cr_assert_str_eq(tsr_call_errloc(calls[k]), "inputs.method");
        tsr_call_free(calls[k]);
    }
}

Test(interp1d, every_method_and_endpoint_in_every_mode) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(v);
        every_endpoint(c, variants[v].name);
        tsr_close(c);
    }
}

/* Knots out of order are the plugin's to refuse, naming the index. */
Test(interp1d, unordered_knots_are_refused) {
    tsr_component *c = open_ok(INTERP, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double bad[3] = {0, 2, 1};
    bind_all(call, "linear");
    bind_ok(call, "xp", f64_vec(bad, 3));
    assert_contains(run_fails(call, TSR_E_PLUGIN), "index 2");
    tsr_call_free(call);
    tsr_close(c);
}

/* spawn=fork: the same, in a single-threaded child (the host must be). */
static const char *forked(void) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    if (!o || tsr_options_set(o, "mode", "worker", &err) ||
        tsr_options_set(o, "spawn", "fork", &err))
        return "options";
    tsr_component *c = NULL;
    int rc = tsr_open(INTERP, o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == 0, "tsr_open: %s", err.message);
    for (int m = 0; m < 3; m++) {
        tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
        tsr_array xa = {x, TSR_FLOAT64, 1, {6}}, xpa = {xp, TSR_FLOAT64, 1, {3}},
                  fpa = {fp, TSR_FLOAT64, 1, {3}};
        if (!call || tsr_call_set_input(call, "x", &xa) || tsr_call_set_input(call, "xp", &xpa) ||
            tsr_call_set_input(call, "fp", &fpa) || tsr_call_set_text(call, "method", methods[m]))
            return "binding";
        CHECK(tsr_call_run(call) == 0, "%s: %s", methods[m], tsr_call_errmsg(call));
        const double *y = tsr_call_output(call, "y")->data;
        for (int i = 0; i < 6; i++)
            CHECK(fabs(y[i] - want[m][i]) < 1e-12, "%s: y[%d] = %g", methods[m], i, y[i]);
        tsr_call_free(call);
    }
    static const char *in[] = {"fp"}, *out[] = {"y"};
    double cot[6] = {1, 1, 1, 1, 1, 1};
    tsr_call *vj = tsr_call_new(c, TSR_EP_VJP);
    tsr_array xa = {x, TSR_FLOAT64, 1, {6}}, xpa = {xp, TSR_FLOAT64, 1, {3}},
              fpa = {fp, TSR_FLOAT64, 1, {3}}, ca = {cot, TSR_FLOAT64, 1, {6}};
    if (!vj || tsr_call_set_input(vj, "x", &xa) || tsr_call_set_input(vj, "xp", &xpa) ||
        tsr_call_set_input(vj, "fp", &fpa) || tsr_call_set_text(vj, "method", "previous") ||
        tsr_call_set_wrt(vj, in, 1, out, 1) || tsr_call_set_seed(vj, "y", &ca))
        return "binding vjp";
    CHECK(tsr_call_run(vj) == 0, "vjp: %s", tsr_call_errmsg(vj));
    const double *g = tsr_call_output(vj, "fp")->data;
    /* previous: x = -1, 0.25 -> knot 0; 1, 1.5, 2.5 -> knot 1; 4 -> knot 2 */
    CHECK(g[0] == 2 && g[1] == 3 && g[2] == 1, "vjp %g %g %g", g[0], g[1], g[2]);
    if (tsr_call_set_text(vj, "method", "spline")) return "binding";
    CHECK(tsr_call_run(vj) == TSR_E_VALUE, "spline: %s", tsr_call_errmsg(vj));
    tsr_call_free(vj);
    tsr_close(c);
    return "ok";
}

Test(interp1d, every_method_in_a_forked_worker) { run_in_child_watched(forked, NULL, 60); }
