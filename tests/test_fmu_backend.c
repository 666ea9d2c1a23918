/* SPDX-License-Identifier: MIT */
/* FMUs opened as components through the public API: the project's own
 * FMUs (plugins/fmu, packed by the build) in every mode, their forms'
 * schemas and values against closed forms, derivatives against the
 * exact ones, and what an importer must refuse or survive: a wrong
 * token, a missing platform binary, an unknown form, errors, Fatal, a
 * crash and a hang (in a worker), a second instance of a once-only FMU. */
#define _GNU_SOURCE /* nftw (temp_dir.h) */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "tessera/tessera.h"
#include "temp_dir.h"
#include "worker_util.h"

#define FMU(name) TSR_BINARY_DIR "/fmu/" name ".fmu"

static double at(const tsr_array *a, int64_t k) { return ((const double *)a->data)[k]; }

/* ---- Co-Simulation: the damped spring ---------------------------------- */

/* m x'' + c x' + k x = 0 from (1, 0), underdamped, in closed form. */
static double spring_x(double t, double k, double c, double m) {
    double w0 = sqrt(k / m), zeta = c / (2.0 * sqrt(k * m)), wd = w0 * sqrt(1 - zeta * zeta);
    return exp(-zeta * w0 * t) * (cos(wd * t) + zeta * w0 / wd * sin(wd * t));
}

static void check_spring(tsr_mode mode) {
    tsr_component *c = open_mode(FMU("spring"), mode);
    double t[51], k = 4.0, damping = 0.4, mass = 1.0, x0 = 1.0, v0 = 0.0;
    for (int i = 0; i < 51; i++) t[i] = 0.1 * i;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_vec(t, 51));
    bind_ok(call, "k", f64_scalar(&k));
    bind_ok(call, "c", f64_scalar(&damping));
    bind_ok(call, "m", f64_scalar(&mass));
    bind_ok(call, "x0", f64_scalar(&x0));
    bind_ok(call, "v0", f64_scalar(&v0));
    run_ok(call);
    const tsr_array *x = tsr_call_output(call, "x");
    cr_assert_not_null(x);
    cr_assert_eq(x->shape[0], 51);
    for (int i = 0; i < 51; i++)
        cr_assert(fabs(at(x, i) - spring_x(t[i], k, damping, mass)) < 1e-6,
                  "%s: x(%g) = %.10g, the closed form %.10g", mode_names[mode], t[i], at(x, i),
                  spring_x(t[i], k, damping, mass));
    /* a second simulation starts again from the reset instance */
    run_ok(call);
    cr_assert(fabs(at(tsr_call_output(call, "x"), 50) - spring_x(5.0, k, damping, mass)) < 1e-6);
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_cosim, spring_trajectory_matches_the_closed_form_inproc) { check_spring(TSR_MODE_INPROC); }
Test(fmu_cosim, spring_trajectory_matches_the_closed_form_isolated) {
    check_spring(TSR_MODE_ISOLATED);
}
Test(fmu_cosim, spring_trajectory_matches_the_closed_form_in_a_worker) {
    check_spring(TSR_MODE_WORKER);
}

Test(fmu_cosim, defaults_come_from_the_description_and_a_held_input_moves_the_mass) {
    tsr_component *c = open_ok(FMU("spring"), NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    run_ok(call); /* t from DefaultExperiment, parameters at their start values */
    const tsr_array *x = tsr_call_output(call, "x");
    cr_assert_gt(x->shape[0], 2);
    cr_assert_float_eq(at(x, 0), 1.0, 1e-12, "x starts at its start value");
    tsr_call_free(call);
    /* a constant force F shifts the rest position to F/k */
    double t[201], force[201], k = 4.0, damping = 4.0, x0 = 0.0;
    for (int i = 0; i < 201; i++) {
        t[i] = 0.1 * i;
        force[i] = 2.0;
    }
    call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_vec(t, 201));
    bind_ok(call, "F", f64_vec(force, 201));
    bind_ok(call, "k", f64_scalar(&k));
    bind_ok(call, "c", f64_scalar(&damping));
    bind_ok(call, "x0", f64_scalar(&x0));
    run_ok(call);
    cr_assert(fabs(at(tsr_call_output(call, "x"), 200) - 0.5) < 1e-4);
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_cosim, gradients_come_from_central_differences_of_whole_simulations) {
    tsr_component *c = open_ok(FMU("spring"), NULL);
    double t[11], k = 4.0, damping = 0.4, mass = 1.0, x0 = 1.0, v0 = 0.0, tangent = 1.0;
    for (int i = 0; i < 11; i++) t[i] = 0.1 * i;
    tsr_call *call = new_call(c, TSR_EP_JVP);
    bind_ok(call, "t", f64_vec(t, 11));
    bind_ok(call, "k", f64_scalar(&k));
    bind_ok(call, "c", f64_scalar(&damping));
    bind_ok(call, "m", f64_scalar(&mass));
    bind_ok(call, "x0", f64_scalar(&x0));
    bind_ok(call, "v0", f64_scalar(&v0));
    const char *in[] = {"k"}, *out[] = {"x"};
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "k", f64_scalar(&tangent));
    run_ok(call);
    const tsr_array *dx = tsr_call_result(call, 0);
    double h = 1e-5;
    double want = (spring_x(1.0, k + h, damping, mass) - spring_x(1.0, k - h, damping, mass)) /
                  (2 * h);
    cr_assert(fabs(at(dx, 10) - want) < 1e-4 * fabs(want) + 1e-7, "dx(1)/dk = %.10g, want %.10g",
              at(dx, 10), want);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- Model Exchange: the Van der Pol right-hand side ------------------- */

