/* SPDX-License-Identifier: MIT */
/* The bundled heat plugin: 1-D transient conduction, implicit Euler, with a
 * hand-written tangent-linear model (jvp) and discrete adjoint (vjp).
 * apply is checked against a dense solve of the same scheme written here and
 * against the analytic steady state; the derivatives against central finite
 * differences of apply and against each other (the dot-product test). */
#include "dense_solve.h"
#include "test_util.h"

#define HEAT BUNDLED_PLUGIN("heat")
#define MAX_CELLS 16

/* The inputs of one call. */
typedef struct heat_case {
    int64_t n;
    double conductivity[MAX_CELLS];
    double source[MAX_CELLS];
    double initial_temperature[MAX_CELLS];
    double observations[MAX_CELLS];
    double dt;
    int64_t steps;
} heat_case;

/* A rough profile: conductivity in [0.5, 2.5), a source of either sign, a
 * non-zero start, observations near the answer. */
static heat_case random_case(int64_t n, uint64_t seed) {
    cr_assert(n <= MAX_CELLS);
    heat_case hc = {.n = n, .dt = 0.02, .steps = 12};
    fill_random(hc.conductivity, n, seed);
    fill_random(hc.source, n, seed + 1);
    fill_random(hc.initial_temperature, n, seed + 2);
    fill_random(hc.observations, n, seed + 3);
    for (int64_t i = 0; i < n; i++) {
        hc.conductivity[i] = 1.5 + hc.conductivity[i];
        hc.source[i] *= 3.0;
        hc.observations[i] *= 0.1;
    }
    return hc;
}

static void bind_case(tsr_call *call, heat_case *hc) {
    bind_ok(call, "conductivity", f64_vec(hc->conductivity, hc->n));
    bind_ok(call, "source", f64_vec(hc->source, hc->n));
    bind_ok(call, "initial_temperature", f64_vec(hc->initial_temperature, hc->n));
    bind_ok(call, "observations", f64_vec(hc->observations, hc->n));
    bind_ok(call, "dt", f64_scalar(&hc->dt));
    bind_ok(call, "steps", make_array(&hc->steps, TSR_INT64, 0, NULL));
}

/* apply through the plugin: final temperature (n values) and misfit. */
static void plugin_apply(tsr_component *c, heat_case *hc, double *T, double *misfit) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_case(call, hc);
    run_ok(call);
    const tsr_array *t = tsr_call_output(call, "temperature");
    cr_assert_eq(t->rank, 1);
    cr_assert_eq(t->shape[0], hc->n);
    memcpy(T, t->data, (size_t)hc->n * sizeof(double));
    *misfit = *(const double *)tsr_call_output(call, "misfit")->data;
    tsr_call_free(call);
}

/* ---- an independent model: dense Gaussian elimination ------------------ */

/* The same scheme from the energy balance of each cell, written as a dense
 * matrix: thermal resistance of a half cell is (h/2)/k; the wall at x = 0
 * (temperature 0) is half a cell away from cell 0; x = 1 is insulated. */
static void dense_model(const heat_case *hc, double *T) {
    int64_t n = hc->n;
    double h = 1.0 / (double)n;
    double a[MAX_CELLS * MAX_CELLS];
    memcpy(T, hc->initial_temperature, (size_t)n * sizeof(double));
    for (int64_t m = 0; m < hc->steps; m++) {
        memset(a, 0, sizeof a);
        for (int64_t i = 0; i < n; i++) a[i * n + i] = 1.0;
        double wall = hc->dt / h / ((h / 2) / hc->conductivity[0]);
        a[0] += wall;
        for (int64_t i = 0; i + 1 < n; i++) {
            double resistance = (h / 2) / hc->conductivity[i] + (h / 2) / hc->conductivity[i + 1];
            double w = hc->dt / h / resistance;
            a[i * n + i] += w;
            a[(i + 1) * n + (i + 1)] += w;
            a[i * n + (i + 1)] -= w;
            a[(i + 1) * n + i] -= w;
        }
        for (int64_t i = 0; i < n; i++) T[i] += hc->dt * hc->source[i];
        dense_solve(a, T, n);
    }
}

/* The schema: three differentiable inputs of length n, observations, dt
 * and steps that are not; temperature (n,) and misfit (). */
