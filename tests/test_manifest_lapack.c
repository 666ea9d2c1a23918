/* SPDX-License-Identifier: MIT */
/*
 * Manifests of real routines of the system's BLAS, LAPACK and GSL, not
 * bundled with Tessera, in every mode: Fortran and C functions' values
 * (DDOT, gsl_sf_bessel_J0), a routine that overwrites its matrix (DPOSV)
 * declared without any modifier, and XERBLA's STOP on an illegal argument.
 * Values are checked against what this test computes, or known values.
 */
#include <math.h>

#include "cli_run.h"
#include "worker_util.h"

#define MANIFEST(name) TSR_TEST_MANIFEST_DIR "/" name ".json"

TestSuite(manifest_lapack, .fini = expect_no_own_segments);

Test(manifest_lapack, ddot_a_fortran_function_gives_a_rank0_output) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("lapack_ddot"), (tsr_mode)mode);
        double x[7], y[7], want = 0;
        fill_random(x, 7, 11);
        fill_random(y, 7, 12);
        for (int i = 0; i < 7; i++) want += x[i] * y[i];
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 7));
        bind_ok(call, "y", f64_vec(y, 7));
        run_ok(call);
        double d = *(const double *)tsr_call_output(call, "d")->data;
        cr_expect(fabs(d - want) <= 1e-14 * fmax(1, fabs(want)), "%s: ddot %.17g, want %.17g",
                  mode_names[mode], d, want);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_lapack, gsl_bessel_j0_a_c_function_of_a_value) {
    /* J0(1) and J0 at its first zero, to 16 digits */
    const double xs[2] = {1.0, 2.404825557695773}, want[2] = {0.7651976865579666, 0.0};
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("gsl_bessel_j0"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        for (int k = 0; k < 2; k++) {
            double x = xs[k];
            bind_ok(call, "x", f64_scalar(&x));
            run_ok(call);
            double j0 = *(const double *)tsr_call_output(call, "j0")->data;
            cr_expect(fabs(j0 - want[k]) < 1e-15, "%s: J0(%g) = %.17g", mode_names[mode], x, j0);
        }
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* An SPD matrix A = M M^T + n I and b; x must solve A x = b. */
Test(manifest_lapack, dposv_leaves_the_callers_matrix_alone_and_solves_twice) {
    enum { N = 5 };
    double m[N * N], a[N * N], a0[N * N], b[N];
    fill_random(m, N * N, 5);
    fill_random(b, N, 6);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = i == j ? N : 0;
            for (int k = 0; k < N; k++) s += m[i * N + k] * m[j * N + k];
            a[i * N + j] = s;
        }
    memcpy(a0, a, sizeof a);
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("lapack_dposv"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "a", f64_mat(a, N, N));
        bind_ok(call, "b", f64_vec(b, N));
        for (int round = 0; round < 2; round++) {
            run_ok(call);
            const double *x = tsr_call_output(call, "x")->data;
            for (int i = 0; i < N; i++) {
                double r = -b[i];
                for (int j = 0; j < N; j++) r += a0[i * N + j] * x[j];
                cr_expect(fabs(r) < 1e-12, "%s, run %d: residual[%d] = %g", mode_names[mode],
                          round, i, r);
            }
        }
        cr_expect_eq(memcmp(a, a0, sizeof a), 0, "%s: the caller's A was overwritten",
                     mode_names[mode]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(manifest_lapack, xerbla_stop_is_never_a_success) {
    const char *payload = "{\"inputs\": {\"a\": [[4, 1], [1, 3]], \"b\": [1, 2]}}";
    /* in-process because the host insists: the exit guard */
    cli_run r = run_cli(NULL, "apply", "--mode", "inproc", MANIFEST("lapack_dposv_bad_uplo"),
                        payload);
    cr_assert_eq(r.status, EXIT_CALL, "status %d: %s", r.status, r.err);
    assert_contains(r.err, "the component 'dposv_bad_uplo' ended the process during apply");
    run_free(&r);
    /* by default (may_exit), and asked: a worker dies, the host says why */
    const char *modes[][2] = {{"--mode", "worker"}, {"--format", "json"}};
    for (int k = 0; k < 2; k++) {
        r = run_cli(NULL, "apply", modes[k][0], modes[k][1], MANIFEST("lapack_dposv_bad_uplo"),
                    payload);
        cr_assert_eq(r.status, EXIT_CALL, "status %d: %s", r.status, r.err);
        assert_contains(r.err, "parameter number  1 had an illegal value");
        assert_contains(r.err, "endpoint 'apply': the worker");
        run_free(&r);
    }
}
