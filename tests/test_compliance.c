/* SPDX-License-Identifier: MIT */
/*
 * The bundled compliance plugin: a SIMP cantilever on a grid of Q4
 * plane-stress elements, solved with CHOLMOD, with the adjoint gradient
 * w.r.t. the density field.
 * apply is checked against a dense solve of the same model assembled here
 * from the closed-form element matrix, against Euler-Bernoulli/Timoshenko
 * beam theory for a slender beam, and against how compliance must scale
 * with Young's modulus; the derivatives against finite differences (the
 * library's gradient check in both methods, the CLI's Taylor check, and
 * entries compared directly); bad inputs are refused with messages that
 * name the field and the cause, in process and in a worker; concurrent
 * calls on several grid sizes agree with sequential ones.
 */
#include <pthread.h>

#include <tessera/gradcheck.h>

#include "cli_run.h"
#include "dense_solve.h"
#include "test_util.h"

#define COMPLIANCE BUNDLED_PLUGIN("compliance")
#define MAX_ELEMENTS (40 * 20)

/* ---- calling the plugin ------------------------------------------------- */

typedef struct grid_case {
    int64_t ny, nx;
    double rho[MAX_ELEMENTS];
    double penal, young_min;
} grid_case;

static void uniform_case(grid_case *gc, int64_t ny, int64_t nx, double rho) {
    cr_assert(ny * nx <= MAX_ELEMENTS);
    gc->ny = ny;
    gc->nx = nx;
    gc->penal = 3.0;
    gc->young_min = 1e-9;
    for (int64_t e = 0; e < ny * nx; e++) gc->rho[e] = rho;
}

/* Densities drawn uniformly from [lo, hi]. */
static void random_case(grid_case *gc, int64_t ny, int64_t nx, double lo, double hi,
                        uint64_t seed) {
    uniform_case(gc, ny, nx, 0.0);
    fill_random(gc->rho, ny * nx, seed);
    for (int64_t e = 0; e < ny * nx; e++) gc->rho[e] = lo + (hi - lo) * 0.5 * (gc->rho[e] + 1.0);
}

static void bind_case(tsr_call *call, grid_case *gc) {
    bind_ok(call, "rho", f64_mat(gc->rho, gc->ny, gc->nx));
    bind_ok(call, "penal", f64_scalar(&gc->penal));
    bind_ok(call, "young_min", f64_scalar(&gc->young_min));
}

static double plugin_compliance(tsr_component *c, grid_case *gc) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_case(call, gc);
    run_ok(call);
    const tsr_array *out = tsr_call_output(call, "compliance");
    cr_assert_eq(out->rank, 0);
    double value = *(const double *)out->data;
    tsr_call_free(call);
    return value;
}

static const char *const rho_name[] = {"rho"};
static const char *const compliance_name[] = {"compliance"};

/* vjp with cotangent `cot`: ny * nx values into grad. */
static void plugin_vjp(tsr_component *c, grid_case *gc, double cot, double *grad) {
    tsr_call *call = new_call(c, TSR_EP_VJP);
    bind_case(call, gc);
    wrt_ok(call, rho_name, 1, compliance_name, 1);
    seed_ok(call, "compliance", f64_scalar(&cot));
    run_ok(call);
    const tsr_array *g = tsr_call_output(call, "rho");
    cr_assert_eq(g->rank, 2);
    cr_assert_eq(g->shape[0], gc->ny);
    cr_assert_eq(g->shape[1], gc->nx);
    memcpy(grad, g->data, (size_t)(gc->ny * gc->nx) * sizeof(double));
    tsr_call_free(call);
}

static double plugin_jvp(tsr_component *c, grid_case *gc, double *tangent) {
    tsr_call *call = new_call(c, TSR_EP_JVP);
    bind_case(call, gc);
    wrt_ok(call, rho_name, 1, compliance_name, 1);
    seed_ok(call, "rho", f64_mat(tangent, gc->ny, gc->nx));
    run_ok(call);
    double value = *(const double *)tsr_call_output(call, "compliance")->data;
    tsr_call_free(call);
    return value;
}

static tsr_component *open_mode(const char *mode) {
    tsr_options *o = tsr_options_new();
    tsr_error err = {0};
    cr_assert_not_null(o);
    cr_assert_eq(tsr_options_set(o, "mode", mode, &err), 0, "%s", err.message);
    tsr_component *c = open_ok(COMPLIANCE, o);
    tsr_options_free(o);
    return c;
}