Test(heat, schema) {
    tsr_component *c = open_ok(HEAT, NULL);
    cr_assert_str_eq(tsr_component_name(c), "heat");
    const char *names[] = {"conductivity", "source", "initial_temperature", "observations", "dt",
                           "steps"};
    tsr_dtype dtypes[] = {TSR_FLOAT64, TSR_FLOAT64, TSR_FLOAT64, TSR_FLOAT64, TSR_FLOAT64,
                          TSR_INT64};
    int32_t ranks[] = {1, 1, 1, 1, 0, 0};
    int differentiable[] = {1, 1, 1, 0, 0, 0};
    cr_assert_eq(tsr_component_n_inputs(c), 6);
    for (int32_t i = 0; i < 6; i++) {
        const tsr_field *f = tsr_component_input(c, i);
        cr_assert_str_eq(f->name, names[i]);
        cr_assert_eq(f->dtype, dtypes[i], "%s: dtype", names[i]);
        cr_assert_eq(f->rank, ranks[i], "%s: rank", names[i]);
        cr_assert_eq((f->flags & TSR_FIELD_DIFFERENTIABLE) != 0, differentiable[i],
                     "%s: differentiable flag", names[i]);
        if (f->rank == 1) cr_assert_str_eq(f->dims[0].symbol, "n");
    }
    cr_assert_eq(tsr_component_n_outputs(c), 2);
    cr_assert_str_eq(tsr_component_output(c, 0)->name, "temperature");
    cr_assert_eq(tsr_component_output(c, 0)->rank, 1);
    cr_assert_str_eq(tsr_component_output(c, 1)->name, "misfit");
    cr_assert_eq(tsr_component_output(c, 1)->rank, 0);
    for (int ep = 0; ep < TSR_EP_COUNT; ep++) cr_assert(tsr_component_has_endpoint(c, (tsr_endpoint)ep));
    tsr_close(c);
}

/* apply equals a dense Gaussian elimination of the same implicit scheme,
 * for 1, 2 and 9 cells, and misfit is 0.5 * |T - observations|^2. */
Test(heat, apply_matches_dense_solve) {
    tsr_component *c = open_ok(HEAT, NULL);
    int64_t sizes[] = {1, 2, 9};
    for (int k = 0; k < 3; k++) {
        heat_case hc = random_case(sizes[k], 10 + (uint64_t)k);
        double T[MAX_CELLS], want[MAX_CELLS], misfit;
        plugin_apply(c, &hc, T, &misfit);
        dense_model(&hc, want);
        double want_misfit = 0.0;
        for (int64_t i = 0; i < hc.n; i++) {
            cr_assert(fabs(T[i] - want[i]) <= 1e-12 * (1.0 + fabs(want[i])),
                      "n=%ld T[%ld]: got %.17g, dense solve %.17g", (long)hc.n, (long)i, T[i],
                      want[i]);
            want_misfit += 0.5 * (want[i] - hc.observations[i]) * (want[i] - hc.observations[i]);
        }
        cr_assert(fabs(misfit - want_misfit) <= 1e-12 * (1.0 + want_misfit),
                  "misfit %.17g, expected %.17g", misfit, want_misfit);
    }
    tsr_close(c);
}

/* With constant k and a uniform source s, a long run reaches the steady
 * state of -k T'' = s, T(0) = 0, T'(1) = 0: T = (s/k)(x - x^2/2), up to the
 * scheme's O(h^2) error. */
Test(heat, long_run_reaches_analytic_steady_state) {
    tsr_component *c = open_ok(HEAT, NULL);
    int64_t n = 200;
    double *arrays = calloc(6 * (size_t)n, sizeof(double));
    cr_assert_not_null(arrays);
    double *k = arrays, *s = arrays + n, *T0 = arrays + 2 * n, *obs = arrays + 3 * n;
    for (int64_t i = 0; i < n; i++) {
        k[i] = 2.0;
        s[i] = 3.0;
    }
    double dt = 0.1;
    int64_t steps = 400; /* slowest mode decays by 1/(1 + dt k pi^2/4)^steps ~ 1e-70 */
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "conductivity", f64_vec(k, n));
    bind_ok(call, "source", f64_vec(s, n));
    bind_ok(call, "initial_temperature", f64_vec(T0, n));
    bind_ok(call, "observations", f64_vec(obs, n));
    bind_ok(call, "dt", f64_scalar(&dt));
    bind_ok(call, "steps", make_array(&steps, TSR_INT64, 0, NULL));
    run_ok(call);
    const double *T = tsr_call_output(call, "temperature")->data;
    double h = 1.0 / (double)n, worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double x = (i + 0.5) * h, exact = 1.5 * (x - 0.5 * x * x);
        worst = fmax(worst, fabs(T[i] - exact));
    }
    /* The peak is 0.75; the error must be O(h^2) (about 0.19 h^2 here), far
     * below O(h) = 5e-3. */
    cr_assert(worst < h * h, "largest error %.3g for h = %.3g", worst, h);
    tsr_call_free(call);
    free(arrays);
    tsr_close(c);
}

