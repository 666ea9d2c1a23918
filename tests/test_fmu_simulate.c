/* SPDX-License-Identifier: MIT */
/* The '#simulate' form of a Model Exchange FMU through the public API: the
 * project's vanderpol FMU integrated by the library (CVODES) in every
 * mode, against a fine fixed-step RK4 integration of the same ODE and of
 * its variational equations (the forward sensitivities, independently of
 * the FMU's derivatives), and the jacobian's blocks the same way; the x
 * field's two dims; jvp and vjp agreeing with each other (w . J v both
 * ways); cancellation; and the refusals: a
 * grid that is not increasing, a non-finite x0, a step budget the
 * integration exceeds, a bad config. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "tessera/tessera.h"
#include "worker_util.h"

#define VDP TSR_BINARY_DIR "/fmu/vanderpol.fmu#simulate"
#define N 9       /* grid points: 0, 0.25, ..., 2 */
#define RK_STEPS 400 /* RK4 steps per grid interval */

static double at(const tsr_array *a, int64_t k) { return ((const double *)a->data)[k]; }

/* z = (x0, x1, s0, s1): the states and one sensitivity along (v, dmu). */
static void vdp_field(const double *z, double mu, double dmu, double *dz) {
    double x0 = z[0], x1 = z[1], s0 = z[2], s1 = z[3];
    dz[0] = x1;
    dz[1] = mu * (1 - x0 * x0) * x1 - x0;
    dz[2] = s1;
    dz[3] = (-2 * mu * x0 * x1 - 1) * s0 + mu * (1 - x0 * x0) * s1 + (1 - x0 * x0) * x1 * dmu;
}

/* The states and the sensitivity at each grid point, RK4. */
static void reference(const double *x0, double mu, const double *v, double dmu, double h,
                      double out[N][4]) {
    double z[4] = {x0[0], x0[1], v[0], v[1]}, k[4][4], y[4];
    double dt = h / RK_STEPS;
    memcpy(out[0], z, sizeof z);
    for (int g = 1; g < N; g++) {
        for (int s = 0; s < RK_STEPS; s++) {
            vdp_field(z, mu, dmu, k[0]);
            for (int i = 0; i < 4; i++) y[i] = z[i] + 0.5 * dt * k[0][i];
            vdp_field(y, mu, dmu, k[1]);
            for (int i = 0; i < 4; i++) y[i] = z[i] + 0.5 * dt * k[1][i];
            vdp_field(y, mu, dmu, k[2]);
            for (int i = 0; i < 4; i++) y[i] = z[i] + dt * k[2][i];
            vdp_field(y, mu, dmu, k[3]);
            for (int i = 0; i < 4; i++)
                z[i] += dt / 6 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
        }
        memcpy(out[g], z, sizeof z);
    }
}

static tsr_component *open_tight(tsr_mode mode) {
    tsr_options *o = mode_options(mode);
    set_config(o, "rtol", "1e-10");
    tsr_component *c = open_ok(VDP, o);
    tsr_options_free(o);
    return c;
}

static double grid[N];

static void make_grid(void) {
    for (int k = 0; k < N; k++) grid[k] = 0.25 * k;
}