static void assert_close(double got, double want, double rtol, const char *what) {
    cr_assert(fabs(got - want) <= rtol * fabs(want), "%s: got %.17g, expected %.17g (rtol %g)",
              what, got, want, rtol);
}

/* ---- an independent model: dense assembly and Gaussian elimination ------ */

#define DENSE_MAX_DOFS 64

/* The plane-stress stiffness matrix of a unit-square bilinear element with
 * E = 1 in closed form (corners counter-clockwise from the lower left, each
 * (ux, uy)); the plugin integrates it numerically. */
static void closed_form_k0(double nu, double k0[8][8]) {
    double k[8] = {0.5 - nu / 6.0,    0.125 + nu / 8.0,  -0.25 - nu / 12.0, -0.125 + 3.0 * nu / 8.0,
                   -0.25 + nu / 12.0, -0.125 - nu / 8.0, nu / 6.0,          0.125 - 3.0 * nu / 8.0};
    static const int pattern[8][8] = {
        {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 7, 6, 5, 4, 3, 2}, {2, 7, 0, 5, 6, 3, 4, 1},
        {3, 6, 5, 0, 7, 2, 1, 4}, {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 3, 2, 1, 0, 7, 6},
        {6, 3, 4, 1, 2, 7, 0, 5}, {7, 2, 1, 4, 3, 6, 5, 0}};
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) k0[a][b] = k[pattern[a][b]] / (1.0 - nu * nu);
}

/* f^T u for the documented model: node (a, b) at x = a, y = b has DOFs
 * 2 * (b * (nx + 1) + a) + {0, 1}; the left edge is clamped (its rows and
 * columns replaced by the identity), fy = -1 at node (nx, ny / 2). */
static double dense_compliance(const grid_case *gc) {
    int64_t nx = gc->nx, ny = gc->ny, n = 2 * (nx + 1) * (ny + 1);
    cr_assert(n <= DENSE_MAX_DOFS);
    static double K[DENSE_MAX_DOFS * DENSE_MAX_DOFS];
    double f[DENSE_MAX_DOFS] = {0}, k0[8][8];
    memset(K, 0, sizeof K);
    closed_form_k0(0.3, k0);
    for (int64_t i = 0; i < ny; i++) {
        for (int64_t j = 0; j < nx; j++) {
            double rho = gc->rho[i * nx + j];
            double E = gc->young_min + pow(rho, gc->penal) * (1.0 - gc->young_min);
            int64_t nodes[4] = {i * (nx + 1) + j, i * (nx + 1) + j + 1, (i + 1) * (nx + 1) + j + 1,
                                (i + 1) * (nx + 1) + j};
            for (int a = 0; a < 8; a++)
                for (int b = 0; b < 8; b++)
                    K[(2 * nodes[a / 2] + a % 2) * n + 2 * nodes[b / 2] + b % 2] += E * k0[a][b];
        }
    }
    for (int64_t b = 0; b <= ny; b++) {
        for (int comp = 0; comp < 2; comp++) {
            int64_t d = 2 * (b * (nx + 1)) + comp;
            for (int64_t k = 0; k < n; k++) K[d * n + k] = K[k * n + d] = 0.0;
            K[d * n + d] = 1.0;
        }
    }
    int64_t load = 2 * ((ny / 2) * (nx + 1) + nx) + 1;
    f[load] = -1.0;
    dense_solve(K, f, n);
    return -f[load];
}

/* ---- schema ------------------------------------------------------------- */

/* rho (ny, nx) differentiable; penal and young_min scalars that are not;
 * compliance a differentiable scalar; every endpoint written by hand. */
