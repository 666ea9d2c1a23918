/* SPDX-License-Identifier: MIT */
/*
 * A damped spring-mass as a Co-Simulation FMU: m x'' = F - k x - c x',
 * with the force F an input held constant over each communication step.
 *
 * fmi3DoStep splits a step of size h into n = ceil(h / 1e-3) equal
 * classical Runge-Kutta (RK4) substeps, so that any step size (the FMU
 * handles variable ones) is integrated with substeps of at most 1e-3; a
 * step of more than 1e9 substeps (h > 1e6) is refused with fmi3Error.
 */
#include <math.h>

#include "fmu_instance.h"

enum { TIME, X, V, F, K, C, M, X0, V0, N_VARS };

#define MAX_SUBSTEP 1e-3
/* A step needing more substeps than this is refused rather than run for hours. */
#define MAX_SUBSTEPS 1e9

static const char *const names[N_VARS] = {
    [TIME] = "time", [X] = "x", [V] = "v", [F] = "F", [K] = "k",
    [C] = "c", [M] = "m", [X0] = "x0", [V0] = "v0",
};

static const fmu_access access[N_VARS] = {
    [F] = FMU_INPUT, [K] = FMU_TUNABLE, [C] = FMU_TUNABLE,
    [M] = FMU_FIXED, [X0] = FMU_FIXED, [V0] = FMU_FIXED,
};

static const double start[N_VARS] = {
    [F] = 0.0, [K] = 1.0, [C] = 0.2, [M] = 1.0, [X0] = 1.0, [V0] = 0.0,
};

/* Until initialization ends, the outputs are the initial conditions. */
static void calculate(fmu_instance *inst) {
    if (inst->mode == FMU_INSTANTIATED || inst->mode == FMU_INITIALIZATION) {
        inst->v[X] = inst->v[X0];
        inst->v[V] = inst->v[V0];
    }
}

static fmi3Status initialize(fmu_instance *inst) {
    if (inst->v[M] > 0.0 && isfinite(inst->v[M])) return fmi3OK;
    fmu_log(inst, fmi3Error, "%s: the mass m = %g must be positive", inst->name, inst->v[M]);
    return fmi3Error;
}

static void acceleration(const double *p, double x, double v, double *dx, double *dv) {
    *dx = v;
    *dv = (p[F] - p[K] * x - p[C] * v) / p[M];
}

static fmi3Status step(fmu_instance *inst, double t, double h) {
    (void)t;
    double *p = inst->v;
    double substeps = ceil(h / MAX_SUBSTEP - 1e-9);
    if (substeps > MAX_SUBSTEPS) {
        fmu_log(inst, fmi3Error, "%s: fmi3DoStep: a step of %g would take more than %g substeps",
                inst->name, h, MAX_SUBSTEPS);
        return fmi3Error;
    }
    long n = substeps < 1.0 ? 1 : (long)substeps;
    double dt = h / (double)n, x = p[X], v = p[V];
    for (long i = 0; i < n; i++) {
        double k1x, k1v, k2x, k2v, k3x, k3v, k4x, k4v;
        acceleration(p, x, v, &k1x, &k1v);
        acceleration(p, x + 0.5 * dt * k1x, v + 0.5 * dt * k1v, &k2x, &k2v);
        acceleration(p, x + 0.5 * dt * k2x, v + 0.5 * dt * k2v, &k3x, &k3v);
        acceleration(p, x + dt * k3x, v + dt * k3v, &k4x, &k4v);
        x += dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        v += dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    }
    p[X] = x;
    p[V] = v;
    return fmi3OK;
}

const fmu_model fmu_this_model = {
    .identifier = "spring",
    .token = "{9b1d4f6a-2c3e-4a8b-b7d5-0e1f2a3b4c02}",
    .n_vars = N_VARS,
    .names = names,
    .access = access,
    .start = start,
    .calculate = calculate,
    .initialize = initialize,
    .step = step,
};
