/* SPDX-License-Identifier: MIT */
/* The Hessian-vector product through tsr_call (TSR_EP_HVP) against the
 * bundled rosenbrock plugin's native hvp: results equal the analytic
 * Hessian (written out here as a dense matrix) times the tangent, scaled by
 * the cotangent, in every mode; the seeds are checked like vjp's. */
#include <tessera/payload.h>

#include "worker_util.h"

/* The dense Hessian of rosenbrock's value over z = (x[0..n-1], a, b),
 * (n + 2) x (n + 2) row-major, summed term by term. */
static void dense_hessian(const double *x, int64_t n, double a, double b, double *H) {
    int64_t m = n + 2, ia = n, ib = n + 1;
    (void)a;
    memset(H, 0, (size_t)(m * m) * sizeof *H);
    for (int64_t i = 0; i + 1 < n; i++) {
        double v = x[i + 1] - x[i] * x[i];
        int64_t p = i, q = i + 1;
        H[p * m + p] += 8 * b * x[i] * x[i] - 4 * b * v + 2;
        H[p * m + q] += -4 * b * x[i];
        H[q * m + p] += -4 * b * x[i];
        H[q * m + q] += 2 * b;
        H[p * m + ia] += -2;
        H[ia * m + p] += -2;
        H[ia * m + ia] += 2;
        H[p * m + ib] += -4 * v * x[i];
        H[ib * m + p] += -4 * v * x[i];
        H[q * m + ib] += 2 * v;
        H[ib * m + q] += 2 * v;
    }
}

/* w * H t, t = (tx, ta, tb) with zeros where the input is not differentiated. */
static void dense_hvp(const double *x, int64_t n, double a, double b, const double *t, double w,
                      double *out) {
    int64_t m = n + 2;
    double *H = malloc((size_t)(m * m) * sizeof *H);
    cr_assert_not_null(H);
    dense_hessian(x, n, a, b, H);
    for (int64_t r = 0; r < m; r++) {
        double s = 0;
        for (int64_t c = 0; c < m; c++) s += H[r * m + c] * t[c];
        out[r] = w * s;
    }
    free(H);
}

/* Offsets of x, a, b in z. */
static int64_t z_at(const char *name, int64_t n) {
    return strcmp(name, "x") == 0 ? 0 : strcmp(name, "a") == 0 ? n : n + 1;
}

static void bind_point(tsr_call *call, double *x, int64_t n, double *a, double *b) {
    bind_ok(call, "x", f64_vec(x, n));
    bind_ok(call, "a", f64_scalar(a));
    bind_ok(call, "b", f64_scalar(b));
}

static void tangent_ok(tsr_call *call, const char *name, tsr_array t) {
    int rc = tsr_call_set_tangent(call, name, &t);
    cr_assert_eq(rc, 0, "tangent %s: %d %s", name, rc, tsr_call_errmsg(call));
}

/* Run hvp over the listed inputs with tangent z (n + 2 entries, only the
 * listed ones given) and cotangent w; compare with the dense product. */
static void check_hvp(tsr_component *c, double *x, int64_t n, double a, double b,
                      const char *const *in, int32_t n_in, double *z, double w) {
    tsr_call *call = new_call(c, TSR_EP_HVP);
    bind_point(call, x, n, &a, &b);
    const char *out[] = {"value"};
    wrt_ok(call, in, n_in, out, 1);
    seed_ok(call, "value", f64_scalar(&w));
    double t_full[16] = {0};
    for (int32_t k = 0; k < n_in; k++) {
        int64_t at = z_at(in[k], n);
        if (strcmp(in[k], "x") == 0) {
            tangent_ok(call, "x", f64_vec(z, n));
            memcpy(t_full, z, (size_t)n * sizeof *z);
        } else {
            tangent_ok(call, in[k], f64_scalar(&z[at]));
            t_full[at] = z[at];
        }
    }
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), n_in);
    double want[16];
    dense_hvp(x, n, a, b, t_full, w, want);
    for (int32_t k = 0; k < n_in; k++) {
        const tsr_array *r = tsr_call_output(call, in[k]);
        cr_assert_not_null(r, "no result for %s", in[k]);
        cr_assert_eq(r, tsr_call_result(call, k), "results follow hvp_inputs' order");
        int64_t at = z_at(in[k], n), len = strcmp(in[k], "x") == 0 ? n : 1;
        cr_assert_eq(r->rank, strcmp(in[k], "x") == 0 ? 1 : 0);
        const double *got = r->data;
        for (int64_t i = 0; i < len; i++)
            cr_assert_float_eq(got[i], want[at + i], 1e-9 * fmax(1.0, fabs(want[at + i])),
                               "%s[%lld]: %.17g, want %.17g", in[k], (long long)i, got[i],
                               want[at + i]);
    }
    tsr_call_free(call);
}