#define VDP_RHS FMU("vanderpol") "#rhs"

static void vdp(const double *x, double mu, double *dx) {
    dx[0] = x[1];
    dx[1] = mu * (1 - x[0] * x[0]) * x[1] - x[0];
}

static void check_rhs(tsr_mode mode) {
    tsr_component *c = open_mode(VDP_RHS, mode);
    double x[2] = {0.7, -1.3}, mu = 2.5, t = 0.25, want[2];
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_scalar(&t));
    bind_ok(call, "x", f64_vec(x, 2));
    bind_ok(call, "mu", f64_scalar(&mu));
    for (int round = 0; round < 3; round++) {
        mu = 2.5 + round; /* a tunable parameter changed between calls */
        run_ok(call);
        vdp(x, mu, want);
        const tsr_array *dx = tsr_call_output(call, "dx");
        cr_assert_float_eq(at(dx, 0), want[0], 1e-14);
        cr_assert_float_eq(at(dx, 1), want[1], 1e-12, "%s: mu %g", mode_names[mode], mu);
        cr_assert_float_eq(at(tsr_call_output(call, "y"), 0), x[0], 1e-14);
    }
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_rhs, vanderpol_right_hand_side_is_exact_inproc) { check_rhs(TSR_MODE_INPROC); }
Test(fmu_rhs, vanderpol_right_hand_side_is_exact_isolated) { check_rhs(TSR_MODE_ISOLATED); }
Test(fmu_rhs, vanderpol_right_hand_side_is_exact_in_a_worker) { check_rhs(TSR_MODE_WORKER); }

/* J = d(dx)/d(x, mu) at (x, mu), exact. */
static void vdp_jacobian(const double *x, double mu, double j[2][3]) {
    j[0][0] = 0, j[0][1] = 1, j[0][2] = 0;
    j[1][0] = -2 * mu * x[0] * x[1] - 1;
    j[1][1] = mu * (1 - x[0] * x[0]);
    j[1][2] = (1 - x[0] * x[0]) * x[1];
}

static void check_rhs_derivatives(const char *path, tsr_mode mode, double tol) {
    tsr_component *c = open_mode(path, mode);
    double x[2] = {0.7, -1.3}, mu = 1.5, j[2][3];
    vdp_jacobian(x, mu, j);
    const char *in[] = {"x", "mu"}, *out[] = {"dx"};
    /* jvp along (tx, tmu) */
    double tx[2] = {0.3, -0.8}, tmu = 0.5;
    tsr_call *call = new_call(c, TSR_EP_JVP);
    bind_ok(call, "x", f64_vec(x, 2));
    bind_ok(call, "mu", f64_scalar(&mu));
    wrt_ok(call, in, 2, out, 1);
    seed_ok(call, "x", f64_vec(tx, 2));
    seed_ok(call, "mu", f64_scalar(&tmu));
    run_ok(call);
    const tsr_array *r = tsr_call_result(call, 0);
    for (int i = 0; i < 2; i++)
        cr_assert_float_eq(at(r, i), j[i][0] * tx[0] + j[i][1] * tx[1] + j[i][2] * tmu, tol,
                           "%s %s jvp[%d]", path, mode_names[mode], i);
    tsr_call_free(call);
    /* vjp with cotangent w */
    double w[2] = {0.9, 0.4};
    call = new_call(c, TSR_EP_VJP);
    bind_ok(call, "x", f64_vec(x, 2));
    bind_ok(call, "mu", f64_scalar(&mu));
    wrt_ok(call, in, 2, out, 1);
    seed_ok(call, "dx", f64_vec(w, 2));
    run_ok(call);
    const tsr_array *gx = tsr_call_result(call, 0), *gmu = tsr_call_result(call, 1);
    for (int k = 0; k < 2; k++)
        cr_assert_float_eq(at(gx, k), w[0] * j[0][k] + w[1] * j[1][k], tol, "%s vjp x[%d]", path,
                           k);
    cr_assert_float_eq(at(gmu, 0), w[0] * j[0][2] + w[1] * j[1][2], tol, "%s vjp mu", path);
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_rhs, jvp_and_vjp_are_the_fmus_exact_derivatives_inproc) {
    check_rhs_derivatives(VDP_RHS, TSR_MODE_INPROC, 1e-12);
}
Test(fmu_rhs, jvp_and_vjp_are_the_fmus_exact_derivatives_in_a_worker) {
    check_rhs_derivatives(VDP_RHS, TSR_MODE_WORKER, 1e-12);
}

