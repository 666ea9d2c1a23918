/* SPDX-License-Identifier: MIT */
/*
 * The instance every bundled FMU shares: one table describing the model
 * (its Float64 variables, value reference = index, and the hooks where the
 * models differ), the instance struct, the FMI 3.0 modes and logging.
 *
 * Every variable of these FMUs is a scalar Float64; value reference 0 is
 * always the independent variable `time`.
 */
#ifndef FMU_INSTANCE_H
#define FMU_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>

#include "fmi3Functions.h"

#define FMU_MAX_VARS 16

/* When fmi3SetFloat64 may write a variable. */
typedef enum {
    FMU_READ_ONLY,   /* independent, output, local calculated, derivative */
    FMU_FIXED,       /* fixed parameter, start of a state: before initialization ends */
    FMU_TUNABLE,     /* tunable parameter: also in Event/Step mode */
    FMU_INPUT,       /* input: also in Step, Event and Continuous-Time mode */
} fmu_access;

typedef enum {
    FMU_INSTANTIATED,
    FMU_INITIALIZATION,
    FMU_EVENT,
    FMU_CONTINUOUS_TIME,
    FMU_STEP,
    FMU_TERMINATED,
    FMU_FAILED,      /* after fmi3Error: only fmi3Reset and fmi3FreeInstance help */
    FMU_BROKEN,      /* after fmi3Fatal: only fmi3FreeInstance */
} fmu_mode;

typedef enum { FMU_KIND_ME, FMU_KIND_CS } fmu_kind;

typedef struct fmu_instance fmu_instance;

typedef struct {
    const char *identifier;         /* modelIdentifier, for messages */
    const char *token;              /* instantiationToken */
    size_t n_vars;                  /* value references 0 .. n_vars - 1 */
    const char *const *names;       /* per value reference */
    const fmu_access *access;       /* per value reference */
    const double *start;            /* per value reference */
    /* Tunable parameters may also be set in Continuous-Time mode. */
    bool tunable_in_continuous_time;
    /* Model Exchange: the continuous states and their derivatives. */
    size_t n_states;
    const fmi3ValueReference *states, *derivatives;
    /* Computes the dependent variables (derivatives, outputs) from the
     * states, inputs and parameters. */
    void (*calculate)(fmu_instance *inst);
    /* At fmi3ExitInitializationMode: the states from their parameters. */
    fmi3Status (*initialize)(fmu_instance *inst);
    /* Co-Simulation: advance v[] from time t by h. */
    fmi3Status (*step)(fmu_instance *inst, double t, double h);
    /* Optional: refuse an instantiation (0 admits), and its undoing. */
    int (*admit)(fmu_instance *inst);
    void (*release)(fmu_instance *inst);
} fmu_model;

struct fmu_instance {
    const fmu_model *model;
    fmu_kind kind;
    fmu_mode mode;
    char *name;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log_message;
    bool logging_on;
    double v[FMU_MAX_VARS];         /* v[0] is the time */
};

/* The one model this shared object holds; each FMU defines it. */
extern const fmu_model fmu_this_model;

/* Logs through the importer's callback: errors and warnings always, the
 * rest only with logging on. inst may be NULL (nothing is logged). */
void fmu_log(const fmu_instance *inst, fmi3Status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Allocates an instance after checking the token; NULL on a mismatch or
 * without memory (the reason logged through log_message). */
fmu_instance *fmu_instantiate(fmu_kind kind, fmi3String name, fmi3String token,
                              fmi3InstanceEnvironment env, fmi3LogMessageCallback log_message,
                              bool logging_on);

/* 0 when inst is in one of the modes of the bit mask `allowed`
 * (FMU_IN(mode) | ...); otherwise logs that `function` is not allowed
 * now and returns -1. */
#define FMU_IN(m) (1u << (m))
int fmu_check_mode(fmu_instance *inst, const char *function, unsigned allowed);

/* Records a failing status: Error -> FAILED, Fatal -> BROKEN. */
fmi3Status fmu_fail(fmu_instance *inst, fmi3Status status);

/* Logs that `function` is not supported by this FMU; fmi3Error. */
fmi3Status fmu_unsupported(fmi3Instance instance, const char *function);

const char *fmu_mode_name(fmu_mode mode);

#endif
