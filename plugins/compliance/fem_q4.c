/* SPDX-License-Identifier: MIT */
/*
 * The Q4 element and the assembly of the global stiffness matrix; see
 * fem_q4.h for the numbering.
 */
#include "fem_q4.h"

#include <math.h>

void fem_element_dofs(const fem_grid *g, int64_t i, int64_t j, int64_t dofs[FEM_ELEMENT_DOFS]) {
    int64_t row = g->nx + 1;
    int64_t corner[4] = {i * row + j, i * row + j + 1, (i + 1) * row + j + 1, (i + 1) * row + j};
    for (int c = 0; c < 4; c++) {
        dofs[2 * c] = 2 * corner[c];
        dofs[2 * c + 1] = 2 * corner[c] + 1;
    }
}

/* K0 = integral over the unit square of B^T D B, with B the strain-
 * displacement matrix of the bilinear shape functions and D the plane-
 * stress elasticity matrix. The integrand is at most quadratic in each of
 * x and y, so 2 x 2 Gauss points integrate it exactly. */
void fem_q4_element_stiffness(double k0[FEM_ELEMENT_DOFS * FEM_ELEMENT_DOFS]) {
    const double nu = FEM_POISSON, scale = 1.0 / (1.0 - nu * nu);
    const double d11 = scale, d12 = scale * nu, d33 = scale * (1.0 - nu) / 2.0;
    const double gauss[2] = {0.5 - 0.5 / sqrt(3.0), 0.5 + 0.5 / sqrt(3.0)};
    for (int k = 0; k < FEM_ELEMENT_DOFS * FEM_ELEMENT_DOFS; k++) k0[k] = 0.0;
    for (int gx = 0; gx < 2; gx++) {
        for (int gy = 0; gy < 2; gy++) {
            double x = gauss[gx], y = gauss[gy], w = 0.25;
            /* Derivatives of N1 = (1-x)(1-y), N2 = x(1-y), N3 = xy, N4 = (1-x)y. */
            double dx[4] = {-(1.0 - y), 1.0 - y, y, -y};
            double dy[4] = {-(1.0 - x), -x, x, 1.0 - x};
            double b[3][FEM_ELEMENT_DOFS] = {{0}};
            for (int c = 0; c < 4; c++) {
                b[0][2 * c] = dx[c];     /* eps_xx = d ux / dx */
                b[1][2 * c + 1] = dy[c]; /* eps_yy = d uy / dy */
                b[2][2 * c] = dy[c];     /* gamma_xy = d ux / dy + d uy / dx */
                b[2][2 * c + 1] = dx[c];
            }
            for (int r = 0; r < FEM_ELEMENT_DOFS; r++) {
                /* D times column r of B */
                double s0 = d11 * b[0][r] + d12 * b[1][r];
                double s1 = d12 * b[0][r] + d11 * b[1][r];
                double s2 = d33 * b[2][r];
                for (int c = 0; c < FEM_ELEMENT_DOFS; c++)
                    k0[c * FEM_ELEMENT_DOFS + r] +=
                        w * (b[0][c] * s0 + b[1][c] * s1 + b[2][c] * s2);
            }
        }
    }
}

int64_t fem_q4_assemble_upper(const fem_grid *g, const double *k0, const double *E, int *rows,
                              int *cols, double *vals) {
    int64_t n = 0;
    for (int64_t i = 0; i < g->ny; i++) {
        for (int64_t j = 0; j < g->nx; j++) {
            int64_t dofs[FEM_ELEMENT_DOFS], free_idx[FEM_ELEMENT_DOFS];
            fem_element_dofs(g, i, j, dofs);
            for (int a = 0; a < FEM_ELEMENT_DOFS; a++) free_idx[a] = fem_free_index(g, dofs[a]);
            double e = E[i * g->nx + j];
            for (int a = 0; a < FEM_ELEMENT_DOFS; a++) {
                if (free_idx[a] < 0) continue;
                for (int b = a; b < FEM_ELEMENT_DOFS; b++) {
                    if (free_idx[b] < 0) continue;
                    int64_t r = free_idx[a], c = free_idx[b];
                    rows[n] = (int)(r < c ? r : c);
                    cols[n] = (int)(r < c ? c : r);
                    vals[n] = e * k0[a * FEM_ELEMENT_DOFS + b];
                    n++;
                }
            }
        }
    }
    return n;
}

double fem_q4_element_energy(const fem_grid *g, const double *k0, const double *u, int64_t i,
                             int64_t j) {
    int64_t dofs[FEM_ELEMENT_DOFS];
    double ue[FEM_ELEMENT_DOFS];
    fem_element_dofs(g, i, j, dofs);
    for (int a = 0; a < FEM_ELEMENT_DOFS; a++) ue[a] = u[dofs[a]];
    double energy = 0.0;
    for (int a = 0; a < FEM_ELEMENT_DOFS; a++) {
        double row = 0.0;
        for (int b = 0; b < FEM_ELEMENT_DOFS; b++) row += k0[a * FEM_ELEMENT_DOFS + b] * ue[b];
        energy += ue[a] * row;
    }
    return energy;
}