static void check_several_points(tsr_component *c) {
    const char *all[] = {"x", "a", "b"};
    int64_t sizes[] = {2, 3, 7};
    for (int s = 0; s < 3; s++) {
        double x[14], z[16];
        fill_random(x, 14, 11 + (uint64_t)s);
        fill_random(z, 16, 101 + (uint64_t)s);
        int64_t n = sizes[s];
        z[n] = 0.7;        /* a's tangent */
        z[n + 1] = -0.3;   /* b's tangent */
        check_hvp(c, x, n, 1.0, 100.0, all, 3, z, 1.0);
        check_hvp(c, x, n, 0.5, 3.0, all, 3, z, -2.5);
    }
}

/* For n = 2, 3, 7, two (a, b) and cotangents 1 and -2.5, hvp over x, a and
 * b equals w * H t. */
Test(hvp, rosenbrock_equals_analytic_hessian_times_tangent) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    check_several_points(c);
    tsr_close(c);
}

/* The same products in an isolated (dlmopen) and a worker-mode component;
 * each run is counted at endpoint hvp. */
Test(hvp, rosenbrock_in_isolated_and_worker_modes) {
    tsr_mode modes[] = {TSR_MODE_ISOLATED, TSR_MODE_WORKER};
    for (int m = 0; m < 2; m++) {
        tsr_component *c = open_mode(BUNDLED_PLUGIN("rosenbrock"), modes[m]);
        cr_assert_eq(tsr_component_hvp_source(c), TSR_HVP_NATIVE, "mode %s", mode_names[modes[m]]);
        cr_assert(tsr_component_has_native_endpoint(c, TSR_EP_HVP));
        check_several_points(c);
        tsr_stats st = {.struct_size = sizeof st};
        cr_assert_eq(tsr_component_stats(c, &st), 0);
        cr_assert_eq(st.endpoint_calls[TSR_EP_HVP], 6, "mode %s: %llu hvp calls counted",
                     mode_names[modes[m]], (unsigned long long)st.endpoint_calls[TSR_EP_HVP]);
        cr_assert_eq(st.endpoint_errors[TSR_EP_HVP], 0);
        tsr_close(c);
    }
}

/* Mixed blocks in one call: hvp over x and a with a zero tangent on x
 * gives d(grad_x)/da * ta for x and d2/da2 * ta for a; over b alone the
 * result is d2/db2 * tb = 0; the order of hvp_inputs is the results'. */
Test(hvp, rosenbrock_mixed_blocks_and_subsets) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    double x[5] = {0.3, -1.2, 0.8, 1.5, -0.4}, z[7] = {0, 0, 0, 0, 0, 1.0, 0};
    const char *xa[] = {"x", "a"};
    check_hvp(c, x, 5, 1.0, 100.0, xa, 2, z, 1.0);
    double z2[7] = {0.1, 0.2, 0.3, 0.4, 0.5, 0, 2.0};
    const char *only_b[] = {"b"};
    check_hvp(c, x, 5, 1.0, 100.0, only_b, 1, z2, 1.0);
    const char *reversed[] = {"b", "a", "x"};
    double z3[7] = {0.5, -0.5, 0.25, 1, 2, -1, 0.125};
    check_hvp(c, x, 5, 1.0, 10.0, reversed, 3, z3, 0.5);
    /* a's mixed block with x: d(grad_a)/dx . tx = sum_i -2 tx[i], i < n-1 */
    tsr_call *call = new_call(c, TSR_EP_HVP);
    double a = 1, b = 100, w = 1, tx[5] = {1, 1, 1, 1, 1}, ta = 0;
    bind_point(call, x, 5, &a, &b);
    const char *out[] = {"value"};
    wrt_ok(call, xa, 2, out, 1);
    seed_ok(call, "value", f64_scalar(&w));
    tangent_ok(call, "x", f64_vec(tx, 5));
    tangent_ok(call, "a", f64_scalar(&ta));
    run_ok(call);
    cr_assert_float_eq(*(const double *)tsr_call_output(call, "a")->data, -8.0, 1e-12);
    tsr_call_free(call);
    tsr_close(c);
}