/* ---- derivatives ------------------------------------------------------------ */

static const char *const diff_inputs[] = {"conductivity", "source", "initial_temperature"};
static const char *const diff_outputs[] = {"temperature", "misfit"};

static double *case_input(heat_case *hc, int field) {
    double *fields[] = {hc->conductivity, hc->source, hc->initial_temperature};
    return fields[field];
}

/* d output / d input[q] by central differences of apply, with a step
 * relative to the entry; out_count values written to column. */
static void fd_column(tsr_component *c, heat_case *hc, int in_field, int64_t q, double *col_T,
                      double *col_misfit) {
    double *x = case_input(hc, in_field);
    double x0 = x[q], step = 1e-5 * fmax(1.0, fabs(x0));
    double Tp[MAX_CELLS], Tm[MAX_CELLS], mp, mm;
    x[q] = x0 + step;
    plugin_apply(c, hc, Tp, &mp);
    x[q] = x0 - step;
    plugin_apply(c, hc, Tm, &mm);
    x[q] = x0;
    for (int64_t p = 0; p < hc->n; p++) col_T[p] = (Tp[p] - Tm[p]) / (2 * step);
    *col_misfit = (mp - mm) / (2 * step);
}

/* Every block of the jacobian, asked in a scrambled order, equals central
 * finite differences of apply to 1e-7 relative to the block's largest entry. */
Test(heat, jacobian_matches_finite_differences) {
    tsr_component *c = open_ok(HEAT, NULL);
    heat_case hc = random_case(7, 31);
    const char *in[] = {"initial_temperature", "conductivity", "source"};
    int in_field[] = {2, 0, 1};
    const char *out[] = {"misfit", "temperature"};
    tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
    bind_case(call, &hc);
    wrt_ok(call, in, 3, out, 2);
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), 6);
    int64_t n = hc.n;
    for (int i = 0; i < 3; i++) {
        const tsr_array *dT = tsr_call_jacobian(call, "temperature", in[i]);
        const tsr_array *dm = tsr_call_jacobian(call, "misfit", in[i]);
        cr_assert_eq(dT, tsr_call_result(call, 1 * 3 + i), "blocks follow the order asked");
        cr_assert_eq(dm, tsr_call_result(call, 0 * 3 + i), "blocks follow the order asked");
        cr_assert_eq(dT->rank, 2);
        cr_assert_eq(dT->shape[0], n);
        cr_assert_eq(dT->shape[1], n);
        cr_assert_eq(dm->rank, 1);
        cr_assert_eq(dm->shape[0], n);
        const double *jT = dT->data, *jm = dm->data;
        double scale_T = 0.0, scale_m = 0.0;
        for (int64_t p = 0; p < n * n; p++) scale_T = fmax(scale_T, fabs(jT[p]));
        for (int64_t p = 0; p < n; p++) scale_m = fmax(scale_m, fabs(jm[p]));
        for (int64_t q = 0; q < n; q++) {
            double col[MAX_CELLS], col_m;
            fd_column(c, &hc, in_field[i], q, col, &col_m);
            for (int64_t p = 0; p < n; p++)
                cr_assert(fabs(jT[p * n + q] - col[p]) <= 1e-7 * scale_T,
                          "d temperature[%ld] / d %s[%ld]: %.12g, finite differences %.12g",
                          (long)p, in[i], (long)q, jT[p * n + q], col[p]);
            cr_assert(fabs(jm[q] - col_m) <= 1e-7 * scale_m,
                      "d misfit / d %s[%ld]: %.12g, finite differences %.12g", in[i], (long)q,
                      jm[q], col_m);
        }
    }
    tsr_call_free(call);
    tsr_close(c);
}

/* The gradient of misfit with respect to conductivity (one vjp, the adjoint
 * sweep) equals central finite differences of misfit. */
