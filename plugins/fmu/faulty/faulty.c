/* SPDX-License-Identifier: MIT */
/*
 * An FMU that fails on request, for an importer's fault handling: the
 * fixed parameter `fault` chooses how. 1: fmi3DoStep returns fmi3Error;
 * 2: fmi3Fatal; 3: it crashes (a write through a NULL pointer); 4: it never
 * returns; 5: fmi3ExitInitializationMode returns fmi3Error. Otherwise
 * y' = 1.
 */
#include <time.h>

#include "fmu_instance.h"

enum { TIME, FAULT, Y, N_VARS };

enum { FAULT_ERROR = 1, FAULT_FATAL = 2, FAULT_CRASH = 3, FAULT_HANG = 4, FAULT_INIT = 5 };

static const char *const names[N_VARS] = {[TIME] = "time", [FAULT] = "fault", [Y] = "y"};

static const fmu_access access[N_VARS] = {[FAULT] = FMU_FIXED};

static const double start[N_VARS] = {[FAULT] = 0.0, [Y] = 0.0};

static int fault_of(const fmu_instance *inst) {
    double f = inst->v[FAULT];
    return f >= 0.0 && f <= 100.0 ? (int)f : 0;
}

static fmi3Status initialize(fmu_instance *inst) {
    if (fault_of(inst) != FAULT_INIT) return fmi3OK;
    fmu_log(inst, fmi3Error, "%s: fault 5: fmi3ExitInitializationMode fails as asked",
            inst->name);
    return fmi3Error;
}

static void crash(void) {
    /* Both volatile: the load of the pointer and the store through it stay
     * (with only the pointer volatile, the store was dropped). */
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
}

static void hang(void) {
    for (;;) {
        struct timespec second = {1, 0};
        nanosleep(&second, NULL);
    }
}

static fmi3Status step(fmu_instance *inst, double t, double h) {
    switch (fault_of(inst)) {
    case FAULT_ERROR:
        fmu_log(inst, fmi3Error, "%s: fault 1: fmi3DoStep at t = %g fails with fmi3Error",
                inst->name, t);
        return fmi3Error;
    case FAULT_FATAL:
        fmu_log(inst, fmi3Fatal, "%s: fault 2: fmi3DoStep at t = %g fails with fmi3Fatal",
                inst->name, t);
        return fmi3Fatal;
    case FAULT_CRASH:
        crash();
        return fmi3Fatal;
    case FAULT_HANG:
        hang();
        return fmi3Fatal;
    default:
        inst->v[Y] += h;
        return fmi3OK;
    }
}

const fmu_model fmu_this_model = {
    .identifier = "faulty",
    .token = "{e1f3a5c7-8b9d-4c2e-9f4a-6b8d0c1e2f04}",
    .n_vars = N_VARS,
    .names = names,
    .access = access,
    .start = start,
    .initialize = initialize,
    .step = step,
};
