/* SPDX-License-Identifier: MIT */
/*
 * The bundled legacy examples, in every mode (inproc, isolated, worker):
 *   rdstep  a Fortran 77 subroutine (build/plugins/librdstep.so) and its
 *           hand-written adjoint, as apply and vjp
 *   dgesv   LAPACK's solver from the system's liblapack.so.3
 *   dgemv   BLAS's matrix-vector product from libblas.so.3, with the
 *           transposed product as vjp
 * Values are checked against computations in this file; derivatives
 * against finite differences of apply.
 */
#define _GNU_SOURCE /* nftw, in temp_dir.h */
#include <tessera/gradcheck.h>

#include "dense_solve.h"
#include "temp_dir.h"
#include "worker_util.h"

#define EXAMPLE(name) TSR_PLUGIN_DIR "/" name ".json"

static void expect_near(double got, double want, double tol, const char *what, int i,
                        const char *mode) {
    cr_expect(fabs(got - want) <= tol * fmax(1.0, fabs(want)), "%s: %s[%d] = %.17g, want %.17g",
              mode, what, i, got, want);
}

/* Check the endpoints named (TSR_CHECK_*) against finite differences of
 * apply: each must have been compared, and no comparison may fail. */
static void gradients_agree(tsr_component *c, const tsr_array *inputs, unsigned endpoints,
                            const char *mode) {
    tsr_gradcheck_options o = {.struct_size = sizeof o, .endpoints = endpoints, .seed = 3};
    tsr_gradcheck_report *r = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_gradcheck_run(c, inputs, &o, &r, &err);
    cr_assert_eq(rc, 0, "%s: %s", mode, err.message);
    for (int ep = TSR_EP_JVP; ep <= TSR_EP_JACOBIAN; ep++) {
        const tsr_gradcheck_summary *s = tsr_gradcheck_summary_of(r, (tsr_endpoint)ep);
        if (!(endpoints & (1u << ep))) continue;
        cr_expect(s->checked && s->checks > 0, "%s: %s was not checked", mode,
                  tsr_endpoint_name((tsr_endpoint)ep));
        cr_expect_eq(s->failures, 0, "%s: %s: %lld of %lld comparisons failed (max rel err %g)",
                     mode, tsr_endpoint_name((tsr_endpoint)ep), (long long)s->failures,
                     (long long)s->checks, s->max_rel_err);
    }
    tsr_gradcheck_report_free(r);
}

TestSuite(legacy, .fini = expect_no_own_segments);

/* ---- rdstep: Fortran 77 ---------------------------------------------------- */

/* The step, written again in C: u + dt (k (u[i-1] - 2u[i] + u[i+1]) + u - u^3). */
static void rdstep_c(int n, const double *u, double dt, double k, int periodic, double *out) {
    for (int i = 0; i < n; i++) {
        double ul = i > 0 ? u[i - 1] : (periodic ? u[n - 1] : 0.0);
        double ur = i + 1 < n ? u[i + 1] : (periodic ? u[0] : 0.0);
        out[i] = u[i] + dt * (k * (ul - 2.0 * u[i] + ur) + u[i] - u[i] * u[i] * u[i]);
    }
}

#define NU 9

typedef struct rd_point {
    double u[NU], dt, k;
} rd_point;

static rd_point rd_point_new(void) {
    rd_point p = {.dt = 0.05, .k = 0.8};
    fill_random(p.u, NU, 11);
    return p;
}

static void rd_bind(tsr_call *call, rd_point *p) {
    bind_ok(call, "u", f64_vec(p->u, NU));
    bind_ok(call, "dt", f64_scalar(&p->dt));
    bind_ok(call, "k", f64_scalar(&p->k));
}