Test(compliance, schema) {
    tsr_component *c = open_ok(COMPLIANCE, NULL);
    cr_assert_str_eq(tsr_component_name(c), "compliance");
    cr_assert_eq(tsr_component_n_inputs(c), 3);
    const tsr_field *rho = tsr_component_input(c, 0);
    cr_assert_str_eq(rho->name, "rho");
    cr_assert_eq(rho->dtype, TSR_FLOAT64);
    cr_assert_eq(rho->rank, 2);
    cr_assert_str_eq(rho->dims[0].symbol, "ny");
    cr_assert_str_eq(rho->dims[1].symbol, "nx");
    cr_assert(rho->flags & TSR_FIELD_DIFFERENTIABLE);
    const char *scalars[] = {"penal", "young_min"};
    for (int32_t k = 0; k < 2; k++) {
        const tsr_field *f = tsr_component_input(c, k + 1);
        cr_assert_str_eq(f->name, scalars[k]);
        cr_assert_eq(f->dtype, TSR_FLOAT64);
        cr_assert_eq(f->rank, 0);
        cr_assert_eq(f->flags & TSR_FIELD_DIFFERENTIABLE, 0u, "%s must not be differentiable",
                     scalars[k]);
    }
    cr_assert_eq(tsr_component_n_outputs(c), 1);
    const tsr_field *out = tsr_component_output(c, 0);
    cr_assert_str_eq(out->name, "compliance");
    cr_assert_eq(out->rank, 0);
    cr_assert(out->flags & TSR_FIELD_DIFFERENTIABLE);
    const tsr_endpoint native[] = {TSR_EP_APPLY, TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN,
                                   TSR_EP_ABSTRACT_EVAL};
    for (int k = 0; k < 5; k++)
        cr_assert(tsr_component_has_native_endpoint(c, native[k]), "%s missing",
                  tsr_endpoint_name(native[k]));
    assert_contains(tsr_component_description(c), "0.3");
    tsr_close(c);
}

/* ---- apply -------------------------------------------------------------- */

/* Full and random densities on tiny grids (ny even and odd, so both
 * placements of the load) equal the dense model to rounding. */
Test(compliance, apply_matches_dense_solve) {
    tsr_component *c = open_ok(COMPLIANCE, NULL);
    const int64_t sizes[][2] = {{1, 1}, {2, 3}, {3, 4}, {4, 2}};
    for (int s = 0; s < 4; s++) {
        static grid_case gc;
        for (int variant = 0; variant < 2; variant++) {
            if (variant == 0) uniform_case(&gc, sizes[s][0], sizes[s][1], 1.0);
            else random_case(&gc, sizes[s][0], sizes[s][1], 0.05, 1.0, 3 + (uint64_t)s);
            gc.young_min = 1e-3;
            double got = plugin_compliance(c, &gc), want = dense_compliance(&gc);
            cr_assert(isfinite(got) && got > 0.0, "compliance %g", got);
            char what[64];
            snprintf(what, sizeof what, "%lldx%lld %s", (long long)gc.ny, (long long)gc.nx,
                     variant == 0 ? "full" : "random");
            assert_close(got, want, 1e-10, what);
        }
    }
    tsr_close(c);
}

/* A slender full beam (L/H = 5) deflects as beam theory says: Euler-
 * Bernoulli 4 (L/H)^3 / E plus Timoshenko's shear term L / (kappa G H),
 * within the errors of Q4 elements (too stiff in bending) and of the
 * clamped, Poisson-restrained root: a wrong element matrix, load or support
 * is off by far more. */
Test(compliance, slender_beam_agrees_with_beam_theory) {
    tsr_component *c = open_ok(COMPLIANCE, NULL);
    static grid_case gc;
    uniform_case(&gc, 8, 40, 1.0);
    double L = 40.0, H = 8.0, nu = 0.3, G = 1.0 / (2.0 * (1.0 + nu));
    double beam = 4.0 * pow(L / H, 3.0) + L / (5.0 / 6.0 * G * H);
    double got = plugin_compliance(c, &gc);
    cr_assert(got > 0.85 * beam && got < 1.05 * beam,
              "compliance %.6g, beam theory %.6g (ratio %.4f)", got, beam, got / beam);
    tsr_close(c);
}

/* Compliance is inversely proportional to a uniform Young's modulus: rho^3
 * = 1/2 doubles it (up to young_min), penal 1 with rho = 1/4 quadruples it,
 * full material ignores young_min, and void is 1/young_min times full. */