/* A call set up for hvp over x with cotangent and tangent bound. */
static tsr_call *hvp_call(tsr_component *c, double *x, double *a, double *b, double *w,
                          double *t) {
    tsr_call *call = new_call(c, TSR_EP_HVP);
    bind_point(call, x, 3, a, b);
    const char *in[] = {"x"}, *out[] = {"value"};
    wrt_ok(call, in, 1, out, 1);
    if (w) seed_ok(call, "value", f64_scalar(w));
    if (t) tangent_ok(call, "x", f64_vec(t, 3));
    return call;
}

/* A missing cotangent or tangent is TSR_E_MISSING at its loc; a run
 * before tsr_call_set_wrt is TSR_E_MISSING naming hvp_inputs. */
Test(hvp, missing_seeds_refused_by_name) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    double x[3] = {1, 2, 3}, a = 1, b = 100, w = 1, t[3] = {1, 0, 0};
    tsr_call *call = hvp_call(c, x, &a, &b, NULL, t);
    const char *msg = run_fails(call, TSR_E_MISSING);
    assert_contains(msg, "cotangent_vector['value'] is missing");
    cr_assert_str_eq(tsr_call_errloc(call), "cotangent_vector.value");
    tsr_call_free(call);

    call = hvp_call(c, x, &a, &b, &w, NULL);
    msg = run_fails(call, TSR_E_MISSING);
    assert_contains(msg, "tangent_vector['x'] is missing");
    cr_assert_str_eq(tsr_call_errloc(call), "tangent_vector.x");
    /* unbinding with NULL makes it missing again */
    tangent_ok(call, "x", f64_vec(t, 3));
    run_ok(call);
    cr_assert_eq(tsr_call_set_tangent(call, "x", NULL), 0);
    run_fails(call, TSR_E_MISSING);
    cr_assert_str_eq(tsr_call_errloc(call), "tangent_vector.x");
    tsr_call_free(call);

    call = new_call(c, TSR_EP_HVP);
    bind_point(call, x, 3, &a, &b);
    msg = run_fails(call, TSR_E_MISSING);
    assert_contains(msg, "hvp_inputs and hvp_outputs are not set");
    tsr_call_free(call);
    tsr_close(c);
}

/* A tangent not shaped like its input, a cotangent not shaped like its
 * output, or either of the wrong dtype is refused before the plugin runs,
 * naming the seed. */
Test(hvp, wrong_seed_shapes_and_dtypes_refused) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    double x[3] = {1, 2, 3}, a = 1, b = 100, w = 1, t[4] = {1, 0, 0, 0}, w2[2] = {1, 1};
    tsr_call *call = hvp_call(c, x, &a, &b, &w, NULL);
    tangent_ok(call, "x", f64_vec(t, 4));
    const char *msg = run_fails(call, TSR_E_SHAPE);
    assert_contains(msg, "tangent_vector['x']: shape (4,) given, (3,) expected");
    cr_assert_str_eq(tsr_call_errloc(call), "tangent_vector.x");
    tsr_call_free(call);

    call = hvp_call(c, x, &a, &b, NULL, t);
    seed_ok(call, "value", f64_vec(w2, 2));
    run_fails(call, TSR_E_SHAPE);
    cr_assert_str_eq(tsr_call_errloc(call), "cotangent_vector.value");
    tsr_call_free(call);

    float tf[3] = {1, 0, 0};
    int64_t three = 3;
    call = hvp_call(c, x, &a, &b, &w, NULL);
    tsr_array bad = make_array(tf, TSR_FLOAT32, 1, &three);
    cr_assert_eq(tsr_call_set_tangent(call, "x", &bad), 0);
    msg = run_fails(call, TSR_E_DTYPE);
    assert_contains(msg, "float32 given, float64 expected");
    cr_assert_str_eq(tsr_call_errloc(call), "tangent_vector.x");
    tsr_call_free(call);
    tsr_close(c);
}

/* Seeds by the wrong name or on the wrong endpoint are refused when set:
 * a tangent for an input not among hvp_inputs, a cotangent named by an
 * input, tsr_call_set_tangent on vjp, seeds before the lists. */
