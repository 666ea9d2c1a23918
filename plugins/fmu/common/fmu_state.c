/* SPDX-License-Identifier: MIT */
/*
 * FMU states (fmi3GetFMUState / SetFMUState / FreeFMUState): a copy of the
 * variables, time included. The mode is not part of it: restoring a state
 * rewinds the model, not the importer's place in the life cycle.
 * Serialization is not offered (canSerializeFMUState="false").
 */
#include <stdlib.h>
#include <string.h>

#include "fmu_instance.h"

typedef struct {
    const fmu_model *model;   /* which model the copy is of */
    double v[FMU_MAX_VARS];
} fmu_saved;

static const unsigned live_modes = FMU_IN(FMU_INSTANTIATED) | FMU_IN(FMU_INITIALIZATION) |
                                   FMU_IN(FMU_EVENT) | FMU_IN(FMU_CONTINUOUS_TIME) |
                                   FMU_IN(FMU_STEP) | FMU_IN(FMU_TERMINATED);

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
    fmu_instance *inst = instance;
    if (!inst || !FMUState) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3GetFMUState", live_modes) != 0) return fmi3Error;
    fmu_saved *saved = *FMUState;
    if (!saved) {   /* NULL asks for a new state; otherwise the given one is overwritten */
        saved = malloc(sizeof *saved);
        if (!saved) {
            fmu_log(inst, fmi3Error, "%s: fmi3GetFMUState: out of memory", inst->name);
            return fmi3Error;
        }
    }
    saved->model = inst->model;
    memcpy(saved->v, inst->v, sizeof saved->v);
    *FMUState = saved;
    return fmi3OK;
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3SetFMUState", live_modes) != 0) return fmi3Error;
    const fmu_saved *saved = FMUState;
    if (!saved || saved->model != inst->model) {
        fmu_log(inst, fmi3Error, "%s: fmi3SetFMUState: %s", inst->name,
                saved ? "the state is not one of this model's" : "the state is NULL");
        return fmi3Error;
    }
    memcpy(inst->v, saved->v, sizeof inst->v);
    return fmi3OK;
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
    if (!instance || !FMUState) return fmi3Error;
    free(*FMUState);
    *FMUState = NULL;
    return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState,
                                      size_t *size) {
    (void)FMUState, (void)size;
    return fmu_unsupported(instance, "fmi3SerializedFMUStateSize");
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState,
                                 fmi3Byte serializedState[], size_t size) {
    (void)FMUState, (void)serializedState, (void)size;
    return fmu_unsupported(instance, "fmi3SerializeFMUState");
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[],
                                   size_t size, fmi3FMUState *FMUState) {
    (void)serializedState, (void)size, (void)FMUState;
    return fmu_unsupported(instance, "fmi3DeserializeFMUState");
}
