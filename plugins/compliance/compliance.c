/* SPDX-License-Identifier: MIT */
/*
 * compliance: 2-D linear elasticity of a cantilever on a regular grid of
 * unit-square bilinear (Q4) plane-stress elements with SIMP density-scaled
 * stiffness, for density-based shape and topology optimisation.
 *
 *   E_e        = young_min + rho_e^penal * (1 - young_min)   (E0 = 1, nu = 0.3)
 *   K(rho) u   = f          (cantilever: left edge clamped, unit downward
 *                            point load at the middle of the right edge)
 *   compliance = f^T u
 *
 * The problem is self-adjoint, so the gradient needs no second solve:
 *   d compliance / d rho_e = -penal * rho_e^(penal-1) * (1 - young_min) * u_e^T K0 u_e
 * vjp scales it by the cotangent, jvp dots it with the tangent and jacobian
 * returns it. Each endpoint is an independent call and solves K u = f
 * itself. hvp differentiates the gradient along v: with E' and E'' the
 * first and second derivatives of E_e in rho_e,
 *   K du = -sum_e v_e E'_e K0 u_e                     (one more solve)
 *   (H v)_e = -E''_e v_e u_e^T K0 u_e - 2 E'_e u_e^T K0 du_e
 * times the cotangent: two factorisations in all.
 *
 * The mesh, its numbering and the load case are described in fem_q4.h, the
 * sparse Cholesky solve (CHOLMOD) and the cache of symbolic analyses in
 * fem_solve.h; this file holds the schema, the checks of the inputs and the
 * endpoints. The cache is the plugin's state, made in init and guarded by a
 * mutex, so calls may run concurrently.
 */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <tessera/plugin.h>

#include "fem_q4.h"
#include "fem_solve.h"
#include "plugin_util.h"

/* Field indices, in schema order. */
enum { IN_RHO = 0, IN_PENAL = 1, IN_YOUNG_MIN = 2 };
enum { OUT_COMPLIANCE = 0 };

static const tsr_dim grid_dims[] = {TSR_SYM("ny"), TSR_SYM("nx")};

static const tsr_field inputs[] = {
    {.name = "rho", .dtype = TSR_FLOAT64, .rank = 2, .dims = grid_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "material density of each element, in [0, 1]; rho[i][j] is the unit square "
            "[j, j+1] x [i, i+1] (row i counts upwards in y); ny, nx >= 1"},
    {.name = "penal", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL, .flags = 0,
     .doc = "SIMP exponent p >= 1 (typically 3): E = young_min + rho^p * (1 - young_min)"},
    {.name = "young_min", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL, .flags = 0,
     .doc = "Young's modulus of void relative to solid material, in (0, 1) (typically 1e-9); "
            "keeps the stiffness matrix positive definite"},
};

static const tsr_field outputs[] = {
    {.name = "compliance", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "f^T u with K(rho) u = f: the work of the load, the downward deflection of the "
            "loaded node"},
};

/* One call's problem. */
typedef struct compliance_call {
    fem_grid grid;
    const double *rho;
    double penal, young_min;
    double k0[FEM_ELEMENT_DOFS * FEM_ELEMENT_DOFS];
    double *E; /* Young's modulus per element */
    double *u; /* full displacement vector */
} compliance_call;

/* The grid size the schema cannot restrict: at least one element each way,
 * and small enough for CHOLMOD's int indices. */
static int check_grid(tsr_ctx *ctx, const tsr_array *rho) {
    int64_t ny = rho->shape[0], nx = rho->shape[1];
    if (ny < 1 || nx < 1)
        return tsr_ctx_errorf(ctx,
                              "rho: the grid needs at least 1 element in each direction, got "
                              "shape (%lld, %lld) (ny, nx)",
                              (long long)ny, (long long)nx);
    fem_grid g = {nx, ny};
    if (nx > INT_MAX / FEM_ELEMENT_UPPER / ny || fem_n_dofs(&g) > INT_MAX)
        return tsr_ctx_errorf(ctx, "rho: a grid of %lld x %lld elements is too large to solve",
                              (long long)ny, (long long)nx);
    return 0;
}

static int check_scalars(tsr_ctx *ctx, double penal, double young_min) {
    if (!(penal >= 1.0) || !isfinite(penal))
        return tsr_ctx_errorf(ctx, "penal = %.17g: the SIMP exponent must be a finite number >= 1",
                              penal);
    if (!(young_min > 0.0 && young_min < 1.0))
        return tsr_ctx_errorf(ctx,
                              "young_min = %.17g: the void stiffness ratio must lie strictly "
                              "between 0 and 1",
                              young_min);
    return 0;
}

