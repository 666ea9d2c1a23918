/* SPDX-License-Identifier: MIT */
/*
 * fmi3GetFloat64 / fmi3SetFloat64 over the model's table, with the rules of
 * when each kind of variable may be set; the other variable types do not
 * occur in these FMUs and are refused.
 */
#include "fmu_instance.h"

/* Modes in which fmi3SetFloat64 may write a variable of this access. */
static unsigned settable_in(const fmu_instance *inst, fmu_access access) {
    unsigned before = FMU_IN(FMU_INSTANTIATED) | FMU_IN(FMU_INITIALIZATION);
    switch (access) {
    case FMU_FIXED:
        return before;
    case FMU_TUNABLE:
        /* Continuous-Time mode goes beyond the standard's minimum (which is
         * Event mode for Model Exchange): a model opts in for importers that
         * change a parameter between right-hand side evaluations. */
        return before | FMU_IN(FMU_EVENT) | FMU_IN(FMU_STEP) |
               (inst->model->tunable_in_continuous_time ? FMU_IN(FMU_CONTINUOUS_TIME) : 0u);
    case FMU_INPUT:
        return before | FMU_IN(FMU_EVENT) | FMU_IN(FMU_STEP) | FMU_IN(FMU_CONTINUOUS_TIME);
    default:
        return 0;
    }
}

static int check_counts(fmu_instance *inst, const char *function, size_t nvr, size_t nvalues) {
    if (nvr == nvalues) return 0;
    fmu_log(inst, fmi3Error, "%s: %s: %zu value references but %zu values", inst->name, function,
            nvr, nvalues);
    return -1;
}

static int check_vr(fmu_instance *inst, const char *function, fmi3ValueReference vr) {
    if (vr < inst->model->n_vars) return 0;
    fmu_log(inst, fmi3Error, "%s: %s: no Float64 variable has value reference %u", inst->name,
            function, (unsigned)vr);
    return -1;
}

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, fmi3Float64 values[], size_t nValues) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3GetFloat64", ~FMU_IN(FMU_BROKEN)) != 0) return fmi3Error;
    if (check_counts(inst, "fmi3GetFloat64", nValueReferences, nValues) != 0) return fmi3Error;
    for (size_t i = 0; i < nValueReferences; i++)
        if (check_vr(inst, "fmi3GetFloat64", valueReferences[i]) != 0) return fmi3Error;
    if (inst->model->calculate) inst->model->calculate(inst);
    for (size_t i = 0; i < nValueReferences; i++) values[i] = inst->v[valueReferences[i]];
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, const fmi3Float64 values[], size_t nValues) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (check_counts(inst, "fmi3SetFloat64", nValueReferences, nValues) != 0)
        return fmu_fail(inst, fmi3Error);
    const fmu_model *m = inst->model;
    /* All checked before any is written: a refused call changes nothing. */
    for (size_t i = 0; i < nValueReferences; i++) {
        fmi3ValueReference vr = valueReferences[i];
        if (check_vr(inst, "fmi3SetFloat64", vr) != 0) return fmu_fail(inst, fmi3Error);
        if (!(settable_in(inst, m->access[vr]) & FMU_IN(inst->mode))) {
            fmu_log(inst, fmi3Error, "%s: fmi3SetFloat64: %s (value reference %u) %s in %s",
                    inst->name, m->names[vr], (unsigned)vr,
                    m->access[vr] == FMU_READ_ONLY ? "can never be set" : "cannot be set",
                    fmu_mode_name(inst->mode));
            return fmu_fail(inst, fmi3Error);
        }
    }
    for (size_t i = 0; i < nValueReferences; i++) inst->v[valueReferences[i]] = values[i];
    return fmi3OK;
}

/* The types these FMUs have no variables of. */
#define NO_GET(fn, type)                                                                      \
    fmi3Status fn(fmi3Instance instance, const fmi3ValueReference valueReferences[],         \
                  size_t nValueReferences, type values[], size_t nValues) {                  \
        (void)valueReferences, (void)nValueReferences, (void)values, (void)nValues;           \
        return fmu_unsupported(instance, #fn " (this FMU has only Float64 variables)");       \
    }
#define NO_SET(fn, type) NO_GET(fn, const type)

NO_GET(fmi3GetFloat32, fmi3Float32)
NO_GET(fmi3GetInt8, fmi3Int8)
NO_GET(fmi3GetUInt8, fmi3UInt8)
NO_GET(fmi3GetInt16, fmi3Int16)
NO_GET(fmi3GetUInt16, fmi3UInt16)
NO_GET(fmi3GetInt32, fmi3Int32)
NO_GET(fmi3GetUInt32, fmi3UInt32)
NO_GET(fmi3GetInt64, fmi3Int64)
NO_GET(fmi3GetUInt64, fmi3UInt64)
NO_GET(fmi3GetBoolean, fmi3Boolean)
NO_GET(fmi3GetString, fmi3String)
NO_SET(fmi3SetFloat32, fmi3Float32)
NO_SET(fmi3SetInt8, fmi3Int8)
NO_SET(fmi3SetUInt8, fmi3UInt8)
NO_SET(fmi3SetInt16, fmi3Int16)
NO_SET(fmi3SetUInt16, fmi3UInt16)
NO_SET(fmi3SetInt32, fmi3Int32)
NO_SET(fmi3SetUInt32, fmi3UInt32)
NO_SET(fmi3SetInt64, fmi3Int64)
NO_SET(fmi3SetUInt64, fmi3UInt64)
NO_SET(fmi3SetBoolean, fmi3Boolean)
NO_SET(fmi3SetString, fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, size_t valueSizes[], fmi3Binary values[],
                         size_t nValues) {
    (void)valueReferences, (void)nValueReferences, (void)valueSizes, (void)values, (void)nValues;
    return fmu_unsupported(instance, "fmi3GetBinary (this FMU has only Float64 variables)");
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, const size_t valueSizes[],
                         const fmi3Binary values[], size_t nValues) {
    (void)valueReferences, (void)nValueReferences, (void)valueSizes, (void)values, (void)nValues;
    return fmu_unsupported(instance, "fmi3SetBinary (this FMU has only Float64 variables)");
}
