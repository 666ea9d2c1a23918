/* SPDX-License-Identifier: MIT */
/*
 * K(E) u = f by CHOLMOD: assemble the upper triangle as triplets, convert to
 * compressed columns, factorise with a (cached) symbolic analysis, solve.
 * Every CHOLMOD result is checked; CHOLMOD is told never to print, so that
 * nothing reaches the host's stdout.
 */
#include "fem_solve.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cholmod.h>

/* Grid sizes whose analysis is kept: a study uses one or two sizes at a time
 * (a coarse and a fine grid, say); more would only hold memory. */
#define FEM_CACHE_SLOTS 4

typedef struct fem_cache_slot {
    int64_t nx, ny;
    cholmod_factor *symbolic; /* NULL: empty slot */
    uint64_t last_used;
} fem_cache_slot;

struct fem_cache {
    pthread_mutex_t lock;
    fem_cache_slot slot[FEM_CACHE_SLOTS];
    uint64_t clock;
};

/* A cholmod_common for one call or one cleanup: CHOLMOD never prints and
 * never calls back; failures only set status.
 *
 * Simplicial or supernodal: CHOLMOD picks supernodal when the flops per
 * entry of L exceed supernodal_switch (default 40), which pays only with a
 * fast BLAS. With Debian's reference BLAS the simplicial factorisation
 * measured 1.4 to 2 times as fast up to 240 x 120 elements (flops per
 * entry about 175), so the switch is raised to 200: grids up to about that size
 * stay simplicial, larger ones go supernodal. final_ll makes the
 * simplicial factorisation LL' (not LDL'), so that a non-positive pivot is
 * reported as CHOLMOD_NOT_POSDEF instead of giving an indefinite factor. */
static void start_common(cholmod_common *cm) {
    cholmod_start(cm);
    cm->print = 0;
    cm->error_handler = NULL;
    cm->useGPU = 0;
    cm->supernodal_switch = 200.0;
    cm->final_ll = 1;
}

fem_cache *fem_cache_new(void) {
    fem_cache *cache = calloc(1, sizeof *cache);
    if (cache == NULL) return NULL;
    if (pthread_mutex_init(&cache->lock, NULL) != 0) {
        free(cache);
        return NULL;
    }
    return cache;
}

void fem_cache_free(fem_cache *cache) {
    if (cache == NULL) return;
    cholmod_common cm;
    start_common(&cm);
    for (int s = 0; s < FEM_CACHE_SLOTS; s++) cholmod_free_factor(&cache->slot[s].symbolic, &cm);
    cholmod_finish(&cm);
    pthread_mutex_destroy(&cache->lock);
    free(cache);
}

/* A copy of the cached analysis for g, or NULL when there is none (or the
 * copy failed: cm->status says which). */
static cholmod_factor *cache_lookup(fem_cache *cache, const fem_grid *g, cholmod_common *cm) {
    cholmod_factor *copy = NULL;
    pthread_mutex_lock(&cache->lock);
    for (int s = 0; s < FEM_CACHE_SLOTS; s++) {
        fem_cache_slot *slot = &cache->slot[s];
        if (slot->symbolic != NULL && slot->nx == g->nx && slot->ny == g->ny) {
            slot->last_used = ++cache->clock;
            copy = cholmod_copy_factor(slot->symbolic, cm);
            break;
        }
    }
    pthread_mutex_unlock(&cache->lock);
    return copy;
}

/* Keep a copy of a fresh analysis for g, in place of the least recently used
 * one. Best effort: when the copy fails, or another call stored the same
 * size meanwhile, the cache stays as it is. */
static void cache_store(fem_cache *cache, const fem_grid *g, cholmod_factor *symbolic,
                        cholmod_common *cm) {
    cholmod_factor *copy = cholmod_copy_factor(symbolic, cm);
    if (copy == NULL) {
        cm->status = CHOLMOD_OK; /* the call goes on without the cache */
        return;
    }
    cholmod_factor *evicted = copy;
    pthread_mutex_lock(&cache->lock);
    int victim = -1, present = 0;
    for (int s = 0; s < FEM_CACHE_SLOTS; s++) {
        const fem_cache_slot *slot = &cache->slot[s];
        if (slot->symbolic == NULL) {
            if (victim < 0 || cache->slot[victim].symbolic != NULL) victim = s;
        } else if (slot->nx == g->nx && slot->ny == g->ny) {
            present = 1;
        } else if (victim < 0 || (cache->slot[victim].symbolic != NULL &&
                                  slot->last_used < cache->slot[victim].last_used)) {
            victim = s;
        }
    }
    if (!present && victim >= 0) {
        evicted = cache->slot[victim].symbolic;
        cache->slot[victim] = (fem_cache_slot){g->nx, g->ny, copy, ++cache->clock};
    }
    pthread_mutex_unlock(&cache->lock);
    cholmod_free_factor(&evicted, cm); /* outside the lock: freeing takes time */
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *why, size_t why_size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return -1;
}