/* The same binary under descriptions that claim less of it. */
Test(fmu_rhs, without_adjoint_derivatives_the_vjp_comes_from_unit_directional_seeds) {
    const char *path = FMU("vanderpol_directional") "#rhs";
    tsr_component *c = open_ok(path, NULL);
    cr_assert(tsr_component_has_endpoint(c, TSR_EP_VJP));
    tsr_close(c);
    check_rhs_derivatives(path, TSR_MODE_INPROC, 1e-12);
    check_rhs_derivatives(path, TSR_MODE_WORKER, 1e-12);
}

Test(fmu_rhs, without_any_derivatives_jvp_and_vjp_are_central_differences) {
    const char *path = FMU("vanderpol_plain") "#rhs";
    tsr_component *c = open_ok(path, NULL);
    cr_assert_eq(tsr_component_fd_method(c), TSR_FD_CENTRAL);
    tsr_close(c);
    check_rhs_derivatives(path, TSR_MODE_INPROC, 1e-7);
}

Test(fmu_rhs, schema_names_the_states_and_defaults_to_their_start_values) {
    tsr_component *c = open_ok(VDP_RHS, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    run_ok(call); /* x = (2, 0), mu = 1 */
    const tsr_array *dx = tsr_call_output(call, "dx");
    cr_assert_float_eq(at(dx, 0), 0.0, 1e-15);
    cr_assert_float_eq(at(dx, 1), -2.0, 1e-15);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- what is refused, and what is survived ----------------------------- */

Test(fmu_errors, a_wrong_instantiation_token_is_refused_with_the_fmus_reason) {
    tsr_error err = open_fails(FMU("wrongtoken") "#rhs", NULL);
    assert_contains(err.message, "wrongtoken.fmu");
    assert_contains(err.message, "fmi3InstantiateModelExchange returned no instance");
}

Test(fmu_errors, an_fmu_without_a_binary_for_this_platform_names_the_ones_it_has) {
    tsr_error err = open_fails(FMU("noplatform"), NULL);
    assert_contains(err.message, "no binary for this platform");
    assert_contains(err.message, "aarch64-linux");
}

Test(fmu_errors, unknown_and_missing_forms_are_refused) {
    tsr_error err = open_fails(FMU("spring") "#trajectory", NULL);
    assert_contains(err.message, "'#trajectory' names no form");
    err = open_fails(FMU("spring") "#rhs", NULL);
    assert_contains(err.message, "no Model Exchange interface");
    err = open_fails(FMU("vanderpol") "#cosim", NULL);
    assert_contains(err.message, "no Co-Simulation interface");
}

Test(fmu_errors, a_file_that_is_not_a_zip_is_refused_naming_it) {
    char dir[256];
    temp_path(dir, sizeof dir);
    char path[300];
    snprintf(path, sizeof path, "%s.fmu", dir);
    write_file(path, "not a zip archive at all");
    tsr_error err = open_fails(path, NULL);
    assert_contains(err.message, path);
    unlink(path);
}

static tsr_call *faulty_call(tsr_component *c, double *fault, double *t, int n) {
    for (int i = 0; i < n; i++) t[i] = 0.1 * i;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_vec(t, n));
    bind_ok(call, "fault", f64_scalar(fault));
    return call;
}

Test(fmu_errors, an_error_status_fails_the_call_with_the_fmus_message_and_the_next_call_runs) {
    tsr_component *c = open_ok(FMU("faulty"), NULL);
    double t[5], fault = 1.0;
    tsr_call *call = faulty_call(c, &fault, t, 5);
    const char *msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "fmi3DoStep returned Error");
    fault = 5.0;
    msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "fmi3ExitInitializationMode returned Error");
    fault = 0.0;
    run_ok(call);
    cr_assert_float_eq(at(tsr_call_output(call, "y"), 4), 0.4, 1e-9);
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_errors, after_fatal_the_instance_is_never_called_again) {
    tsr_component *c = open_ok(FMU("faulty"), NULL);
    double t[5], fault = 2.0;
    tsr_call *call = faulty_call(c, &fault, t, 5);
    assert_contains(run_fails(call, TSR_E_PLUGIN), "returned Fatal");
    fault = 0.0;
    assert_contains(run_fails(call, TSR_E_PLUGIN), "returned Fatal before");
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_errors, a_crashing_fmu_in_a_worker_leaves_the_host_alive) {
    tsr_component *c = open_mode(FMU("faulty"), TSR_MODE_WORKER);
    double t[5], fault = 3.0;
    tsr_call *call = faulty_call(c, &fault, t, 5);
    run_fails(call, TSR_E_WORKER);
    tsr_call_free(call);
    tsr_close(c);
}