Test(heat, misfit_gradient_matches_finite_differences) {
    tsr_component *c = open_ok(HEAT, NULL);
    heat_case hc = random_case(12, 57);
    hc.steps = 30;
    double one = 1.0;
    tsr_call *call = new_call(c, TSR_EP_VJP);
    bind_case(call, &hc);
    const char *in[] = {"conductivity"}, *out[] = {"misfit"};
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "misfit", f64_scalar(&one));
    run_ok(call);
    const double *g = tsr_call_output(call, "conductivity")->data;
    double scale = 0.0;
    for (int64_t q = 0; q < hc.n; q++) scale = fmax(scale, fabs(g[q]));
    cr_assert(scale > 1e-3, "a gradient this small (%g) would make the check empty", scale);
    for (int64_t q = 0; q < hc.n; q++) {
        double col[MAX_CELLS], fd;
        fd_column(c, &hc, 0, q, col, &fd);
        cr_assert(fabs(g[q] - fd) <= 1e-7 * scale, "d misfit / d conductivity[%ld]: %.12g, "
                  "finite differences %.12g", (long)q, g[q], fd);
    }
    tsr_call_free(call);
    tsr_close(c);
}

static double dot(const double *a, const double *b, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* The dot-product test: for random tangents t (all three inputs) and
 * cotangents c (both outputs), <c, jvp(t)> = <vjp(c), t> to 1e-12 relative:
 * the adjoint is the exact transpose of the tangent-linear model. */
Test(heat, jvp_and_vjp_pass_the_dot_product_test) {
    tsr_component *c = open_ok(HEAT, NULL);
    for (uint64_t trial = 0; trial < 4; trial++) {
        heat_case hc = random_case(trial == 0 ? 1 : 10, 70 + trial);
        hc.steps = 25;
        int64_t n = hc.n;
        double t[3][MAX_CELLS], cT[MAX_CELLS], cm;
        for (int i = 0; i < 3; i++) fill_random(t[i], n, 200 + 10 * trial + (uint64_t)i);
        fill_random(cT, n, 300 + trial);
        fill_random(&cm, 1, 400 + trial);

        tsr_call *jvp = new_call(c, TSR_EP_JVP);
        bind_case(jvp, &hc);
        wrt_ok(jvp, (const char *const *)diff_inputs, 3, (const char *const *)diff_outputs, 2);
        for (int i = 0; i < 3; i++) seed_ok(jvp, diff_inputs[i], f64_vec(t[i], n));
        run_ok(jvp);
        double lhs = dot(cT, tsr_call_output(jvp, "temperature")->data, n) +
                     cm * *(const double *)tsr_call_output(jvp, "misfit")->data;

        tsr_call *vjp = new_call(c, TSR_EP_VJP);
        bind_case(vjp, &hc);
        wrt_ok(vjp, (const char *const *)diff_inputs, 3, (const char *const *)diff_outputs, 2);
        seed_ok(vjp, "temperature", f64_vec(cT, n));
        seed_ok(vjp, "misfit", f64_scalar(&cm));
        run_ok(vjp);
        double rhs = 0.0, size = 0.0;
        for (int i = 0; i < 3; i++) {
            const double *bar = tsr_call_output(vjp, diff_inputs[i])->data;
            rhs += dot(bar, t[i], n);
            for (int64_t q = 0; q < n; q++) size += fabs(bar[q] * t[i][q]);
        }
        cr_assert(fabs(lhs - rhs) <= 1e-12 * size,
                  "n=%ld: <c, J t> = %.17g but <J^T c, t> = %.17g", (long)n, lhs, rhs);
        tsr_call_free(jvp);
        tsr_call_free(vjp);
    }
    tsr_close(c);
}

/* jvp for one input and one output equals the jacobian block times the
 * tangent, and vjp the cotangent times the block, whichever subset is
 * named (the others count as zero). */
Test(heat, jvp_and_vjp_agree_with_jacobian_blocks) {
    tsr_component *c = open_ok(HEAT, NULL);
    heat_case hc = random_case(6, 91);
    int64_t n = hc.n;
    for (int i = 0; i < 3; i++) {
        for (int o = 0; o < 2; o++) {
            const char *in[] = {diff_inputs[i]}, *out[] = {diff_outputs[o]};
            int64_t rows = o == 0 ? n : 1;
            tsr_call *jac = new_call(c, TSR_EP_JACOBIAN);
            bind_case(jac, &hc);
            wrt_ok(jac, in, 1, out, 1);
            run_ok(jac);
            const double *block = tsr_call_result(jac, 0)->data;

            double t[MAX_CELLS], cot[MAX_CELLS];
            fill_random(t, n, 500 + (uint64_t)(3 * o + i));
            fill_random(cot, rows, 600 + (uint64_t)(3 * o + i));
            tsr_call *jvp = new_call(c, TSR_EP_JVP);
            bind_case(jvp, &hc);
            wrt_ok(jvp, in, 1, out, 1);
            seed_ok(jvp, in[0], f64_vec(t, n));
            run_ok(jvp);
            const double *jt = tsr_call_result(jvp, 0)->data;
            tsr_call *vjp = new_call(c, TSR_EP_VJP);
            bind_case(vjp, &hc);
            wrt_ok(vjp, in, 1, out, 1);
            seed_ok(vjp, out[0], o == 0 ? f64_vec(cot, n) : f64_scalar(cot));
            run_ok(vjp);
            const double *ct = tsr_call_result(vjp, 0)->data;
            for (int64_t p = 0; p < rows; p++) {
                double want = dot(block + p * n, t, n);
                cr_assert(fabs(jt[p] - want) <= 1e-12 * (1.0 + fabs(want)),
                          "jvp d %s / d %s [%ld]: %.17g vs %.17g", out[0], in[0], (long)p, jt[p],
                          want);
            }
            for (int64_t q = 0; q < n; q++) {
                double want = 0.0;
                for (int64_t p = 0; p < rows; p++) want += cot[p] * block[p * n + q];
                cr_assert(fabs(ct[q] - want) <= 1e-12 * (1.0 + fabs(want)),
                          "vjp d %s / d %s [%ld]: %.17g vs %.17g", out[0], in[0], (long)q, ct[q],
                          want);
            }
            tsr_call_free(jac);
            tsr_call_free(jvp);
            tsr_call_free(vjp);
        }
    }
    tsr_close(c);
}

/* ---- shapes and refusals ------------------------------------------------- */

/* abstract_eval, from shapes alone: temperature (n,), misfit (). */
Test(heat, abstract_eval_shapes) {
    tsr_component *c = open_ok(HEAT, NULL);
    int64_t n = 5;
    tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
    const char *vectors[] = {"conductivity", "source", "initial_temperature", "observations"};
    for (int i = 0; i < 4; i++) bind_ok(call, vectors[i], f64_vec(NULL, n));
    bind_ok(call, "dt", f64_scalar(NULL));
    bind_ok(call, "steps", make_array(NULL, TSR_INT64, 0, NULL));
    run_ok(call);
    const tsr_array *T = tsr_call_output(call, "temperature");
    const tsr_array *m = tsr_call_output(call, "misfit");
    cr_assert_eq(T->dtype, TSR_FLOAT64);
    cr_assert_eq(T->rank, 1);
    cr_assert_eq(T->shape[0], n);
    cr_assert_null(T->data);
    cr_assert_eq(m->dtype, TSR_FLOAT64);
    cr_assert_eq(m->rank, 0);
    cr_assert_null(m->data);
    tsr_call_free(call);
    tsr_close(c);
}

/* Run endpoint ep on hc (seeds of ones where needed); it must fail with a
 * plugin error whose message contains `needle`. */
static void expect_plugin_error(tsr_component *c, tsr_endpoint ep, heat_case *hc,
                                const char *needle) {
    double ones[MAX_CELLS], one = 1.0;
    for (int i = 0; i < MAX_CELLS; i++) ones[i] = 1.0;
    tsr_call *call = new_call(c, ep);
    bind_case(call, hc);
    const char *in[] = {"conductivity"}, *out[] = {"misfit"};
    if (ep != TSR_EP_APPLY) wrt_ok(call, in, 1, out, 1);
    if (ep == TSR_EP_JVP) seed_ok(call, "conductivity", f64_vec(ones, hc->n));
    if (ep == TSR_EP_VJP) seed_ok(call, "misfit", f64_scalar(&one));
    const char *msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "heat");
    assert_contains(msg, tsr_endpoint_name(ep));
    assert_contains(msg, needle);
    tsr_call_free(call);
}