static int check_density(tsr_ctx *ctx, const compliance_call *cc) {
    for (int64_t i = 0; i < cc->grid.ny; i++) {
        for (int64_t j = 0; j < cc->grid.nx; j++) {
            double r = cc->rho[i * cc->grid.nx + j];
            if (!(r >= 0.0 && r <= 1.0))
                return tsr_ctx_errorf(ctx,
                                      "rho[%lld][%lld] = %.17g: every density must be a finite "
                                      "number in [0, 1]",
                                      (long long)i, (long long)j, r);
        }
    }
    return 0;
}

static void release(compliance_call *cc) {
    free(cc->E);
    free(cc->u);
}

/* Unpack and check the inputs; with `solve`, also compute E and u. On
 * failure everything is released and the error recorded. */
static int prepare(tsr_ctx *ctx, const tsr_args *args, int solve, compliance_call *cc) {
    *cc = (compliance_call){0};
    const tsr_array *rho = &args->inputs[IN_RHO];
    if (check_grid(ctx, rho) != 0) return -1;
    cc->grid = (fem_grid){rho->shape[1], rho->shape[0]};
    cc->rho = rho->data;
    cc->penal = *(const double *)args->inputs[IN_PENAL].data;
    cc->young_min = *(const double *)args->inputs[IN_YOUNG_MIN].data;
    if (check_scalars(ctx, cc->penal, cc->young_min) != 0 || check_density(ctx, cc) != 0)
        return -1;
    if (!solve) return 0;

    int64_t n_el = cc->grid.nx * cc->grid.ny;
    cc->E = malloc((size_t)n_el * sizeof(double));
    cc->u = malloc((size_t)fem_n_dofs(&cc->grid) * sizeof(double));
    if (cc->E == NULL || cc->u == NULL) {
        release(cc);
        return tsr_ctx_errorf(ctx, "out of memory for a grid of %lld x %lld elements",
                              (long long)cc->grid.ny, (long long)cc->grid.nx);
    }
    for (int64_t e = 0; e < n_el; e++)
        cc->E[e] = cc->young_min + pow(cc->rho[e], cc->penal) * (1.0 - cc->young_min);
    fem_q4_element_stiffness(cc->k0);
    char why[256];
    if (fem_solve_cantilever(ctx->state, &cc->grid, cc->k0, cc->E, cc->u, why, sizeof why) != 0) {
        release(cc);
        return tsr_ctx_errorf(ctx, "%s", why);
    }
    return 0;
}

/* f^T u: the load is -1 on one DOF. */
static double compliance_of(const compliance_call *cc) {
    return -cc->u[fem_load_dof(&cc->grid)];
}

/* d compliance / d rho, times scale, into grad (ny * nx values). Returns
 * 0, or -1 with the error recorded when the gradient itself overflowed
 * (the scale, a cotangent, is applied as given). */
static int write_gradient(tsr_ctx *ctx, const compliance_call *cc, double scale, double *grad) {
    double factor = -cc->penal * (1.0 - cc->young_min);
    for (int64_t i = 0; i < cc->grid.ny; i++) {
        for (int64_t j = 0; j < cc->grid.nx; j++) {
            int64_t e = i * cc->grid.nx + j;
            double energy = fem_q4_element_energy(&cc->grid, cc->k0, cc->u, i, j);
            double g = factor * pow(cc->rho[e], cc->penal - 1.0) * energy;
            if (!isfinite(g))
                return tsr_ctx_errorf(ctx,
                                      "rho: the gradient overflowed in element [%lld][%lld] "
                                      "(compliance %g): the structure is too soft for double "
                                      "precision; raise young_min",
                                      (long long)i, (long long)j, compliance_of(cc));
            grad[e] = scale * g;
        }
    }
    return 0;
}

static int compliance_apply(tsr_ctx *ctx, const tsr_args *args) {
    compliance_call cc;
    if (prepare(ctx, args, 1, &cc) != 0) return -1;
    double *out = result_f64(ctx, args, OUT_COMPLIANCE, 0, NULL);
    if (out != NULL) *out = compliance_of(&cc);
    release(&cc);
    return out != NULL ? 0 : -1;
}

