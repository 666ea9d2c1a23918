/* SPDX-License-Identifier: MIT */
/*
 * The parts of FMI 3.0 none of the bundled FMUs offers: Scheduled
 * Execution, clocks, Configuration Mode, variable dependencies at run time.
 * Each returns fmi3Error with a message, so that an importer that looks up
 * every function finds them all.
 */
#include "fmu_instance.h"

fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3ClockUpdateCallback clockUpdate,
    fmi3LockPreemptionCallback lockPreemption, fmi3UnlockPreemptionCallback unlockPreemption) {
    (void)instantiationToken, (void)resourcePath, (void)visible, (void)loggingOn;
    (void)clockUpdate, (void)lockPreemption, (void)unlockPreemption;
    if (logMessage)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "fmi3InstantiateScheduledExecution: this FMU does not support "
                   "Scheduled Execution");
    (void)instanceName;
    return NULL;
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime) {
    (void)clockReference, (void)activationTime;
    return fmu_unsupported(instance, "fmi3ActivateModelPartition");
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3Clock values[]) {
    (void)valueReferences, (void)nValueReferences, (void)values;
    return fmu_unsupported(instance, "fmi3GetClock (this FMU has no clocks)");
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3Clock values[]) {
    (void)valueReferences, (void)nValueReferences, (void)values;
    return fmu_unsupported(instance, "fmi3SetClock (this FMU has no clocks)");
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, fmi3Float64 intervals[],
                                  fmi3IntervalQualifier qualifiers[]) {
    (void)valueReferences, (void)nValueReferences, (void)intervals, (void)qualifiers;
    return fmu_unsupported(instance, "fmi3GetIntervalDecimal (this FMU has no clocks)");
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance instance,
                                   const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, fmi3UInt64 counters[],
                                   fmi3UInt64 resolutions[], fmi3IntervalQualifier qualifiers[]) {
    (void)valueReferences, (void)nValueReferences, (void)counters, (void)resolutions;
    (void)qualifiers;
    return fmu_unsupported(instance, "fmi3GetIntervalFraction (this FMU has no clocks)");
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, fmi3Float64 shifts[]) {
    (void)valueReferences, (void)nValueReferences, (void)shifts;
    return fmu_unsupported(instance, "fmi3GetShiftDecimal (this FMU has no clocks)");
}

fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, fmi3UInt64 counters[],
                                fmi3UInt64 resolutions[]) {
    (void)valueReferences, (void)nValueReferences, (void)counters, (void)resolutions;
    return fmu_unsupported(instance, "fmi3GetShiftFraction (this FMU has no clocks)");
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, const fmi3Float64 intervals[]) {
    (void)valueReferences, (void)nValueReferences, (void)intervals;
    return fmu_unsupported(instance, "fmi3SetIntervalDecimal (this FMU has no clocks)");
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance instance,
                                   const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[]) {
    (void)valueReferences, (void)nValueReferences, (void)counters, (void)resolutions;
    return fmu_unsupported(instance, "fmi3SetIntervalFraction (this FMU has no clocks)");
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, const fmi3Float64 shifts[]) {
    (void)valueReferences, (void)nValueReferences, (void)shifts;
    return fmu_unsupported(instance, "fmi3SetShiftDecimal (this FMU has no clocks)");
}

fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, const fmi3UInt64 counters[],
                                const fmi3UInt64 resolutions[]) {
    (void)valueReferences, (void)nValueReferences, (void)counters, (void)resolutions;
    return fmu_unsupported(instance, "fmi3SetShiftFraction (this FMU has no clocks)");
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) {
    return fmu_unsupported(instance, "fmi3EvaluateDiscreteStates (this FMU has no clocks)");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) {
    return fmu_unsupported(instance, "fmi3EnterConfigurationMode (no structural parameters)");
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) {
    return fmu_unsupported(instance, "fmi3ExitConfigurationMode (no structural parameters)");
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance,
                                               fmi3ValueReference valueReference,
                                               size_t *nDependencies) {
    (void)valueReference, (void)nDependencies;
    return fmu_unsupported(instance,
                           "fmi3GetNumberOfVariableDependencies (see ModelStructure instead)");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[],
                                       fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies) {
    (void)dependent, (void)elementIndicesOfDependent, (void)independents;
    (void)elementIndicesOfIndependents, (void)dependencyKinds, (void)nDependencies;
    return fmu_unsupported(instance, "fmi3GetVariableDependencies (see ModelStructure instead)");
}
