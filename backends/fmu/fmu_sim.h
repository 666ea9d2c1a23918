/* SPDX-License-Identifier: MIT */
/* The #simulate form's pieces (fmu.h): one simulation as CVODES runs it
 * (fmu_simulate.c), its forward sensitivities for jvp and vjp
 * (fmu_sensitivity.c), and what both use (fmu_sim_run.c). */
#ifndef TESSERA_BACKENDS_FMU_SIM_H
#define TESSERA_BACKENDS_FMU_SIM_H

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>

#include "fmu.h"

/* Inputs and outputs of the form, in schema order (parameters and input
 * variables follow, at m->param_field and m->input_field). */
enum { SIM_T, SIM_X0 };
enum { SIM_X };

/* What lives as long as the component (m->sim). */
typedef struct fmu_sim {
    SUNContext sun;
    double rtol, atol;     /* CVODES' tolerances */
    long max_steps;        /* per interval of the grid */
} fmu_sim;

/* One call: the integrator and what its callbacks need. */
typedef struct fmu_run {
    fmu_model *m;
    fmu_sim *sim;
    tsr_ctx *ctx;
    const tsr_args *a;
    void *cvode;
    N_Vector y;
    SUNMatrix jac;
    SUNLinearSolver ls;
    long calls;            /* right-hand side evaluations, for the cancel check */
    int cancelled;
    int failed;            /* a callback failed: why holds the FMU's message */
    double failed_at;
    char why[1024];
    char cvode_said[512];  /* CVODES' last message (its error handler) */
    /* sensitivities (fmu_sensitivity.c); ns 0: none. jvp: one, along the
     * tangent; vjp and jacobian: one per differentiated scalar, x0's first */
    int ns;
    N_Vector *ys;
    int32_t x0_arg;        /* the index of x0 in wrt_in, or -1 */
    int32_t n_x0;          /* vjp: sensitivities 0 .. n_x0 - 1 are x0's */
    int32_t n_wp, *wp;     /* the Float64 parameters seeded, indices into m->params */
    double *pseed;         /* ns rows of n_wp: each sensitivity's parameter seed */
    double **target;       /* vjp: where each sensitivity's contraction adds up */
    int32_t *arg, *comp;   /* vjp, jacobian: each sensitivity's wrt_in index and element */
    fmi3ValueReference *known;   /* states, then the parameters wp (nx + n_wp) */
    fmi3ValueReference *der_vr;  /* the state derivatives (nx) */
    fmi3ValueReference *out_vr;  /* the Float64 outputs (n_outputs) */
    double *seed, *dy;     /* scratch: nx + n_wp, and n_outputs */
} fmu_run;

/* fmu_sim_run.c: put the instance at time t with states x. 0, or -1
 * with why. */
int fmu_run_point(fmu_run *r, double t, const double *x, char *why, size_t n);

/* Sensitivities: set up from the jvp, vjp or jacobian's arguments (which
 * sensitivities, their seeds; vjp results zeroed), started on the
 * integrator at t0, restarted after a reinitialisation, read at grid point
 * k (the instance at (t[k], x[k])) into the results, and freed. */
int fmu_sens_setup(fmu_run *r, char *why, size_t n);
int fmu_sens_start(fmu_run *r, char *why, size_t n);
int fmu_sens_restart(fmu_run *r, double t, char *why, size_t n);
int fmu_sens_point(fmu_run *r, int64_t k, char *why, size_t n);
void fmu_sens_free(fmu_run *r);

/* fmu_sim_run.c: a CVODES call's failure in words (the flag's name, with
 * CVODES' own message), and CVODES' error handler that keeps that message
 * in r->cvode_said (the library writes nothing to stderr). */
void fmu_cvode_failed(fmu_run *r, int flag, const char *fn, char *why, size_t n);
void fmu_cvode_message(int code, const char *module, const char *function, char *msg,
                       void *user);

#endif
