/* SPDX-License-Identifier: MIT */
/*
 * Manifests of real routines of the system's BLAS, LAPACK and GSL, not
 * bundled with Tessera, in every mode: Fortran and C functions' values
 * (DDOT, gsl_sf_bessel_J0), a routine that overwrites its matrix (DPOSV)
 * declared without any modifier, and XERBLA's STOP on an illegal argument.
 * Values are checked against what this test computes, or known values.
 */
#include <math.h>

#include <tessera/gradcheck.h>

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

/* The second-difference matrix (2 on the diagonal, -1 beside it) has the
 * eigenvalues 2 - 2 cos(k pi / (n + 1)), k = 1..n. DSYEV's workspace is
 * asked of it (LWORK = -1), once per n; sizes change between runs. */
static void dsyev_case(tsr_call *call, int n, const char *mode) {
    double a[8 * 8] = {0};
    for (int i = 0; i < n; i++) {
        a[i * n + i] = 2;
        if (i + 1 < n) a[i * n + i + 1] = a[(i + 1) * n + i] = -1;
    }
    bind_ok(call, "a", f64_mat(a, n, n));
    run_ok(call);
    const double *w = tsr_call_output(call, "w")->data, *v = tsr_call_output(call, "v")->data;
    for (int k = 0; k < n; k++) {
        double want = 2 - 2 * cos((k + 1) * M_PI / (n + 1));
        cr_expect(fabs(w[k] - want) < 1e-13, "%s, n = %d: w[%d] = %.17g, want %.17g", mode, n, k,
                  w[k], want);
        /* column k of v is a unit eigenvector: A v_k = w_k v_k */
        for (int i = 0; i < n; i++) {
            double r = -w[k] * v[i * n + k];
            for (int j = 0; j < n; j++) r += a[i * n + j] * v[j * n + k];
            cr_expect(fabs(r) < 1e-12, "%s, n = %d: residual (%d, %d) = %g", mode, n, i, k, r);
        }
        double norm = 0;
        for (int i = 0; i < n; i++) norm += v[i * n + k] * v[i * n + k];
        cr_expect(fabs(norm - 1) < 1e-13, "%s: |v_%d| = %.17g", mode, k, norm);
    }
}

