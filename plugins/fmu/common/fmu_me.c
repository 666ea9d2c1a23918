/* SPDX-License-Identifier: MIT */
/*
 * Model Exchange over the model's table: instantiation, the event and
 * continuous-time modes (these models have no events: every event
 * iteration ends at once), and the continuous states and derivatives.
 */
#include "fmu_instance.h"

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage) {
    (void)resourcePath, (void)visible;
    return fmu_instantiate(FMU_KIND_ME, instanceName, instantiationToken, instanceEnvironment,
                           logMessage, loggingOn);
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3EnterEventMode", FMU_IN(FMU_CONTINUOUS_TIME)) != 0)
        return fmu_fail(inst, fmi3Error);
    inst->mode = FMU_EVENT;
    return fmi3OK;
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3UpdateDiscreteStates", FMU_IN(FMU_EVENT)) != 0)
        return fmu_fail(inst, fmi3Error);
    /* No discrete states, no time events: nothing ever changes here. */
    if (discreteStatesNeedUpdate) *discreteStatesNeedUpdate = fmi3False;
    if (terminateSimulation) *terminateSimulation = fmi3False;
    if (nominalsOfContinuousStatesChanged) *nominalsOfContinuousStatesChanged = fmi3False;
    if (valuesOfContinuousStatesChanged) *valuesOfContinuousStatesChanged = fmi3False;
    if (nextEventTimeDefined) *nextEventTimeDefined = fmi3False;
    if (nextEventTime) *nextEventTime = 0.0;
    return fmi3OK;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3EnterContinuousTimeMode", FMU_IN(FMU_EVENT)) != 0)
        return fmu_fail(inst, fmi3Error);
    inst->mode = FMU_CONTINUOUS_TIME;
    return fmi3OK;
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode,
                                       fmi3Boolean *terminateSimulation) {
    fmu_instance *inst = instance;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3CompletedIntegratorStep", FMU_IN(FMU_CONTINUOUS_TIME)) != 0)
        return fmu_fail(inst, fmi3Error);
    if (enterEventMode) *enterEventMode = fmi3False;
    if (terminateSimulation) *terminateSimulation = fmi3False;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3SetTime", FMU_IN(FMU_EVENT) | FMU_IN(FMU_CONTINUOUS_TIME)) != 0)
        return fmu_fail(inst, fmi3Error);
    inst->v[0] = time;
    return fmi3OK;
}

static int check_states(fmu_instance *inst, const char *function, size_t n) {
    if (n == inst->model->n_states) return 0;
    fmu_log(inst, fmi3Error, "%s: %s: asked for %zu continuous states, the model has %zu",
            inst->name, function, n, inst->model->n_states);
    return -1;
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3SetContinuousStates",
                       FMU_IN(FMU_EVENT) | FMU_IN(FMU_CONTINUOUS_TIME)) != 0 ||
        check_states(inst, "fmi3SetContinuousStates", nContinuousStates) != 0)
        return fmu_fail(inst, fmi3Error);
    for (size_t i = 0; i < nContinuousStates; i++)
        inst->v[inst->model->states[i]] = continuousStates[i];
    return fmi3OK;
}

static const unsigned after_init = FMU_IN(FMU_INITIALIZATION) | FMU_IN(FMU_EVENT) |
                                   FMU_IN(FMU_CONTINUOUS_TIME) | FMU_IN(FMU_TERMINATED);

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                             size_t nContinuousStates) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3GetContinuousStateDerivatives", after_init) != 0 ||
        check_states(inst, "fmi3GetContinuousStateDerivatives", nContinuousStates) != 0)
        return fmu_fail(inst, fmi3Error);
    inst->model->calculate(inst);
    for (size_t i = 0; i < nContinuousStates; i++)
        derivatives[i] = inst->v[inst->model->derivatives[i]];
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3GetContinuousStates", after_init) != 0 ||
        check_states(inst, "fmi3GetContinuousStates", nContinuousStates) != 0)
        return fmu_fail(inst, fmi3Error);
    for (size_t i = 0; i < nContinuousStates; i++)
        continuousStates[i] = inst->v[inst->model->states[i]];
    return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                             size_t nContinuousStates) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (check_states(inst, "fmi3GetNominalsOfContinuousStates", nContinuousStates) != 0)
        return fmu_fail(inst, fmi3Error);
    for (size_t i = 0; i < nContinuousStates; i++) nominals[i] = 1.0;
    return fmi3OK;
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[],
                                  size_t nEventIndicators) {
    fmu_instance *inst = instance;
    (void)eventIndicators;
    if (!inst) return fmi3Error;
    if (nEventIndicators != 0) {
        fmu_log(inst, fmi3Error, "%s: fmi3GetEventIndicators: asked for %zu, the model has none",
                inst->name, nEventIndicators);
        return fmu_fail(inst, fmi3Error);
    }
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators) {
    if (!instance || !nEventIndicators) return fmi3Error;
    *nEventIndicators = 0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates) {
    fmu_instance *inst = instance;
    if (!inst || !nContinuousStates) return fmi3Error;
    *nContinuousStates = inst->model->n_states;
    return fmi3OK;
}
