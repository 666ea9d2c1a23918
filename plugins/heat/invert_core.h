/* SPDX-License-Identifier: MIT */
/*
 * Recovering a conductivity profile from a measured final temperature,
 * through the host API: gradient descent on the heat plugin's misfit, with
 * the gradient from its vjp (the discrete adjoint).
 *
 * The unknown is m = log k, which keeps k positive without constraints.
 * The objective is
 *
 *     J(m) = misfit(exp m) + (smoothness / 2) * sum_i (m[i+1] - m[i])^2
 *
 * with the gradient k * vjp(misfit = 1) + smoothness * D^T D m. Steps are
 * Barzilai-Borwein steps, accepted by a non-monotone Armijo test (against
 * the largest J of the last few iterations) and halved until accepted.
 * Each iteration costs one apply per trial step and one vjp.
 */
#ifndef HEAT_INVERT_CORE_H
#define HEAT_INVERT_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <tessera/tessera.h>

/* What stays fixed: the experiment and its measurement. */
typedef struct heat_experiment {
    int64_t n;                          /* cells */
    double dt;
    int64_t steps;
    const double *source;               /* (n,) */
    const double *initial_temperature;  /* (n,) */
    const double *observations;         /* (n,); may be NULL for heat_simulate */
} heat_experiment;

/* One line of progress, for the report callback. */
typedef struct heat_inverse_progress {
    int iteration;
    double misfit;
    double objective;          /* misfit plus the smoothness term */
    double gradient_norm;      /* of J with respect to log k */
    const double *conductivity;
} heat_inverse_progress;

typedef void (*heat_inverse_report_fn)(void *user, const heat_inverse_progress *progress);

typedef struct heat_inverse_settings {
    int max_iterations;
    double reduction;          /* converged when misfit <= initial misfit / reduction */
    double smoothness;         /* weight of the smoothness term; 0 for none */
    int report_every;          /* call report every this many iterations (and at the ends) */
    heat_inverse_report_fn report;  /* may be NULL */
    void *user;
} heat_inverse_settings;

/* Sensible defaults: 2000 iterations, reduction 1e6, no smoothness term,
 * no report. */
heat_inverse_settings heat_inverse_defaults(void);

typedef struct heat_inverse_result {
    int iterations;
    int converged;             /* the misfit reached the requested reduction */
    double initial_misfit;
    double final_misfit;
    double final_gradient_norm;
    int64_t apply_calls;
    int64_t vjp_calls;
} heat_inverse_result;

/* Final temperature for the conductivity k (e.g. to make synthetic
 * observations). Returns 0 or a TSR_E_* code with a message in err. */
int heat_simulate(tsr_component *c, const heat_experiment *e, const double *k,
                  double *temperature, char *err, size_t err_cap);

/* Descend from the guess in conductivity (n values, all > 0), which holds
 * the estimate on return. Returns 0 (also when not converged: see result)
 * or a TSR_E_* code with a message in err. */
int heat_invert(tsr_component *c, const heat_experiment *e, const heat_inverse_settings *s,
                double *conductivity, heat_inverse_result *result, char *err, size_t err_cap);

#endif /* HEAT_INVERT_CORE_H */