Test(compliance, scales_inversely_with_youngs_modulus) {
    tsr_component *c = open_ok(COMPLIANCE, NULL);
    static grid_case gc;
    uniform_case(&gc, 6, 12, 1.0);
    double full = plugin_compliance(c, &gc);
    cr_assert(isfinite(full) && full > 0.0);

    uniform_case(&gc, 6, 12, cbrt(0.5));
    double E = gc.young_min + 0.5 * (1.0 - gc.young_min);
    assert_close(plugin_compliance(c, &gc), full / E, 1e-9, "rho^3 = 1/2");

    uniform_case(&gc, 6, 12, 0.25);
    gc.penal = 1.0;
    gc.young_min = 1e-2;
    E = 1e-2 + 0.25 * (1.0 - 1e-2);
    assert_close(plugin_compliance(c, &gc), full / E, 1e-9, "penal 1, rho 1/4");

    uniform_case(&gc, 6, 12, 1.0);
    gc.young_min = 0.5;
    assert_close(plugin_compliance(c, &gc), full, 1e-12, "full material, young_min 0.5");

    uniform_case(&gc, 6, 12, 0.0);
    gc.young_min = 1e-6;
    assert_close(plugin_compliance(c, &gc), full / 1e-6, 1e-6, "void");
    tsr_close(c);
}

/* Removing material anywhere makes the cantilever softer: with random
 * densities the gradient is negative in every element, and the tip
 * column matters less than the root. The same call twice (the second with
 * the cached analysis) gives the same bits. */
Test(compliance, gradient_is_negative_and_repeatable) {
    tsr_component *c = open_ok(COMPLIANCE, NULL);
    static grid_case gc;
    random_case(&gc, 10, 20, 0.3, 1.0, 17);
    static double g1[MAX_ELEMENTS], g2[MAX_ELEMENTS];
    double c1 = plugin_compliance(c, &gc);
    plugin_vjp(c, &gc, 1.0, g1);
    plugin_vjp(c, &gc, 1.0, g2);
    cr_assert_eq(plugin_compliance(c, &gc), c1);
    cr_assert(memcmp(g1, g2, sizeof g1) == 0, "the second vjp differs");
    double root = 0.0, tip = 0.0;
    for (int64_t e = 0; e < gc.ny * gc.nx; e++) {
        cr_assert(g1[e] < 0.0, "gradient[%lld] = %g", (long long)e, g1[e]);
        if (e % gc.nx == 0) root += g1[e];
        if (e % gc.nx == gc.nx - 1) tip += g1[e];
    }
    cr_assert(root < tip, "root column %g, tip column %g", root, tip);
    tsr_close(c);
}

/* ---- derivatives -------------------------------------------------------- */

/* The library's gradient check on a random 4 x 6 density field in
 * [0.2, 0.95] (room for the steps inside [0, 1]): finite differences, then
 * Taylor remainder convergence, every derivative endpoint passes. */
Test(compliance, gradient_check_passes) {
    tsr_component *c = open_ok(COMPLIANCE, NULL);
    static grid_case gc;
    random_case(&gc, 4, 6, 0.2, 0.95, 5);
    tsr_array in[3] = {f64_mat(gc.rho, gc.ny, gc.nx), f64_scalar(&gc.penal),
                       f64_scalar(&gc.young_min)};
    for (int taylor = 0; taylor <= 1; taylor++) {
        tsr_gradcheck_options o = {.struct_size = sizeof o, .taylor = taylor, .seed = 3};
        tsr_gradcheck_report *r = NULL;
        tsr_error err = {0};
        int rc = tsr_gradcheck_run(c, in, &o, &r, &err);
        cr_assert_eq(rc, 0, "gradient check could not run: %s", err.message);
        const tsr_endpoint eps[] = {TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN};
        for (int k = 0; k < 3; k++) {
            const tsr_gradcheck_summary *s = tsr_gradcheck_summary_of(r, eps[k]);
            cr_assert(s->checked && s->checks > 0, "%s not checked", tsr_endpoint_name(eps[k]));
            cr_assert_eq(s->failures, 0, "%s (taylor %d): %lld of %lld failed, max rel %g",
                         tsr_endpoint_name(eps[k]), taylor, (long long)s->failures,
                         (long long)s->checks, s->max_rel_err);
        }
        cr_assert(tsr_gradcheck_passed(r));
        cr_assert_eq(tsr_gradcheck_is_taylor(r), taylor);
        tsr_gradcheck_report_free(r);
    }
    tsr_close(c);
}

/* A few entries of the vjp against central differences computed here;
 * the cotangent scales the vjp, and jvp(t) equals vjp(1) . t. */
