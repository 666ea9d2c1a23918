/* SPDX-License-Identifier: MIT */
/*
 * An FMU that may be instantiated only once per process
 * (canBeInstantiatedOnlyOncePerProcess="true"), and means it: a
 * process-wide count of live instances refuses a second one. Its dynamics
 * are an integrator, y' = gain u, exact for u constant over a step.
 */
#include <stdatomic.h>

#include "fmu_instance.h"

enum { TIME, U, GAIN, Y, N_VARS };

static const char *const names[N_VARS] = {
    [TIME] = "time", [U] = "u", [GAIN] = "gain", [Y] = "y",
};

static const fmu_access access[N_VARS] = {
    [U] = FMU_INPUT, [GAIN] = FMU_FIXED,
};

static const double start[N_VARS] = {[U] = 0.0, [GAIN] = 1.0, [Y] = 0.0};

/* The process-global state: how many instances are alive (0 or 1). */
static atomic_int live_instances;

static int admit(fmu_instance *inst) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&live_instances, &expected, 1)) return 0;
    fmu_log(inst, fmi3Error,
            "%s: once can be instantiated only once per process, and an instance is alive",
            inst->name);
    return -1;
}

static void release(fmu_instance *inst) {
    (void)inst;
    atomic_store(&live_instances, 0);
}

static fmi3Status step(fmu_instance *inst, double t, double h) {
    (void)t;
    inst->v[Y] += h * inst->v[GAIN] * inst->v[U];
    return fmi3OK;
}

const fmu_model fmu_this_model = {
    .identifier = "once",
    .token = "{c5e7a9b1-4d6f-4812-a3c5-7e9f1b2d3c03}",
    .n_vars = N_VARS,
    .names = names,
    .access = access,
    .start = start,
    .step = step,
    .admit = admit,
    .release = release,
};