Test(legacy, rdstep_apply_matches_the_step_written_in_c) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(EXAMPLE("rdstep"), (tsr_mode)mode);
        rd_point p = rd_point_new();
        double want[NU];
        rdstep_c(NU, p.u, p.dt, p.k, 0, want);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        rd_bind(call, &p);
        run_ok(call);
        const double *got = tsr_call_output(call, "u_next")->data;
        for (int i = 0; i < NU; i++)
            expect_near(got[i], want[i], 1e-15, "u_next", i, mode_names[mode]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(legacy, rdstep_hand_written_adjoint_agrees_with_finite_differences) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(EXAMPLE("rdstep"), (tsr_mode)mode);
        rd_point p = rd_point_new();
        tsr_array inputs[3] = {f64_vec(p.u, NU), f64_scalar(&p.dt), f64_scalar(&p.k)};
        /* vjp is the Fortran adjoint; jvp and jacobian are served by central
         * differences (the manifest's fd), checked too */
        gradients_agree(c, inputs, TSR_CHECK_VJP, mode_names[mode]);
        tsr_close(c);
    }
}

/* The native vjp and the jacobian served by finite differences describe
 * the same map: c^T J == vjp(c). */
Test(legacy, rdstep_vjp_is_the_transpose_of_the_jacobian) {
    tsr_component *c = open_ok(EXAMPLE("rdstep"), NULL);
    rd_point p = rd_point_new();
    double cot[NU];
    fill_random(cot, NU, 5);
    tsr_call *jac = new_call(c, TSR_EP_JACOBIAN), *vjp = new_call(c, TSR_EP_VJP);
    const char *in[] = {"u", "k"}, *out[] = {"u_next"};
    rd_bind(jac, &p);
    rd_bind(vjp, &p);
    wrt_ok(jac, in, 2, out, 1);
    wrt_ok(vjp, in, 2, out, 1);
    seed_ok(vjp, "u_next", f64_vec(cot, NU));
    run_ok(jac);
    run_ok(vjp);
    const double *j = tsr_call_jacobian(jac, "u_next", "u")->data;
    const double *jk = tsr_call_jacobian(jac, "u_next", "k")->data;
    const double *ub = tsr_call_output(vjp, "u")->data, *kb = tsr_call_output(vjp, "k")->data;
    double want_k = 0;
    for (int col = 0; col < NU; col++) {
        double want = 0;
        for (int row = 0; row < NU; row++) want += cot[row] * j[row * NU + col];
        expect_near(ub[col], want, 1e-7, "ub", col, "inproc");
    }
    for (int row = 0; row < NU; row++) want_k += cot[row] * jk[row];
    expect_near(*kb, want_k, 1e-7, "kb", 0, "inproc");
    tsr_call_free(jac);
    tsr_call_free(vjp);
    tsr_close(c);
}

/* A copy of rdstep.json with another boundary condition, in a temporary
 * folder, its library named by absolute path. */
static void write_rdstep_variant(char *dir, size_t cap, char *path, size_t pcap, const char *bc) {
    make_temp_dir(dir, cap, "tessera-manifest");
    snprintf(path, pcap, "%s/rdstep_%s.json", dir, bc);
    FILE *in = fopen(EXAMPLE("rdstep"), "r"), *out = fopen(path, "w");
    cr_assert(in && out);
    char line[1024];
    while (fgets(line, sizeof line, in)) {
        char *at;
        if ((at = strstr(line, "\"librdstep.so\""))) {
            fprintf(out, "  \"library\": \"%s/librdstep.so\",\n", TSR_PLUGIN_DIR);
        } else if ((at = strstr(line, "\"DIRICHLET\""))) {
            fwrite(line, 1, (size_t)(at - line), out);
            fprintf(out, "\"%s\"%s", bc, at + strlen("\"DIRICHLET\""));
        } else {
            fputs(line, out);
        }
    }
    fclose(in);
    fclose(out);
}

Test(legacy, rdstep_reads_its_character_argument_through_the_hidden_length) {
    char dir[256], path[512];
    write_rdstep_variant(dir, sizeof dir, path, sizeof path, "PERIODIC");
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(path, (tsr_mode)mode);
        rd_point p = rd_point_new();
        double want[NU];
        rdstep_c(NU, p.u, p.dt, p.k, 1, want);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        rd_bind(call, &p);
        run_ok(call);
        const double *got = tsr_call_output(call, "u_next")->data;
        for (int i = 0; i < NU; i++)
            expect_near(got[i], want[i], 1e-15, "u_next", i, mode_names[mode]);
        tsr_array inputs[3] = {f64_vec(p.u, NU), f64_scalar(&p.dt), f64_scalar(&p.k)};
        gradients_agree(c, inputs, TSR_CHECK_VJP, mode_names[mode]);
        tsr_call_free(call);
        tsr_close(c);
    }
    unlink(path);
    rmdir(dir);
}