Test(manifest_lapack, dsyev_asks_for_its_workspace_once_per_shape) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("lapack_dsyev"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        dsyev_case(call, 4, mode_names[mode]);
        dsyev_case(call, 8, mode_names[mode]);
        dsyev_case(call, 4, mode_names[mode]);
        dsyev_case(call, 1, mode_names[mode]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* J_n(1) for n = 0..3 and J_n(2.5) for n = 2..4 (SciPy's jv): an output
 * whose size, nmax - nmin + 1, comes from two inputs' values. */
Test(manifest_lapack, gsl_bessel_jn_array_sized_by_values) {
    const double at1[4] = {0.7651976865579666, 0.44005058574493355, 0.11490348493190049,
                           0.019563353982668407};
    const double at25[3] = {0.44605905843961724, 0.21660039103911358, 0.07378188005425523};
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("gsl_bessel_jn_array"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        int32_t nmin = 0, nmax = 3;
        double x = 1;
        bind_ok(call, "nmin", make_array(&nmin, TSR_INT32, 0, NULL));
        bind_ok(call, "nmax", make_array(&nmax, TSR_INT32, 0, NULL));
        bind_ok(call, "x", f64_scalar(&x));
        run_ok(call);
        const tsr_array *j = tsr_call_output(call, "j");
        cr_assert_eq(j->shape[0], 4, "%s", mode_names[mode]);
        for (int n = 0; n < 4; n++)
            cr_expect(fabs(((const double *)j->data)[n] - at1[n]) < 1e-15,
                      "%s: J_%d(1) = %.17g", mode_names[mode], n, ((const double *)j->data)[n]);
        nmin = 2, nmax = 4, x = 2.5;
        run_ok(call);
        j = tsr_call_output(call, "j");
        cr_assert_eq(j->shape[0], 3, "%s", mode_names[mode]);
        for (int n = 0; n < 3; n++)
            cr_expect(fabs(((const double *)j->data)[n] - at25[n]) < 1e-14,
                      "%s: J_%d(2.5) = %.17g", mode_names[mode], n + 2,
                      ((const double *)j->data)[n]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* With GSL's error handler turned off by the manifest's setup, a domain
 * error is a status and a message, in-process too (GSL's default handler
 * would abort the test). */
Test(manifest_lapack, gsl_errors_are_statuses_after_setup) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("gsl_bessel_jn_array"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        int32_t nmin = -1, nmax = 2;
        double x = 1;
        bind_ok(call, "nmin", make_array(&nmin, TSR_INT32, 0, NULL));
        bind_ok(call, "nmax", make_array(&nmax, TSR_INT32, 0, NULL));
        bind_ok(call, "x", f64_scalar(&x));
        const char *msg = run_fails(call, TSR_E_PLUGIN);
        assert_contains(msg, "gsl_sf_bessel_Jn_array returned 1: GSL_EDOM");
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* DPOSV's vjp declared as four routines (dposv, dpotrs, dsyr2, dscal).
 * With x = A^-1 b and A read from its upper triangle: b_bar = A^-1 x_bar,
 * a_bar[r][c] = -(b_bar[r] x[c] + b_bar[c] x[r]) above the diagonal,
 * -b_bar[r] x[r] on it, 0 below. Asked for both gradients or one. */
static void spd_matrix(double *a, int n, uint64_t seed) {
    double m[8 * 8];
    fill_random(m, n * n, seed);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = i == j ? n : 0;
            for (int k = 0; k < n; k++) s += m[i * n + k] * m[j * n + k];
            a[i * n + j] = s;
        }
}

Test(manifest_lapack, dposv_vjp_from_four_routines) {
    enum { N = 5 };
    double a[N * N], a0[N * N], b[N], xbar[N], xbar0[N];
    spd_matrix(a, N, 21);
    fill_random(b, N, 22);
    fill_random(xbar, N, 23);
    memcpy(a0, a, sizeof a);
    memcpy(xbar0, xbar, sizeof xbar);
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("lapack_dposv_vjp"), (tsr_mode)mode);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "a", f64_mat(a, N, N));
        bind_ok(call, "b", f64_vec(b, N));
        run_ok(call);
        double x[N];
        memcpy(x, tsr_call_output(call, "x")->data, sizeof x);
        tsr_call_free(call);
        for (int ask = 0; ask < 3; ask++) {   /* both gradients, a only, b only */
            const char *both[] = {"a", "b"}, *only_a[] = {"a"}, *only_b[] = {"b"};
            const char *const *in = ask == 0 ? both : ask == 1 ? only_a : only_b;
            const char *out[] = {"x"};
            call = new_call(c, TSR_EP_VJP);
            bind_ok(call, "a", f64_mat(a, N, N));
            bind_ok(call, "b", f64_vec(b, N));
            wrt_ok(call, in, ask == 0 ? 2 : 1, out, 1);
            seed_ok(call, "x", f64_vec(xbar, N));
            run_ok(call);
            double bbar[N] = {0};
            if (ask != 1) {   /* b_bar solves A b_bar = x_bar */
                memcpy(bbar, tsr_call_output(call, "b")->data, sizeof bbar);
                for (int i = 0; i < N; i++) {
                    double r = -xbar[i];
                    for (int j = 0; j < N; j++) r += a0[i * N + j] * bbar[j];
                    cr_expect(fabs(r) < 1e-12, "%s: A b_bar - x_bar [%d] = %g", mode_names[mode],
                              i, r);
                }
            }
            if (ask != 2) {
                const double *abar = tsr_call_output(call, "a")->data;
                if (ask == 1) {   /* b_bar was not asked for: solve here to check a_bar */
                    for (int i = 0; i < N; i++) bbar[i] = xbar[i];
                    /* Gauss elimination on a copy of the symmetric A */
                    double m[N * N];
                    memcpy(m, a0, sizeof m);
                    for (int k = 0; k < N; k++)
                        for (int i = k + 1; i < N; i++) {
                            double f = m[i * N + k] / m[k * N + k];
                            for (int j = k; j < N; j++) m[i * N + j] -= f * m[k * N + j];
                            bbar[i] -= f * bbar[k];
                        }
                    for (int i = N - 1; i >= 0; i--) {
                        for (int j = i + 1; j < N; j++) bbar[i] -= m[i * N + j] * bbar[j];
                        bbar[i] /= m[i * N + i];
                    }
                }
                for (int r = 0; r < N; r++)
                    for (int col = 0; col < N; col++) {
                        double want = r < col    ? -(bbar[r] * x[col] + bbar[col] * x[r])
                                      : r == col ? -bbar[r] * x[r]
                                                 : 0.0;
                        cr_expect(fabs(abar[r * N + col] - want) < 1e-12,
                                  "%s, ask %d: a_bar[%d][%d] = %.17g, want %.17g",
                                  mode_names[mode], ask, r, col, abar[r * N + col], want);
                    }
            }
            tsr_call_free(call);
        }
        cr_expect_eq(memcmp(a, a0, sizeof a), 0, "%s: the caller's A changed", mode_names[mode]);
        cr_expect_eq(memcmp(xbar, xbar0, sizeof xbar), 0, "%s: the caller's cotangent changed",
                     mode_names[mode]);
        tsr_close(c);
    }
}

Test(manifest_lapack, check_gradients_passes_on_the_declared_dposv_vjp) {
    enum { N = 4 };
    double a[N * N], b[N];
    spd_matrix(a, N, 31);
    fill_random(b, N, 32);
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(MANIFEST("lapack_dposv_vjp"), (tsr_mode)mode);
        tsr_array inputs[2] = {f64_mat(a, N, N), f64_vec(b, N)};
        tsr_gradcheck_options o = {.struct_size = sizeof o, .seed = 9};
        tsr_gradcheck_report *r = NULL;
        tsr_error err = TSR_ERROR_INIT;
        int rc = tsr_gradcheck_run(c, inputs, &o, &r, &err);
        cr_assert_eq(rc, 0, "%s: %s", mode_names[mode], err.message);
        cr_expect(tsr_gradcheck_passed(r), "%s: check-gradients failed", mode_names[mode]);
        cr_expect(tsr_gradcheck_summary_of(r, TSR_EP_VJP)->checked, "%s", mode_names[mode]);
        tsr_gradcheck_report_free(r);
        tsr_close(c);
    }
}