Test(fmu_errors, a_hanging_fmu_in_a_worker_times_out) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "timeout_ms", "300");
    tsr_component *c = open_ok(FMU("faulty"), o);
    tsr_options_free(o);
    double t[5], fault = 4.0;
    tsr_call *call = faulty_call(c, &fault, t, 5);
    run_fails(call, TSR_E_TIMEOUT);
    tsr_call_free(call);
    tsr_close(c);
}

/* The unpacked folder: both opens load the same file, so without a
 * namespace of its own the second would share the first's globals. */
#define ONCE_DIR TSR_BINARY_DIR "/fmu/once"

static void run_once(tsr_component *c) {
    double t[3] = {0, 1, 2};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "t", f64_vec(t, 3));
    run_ok(call);
    tsr_call_free(call);
}

Test(fmu_once, a_second_instance_in_process_goes_to_a_namespace_of_its_own) {
    tsr_component *a = open_ok(ONCE_DIR, NULL);
    tsr_component *b = open_ok(ONCE_DIR, NULL);
    run_once(a);
    run_once(b);
    tsr_close(b);
    tsr_close(a);
    /* the claim is given back: the next one loads in this namespace again */
    tsr_component *c = open_ok(ONCE_DIR, NULL);
    run_once(c);
    tsr_close(c);
}

Test(fmu_once, a_pool_of_workers_holds_one_instance_each) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "workers", "2");
    tsr_component *c = open_ok(FMU("once"), o);
    tsr_options_free(o);
    run_once(c);
    run_once(c);
    tsr_close(c);
}

/* ---- scratch folders ---------------------------------------------------- */

static unsigned long long start_time_of(pid_t pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    const char *p = strrchr(buf, ')');
    cr_assert_not_null(p);
    unsigned long long start = 0;
    /* fields 3.. after the name; the start time is field 22 */
    cr_assert_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                                "%*d %*d %*d %llu",
                        &start),
                 1);
    return start;
}

static int folder_exists(const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

Test(fmu_scratch, folders_of_dead_processes_are_removed_and_live_ones_kept) {
    char tmp[256];
    make_temp_dir(tmp, sizeof tmp, "tessera-scratch");
    cr_assert_eq(setenv("TMPDIR", tmp, 1), 0);
    pid_t dead = fork();
    cr_assert_geq(dead, 0);
    if (dead == 0) _exit(0);
    cr_assert_eq(waitpid(dead, NULL, 0), dead);
    pid_t live = getppid();
    char orphan[128], reused[128], alive[128], path[512];
    snprintf(orphan, sizeof orphan, "tessera-fmu-%d-12345-abcDEF", (int)dead);
    /* a live pid whose start time differs: the pid was reused */
    snprintf(reused, sizeof reused, "tessera-fmu-%d-%llu-ghiJKL", (int)live,
             start_time_of(live) + 1);
    snprintf(alive, sizeof alive, "tessera-fmu-%d-%llu-mnoPQR", (int)live, start_time_of(live));
    const char *names[] = {orphan, reused, alive};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, names[i]);
        cr_assert_eq(mkdir(path, 0700), 0);
        snprintf(path, sizeof path, "%s/%s/binaries", tmp, names[i]);
        cr_assert_eq(mkdir(path, 0700), 0);
    }
    tsr_component *c = open_ok(FMU("spring"), NULL);
    cr_assert(!folder_exists(tmp, orphan), "a dead process's folder was left");
    cr_assert(!folder_exists(tmp, reused), "a folder whose pid was reused was left");
    cr_assert(folder_exists(tmp, alive), "a live process's folder was removed");
    tsr_close(c);
    snprintf(path, sizeof path, "%s/%s/binaries", tmp, alive);
    rmdir(path);
    snprintf(path, sizeof path, "%s/%s", tmp, alive);
    rmdir(path);
    cr_assert_eq(rmdir(tmp), 0, "the open's own folder was left after close: %s",
                 strerror(errno));
}
