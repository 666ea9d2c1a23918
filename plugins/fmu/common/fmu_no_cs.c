/* SPDX-License-Identifier: MIT */
/*
 * Co-Simulation's functions in a Model Exchange only FMU: refused with a
 * message.
 */
#include "fmu_instance.h"

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate) {
    (void)instanceName, (void)instantiationToken, (void)resourcePath, (void)visible;
    (void)loggingOn, (void)eventModeUsed, (void)earlyReturnAllowed;
    (void)requiredIntermediateVariables, (void)nRequiredIntermediateVariables;
    (void)intermediateUpdate;
    if (logMessage)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "fmi3InstantiateCoSimulation: this FMU is Model Exchange only");
    return NULL;
}

fmi3Status fmi3EnterStepMode(fmi3Instance instance) {
    return fmu_unsupported(instance, "fmi3EnterStepMode (Model Exchange only)");
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, const fmi3Int32 orders[],
                                    fmi3Float64 values[], size_t nValues) {
    (void)valueReferences, (void)nValueReferences, (void)orders, (void)values, (void)nValues;
    return fmu_unsupported(instance, "fmi3GetOutputDerivatives (Model Exchange only)");
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    (void)currentCommunicationPoint, (void)communicationStepSize;
    (void)noSetFMUStatePriorToCurrentPoint, (void)eventHandlingNeeded, (void)terminateSimulation;
    (void)earlyReturn, (void)lastSuccessfulTime;
    return fmu_unsupported(instance, "fmi3DoStep (Model Exchange only)");
}