Test(legacy, rdstep_info_becomes_an_error_with_the_manifests_message) {
    char dir[256], path[512];
    write_rdstep_variant(dir, sizeof dir, path, sizeof path, "NEUMANN");
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(path, (tsr_mode)mode);
        rd_point p = rd_point_new();
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        rd_bind(call, &p);
        const char *msg = run_fails(call, TSR_E_PLUGIN);
        assert_contains(msg, "component 'rdstep', endpoint 'apply': the plugin failed: rdstep_ "
                             "reported info = 1: unknown boundary condition");
        tsr_call_free(call);
        tsr_close(c);
    }
    unlink(path);
    rmdir(dir);
}

/* ---- dgesv: LAPACK, unchanged ------------------------------------------------ */

/* Solve a x = b (row-major a, n x n) on copies; trans solves a^T x = b. */
static void solve(int n, const double *a, const double *b, double *x, int trans) {
    double *m = malloc((size_t)(n * n + 1) * sizeof *m);
    cr_assert_not_null(m);
    for (int i = 0; i < n; i++) {
        x[i] = b[i];
        for (int j = 0; j < n; j++) m[i * n + j] = trans ? a[j * n + i] : a[i * n + j];
    }
    dense_solve(m, x, n);
    free(m);
}

#define NA 6

typedef struct lin_system {
    double a[NA * NA], b[NA];
} lin_system;

/* A non-symmetric, well-conditioned matrix: a transposed solve would be
 * caught. */
static lin_system system_new(void) {
    lin_system s;
    fill_random(s.a, NA * NA, 21);
    fill_random(s.b, NA, 22);
    for (int i = 0; i < NA; i++) s.a[i * NA + i] += 4.0 + i;
    s.a[0 * NA + 5] += 2.0;
    return s;
}

Test(legacy, dgesv_solves_the_system_and_leaves_the_inputs_alone) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(EXAMPLE("dgesv"), (tsr_mode)mode);
        lin_system s = system_new(), orig = s;
        double want[NA];
        solve(NA, s.a, s.b, want, 0);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "a", f64_mat(s.a, NA, NA));
        bind_ok(call, "b", f64_vec(s.b, NA));
        run_ok(call);
        const double *x = tsr_call_output(call, "x")->data;
        for (int i = 0; i < NA; i++) expect_near(x[i], want[i], 1e-12, "x", i, mode_names[mode]);
        cr_expect_eq(memcmp(&s, &orig, sizeof s), 0,
                     "%s: dgesv overwrites a with its LU factors and b with x, but the host's "
                     "arrays must stay unchanged",
                     mode_names[mode]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(legacy, dgesv_singular_matrix_reports_info_with_the_manifests_message) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(EXAMPLE("dgesv"), (tsr_mode)mode);
        double a[4] = {1, 2, 2, 4}, b[2] = {1, 1};
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "a", f64_mat(a, 2, 2));
        bind_ok(call, "b", f64_vec(b, 2));
        const char *msg = run_fails(call, TSR_E_PLUGIN);
        assert_contains(msg, "dgesv_ reported info = 2: U(info, info) is exactly zero: the matrix "
                             "is singular");
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(legacy, dgesv_of_an_empty_system) {
    tsr_component *c = open_ok(EXAMPLE("dgesv"), NULL);
    double a[1], b[1];
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "a", f64_mat(a, 0, 0));
    bind_ok(call, "b", f64_vec(b, 0));
    run_ok(call);
    cr_expect_eq(tsr_call_output(call, "x")->shape[0], 0);
    tsr_call_free(call);
    tsr_close(c);
}

