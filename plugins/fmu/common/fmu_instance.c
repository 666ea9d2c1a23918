/* SPDX-License-Identifier: MIT */
/*
 * The life cycle shared by the bundled FMUs: instantiation (checking the
 * instantiationToken), initialization, termination, reset, freeing, and
 * logging through the importer's callback.
 */
#include "fmu_instance.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *category_of(fmi3Status status) {
    switch (status) {
    case fmi3OK: return "logAll";
    case fmi3Warning:
    case fmi3Discard: return "logStatusWarning";
    case fmi3Error: return "logStatusError";
    default: return "logStatusFatal";
    }
}

static void log_to(fmi3LogMessageCallback log_message, fmi3InstanceEnvironment env,
                   bool logging_on, fmi3Status status, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

static void log_to(fmi3LogMessageCallback log_message, fmi3InstanceEnvironment env,
                   bool logging_on, fmi3Status status, const char *fmt, va_list ap) {
    if (!log_message || (status < fmi3Warning && !logging_on)) return;
    char text[512];
    vsnprintf(text, sizeof text, fmt, ap);
    log_message(env, status, category_of(status), text);
}

void fmu_log(const fmu_instance *inst, fmi3Status status, const char *fmt, ...) {
    if (!inst) return;
    va_list ap;
    va_start(ap, fmt);
    log_to(inst->log_message, inst->env, inst->logging_on, status, fmt, ap);
    va_end(ap);
}

/* Before an instance exists: the callback given to the instantiate call. */
static void log_early(fmi3LogMessageCallback log_message, fmi3InstanceEnvironment env,
                      const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void log_early(fmi3LogMessageCallback log_message, fmi3InstanceEnvironment env,
                      const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_to(log_message, env, true, fmi3Error, fmt, ap);
    va_end(ap);
}

const char *fmu_mode_name(fmu_mode mode) {
    static const char *const names[] = {
        "Instantiated", "Initialization Mode", "Event Mode", "Continuous-Time Mode",
        "Step Mode", "Terminated", "an error state (after fmi3Error)",
        "a fatal state (after fmi3Fatal)",
    };
    return (unsigned)mode < sizeof names / sizeof names[0] ? names[mode] : "an unknown mode";
}

static void set_start_values(fmu_instance *inst) {
    const fmu_model *m = inst->model;
    memset(inst->v, 0, sizeof inst->v);
    memcpy(inst->v, m->start, m->n_vars * sizeof m->start[0]);
}

fmu_instance *fmu_instantiate(fmu_kind kind, fmi3String name, fmi3String token,
                              fmi3InstanceEnvironment env, fmi3LogMessageCallback log_message,
                              bool logging_on) {
    const fmu_model *m = &fmu_this_model;
    const char *shown = name ? name : "";
    if (!token || strcmp(token, m->token) != 0) {
        log_early(log_message, env,
                  "%s: instantiationToken \"%s\" does not match this binary's \"%s\" "
                  "(modelDescription.xml and binary are from different builds)",
                  shown, token ? token : "(null)", m->token);
        return NULL;
    }
    fmu_instance *inst = calloc(1, sizeof *inst);
    char *copy = strdup(shown);
    if (!inst || !copy) {
        free(inst);
        free(copy);
        log_early(log_message, env, "%s: out of memory for the instance", shown);
        return NULL;
    }
    inst->model = m;
    inst->kind = kind;
    inst->mode = FMU_INSTANTIATED;
    inst->name = copy;
    inst->env = env;
    inst->log_message = log_message;
    inst->logging_on = logging_on;
    set_start_values(inst);
    if (m->admit && m->admit(inst) != 0) {
        free(inst->name);
        free(inst);
        return NULL;
    }
    fmu_log(inst, fmi3OK, "%s: instantiated (%s)", shown,
            kind == FMU_KIND_ME ? "Model Exchange" : "Co-Simulation");
    return inst;
}

int fmu_check_mode(fmu_instance *inst, const char *function, unsigned allowed) {
    if (allowed & FMU_IN(inst->mode)) return 0;
    fmu_log(inst, fmi3Error, "%s: %s is not allowed in %s", inst->name, function,
            fmu_mode_name(inst->mode));
    return -1;
}

fmi3Status fmu_fail(fmu_instance *inst, fmi3Status status) {
    if (status == fmi3Error && inst->mode != FMU_BROKEN) inst->mode = FMU_FAILED;
    if (status == fmi3Fatal) inst->mode = FMU_BROKEN;
    return status;
}

fmi3Status fmu_unsupported(fmi3Instance instance, const char *function) {
    fmu_instance *inst = instance;
    if (inst)
        fmu_log(inst, fmi3Error, "%s: %s is not supported by %s", inst->name, function,
                inst->model->identifier);
    return fmi3Error;
}

const char *fmi3GetVersion(void) {
    return fmi3Version;
}

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[]) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    (void)nCategories;
    (void)categories;   /* every category is switched on or off together */
    inst->logging_on = loggingOn;
    return fmi3OK;
}

void fmi3FreeInstance(fmi3Instance instance) {
    fmu_instance *inst = instance;
    if (!inst) return;
    if (inst->model->release) inst->model->release(inst);
    free(inst->name);
    free(inst);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    (void)toleranceDefined;
    (void)tolerance;
    if (fmu_check_mode(inst, "fmi3EnterInitializationMode", FMU_IN(FMU_INSTANTIATED)) != 0)
        return fmu_fail(inst, fmi3Error);
    if (stopTimeDefined && stopTime < startTime) {
        fmu_log(inst, fmi3Error, "%s: stopTime %g is before startTime %g", inst->name, stopTime,
                startTime);
        return fmu_fail(inst, fmi3Error);
    }
    inst->v[0] = startTime;
    inst->mode = FMU_INITIALIZATION;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3ExitInitializationMode", FMU_IN(FMU_INITIALIZATION)) != 0)
        return fmu_fail(inst, fmi3Error);
    if (inst->model->initialize) {
        fmi3Status status = inst->model->initialize(inst);
        if (status > fmi3Warning) return fmu_fail(inst, status);
    }
    if (inst->model->calculate) inst->model->calculate(inst);
    inst->mode = inst->kind == FMU_KIND_ME ? FMU_EVENT : FMU_STEP;
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance instance) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3Terminate",
                       FMU_IN(FMU_EVENT) | FMU_IN(FMU_CONTINUOUS_TIME) | FMU_IN(FMU_STEP)) != 0)
        return fmu_fail(inst, fmi3Error);
    inst->mode = FMU_TERMINATED;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance instance) {
    fmu_instance *inst = instance;
    if (!inst) return fmi3Error;
    if (fmu_check_mode(inst, "fmi3Reset", ~FMU_IN(FMU_BROKEN)) != 0) return fmi3Error;
    set_start_values(inst);
    inst->mode = FMU_INSTANTIATED;
    return fmi3OK;
}