static void check_trajectory_and_jvp(tsr_mode mode) {
    make_grid();
    tsr_component *c = open_tight(mode);
    double x0[2] = {1.2, -0.3}, mu = 1.3, v[2] = {0.7, -0.4}, dmu = 0.9, want[N][4];
    reference(x0, mu, v, dmu, 0.25, want);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_vec(grid, N));
    bind_ok(call, "x0", f64_vec(x0, 2));
    bind_ok(call, "mu", f64_scalar(&mu));
    run_ok(call);
    const tsr_array *x = tsr_call_output(call, "x"), *y = tsr_call_output(call, "y");
    cr_assert_eq(x->rank, 2);
    cr_assert(x->shape[0] == N && x->shape[1] == 2);
    for (int k = 0; k < N; k++) {
        for (int i = 0; i < 2; i++)
            cr_assert(fabs(at(x, 2 * k + i) - want[k][i]) < 1e-7, "%s: x[%d,%d] = %.12g, RK4 %.12g",
                      mode_names[mode], k, i, at(x, 2 * k + i), want[k][i]);
        cr_assert_eq(at(y, k), at(x, 2 * k), "y = x0 at t[%d]", k);
    }
    tsr_call_free(call);

    const char *in[] = {"x0", "mu"}, *out[] = {"x", "y"};
    call = new_call(c, TSR_EP_JVP);
    bind_ok(call, "t", f64_vec(grid, N));
    bind_ok(call, "x0", f64_vec(x0, 2));
    bind_ok(call, "mu", f64_scalar(&mu));
    wrt_ok(call, in, 2, out, 2);
    seed_ok(call, "x0", f64_vec(v, 2));
    seed_ok(call, "mu", f64_scalar(&dmu));
    run_ok(call);
    const tsr_array *jx = tsr_call_result(call, 0), *jy = tsr_call_result(call, 1);
    for (int k = 0; k < N; k++) {
        for (int i = 0; i < 2; i++)
            cr_assert(fabs(at(jx, 2 * k + i) - want[k][2 + i]) < 1e-6,
                      "%s: jvp x[%d,%d] = %.12g, the variational equations' %.12g",
                      mode_names[mode], k, i, at(jx, 2 * k + i), want[k][2 + i]);
        cr_assert_eq(at(jy, k), at(jx, 2 * k), "jvp of y = jvp of x0 at t[%d]", k);
    }
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_simulate, trajectory_and_jvp_match_rk4_and_the_variational_equations_inproc) {
    check_trajectory_and_jvp(TSR_MODE_INPROC);
}
Test(fmu_simulate, trajectory_and_jvp_match_rk4_and_the_variational_equations_isolated) {
    check_trajectory_and_jvp(TSR_MODE_ISOLATED);
}
Test(fmu_simulate, trajectory_and_jvp_match_rk4_and_the_variational_equations_in_a_worker) {
    check_trajectory_and_jvp(TSR_MODE_WORKER);
}

static void check_jacobian(tsr_mode mode) {
    make_grid();
    tsr_component *c = open_tight(mode);
    double x0[2] = {1.2, -0.3}, mu = 1.3;
    const char *in[] = {"x0", "mu"}, *out[] = {"x", "y"};
    tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
    bind_ok(call, "t", f64_vec(grid, N));
    bind_ok(call, "x0", f64_vec(x0, 2));
    bind_ok(call, "mu", f64_scalar(&mu));
    wrt_ok(call, in, 2, out, 2);
    run_ok(call);
    /* results[o * 2 + i]: x/x0 (N, 2, 2), x/mu (N, 2), y/x0 (N, 2), y/mu (N) */
    const tsr_array *xx0 = tsr_call_result(call, 0), *xmu = tsr_call_result(call, 1);
    const tsr_array *yx0 = tsr_call_result(call, 2), *ymu = tsr_call_result(call, 3);
    cr_assert(xx0->rank == 3 && xx0->shape[0] == N && xx0->shape[1] == 2 && xx0->shape[2] == 2);
    cr_assert(xmu->rank == 2 && ymu->rank == 1 && yx0->rank == 2);
    double want[3][N][4];
    double e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int col = 0; col < 3; col++) reference(x0, mu, e[col], e[col][2], 0.25, want[col]);
    for (int k = 0; k < N; k++) {
        for (int row = 0; row < 2; row++) {
            for (int col = 0; col < 2; col++)
                cr_assert(fabs(at(xx0, (k * 2 + row) * 2 + col) - want[col][k][2 + row]) < 1e-6,
                          "%s: d x[%d,%d] / d x0[%d] = %.12g, want %.12g", mode_names[mode], k,
                          row, col, at(xx0, (k * 2 + row) * 2 + col), want[col][k][2 + row]);
            cr_assert(fabs(at(xmu, k * 2 + row) - want[2][k][2 + row]) < 1e-6,
                      "%s: d x[%d,%d] / d mu = %.12g, want %.12g", mode_names[mode], k, row,
                      at(xmu, k * 2 + row), want[2][k][2 + row]);
        }
        for (int col = 0; col < 2; col++)
            cr_assert_eq(at(yx0, k * 2 + col), at(xx0, (k * 2) * 2 + col), "y = x0");
        cr_assert_eq(at(ymu, k), at(xmu, k * 2), "y = x0");
    }
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_simulate, jacobian_matches_the_variational_equations_inproc) {
    check_jacobian(TSR_MODE_INPROC);
}
Test(fmu_simulate, jacobian_matches_the_variational_equations_in_a_worker) {
    check_jacobian(TSR_MODE_WORKER);
}