/* x = a^-1 b: bbar = a^-T xbar, abar = -bbar x^T. dgesv has no vjp of its
 * own: the manifest's fd serves it by central differences. */
Test(legacy, dgesv_gradients_by_finite_differences_match_the_adjoint_formulas) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(EXAMPLE("dgesv"), (tsr_mode)mode);
        cr_expect(!tsr_component_has_native_endpoint(c, TSR_EP_VJP) && tsr_component_has_endpoint(c, TSR_EP_VJP));
        lin_system s = system_new();
        double x[NA], xbar[NA], bbar[NA];
        solve(NA, s.a, s.b, x, 0);
        fill_random(xbar, NA, 23);
        solve(NA, s.a, xbar, bbar, 1);
        tsr_call *call = new_call(c, TSR_EP_VJP);
        bind_ok(call, "a", f64_mat(s.a, NA, NA));
        bind_ok(call, "b", f64_vec(s.b, NA));
        const char *in[] = {"a", "b"}, *out[] = {"x"};
        wrt_ok(call, in, 2, out, 1);
        seed_ok(call, "x", f64_vec(xbar, NA));
        run_ok(call);
        const double *ga = tsr_call_output(call, "a")->data, *gb = tsr_call_output(call, "b")->data;
        for (int i = 0; i < NA; i++) {
            expect_near(gb[i], bbar[i], 1e-6, "bbar", i, mode_names[mode]);
            for (int j = 0; j < NA; j++)
                expect_near(ga[i * NA + j], -bbar[i] * x[j], 1e-6, "abar", i * NA + j,
                            mode_names[mode]);
        }
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* ---- dgemv: BLAS, unchanged, with a second entry as vjp ------------------------- */

#define MR 3
#define NC 5

Test(legacy, dgemv_apply_jvp_and_vjp_match_the_products_computed_here) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(EXAMPLE("dgemv"), (tsr_mode)mode);
        double a[MR * NC], x[NC], xd[NC], yb[MR];
        fill_random(a, MR * NC, 31);
        fill_random(x, NC, 32);
        fill_random(xd, NC, 33);
        fill_random(yb, MR, 34);
        const char *in[] = {"x"}, *out[] = {"y"};
        tsr_call *ap = new_call(c, TSR_EP_APPLY), *jv = new_call(c, TSR_EP_JVP),
                 *vj = new_call(c, TSR_EP_VJP);
        tsr_call *calls[3] = {ap, jv, vj};
        for (int k = 0; k < 3; k++) {
            bind_ok(calls[k], "a", f64_mat(a, MR, NC));
            bind_ok(calls[k], "x", f64_vec(x, NC));
        }
        wrt_ok(jv, in, 1, out, 1);
        wrt_ok(vj, in, 1, out, 1);
        seed_ok(jv, "x", f64_vec(xd, NC));
        seed_ok(vj, "y", f64_vec(yb, MR));
        run_ok(ap);
        run_ok(jv);
        run_ok(vj);
        const double *y = tsr_call_output(ap, "y")->data, *yd = tsr_call_output(jv, "y")->data;
        const double *xb = tsr_call_output(vj, "x")->data;
        for (int i = 0; i < MR; i++) {
            double want = 0, want_d = 0;
            for (int j = 0; j < NC; j++) {
                want += a[i * NC + j] * x[j];
                want_d += a[i * NC + j] * xd[j];
            }
            expect_near(y[i], want, 1e-14, "y", i, mode_names[mode]);
            expect_near(yd[i], want_d, 1e-14, "jvp y", i, mode_names[mode]);
        }
        for (int j = 0; j < NC; j++) {
            double want = 0;
            for (int i = 0; i < MR; i++) want += a[i * NC + j] * yb[i];
            expect_near(xb[j], want, 1e-14, "vjp x", j, mode_names[mode]);
        }
        tsr_array inputs[2] = {f64_mat(a, MR, NC), f64_vec(x, NC)};
        gradients_agree(c, inputs, TSR_CHECK_JVP | TSR_CHECK_VJP, mode_names[mode]);
        for (int k = 0; k < 3; k++) tsr_call_free(calls[k]);
        tsr_close(c);
    }
}
