/* SPDX-License-Identifier: MIT */
/*
 * Model Exchange's functions (and event mode's) in a Co-Simulation only
 * FMU: refused with a message.
 */
#include "fmu_instance.h"

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage) {
    (void)instanceName, (void)instantiationToken, (void)resourcePath, (void)visible;
    (void)loggingOn;
    if (logMessage)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "fmi3InstantiateModelExchange: this FMU is Co-Simulation only");
    return NULL;
}

#define CS_ONLY " (Co-Simulation only, no event mode)"

fmi3Status fmi3EnterEventMode(fmi3Instance instance) {
    return fmu_unsupported(instance, "fmi3EnterEventMode" CS_ONLY);
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime) {
    (void)discreteStatesNeedUpdate, (void)terminateSimulation;
    (void)nominalsOfContinuousStatesChanged, (void)valuesOfContinuousStatesChanged;
    (void)nextEventTimeDefined, (void)nextEventTime;
    return fmu_unsupported(instance, "fmi3UpdateDiscreteStates" CS_ONLY);
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) {
    return fmu_unsupported(instance, "fmi3EnterContinuousTimeMode" CS_ONLY);
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode,
                                       fmi3Boolean *terminateSimulation) {
    (void)noSetFMUStatePriorToCurrentPoint, (void)enterEventMode, (void)terminateSimulation;
    return fmu_unsupported(instance, "fmi3CompletedIntegratorStep" CS_ONLY);
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
    (void)time;
    return fmu_unsupported(instance, "fmi3SetTime" CS_ONLY);
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    (void)continuousStates, (void)nContinuousStates;
    return fmu_unsupported(instance, "fmi3SetContinuousStates" CS_ONLY);
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                             size_t nContinuousStates) {
    (void)derivatives, (void)nContinuousStates;
    return fmu_unsupported(instance, "fmi3GetContinuousStateDerivatives" CS_ONLY);
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[],
                                  size_t nEventIndicators) {
    (void)eventIndicators, (void)nEventIndicators;
    return fmu_unsupported(instance, "fmi3GetEventIndicators" CS_ONLY);
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    (void)continuousStates, (void)nContinuousStates;
    return fmu_unsupported(instance, "fmi3GetContinuousStates" CS_ONLY);
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                             size_t nContinuousStates) {
    (void)nominals, (void)nContinuousStates;
    return fmu_unsupported(instance, "fmi3GetNominalsOfContinuousStates" CS_ONLY);
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators) {
    (void)nEventIndicators;
    return fmu_unsupported(instance, "fmi3GetNumberOfEventIndicators" CS_ONLY);
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates) {
    (void)nContinuousStates;
    return fmu_unsupported(instance, "fmi3GetNumberOfContinuousStates" CS_ONLY);
}