static const tsr_endpoint value_endpoints[] = {TSR_EP_APPLY, TSR_EP_JVP, TSR_EP_VJP,
                                               TSR_EP_JACOBIAN};

/* A conductivity that is zero, negative, infinite or NaN in one cell is
 * refused by every endpoint, naming the cell. */
Test(heat, non_positive_conductivity_refused) {
    tsr_component *c = open_ok(HEAT, NULL);
    double bad[] = {0.0, -1.0, INFINITY, NAN};
    for (int b = 0; b < 4; b++) {
        for (int e = 0; e < 4; e++) {
            heat_case hc = random_case(5, 3);
            hc.conductivity[2] = bad[b];
            expect_plugin_error(c, value_endpoints[e], &hc, "conductivity[2]");
        }
    }
    tsr_close(c);
}

/* steps < 1 and dt <= 0 are refused by every endpoint, naming the field. */
Test(heat, bad_steps_and_dt_refused) {
    tsr_component *c = open_ok(HEAT, NULL);
    for (int e = 0; e < 4; e++) {
        heat_case hc = random_case(4, 5);
        hc.steps = 0;
        expect_plugin_error(c, value_endpoints[e], &hc, "steps");
        hc.steps = -3;
        expect_plugin_error(c, value_endpoints[e], &hc, "steps");
        hc = random_case(4, 5);
        hc.dt = 0.0;
        expect_plugin_error(c, value_endpoints[e], &hc, "dt");
        hc.dt = -0.1;
        expect_plugin_error(c, value_endpoints[e], &hc, "dt");
    }
    tsr_close(c);
}