Test(hvp, seeds_by_wrong_name_or_endpoint_refused) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    double x[3] = {1, 2, 3}, a = 1, b = 100, w = 1;
    tsr_call *call = new_call(c, TSR_EP_HVP);
    tsr_array s = f64_scalar(&w);
    assert_code(tsr_call_set_tangent(call, "a", &s), TSR_E_ARGUMENT, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "before seeds");
    tsr_call_free(call);

    call = hvp_call(c, x, &a, &b, NULL, NULL);
    assert_code(tsr_call_set_tangent(call, "a", &s), TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "'a' is not one of hvp_inputs");
    cr_assert_str_eq(tsr_call_errloc(call), "tangent_vector.a");
    assert_code(tsr_call_set_seed(call, "x", &s), TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "'x' is not one of hvp_outputs");
    cr_assert_str_eq(tsr_call_errloc(call), "cotangent_vector.x");
    assert_code(tsr_call_set_tangent(call, NULL, &s), TSR_E_ARGUMENT, tsr_call_errmsg(call));
    tsr_call_free(call);

    call = new_call(c, TSR_EP_VJP);
    const char *in[] = {"x"}, *out[] = {"value"};
    wrt_ok(call, in, 1, out, 1);
    assert_code(tsr_call_set_tangent(call, "x", &s), TSR_E_ARGUMENT, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "tsr_call_set_tangent is for hvp");
    tsr_call_free(call);
    assert_code(tsr_call_set_tangent(NULL, "x", &s), TSR_E_ARGUMENT, "NULL call");
    tsr_close(c);
}

/* hvp_inputs naming a non-differentiable field, an unknown one or one
 * twice is refused by tsr_call_set_wrt with the list's loc. */
Test(hvp, wrt_lists_checked_like_vjp) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("heat"), NULL);
    tsr_call *call = new_call(c, TSR_EP_HVP);
    const char *nd[] = {"observations"}, *out[] = {"misfit"};
    int rc = tsr_call_set_wrt(call, nd, 1, out, 1);
    assert_code(rc, TSR_E_NOT_DIFFERENTIABLE, tsr_call_errmsg(call));
    assert_contains(tsr_call_errmsg(call), "hvp_inputs: input 'observations' is not differentiable");
    cr_assert_str_eq(tsr_call_errloc(call), "hvp_inputs.0");
    const char *unknown[] = {"nope"};
    rc = tsr_call_set_wrt(call, unknown, 1, out, 1);
    assert_code(rc, TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    const char *twice[] = {"source", "source"};
    rc = tsr_call_set_wrt(call, twice, 2, out, 1);
    assert_code(rc, TSR_E_ARGUMENT, tsr_call_errmsg(call));
    cr_assert_str_eq(tsr_call_errloc(call), "hvp_inputs.1");
    const char *in[] = {"source"}, *bad_out[] = {"nope"};
    rc = tsr_call_set_wrt(call, in, 1, bad_out, 1);
    assert_code(rc, TSR_E_UNKNOWN_FIELD, tsr_call_errmsg(call));
    cr_assert_str_eq(tsr_call_errloc(call), "hvp_outputs.0");
    tsr_call_free(call);
    tsr_close(c);
}

/* The endpoint is named "hvp" both ways; the schema lists it; a batch of
 * two points gives each point's product. */
Test(hvp, named_listed_and_batched) {
    cr_assert_str_eq(tsr_endpoint_name(TSR_EP_HVP), "hvp");
    cr_assert_eq(tsr_endpoint_from_name("hvp"), TSR_EP_HVP);
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    cr_assert(tsr_component_has_endpoint(c, TSR_EP_HVP));
    char *json = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_schema_to_json(c, &json, &err), 0, "%s", err.message);
    assert_contains(json, "\"hvp\"");
    free(json);

    double x[6] = {0.5, 1.5, -1, 2, 0.25, 1}, a[2] = {1, 1}, b[2] = {100, 10}, w[2] = {1, 2};
    double t[6] = {1, 0, 0, 0, 1, -1};
    tsr_call *call = new_call(c, TSR_EP_HVP);
    bind_ok(call, "x", f64_mat(x, 2, 3));
    bind_ok(call, "a", f64_vec(a, 2));
    bind_ok(call, "b", f64_vec(b, 2));
    const char *in[] = {"x"}, *out[] = {"value"};
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "value", f64_vec(w, 2));
    tangent_ok(call, "x", f64_mat(t, 2, 3));
    int rc = tsr_call_run_batch(call, 2);
    cr_assert_eq(rc, 0, "%s", tsr_call_errmsg(call));
    const tsr_array *r = tsr_call_output(call, "x");
    cr_assert_eq(r->rank, 2);
    for (int p = 0; p < 2; p++) {
        double tz[5] = {t[3 * p], t[3 * p + 1], t[3 * p + 2], 0, 0}, want[5];
        dense_hvp(x + 3 * p, 3, a[p], b[p], tz, w[p], want);
        for (int i = 0; i < 3; i++)
            cr_assert_float_eq(((const double *)r->data)[3 * p + i], want[i],
                               1e-9 * fmax(1, fabs(want[i])));
    }
    tsr_call_free(call);
    tsr_close(c);
}