/* d compliance = grad . rho_dot. */
static int compliance_jvp(tsr_ctx *ctx, const tsr_args *args) {
    const double *rho_dot = jvp_tangent(args, IN_RHO);
    compliance_call cc;
    if (prepare(ctx, args, rho_dot != NULL, &cc) != 0) return -1;
    double total = 0.0;
    if (rho_dot != NULL) {
        int64_t n_el = cc.grid.nx * cc.grid.ny;
        double *grad = malloc((size_t)n_el * sizeof(double));
        if (grad == NULL) {
            release(&cc);
            return tsr_ctx_errorf(ctx, "out of memory for the gradient");
        }
        int rc = write_gradient(ctx, &cc, 1.0, grad);
        for (int64_t e = 0; e < n_el && rc == 0; e++) total += grad[e] * rho_dot[e];
        free(grad);
        if (rc != 0) {
            release(&cc);
            return -1;
        }
    }
    release(&cc);
    for (int32_t k = 0; k < args->n_wrt_out; k++) { /* wrt_out[k] can only be compliance */
        double *out = result_f64(ctx, args, k, 0, NULL);
        if (out == NULL) return -1;
        *out = total;
    }
    return 0;
}

/* rho_bar = compliance_bar * grad (zero when compliance has no cotangent). */
static int compliance_vjp(tsr_ctx *ctx, const tsr_args *args) {
    const double *c_bar = vjp_cotangent(args, OUT_COMPLIANCE);
    compliance_call cc;
    if (prepare(ctx, args, c_bar != NULL, &cc) != 0) return -1;
    const int64_t shape[2] = {cc.grid.ny, cc.grid.nx};
    int rc = 0;
    for (int32_t k = 0; k < args->n_wrt_in && rc == 0; k++) { /* wrt_in[k] can only be rho */
        double *out = result_f64(ctx, args, k, 2, shape);
        if (out == NULL) rc = -1;
        else if (c_bar != NULL) rc = write_gradient(ctx, &cc, *c_bar, out);
        else zero_f64(out, shape[0] * shape[1]);
    }
    release(&cc);
    return rc;
}

/* The single block d compliance / d rho, of shape (ny, nx). */
static int compliance_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    compliance_call cc;
    if (prepare(ctx, args, 1, &cc) != 0) return -1;
    const int64_t shape[2] = {cc.grid.ny, cc.grid.nx};
    int rc = 0;
    for (int32_t k = 0; k < args->n_wrt_out * args->n_wrt_in && rc == 0; k++) {
        double *out = result_f64(ctx, args, k, 2, shape);
        if (out == NULL) rc = -1;
        else rc = write_gradient(ctx, &cc, 1.0, out);
    }
    release(&cc);
    return rc;
}

/* u_e^T K0 w_e for element (i, j). */
static double element_product(const compliance_call *cc, const double *w, int64_t i, int64_t j) {
    int64_t dofs[FEM_ELEMENT_DOFS];
    fem_element_dofs(&cc->grid, i, j, dofs);
    double s = 0.0;
    for (int a = 0; a < FEM_ELEMENT_DOFS; a++) {
        double row = 0.0;
        for (int b = 0; b < FEM_ELEMENT_DOFS; b++)
            row += cc->k0[a * FEM_ELEMENT_DOFS + b] * w[dofs[b]];
        s += cc->u[dofs[a]] * row;
    }
    return s;
}