/* What a failed CHOLMOD call means, for the message. */
static const char *status_text(int status) {
    switch (status) {
    case CHOLMOD_OUT_OF_MEMORY: return "out of memory";
    case CHOLMOD_TOO_LARGE: return "the problem is too large (integer overflow)";
    case CHOLMOD_INVALID: return "invalid input";
    case CHOLMOD_NOT_INSTALLED: return "a method is not installed";
    case CHOLMOD_NOT_POSDEF: return "the matrix is not positive definite";
    default: return "unknown failure";
    }
}

/* The symbolic analysis of A (pattern of grid g), from the cache or fresh. */
static cholmod_factor *analysis_for(fem_cache *cache, const fem_grid *g, cholmod_sparse *A,
                                    cholmod_common *cm) {
    cholmod_factor *L = cache != NULL ? cache_lookup(cache, g, cm) : NULL;
    if (L != NULL || cm->status < CHOLMOD_OK) return L;
    L = cholmod_analyze(A, cm);
    if (L != NULL && cache != NULL) cache_store(cache, g, L, cm);
    return L;
}

/* A = K(E) in compressed-column form (upper triangle, stype 1). */
static cholmod_sparse *assemble(const fem_grid *g, const double *k0, const double *E,
                                cholmod_common *cm) {
    size_t n = (size_t)fem_n_free(g), cap = (size_t)fem_max_triplets(g);
    cholmod_triplet *T = cholmod_allocate_triplet(n, n, cap, 1, CHOLMOD_REAL, cm);
    if (T == NULL) return NULL;
    T->nnz = (size_t)fem_q4_assemble_upper(g, k0, E, T->i, T->j, T->x);
    cholmod_sparse *A = cholmod_triplet_to_sparse(T, T->nnz, cm);
    cholmod_free_triplet(&T, cm);
    return A;
}

int fem_solve_cantilever(fem_cache *cache, const fem_grid *g, const double *k0, const double *E,
                         double *u, char *why, size_t why_size) {
    return fem_solve(cache, g, k0, E, NULL, u, why, why_size);
}

int fem_solve(fem_cache *cache, const fem_grid *g, const double *k0, const double *E,
              const double *rhs, double *u, char *why, size_t why_size) {
    cholmod_common cm;
    start_common(&cm);
    cholmod_sparse *A = NULL;
    cholmod_factor *L = NULL;
    cholmod_dense *b = NULL, *x = NULL;
    int rc = -1;
    size_t n = (size_t)fem_n_free(g);

    A = assemble(g, k0, E, &cm);
    if (A == NULL) {
        fail(why, why_size, "assembling the stiffness matrix failed: %s", status_text(cm.status));
        goto out;
    }
    L = analysis_for(cache, g, A, &cm);
    if (L == NULL) {
        fail(why, why_size, "the symbolic analysis (ordering) of the stiffness matrix failed: %s",
             status_text(cm.status));
        goto out;
    }
    /* cholmod_factorize returns TRUE even when it stops at a non-positive
     * pivot; status and L->minor tell. */
    if (!cholmod_factorize(A, L, &cm) || cm.status < CHOLMOD_OK) {
        fail(why, why_size, "the Cholesky factorisation of the stiffness matrix failed: %s",
             status_text(cm.status));
        goto out;
    }
    if (cm.status == CHOLMOD_NOT_POSDEF || L->minor < L->n) {
        fail(why, why_size,
             "the stiffness matrix is not positive definite (the Cholesky factorisation "
             "stopped at column %zu of %zu); the densities make the structure singular",
             (size_t)L->minor, (size_t)L->n);
        goto out;
    }
    b = cholmod_zeros(n, 1, CHOLMOD_REAL, &cm);
    if (b == NULL) {
        fail(why, why_size, "allocating the load vector failed: %s", status_text(cm.status));
        goto out;
    }
    if (rhs == NULL) {
        ((double *)b->x)[fem_free_index(g, fem_load_dof(g))] = -1.0;
    } else {
        for (int64_t d = 0; d < fem_n_dofs(g); d++) {
            int64_t f = fem_free_index(g, d);
            if (f >= 0) ((double *)b->x)[f] = rhs[d];
        }
    }
    x = cholmod_solve(CHOLMOD_A, L, b, &cm);
    if (x == NULL || cm.status < CHOLMOD_OK) {
        fail(why, why_size, "the triangular solves failed: %s", status_text(cm.status));
        goto out;
    }
    const double *xs = x->x;
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(xs[k])) {
            fail(why, why_size,
                 "the solve gave a non-finite displacement (%g at unknown %zu): the structure "
                 "is too soft for double precision; raise young_min",
                 xs[k], k);
            goto out;
        }
    }
    int64_t n_dofs = fem_n_dofs(g);
    for (int64_t d = 0; d < n_dofs; d++) {
        int64_t f = fem_free_index(g, d);
        u[d] = f < 0 ? 0.0 : xs[f];
    }
    rc = 0;
out:
    cholmod_free_dense(&x, &cm);
    cholmod_free_dense(&b, &cm);
    cholmod_free_factor(&L, &cm);
    cholmod_free_sparse(&A, &cm);
    cholmod_finish(&cm);
    return rc;
}