Test(compliance, vjp_and_jvp_match_finite_differences) {
    tsr_component *c = open_ok(COMPLIANCE, NULL);
    static grid_case gc;
    random_case(&gc, 5, 8, 0.2, 0.95, 9);
    static double grad[MAX_ELEMENTS], scaled[MAX_ELEMENTS], tangent[MAX_ELEMENTS];
    plugin_vjp(c, &gc, 1.0, grad);
    /* The solve's rounding (about 1e-14 of the compliance) divided by 2h,
     * and the O(h^2) truncation, both stay near 1e-7 of the largest entry
     * with this step; small entries are compared on that scale. */
    double largest = 0.0;
    for (int64_t e = 0; e < gc.ny * gc.nx; e++) largest = fmax(largest, fabs(grad[e]));
    const int64_t entries[] = {0, 7, 19, 32, 39};
    for (int k = 0; k < 5; k++) {
        int64_t e = entries[k];
        double r0 = gc.rho[e], h = 1e-4;
        gc.rho[e] = r0 + h;
        double up = plugin_compliance(c, &gc);
        gc.rho[e] = r0 - h;
        double down = plugin_compliance(c, &gc);
        gc.rho[e] = r0;
        double fd = (up - down) / (2.0 * h);
        cr_assert(fabs(grad[e] - fd) <= 1e-6 * (fabs(fd) + largest),
                  "entry %lld: vjp %.12g, FD %.12g (largest entry %g)", (long long)e, grad[e], fd,
                  largest);
    }
    plugin_vjp(c, &gc, -2.5, scaled);
    for (int64_t e = 0; e < gc.ny * gc.nx; e++)
        assert_close(scaled[e], -2.5 * grad[e], 1e-14, "vjp with cotangent -2.5");
    fill_random(tangent, gc.ny * gc.nx, 21);
    double dot = 0.0, scale = 0.0;
    for (int64_t e = 0; e < gc.ny * gc.nx; e++) {
        dot += grad[e] * tangent[e];
        scale += fabs(grad[e] * tangent[e]);
    }
    double jvp = plugin_jvp(c, &gc, tangent);
    cr_assert(fabs(jvp - dot) <= 1e-12 * scale, "jvp %.17g, vjp . t %.17g", jvp, dot);
    tsr_close(c);
}

/* `tessera check-gradients --taylor` passes on the plugin, in process and
 * in a worker. */
Test(compliance, cli_taylor_check_passes) {
    static grid_case gc;
    random_case(&gc, 4, 6, 0.2, 0.95, 13);
    char payload[4096];
    int len = snprintf(payload, sizeof payload, "{\"inputs\": {\"rho\": [");
    for (int64_t i = 0; i < gc.ny; i++) {
        len += snprintf(payload + len, sizeof payload - (size_t)len, "%s[", i ? ", " : "");
        for (int64_t j = 0; j < gc.nx; j++)
            len += snprintf(payload + len, sizeof payload - (size_t)len, "%s%.17g", j ? ", " : "",
                            gc.rho[i * gc.nx + j]);
        len += snprintf(payload + len, sizeof payload - (size_t)len, "]");
    }
    snprintf(payload + len, sizeof payload - (size_t)len,
             "], \"penal\": 3, \"young_min\": 1e-9}}");
    const char *modes[] = {"inproc", "worker"};
    for (int m = 0; m < 2; m++) {
        cli_run r = run_cli(NULL, "check-gradients", "--taylor", "--mode", modes[m], COMPLIANCE,
                            payload);
        assert_ok(&r);
        assert_contains(r.out, "result: passed");
        assert_contains(r.out, "\nvjp ");
        assert_contains(r.out, "\njvp ");
        cr_assert_null(strstr(r.out, "not checked"), "%s: %s", modes[m], r.out);
        run_free(&r);
    }
}

/* ---- bad inputs --------------------------------------------------------- */

/* Run apply on gc, which must fail with `code` and a message containing
 * each of the needles. */
static void apply_fails(tsr_component *c, grid_case *gc, int code, const char *n1,
                        const char *n2) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_case(call, gc);
    const char *msg = run_fails(call, code);
    assert_contains(msg, n1);
    if (n2 != NULL) assert_contains(msg, n2);
    tsr_call_free(call);
}

/* Densities outside [0, 1] or not finite, penal < 1, young_min outside
 * (0, 1) and an empty grid are refused with the field, the position and
 * the cause, in process and in a worker; the component keeps working. */