Test(fmu_simulate, vjp_is_the_transpose_of_jvp) {
    make_grid();
    tsr_component *c = open_tight(TSR_MODE_INPROC);
    double x0[2] = {1.2, -0.3}, mu = 1.3, v[2] = {0.7, -0.4}, dmu = 0.9;
    double wx[2 * N], wy[N];
    fill_random(wx, 2 * N, 11);
    fill_random(wy, N, 12);
    const char *in[] = {"x0", "mu"}, *out[] = {"x", "y"};
    tsr_call *jvp = new_call(c, TSR_EP_JVP), *vjp = new_call(c, TSR_EP_VJP);
    tsr_call *calls[2] = {jvp, vjp};
    for (int k = 0; k < 2; k++) {
        bind_ok(calls[k], "t", f64_vec(grid, N));
        bind_ok(calls[k], "x0", f64_vec(x0, 2));
        bind_ok(calls[k], "mu", f64_scalar(&mu));
        wrt_ok(calls[k], in, 2, out, 2);
    }
    seed_ok(jvp, "x0", f64_vec(v, 2));
    seed_ok(jvp, "mu", f64_scalar(&dmu));
    seed_ok(vjp, "x", f64_mat(wx, N, 2));
    seed_ok(vjp, "y", f64_vec(wy, N));
    run_ok(jvp);
    run_ok(vjp);
    const tsr_array *jx = tsr_call_result(jvp, 0), *jy = tsr_call_result(jvp, 1);
    const tsr_array *gx = tsr_call_result(vjp, 0), *gmu = tsr_call_result(vjp, 1);
    double left = 0, right = v[0] * at(gx, 0) + v[1] * at(gx, 1) + dmu * at(gmu, 0);
    for (int k = 0; k < 2 * N; k++) left += wx[k] * at(jx, k);
    for (int k = 0; k < N; k++) left += wy[k] * at(jy, k);
    cr_assert(fabs(left - right) < 1e-9 * (1 + fabs(left)), "w.(J v) = %.15g, (J^T w).v = %.15g",
              left, right);
    /* run again: the vjp zeroes what it accumulates */
    run_ok(vjp);
    cr_assert_float_eq(v[0] * at(gx, 0) + v[1] * at(gx, 1) + dmu * at(gmu, 0), right, 1e-12);
    tsr_call_free(jvp);
    tsr_call_free(vjp);
    tsr_close(c);
}

Test(fmu_simulate, x_is_n_by_the_number_of_states_and_x0_defaults_to_the_starts) {
    tsr_component *c = open_ok(VDP, NULL);
    const tsr_field *x = tsr_component_output(c, 0);
    cr_assert_str_eq(x->name, "x");
    cr_assert_eq(x->rank, 2);
    cr_assert_str_eq(x->dims[0].symbol, "n");
    cr_assert_eq(x->dims[1].size, 2);
    cr_assert(x->flags & TSR_FIELD_DIFFERENTIABLE);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    run_ok(call); /* the default grid: DefaultExperiment's 0 .. 20 in 100 steps */
    const tsr_array *traj = tsr_call_output(call, "x");
    cr_assert_eq(traj->shape[0], 101);
    cr_assert(at(traj, 0) == 2.0 && at(traj, 1) == 0.0);
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_simulate, the_default_form_without_cosimulation_is_simulate) {
    tsr_component *c = open_ok(TSR_BINARY_DIR "/fmu/vanderpol.fmu", NULL);
    cr_assert_str_eq(tsr_component_output(c, 0)->name, "x");
    tsr_close(c);
}

