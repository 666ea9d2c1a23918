/* SPDX-License-Identifier: MIT */
/*
 * The linear solve of the compliance plugin: K(E) u = f for the cantilever
 * of fem_q4.h, by a sparse Cholesky factorisation (CHOLMOD).
 *
 * The sparsity pattern of K, and so the fill-reducing ordering and the
 * symbolic factorisation, depend only on the grid size. A fem_cache keeps
 * the symbolic analysis of the few grid sizes used last, so that an
 * optimisation loop pays for the ordering once; it lives in the plugin's
 * state (one per loaded component) and a mutex guards it, because the
 * plugin lets the host run calls concurrently. Each call works on its own
 * copy of the cached analysis and its own cholmod_common, so calls share
 * nothing else and the numeric work runs in parallel.
 */
#ifndef TESSERA_COMPLIANCE_FEM_SOLVE_H
#define TESSERA_COMPLIANCE_FEM_SOLVE_H

#include <stddef.h>

#include "fem_q4.h"

typedef struct fem_cache fem_cache;

/* A new, empty cache; NULL when out of memory. */
fem_cache *fem_cache_new(void);
/* Release the cache and every analysis in it; accepts NULL. */
void fem_cache_free(fem_cache *cache);

/* Solve K(E) u = f, with K = sum_e E[e] K0 assembled over the free DOFs and
 * f the cantilever's unit downward load. u receives the full displacement
 * vector (fem_n_dofs values, zero at fixed DOFs). cache may be NULL (no
 * reuse). Returns 0, or -1 with a message in why (the cause, e.g. that
 * CHOLMOD found K not positive definite, or ran out of memory). The grid
 * must be small enough that fem_max_triplets and fem_n_free fit in int. */
int fem_solve_cantilever(fem_cache *cache, const fem_grid *g, const double *k0, const double *E,
                         double *u, char *why, size_t why_size);
/* The same with the load rhs (fem_n_dofs values; those at fixed DOFs are
 * ignored) instead of the cantilever's; rhs NULL: the cantilever's. */
int fem_solve(fem_cache *cache, const fem_grid *g, const double *k0, const double *E,
              const double *rhs, double *u, char *why, size_t why_size);

#endif /* TESSERA_COMPLIANCE_FEM_SOLVE_H */
