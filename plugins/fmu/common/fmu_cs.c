/* SPDX-License-Identifier: MIT */
/*
 * Co-Simulation over the model's table: instantiation and fmi3DoStep,
 * which checks the communication point and step and hands them to the
 * model's step. No event mode, no early return, no output derivatives.
 */
#include <math.h>

#include "fmu_instance.h"

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate) {
    (void)resourcePath, (void)visible, (void)earlyReturnAllowed;
    (void)requiredIntermediateVariables, (void)nRequiredIntermediateVariables;
    (void)intermediateUpdate;
    if (eventModeUsed) {
        /* hasEventMode is false in every bundled Co-Simulation FMU. */
        if (logMessage)
            logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                       "fmi3InstantiateCoSimulation: eventModeUsed, but this FMU has no "
                       "event mode");
        return NULL;
    }
    return fmu_instantiate(FMU_KIND_CS, instanceName, instantiationToken, instanceEnvironment,
                           logMessage, loggingOn);
}

fmi3Status fmi3EnterStepMode(fmi3Instance instance) {
    return fmu_unsupported(instance, "fmi3EnterStepMode (no event mode: Step Mode follows "
                                     "fmi3ExitInitializationMode)");
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, const fmi3Int32 orders[],
                                    fmi3Float64 values[], size_t nValues) {
    (void)valueReferences, (void)nValueReferences, (void)orders, (void)values, (void)nValues;
    return fmu_unsupported(instance, "fmi3GetOutputDerivatives (maxOutputDerivativeOrder is 0)");
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    fmu_instance *inst = instance;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3DoStep", FMU_IN(FMU_STEP)) != 0) return fmu_fail(inst, fmi3Error);
    double t = currentCommunicationPoint, h = communicationStepSize, now = inst->v[0];
    if (!(h > 0.0) || !isfinite(h)) {
        fmu_log(inst, fmi3Error, "%s: fmi3DoStep: communicationStepSize %g is not positive",
                inst->name, h);
        return fmu_fail(inst, fmi3Error);
    }
    /* The importer's sum of steps and the FMU's own may differ by rounding. */
    if (!(fabs(t - now) <= 1e-9 * fmax(1.0, fabs(now)))) {
        fmu_log(inst, fmi3Error,
                "%s: fmi3DoStep: currentCommunicationPoint %.17g is not the FMU's time %.17g",
                inst->name, t, now);
        return fmu_fail(inst, fmi3Error);
    }
    if (eventHandlingNeeded) *eventHandlingNeeded = fmi3False;
    if (terminateSimulation) *terminateSimulation = fmi3False;
    if (earlyReturn) *earlyReturn = fmi3False;
    fmi3Status status = inst->model->step(inst, t, h);
    if (status > fmi3Warning) {
        if (lastSuccessfulTime) *lastSuccessfulTime = now;
        return fmu_fail(inst, status);
    }
    inst->v[0] = t + h;
    if (lastSuccessfulTime) *lastSuccessfulTime = inst->v[0];
    return status;
}