Test(fmu_simulate, a_grid_that_does_not_increase_is_refused_naming_t) {
    tsr_component *c = open_ok(VDP, NULL);
    double t[3] = {0.0, 1.0, 1.0};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_vec(t, 3));
    const char *msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "input 't': the grid is not strictly increasing at t[2]");
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_simulate, a_non_finite_x0_is_refused_naming_the_state) {
    tsr_component *c = open_ok(VDP, NULL);
    double x0[2] = {1.0, NAN}, v[2] = {1.0, 0.0};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x0", f64_vec(x0, 2));
    assert_contains(run_fails(call, TSR_E_PLUGIN), "input 'x0': x0[1] (state 'x1') is not finite");
    tsr_call_free(call);
    const char *in[] = {"x0"}, *out[] = {"x"};
    call = new_call(c, TSR_EP_JVP);
    bind_ok(call, "x0", f64_vec(x0, 2));
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "x0", f64_vec(v, 2));
    assert_contains(run_fails(call, TSR_E_PLUGIN), "input 'x0'");
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_simulate, a_step_budget_exceeded_names_cvodes_flag_and_the_time_reached) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_config(o, "max_steps", "50");
    tsr_component *c = open_ok(VDP, o);
    tsr_options_free(o);
    double t[2] = {0.0, 3000.0}, mu = 1e4;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_vec(t, 2));
    bind_ok(call, "mu", f64_scalar(&mu));
    const char *msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "CVode failed with CV_TOO_MUCH_WORK");
    assert_contains(msg, "integrating from t[0] = 0 to t[1] = 3000");
    assert_contains(msg, "more than 50 steps in one interval");
    tsr_call_free(call);
    /* the next call starts again from a reset instance */
    call = new_call(c, TSR_EP_APPLY);
    double t2[2] = {0.0, 1.0};
    bind_ok(call, "t", f64_vec(t2, 2));
    run_ok(call);
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_simulate, a_bad_config_is_refused_at_open_naming_the_key) {
    const char *keys[] = {"rtol", "rtol", "max_steps", "max_steps"};
    const char *values[] = {"x", "1.5", "0", "2.5"};
    for (int k = 0; k < 4; k++) {
        tsr_options *o = tsr_options_new();
        set_config(o, keys[k], values[k]);
        tsr_error err = open_fails(VDP, o);
        assert_contains(err.message, keys[k]);
        tsr_options_free(o);
    }
}

static int cancel_now(void *user) {
    (*(int *)user)++;
    return 1;
}

Test(fmu_simulate, a_cancelled_simulation_stops_at_its_next_poll_and_the_next_runs) {
    tsr_component *c = open_ok(VDP, NULL);
    enum { LONG = 200001 };
    double *t = malloc(LONG * sizeof *t);
    cr_assert_not_null(t);
    for (int k = 0; k < LONG; k++) t[k] = 0.1 * k;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_vec(t, LONG));
    int checks = 0;
    cr_assert_eq(tsr_call_set_cancel_check(call, cancel_now, &checks, 1), 0);
    const char *msg = run_fails(call, TSR_E_CANCELLED);
    assert_contains(msg, "the plugin failed: cancelled");
    cr_assert(checks >= 1, "the simulation never polled for cancellation");
    tsr_call_free(call);
    make_grid();
    call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_vec(grid, N));
    run_ok(call);
    tsr_call_free(call);
    free(t);
    tsr_close(c);
}
