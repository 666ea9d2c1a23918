/* SPDX-License-Identifier: MIT */
/*
 * The finite-element model of the compliance plugin, without any solver:
 * the grid and its numbering, the cantilever load case, the element
 * stiffness matrix K0 and the assembly of K(E) into triplets.
 *
 * Grid: nx by ny unit-square bilinear (Q4) elements. Element (i, j) (row i
 * counts upwards in y, column j in x) occupies [j, j+1] x [i, i+1]; its
 * Young's modulus is E[i * nx + j], the C order of an (ny, nx) array.
 *
 * Nodes: (nx + 1) * (ny + 1) of them; node (a, b) sits at x = a, y = b and
 * has number b * (nx + 1) + a. Global DOFs: 2 * node is its x displacement,
 * 2 * node + 1 its y displacement (positive upwards).
 *
 * Element DOF order: the corners counter-clockwise from the lower left,
 * (j, i), (j+1, i), (j+1, i+1), (j, i+1), each as (ux, uy).
 *
 * Cantilever load case: every DOF of the nodes on the left edge x = 0 is
 * fixed; a unit downward point load (fy = -1) acts on the right-edge node
 * (nx, floor(ny / 2)): the middle of the edge when ny is even, the node
 * just below the middle when ny is odd.
 *
 * Free DOFs (the unknowns of the linear system) are the DOFs of the nodes
 * with a >= 1, numbered 2 * (b * nx + a - 1) + component: the left column
 * of nodes is dropped and the rest keep their order.
 */
#ifndef TESSERA_COMPLIANCE_FEM_Q4_H
#define TESSERA_COMPLIANCE_FEM_Q4_H

#include <stdint.h>

/* Poisson's ratio of the material (plane stress); Young's modulus of solid
 * material is 1 and scales K0 linearly. */
#define FEM_POISSON 0.3

/* DOFs of one element, and upper-triangle entries (diagonal included) of
 * its 8 x 8 matrix. */
#define FEM_ELEMENT_DOFS 8
#define FEM_ELEMENT_UPPER 36

typedef struct fem_grid {
    int64_t nx, ny;
} fem_grid;

/* All DOFs, fixed ones included: the length of a full displacement vector. */
static inline int64_t fem_n_dofs(const fem_grid *g) {
    return 2 * (g->nx + 1) * (g->ny + 1);
}

/* Unknowns of the linear system. */
static inline int64_t fem_n_free(const fem_grid *g) {
    return 2 * g->nx * (g->ny + 1);
}

/* Upper bound on the triplets fem_q4_assemble_upper writes. */
static inline int64_t fem_max_triplets(const fem_grid *g) {
    return FEM_ELEMENT_UPPER * g->nx * g->ny;
}

/* Global DOF of the y displacement at the loaded node. */
static inline int64_t fem_load_dof(const fem_grid *g) {
    return 2 * ((g->ny / 2) * (g->nx + 1) + g->nx) + 1;
}

/* Free index of global DOF d, or -1 when d is fixed. */
static inline int64_t fem_free_index(const fem_grid *g, int64_t d) {
    int64_t node = d / 2, a = node % (g->nx + 1), b = node / (g->nx + 1);
    return a == 0 ? -1 : 2 * (b * g->nx + a - 1) + d % 2;
}

/* Global DOFs of element (i, j), in element DOF order. */
void fem_element_dofs(const fem_grid *g, int64_t i, int64_t j, int64_t dofs[FEM_ELEMENT_DOFS]);

/* K0: the stiffness matrix of one unit-square element with Young's modulus
 * 1 and Poisson's ratio FEM_POISSON, in plane stress (unit thickness), row
 * major, element DOF order. */
void fem_q4_element_stiffness(double k0[FEM_ELEMENT_DOFS * FEM_ELEMENT_DOFS]);

/* The upper triangle (row <= column) of K = sum_e E[e] K0 over free DOFs,
 * as unsorted triplets with repeated positions (to be summed): one per
 * pair of free DOFs of each element. Returns the number written, at most
 * fem_max_triplets(g); the caller checks that indices fit in int. */
int64_t fem_q4_assemble_upper(const fem_grid *g, const double *k0, const double *E, int *rows,
                              int *cols, double *vals);

/* u_e^T K0 u_e of element (i, j) for a full displacement vector u: twice
 * the strain energy of the element at unit Young's modulus. */
double fem_q4_element_energy(const fem_grid *g, const double *k0, const double *u, int64_t i,
                             int64_t j);

#endif /* TESSERA_COMPLIANCE_FEM_Q4_H */