Test(compliance, bad_values_are_refused_with_the_field_and_cause) {
    const char *modes[] = {"inproc", "worker"};
    for (int m = 0; m < 2; m++) {
        tsr_component *c = open_mode(modes[m]);
        static grid_case gc;
        uniform_case(&gc, 3, 4, 0.5);
        gc.rho[1 * 4 + 2] = NAN;
        apply_fails(c, &gc, TSR_E_PLUGIN, "rho[1][2] = nan", "finite number in [0, 1]");
        gc.rho[1 * 4 + 2] = INFINITY;
        apply_fails(c, &gc, TSR_E_PLUGIN, "rho[1][2] = inf", "finite number in [0, 1]");
        gc.rho[1 * 4 + 2] = 1.25;
        apply_fails(c, &gc, TSR_E_PLUGIN, "rho[1][2] = 1.25", "finite number in [0, 1]");
        gc.rho[1 * 4 + 2] = 0.5;
        gc.rho[2 * 4 + 3] = -0.01;
        apply_fails(c, &gc, TSR_E_PLUGIN, "rho[2][3] = -0.01", "in [0, 1]");
        gc.rho[2 * 4 + 3] = 0.5;

        gc.penal = 0.5;
        apply_fails(c, &gc, TSR_E_PLUGIN, "penal = 0.5", "must be a finite number >= 1");
        gc.penal = NAN;
        apply_fails(c, &gc, TSR_E_PLUGIN, "penal = nan", ">= 1");
        gc.penal = 3.0;
        gc.young_min = 0.0;
        apply_fails(c, &gc, TSR_E_PLUGIN, "young_min = 0", "strictly between 0 and 1");
        gc.young_min = 1.0;
        apply_fails(c, &gc, TSR_E_PLUGIN, "young_min = 1", "strictly between 0 and 1");
        gc.young_min = 1e-9;

        gc.ny = 0;
        apply_fails(c, &gc, TSR_E_PLUGIN, "rho", "at least 1 element in each direction");
        gc.ny = 3;

        /* Void of denormal stiffness: the solution is not finite, and the
         * plugin says so instead of returning NaN. */
        uniform_case(&gc, 3, 4, 0.0);
        gc.young_min = 1e-310;
        apply_fails(c, &gc, TSR_E_PLUGIN, "non-finite displacement", "raise young_min");
        uniform_case(&gc, 3, 4, 0.5);

        /* The same checks guard the derivative endpoints. */
        gc.rho[0] = 2.0;
        double one = 1.0;
        tsr_call *call = new_call(c, TSR_EP_VJP);
        bind_case(call, &gc);
        wrt_ok(call, rho_name, 1, compliance_name, 1);
        seed_ok(call, "compliance", f64_scalar(&one));
        assert_contains(run_fails(call, TSR_E_PLUGIN), "rho[0][0] = 2");
        tsr_call_free(call);
        gc.rho[0] = 0.5;

        cr_assert(plugin_compliance(c, &gc) > 0.0, "%s: the component must keep working",
                  modes[m]);
        tsr_close(c);
    }
}

/* Wrong rank, wrong dtype and a derivative w.r.t. penal are refused by the
 * host before the plugin runs. */