/* The second-order adjoint above into out (ny * nx), times w. */
static int write_hvp(tsr_ctx *ctx, compliance_call *cc, const double *v, double w, double *out) {
    int64_t n_dofs = fem_n_dofs(&cc->grid);
    double p = cc->penal, scale = 1.0 - cc->young_min;
    double *rhs = calloc((size_t)n_dofs, sizeof *rhs), *du = malloc((size_t)n_dofs * sizeof *du);
    if (rhs == NULL || du == NULL) {
        free(rhs);
        free(du);
        return tsr_ctx_errorf(ctx, "out of memory for the second-order adjoint");
    }
    for (int64_t i = 0; i < cc->grid.ny; i++)
        for (int64_t j = 0; j < cc->grid.nx; j++) {
            int64_t e = i * cc->grid.nx + j, dofs[FEM_ELEMENT_DOFS];
            double c = v[e] * p * pow(cc->rho[e], p - 1.0) * scale;
            if (c == 0.0) continue;
            fem_element_dofs(&cc->grid, i, j, dofs);
            for (int a = 0; a < FEM_ELEMENT_DOFS; a++) {
                double row = 0.0;
                for (int b = 0; b < FEM_ELEMENT_DOFS; b++)
                    row += cc->k0[a * FEM_ELEMENT_DOFS + b] * cc->u[dofs[b]];
                rhs[dofs[a]] -= c * row;
            }
        }
    char why[256];
    int rc = fem_solve(ctx->state, &cc->grid, cc->k0, cc->E, rhs, du, why, sizeof why);
    if (rc != 0) rc = tsr_ctx_errorf(ctx, "%s", why);
    for (int64_t i = 0; rc == 0 && i < cc->grid.ny; i++)
        for (int64_t j = 0; rc == 0 && j < cc->grid.nx; j++) {
            int64_t e = i * cc->grid.nx + j;
            double d1 = p * pow(cc->rho[e], p - 1.0) * scale;
            /* penal = 1: E is linear, E'' = 0 even at rho = 0 */
            double d2 = p == 1.0 ? 0.0 : p * (p - 1.0) * pow(cc->rho[e], p - 2.0) * scale;
            double h = -(v[e] != 0.0 ? d2 * v[e] * element_product(cc, cc->u, i, j) : 0.0) -
                       2.0 * d1 * element_product(cc, du, i, j);
            if (!isfinite(h))
                rc = tsr_ctx_errorf(ctx,
                                    "rho: the Hessian-vector product is not finite in element "
                                    "[%lld][%lld] (rho = %g, penal = %g: rho^(penal-2) "
                                    "diverges at 0 for penal < 2)",
                                    (long long)i, (long long)j, cc->rho[e], p);
            else out[e] = w * h;
        }
    free(rhs);
    free(du);
    return rc;
}

/* hvp over rho (the only differentiable input), cotangent-weighted. */
static int compliance_hvp(tsr_ctx *ctx, const tsr_args *args) {
    const double *c_bar = vjp_cotangent(args, OUT_COMPLIANCE);
    const double *v = hvp_tangent(args, IN_RHO);
    compliance_call cc;
    if (prepare(ctx, args, c_bar != NULL && v != NULL, &cc) != 0) return -1;
    const int64_t shape[2] = {cc.grid.ny, cc.grid.nx};
    int rc = 0;
    for (int32_t k = 0; k < args->n_wrt_in && rc == 0; k++) { /* wrt_in[k] can only be rho */
        double *out = result_f64(ctx, args, k, 2, shape);
        if (out == NULL) rc = -1;
        else if (c_bar != NULL && v != NULL) rc = write_hvp(ctx, &cc, v, *c_bar, out);
        else zero_f64(out, shape[0] * shape[1]);
    }
    release(&cc);
    return rc;
}

static int compliance_abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    if (check_grid(ctx, &args->inputs[IN_RHO]) != 0) return -1;
    tsr_array *out = &args->results[OUT_COMPLIANCE];
    out->dtype = TSR_FLOAT64;
    out->rank = 0;
    return 0;
}

static int compliance_init(tsr_ctx *ctx, void **state) {
    /* CHOLMOD links the OpenMP runtime, which must never be unloaded: its
     * threads and the memory of its set-up would outlive their code. Pin
     * it for the life of the process (no effect when it is not loaded). */
    void *gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    if (gomp) dlclose(gomp);
    *state = fem_cache_new();
    if (*state == NULL) return tsr_ctx_errorf(ctx, "out of memory for the analysis cache");
    return 0;
}

static void compliance_fini(void *state) {
    fem_cache_free(state);
}

static const tsr_plugin compliance_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "compliance",
    .version = "0.1.0",
    .description =
        "Compliance f^T u of a 2-D cantilever, K(rho) u = f, on an nx x ny grid of unit-square "
        "bilinear (Q4) plane-stress elements (E0 = 1, Poisson ratio 0.3, unit thickness) with "
        "SIMP stiffness E = young_min + rho^penal * (1 - young_min). The left edge x = 0 is "
        "clamped; a unit downward load acts at the right-edge node (nx, floor(ny/2)). Sparse "
        "Cholesky solve (CHOLMOD); exact adjoint gradient w.r.t. rho, and its hvp by a "
        "second-order adjoint.",
    .inputs = inputs,
    .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs,
    .n_outputs = sizeof outputs / sizeof outputs[0],
    .init = compliance_init,
    .fini = compliance_fini,
    .apply = compliance_apply,
    .jvp = compliance_jvp,
    .vjp = compliance_vjp,
    .jacobian = compliance_jacobian,
    .abstract_eval = compliance_abstract_eval,
    .hvp = compliance_hvp,
};

TSR_PLUGIN_DEFINE(compliance_plugin)
