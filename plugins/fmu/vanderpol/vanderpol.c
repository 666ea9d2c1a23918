/* SPDX-License-Identifier: MIT */
/*
 * The Van der Pol oscillator as a Model Exchange FMU: two states, the
 * tunable damping mu, the output y = x0. Its Jacobian is in
 * vanderpol_jacobian.c.
 */
#include "vanderpol.h"

#include "fmu_instance.h"

static const char *const names[VDP_N_VARS] = {
    [VDP_TIME] = "time", [VDP_X0] = "x0", [VDP_DER_X0] = "der(x0)", [VDP_X1] = "x1",
    [VDP_DER_X1] = "der(x1)", [VDP_MU] = "mu", [VDP_Y] = "y",
};

static const fmu_access access[VDP_N_VARS] = {
    [VDP_X0] = FMU_FIXED, [VDP_X1] = FMU_FIXED, [VDP_MU] = FMU_TUNABLE,
};

static const double start[VDP_N_VARS] = {
    [VDP_X0] = 2.0, [VDP_X1] = 0.0, [VDP_MU] = 1.0,
};

static const fmi3ValueReference states[] = {VDP_X0, VDP_X1};
static const fmi3ValueReference derivatives[] = {VDP_DER_X0, VDP_DER_X1};

static void calculate(fmu_instance *inst) {
    double *v = inst->v;
    v[VDP_DER_X0] = v[VDP_X1];
    v[VDP_DER_X1] = v[VDP_MU] * (1.0 - v[VDP_X0] * v[VDP_X0]) * v[VDP_X1] - v[VDP_X0];
    v[VDP_Y] = v[VDP_X0];
}

const fmu_model fmu_this_model = {
    .identifier = "vanderpol",
    .token = "{3f2a8c1e-6b7d-4e59-9a0c-5d1e2f3a4b01}",
    .n_vars = VDP_N_VARS,
    .names = names,
    .access = access,
    .start = start,
    /* mu may also change in Continuous-Time mode, beyond the standard's
     * minimum (Initialization and Event mode): an importer can then set it
     * before each right-hand side evaluation without an event iteration. */
    .tunable_in_continuous_time = true,
    .n_states = 2,
    .states = states,
    .derivatives = derivatives,
    .calculate = calculate,
};