Test(compliance, wrong_shapes_and_dtypes_are_refused) {
    tsr_component *c = open_ok(COMPLIANCE, NULL);
    static grid_case gc;
    uniform_case(&gc, 3, 4, 0.5);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_case(call, &gc);
    assert_contains(bind_or_run_fails(call, "rho", f64_vec(gc.rho, 12), TSR_E_SHAPE), "rho");
    tsr_call_free(call);

    call = new_call(c, TSR_EP_APPLY);
    bind_case(call, &gc);
    int64_t shape[2] = {3, 2};
    assert_contains(bind_or_run_fails(call, "rho", make_array(gc.rho, TSR_COMPLEX128, 2, shape),
                                      TSR_E_DTYPE),
                    "rho");
    tsr_call_free(call);

    call = new_call(c, TSR_EP_APPLY);
    bind_case(call, &gc);
    int64_t two = 2;
    assert_contains(bind_or_run_fails(call, "penal", f64_vec(gc.rho, two), TSR_E_SHAPE), "penal");
    tsr_call_free(call);

    call = new_call(c, TSR_EP_VJP);
    const char *penal[] = {"penal"};
    int rc = tsr_call_set_wrt(call, penal, 1, compliance_name, 1);
    if (rc == 0) {
        bind_case(call, &gc);
        rc = tsr_call_run(call);
    }
    expect_failure(call, rc, TSR_E_NOT_DIFFERENTIABLE);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- modes and threads -------------------------------------------------- */

/* In a worker the plugin gives the same compliance and gradient, bit for
 * bit, as in process. */
Test(compliance, worker_mode_gives_the_same_results) {
    tsr_component *worker = open_mode("worker");
    tsr_component *inproc = open_ok(COMPLIANCE, NULL);
    cr_assert_eq(tsr_component_mode(worker), TSR_MODE_WORKER);
    static grid_case gc;
    random_case(&gc, 6, 10, 0.1, 1.0, 31);
    cr_assert_eq(plugin_compliance(worker, &gc), plugin_compliance(inproc, &gc));
    static double gw[MAX_ELEMENTS], gi[MAX_ELEMENTS];
    plugin_vjp(worker, &gc, 1.0, gw);
    plugin_vjp(inproc, &gc, 1.0, gi);
    cr_assert(memcmp(gw, gi, sizeof gw) == 0, "gradient differs");
    tsr_close(worker);
    tsr_close(inproc);
}

#define N_THREADS 4
#define N_SIZES 6 /* more grid sizes than the analysis cache keeps */
static const int64_t thread_sizes[N_SIZES][2] = {{4, 8}, {5, 10}, {6, 12}, {7, 9}, {8, 16}, {3, 5}};

typedef struct thread_work {
    tsr_component *c;
    int first;
    double got[N_SIZES * 3];
    int ok;
} thread_work;

/* Calls from a thread must not use cr_assert (it longjmps out of the main
 * thread only): failures are recorded and checked afterwards. */
static void *thread_main(void *arg) {
    thread_work *w = arg;
    grid_case gc;
    w->ok = 1;
    for (int k = 0; k < N_SIZES * 3; k++) {
        int s = (w->first + k) % N_SIZES;
        uniform_case(&gc, thread_sizes[s][0], thread_sizes[s][1], 0.7);
        tsr_call *call = tsr_call_new(w->c, TSR_EP_APPLY);
        tsr_array in[3] = {f64_mat(gc.rho, gc.ny, gc.nx), f64_scalar(&gc.penal),
                           f64_scalar(&gc.young_min)};
        if (call == NULL || tsr_call_set_input_at(call, 0, &in[0]) != 0 ||
            tsr_call_set_input_at(call, 1, &in[1]) != 0 ||
            tsr_call_set_input_at(call, 2, &in[2]) != 0 || tsr_call_run(call) != 0) {
            w->ok = 0;
        } else {
            w->got[s + N_SIZES * (k / N_SIZES)] =
                *(const double *)tsr_call_output(call, "compliance")->data;
        }
        tsr_call_free(call);
    }
    return NULL;
}

/* Concurrent calls on one component, cycling through more grid sizes than
 * the cache holds, give the values of sequential calls. */
Test(compliance, concurrent_calls_agree_with_sequential_ones) {
    tsr_component *c = open_ok(COMPLIANCE, NULL);
    double want[N_SIZES];
    static grid_case gc;
    for (int s = 0; s < N_SIZES; s++) {
        uniform_case(&gc, thread_sizes[s][0], thread_sizes[s][1], 0.7);
        want[s] = plugin_compliance(c, &gc);
    }
    static thread_work w[N_THREADS];
    pthread_t t[N_THREADS];
    for (int k = 0; k < N_THREADS; k++) {
        w[k] = (thread_work){.c = c, .first = k};
        cr_assert_eq(pthread_create(&t[k], NULL, thread_main, &w[k]), 0);
    }
    for (int k = 0; k < N_THREADS; k++) cr_assert_eq(pthread_join(t[k], NULL), 0);
    for (int k = 0; k < N_THREADS; k++) {
        cr_assert(w[k].ok, "thread %d: a call failed", k);
        for (int j = 0; j < N_SIZES * 3; j++)
            assert_close(w[k].got[j], want[j % N_SIZES], 1e-12, "concurrent call");
    }
    tsr_close(c);
}