/* compliance's native hvp (a second-order adjoint) over rho: equal to
 * central differences of its exact vjp along the tangent (to 1e-6 of the
 * largest entry), and u . H v = v . H u; in-process and in worker mode. */
static void compliance_products(tsr_component *c, double *rho, const double *v, double w,
                                double *hv) {
    double penal = 3, ymin = 1e-3;
    tsr_call *call = new_call(c, TSR_EP_HVP);
    bind_ok(call, "rho", f64_mat(rho, 3, 4));
    bind_ok(call, "penal", f64_scalar(&penal));
    bind_ok(call, "young_min", f64_scalar(&ymin));
    const char *in[] = {"rho"}, *out[] = {"compliance"};
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "compliance", f64_scalar(&w));
    tangent_ok(call, "rho", f64_mat((double *)(uintptr_t)v, 3, 4));
    run_ok(call);
    memcpy(hv, tsr_call_output(call, "rho")->data, 12 * sizeof *hv);
    tsr_call_free(call);
}

static void compliance_vjp(tsr_component *c, double *rho, double w, double *g) {
    double penal = 3, ymin = 1e-3;
    tsr_call *call = new_call(c, TSR_EP_VJP);
    bind_ok(call, "rho", f64_mat(rho, 3, 4));
    bind_ok(call, "penal", f64_scalar(&penal));
    bind_ok(call, "young_min", f64_scalar(&ymin));
    const char *in[] = {"rho"}, *out[] = {"compliance"};
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "compliance", f64_scalar(&w));
    run_ok(call);
    memcpy(g, tsr_call_output(call, "rho")->data, 12 * sizeof *g);
    tsr_call_free(call);
}

Test(hvp, compliance_matches_differences_of_its_vjp) {
    for (int m = 0; m < 2; m++) {
        tsr_component *c = open_mode(BUNDLED_PLUGIN("compliance"), m ? TSR_MODE_WORKER : TSR_MODE_INPROC);
        cr_assert_eq(tsr_component_hvp_source(c), TSR_HVP_NATIVE);
        double rho[12], v[12], u[12], hv[12], hu[12], gp[12], gm[12], x[12];
        for (int e = 0; e < 12; e++) rho[e] = 0.3 + 0.05 * e;
        fill_random(v, 12, 5);
        fill_random(u, 12, 9);
        double w = 1.5;
        compliance_products(c, rho, v, w, hv);
        compliance_products(c, rho, u, w, hu);
        double h = 1e-6, scale = 0;
        for (int e = 0; e < 12; e++) x[e] = rho[e] + h * v[e];
        compliance_vjp(c, x, w, gp);
        for (int e = 0; e < 12; e++) x[e] = rho[e] - h * v[e];
        compliance_vjp(c, x, w, gm);
        for (int e = 0; e < 12; e++) scale = fmax(scale, fabs(hv[e]));
        cr_assert_gt(scale, 0);
        double uhv = 0, vhu = 0;
        for (int e = 0; e < 12; e++) {
            double want = (gp[e] - gm[e]) / (2 * h);
            cr_assert(fabs(hv[e] - want) <= 1e-6 * scale, "rho[%d]: %.12g, differences %.12g", e,
                      hv[e], want);
            uhv += u[e] * hv[e];
            vhu += v[e] * hu[e];
        }
        cr_assert(fabs(uhv - vhu) <= 1e-10 * fmax(fabs(uhv), 1e-300), "u.Hv %.17g, v.Hu %.17g",
                  uhv, vhu);
        tsr_close(c);
    }
}
