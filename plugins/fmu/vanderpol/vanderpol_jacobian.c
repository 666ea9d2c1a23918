/* SPDX-License-Identifier: MIT */
/*
 * The Van der Pol FMU's exact Jacobian J = d(der(x0), der(x1), y) /
 * d(x0, x1, mu), offered as directional (J seed) and adjoint (seed^T J)
 * derivatives.
 */
#include "vanderpol.h"

#include "fmu_instance.h"

/* d unknown / d known at the current values; -1 when either is not one. */
static int partial(const double *v, fmi3ValueReference unknown, fmi3ValueReference known,
                   double *out) {
    double x0 = v[VDP_X0], x1 = v[VDP_X1], mu = v[VDP_MU];
    if (known != VDP_X0 && known != VDP_X1 && known != VDP_MU) return -1;
    switch (unknown) {
    case VDP_DER_X0:
        *out = known == VDP_X1 ? 1.0 : 0.0;
        return 0;
    case VDP_DER_X1:
        *out = known == VDP_X0   ? -2.0 * mu * x0 * x1 - 1.0
               : known == VDP_X1 ? mu * (1.0 - x0 * x0)
                                 : (1.0 - x0 * x0) * x1;
        return 0;
    case VDP_Y:
        *out = known == VDP_X0 ? 1.0 : 0.0;
        return 0;
    default:
        return -1;
    }
}

static const unsigned derivative_modes = FMU_IN(FMU_INITIALIZATION) | FMU_IN(FMU_EVENT) |
                                         FMU_IN(FMU_CONTINUOUS_TIME) | FMU_IN(FMU_TERMINATED);

/* Checks the call; 0 when every pair is a partial the model has. */
static int check(fmu_instance *inst, const char *function, const fmi3ValueReference unknowns[],
                 size_t n_unknowns, const fmi3ValueReference knowns[], size_t n_knowns,
                 size_t n_seed, size_t want_seed, size_t n_sens, size_t want_sens) {
    if (fmu_check_mode(inst, function, derivative_modes) != 0) return -1;
    if (n_seed != want_seed || n_sens != want_sens) {
        fmu_log(inst, fmi3Error, "%s: %s: %zu seeds and %zu sensitivities for %zu unknowns and "
                "%zu knowns (want %zu and %zu)", inst->name, function, n_seed, n_sens, n_unknowns,
                n_knowns, want_seed, want_sens);
        return -1;
    }
    double ignored;
    for (size_t i = 0; i < n_unknowns; i++)
        if (partial(inst->v, unknowns[i], VDP_X0, &ignored) != 0) {
            fmu_log(inst, fmi3Error,
                    "%s: %s: value reference %u is not an unknown (der(x0) %d, der(x1) %d, y %d)",
                    inst->name, function, (unsigned)unknowns[i], VDP_DER_X0, VDP_DER_X1, VDP_Y);
            return -1;
        }
    for (size_t j = 0; j < n_knowns; j++)
        if (partial(inst->v, VDP_Y, knowns[j], &ignored) != 0) {
            fmu_log(inst, fmi3Error,
                    "%s: %s: value reference %u is not a known (x0 %d, x1 %d, mu %d)",
                    inst->name, function, (unsigned)knowns[j], VDP_X0, VDP_X1, VDP_MU);
            return -1;
        }
    return 0;
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[],
                                        size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                        fmi3Float64 sensitivity[], size_t nSensitivity) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (check(inst, "fmi3GetDirectionalDerivative", unknowns, nUnknowns, knowns, nKnowns, nSeed,
              nKnowns, nSensitivity, nUnknowns) != 0)
        return fmu_fail(inst, fmi3Error);
    for (size_t i = 0; i < nUnknowns; i++) {
        double sum = 0.0, d = 0.0; /* partial sets it for every pair check() let through */
        for (size_t j = 0; j < nKnowns; j++) {
            partial(inst->v, unknowns[i], knowns[j], &d);
            sum += d * seed[j];
        }
        sensitivity[i] = sum;
    }
    return fmi3OK;
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                    fmi3Float64 sensitivity[], size_t nSensitivity) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (check(inst, "fmi3GetAdjointDerivative", unknowns, nUnknowns, knowns, nKnowns, nSeed,
              nUnknowns, nSensitivity, nKnowns) != 0)
        return fmu_fail(inst, fmi3Error);
    for (size_t j = 0; j < nKnowns; j++) {
        double sum = 0.0, d = 0.0; /* partial sets it for every pair check() let through */
        for (size_t i = 0; i < nUnknowns; i++) {
            partial(inst->v, unknowns[i], knowns[j], &d);
            sum += seed[i] * d;
        }
        sensitivity[j] = sum;
    }
    return fmi3OK;
}