/* An empty rod (n = 0) is refused: there is no cell to conduct through. */
Test(heat, empty_rod_refused) {
    tsr_component *c = open_ok(HEAT, NULL);
    for (int e = 0; e < 4; e++) {
        heat_case hc = random_case(1, 8);
        hc.n = 0;
        expect_plugin_error(c, value_endpoints[e], &hc, "at least 1 cell");
    }
    tsr_close(c);
}

/* Vectors whose lengths disagree break the shared dim n; steps given as
 * float64 is the wrong dtype; observations is not differentiable. */
Test(heat, schema_violations_refused) {
    tsr_component *c = open_ok(HEAT, NULL);
    heat_case hc = random_case(6, 9);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_case(call, &hc);
    bind_or_run_fails(call, "observations", f64_vec(hc.observations, 5), TSR_E_SHAPE);
    tsr_call_free(call);

    call = new_call(c, TSR_EP_APPLY);
    bind_case(call, &hc);
    double steps_as_double = 12.0;
    bind_or_run_fails(call, "steps", f64_scalar(&steps_as_double), TSR_E_DTYPE);
    tsr_call_free(call);

    call = new_call(c, TSR_EP_VJP);
    const char *in[] = {"observations"}, *out[] = {"misfit"};
    int rc = tsr_call_set_wrt(call, in, 1, out, 1);
    if (rc == 0) {
        bind_case(call, &hc);
        rc = tsr_call_run(call);
    }
    expect_failure(call, rc, TSR_E_NOT_DIFFERENTIABLE);
    tsr_call_free(call);
    tsr_close(c);
}

/* In worker mode (a separate process) apply and vjp give the same numbers,
 * bit for bit, as in-process. */
Test(heat, worker_mode_gives_the_same_results) {
    tsr_options *opts = tsr_options_new();
    tsr_error err = {0};
    cr_assert_not_null(opts);
    cr_assert_eq(tsr_options_set(opts, "mode", "worker", &err), 0, "%s", err.message);
    tsr_component *worker = open_ok(HEAT, opts);
    tsr_options_free(opts);
    tsr_component *inproc = open_ok(HEAT, NULL);
    cr_assert_eq(tsr_component_mode(worker), TSR_MODE_WORKER);
    heat_case hc = random_case(9, 99);
    double Tw[MAX_CELLS], Ti[MAX_CELLS], mw, mi;
    plugin_apply(worker, &hc, Tw, &mw);
    plugin_apply(inproc, &hc, Ti, &mi);
    cr_assert(memcmp(Tw, Ti, (size_t)hc.n * sizeof(double)) == 0, "temperature differs");
    cr_assert_eq(mw, mi);

    double one = 1.0, g[2][MAX_CELLS];
    tsr_component *both[2] = {worker, inproc};
    for (int k = 0; k < 2; k++) {
        tsr_call *call = new_call(both[k], TSR_EP_VJP);
        bind_case(call, &hc);
        const char *in[] = {"conductivity"}, *out[] = {"misfit"};
        wrt_ok(call, in, 1, out, 1);
        seed_ok(call, "misfit", f64_scalar(&one));
        run_ok(call);
        memcpy(g[k], tsr_call_output(call, "conductivity")->data, (size_t)hc.n * sizeof(double));
        tsr_call_free(call);
    }
    cr_assert(memcmp(g[0], g[1], (size_t)hc.n * sizeof(double)) == 0, "gradient differs");
    tsr_stats stats = TSR_STATS_INIT;
    cr_assert_eq(tsr_component_stats(worker, &stats), 0);
    cr_assert_geq(stats.worker_starts, 1);
    tsr_close(worker);
    tsr_close(inproc);
}
