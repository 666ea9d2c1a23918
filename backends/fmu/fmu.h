/* SPDX-License-Identifier: MIT */
/* The FMU backend: an FMI 3.0 Functional Mock-up Unit opened as a
 * component. Its pieces, one concern each:
 *   fmu_archive.c   a .fmu (a zip) unpacked into a private scratch folder,
 *                   refusing what could write outside it (libzip)
 *   fmu_describe.c  modelDescription.xml read into fmu_description (expat)
 *   fmu_library.c   the platform binary loaded (dlopen, or dlmopen in a new
 *                   namespace) and its functions found; one-instance-per-process
 *                   FMUs kept to one instance per namespace
 *   fmu_instance.c  an instance: instantiation, the FMU's log, statuses
 *   fmu_cosim.c     the Co-Simulation form: a trajectory over a grid t
 *   fmu_rhs.c       the Model Exchange right-hand side form
 *   fmu_simulate.c  the Model Exchange trajectory form: integrated here
 *                   with CVODES over a grid t
 *   fmu_sensitivity.c  its jvp and vjp: CVODES forward sensitivities
 *   fmu_sim_run.c   what those two share (fmu_sim.h)
 *   fmu_fields.c    the schema the forms share: field names from variables,
 *                   scalar parameters with their start values as defaults,
 *                   the trajectories' grid, the Model Exchange states
 *   fmu_backend.c   claims, open (form from the path's #fragment), close */
#ifndef TESSERA_BACKENDS_FMU_H
#define TESSERA_BACKENDS_FMU_H

#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"
#include "fmi3FunctionTypes.h"

/* What an archive may hold once unpacked, and what a description may be. */
#define FMU_MAX_UNPACKED_BYTES ((uint64_t)1 << 30)
#define FMU_MAX_ENTRIES 20000
#define FMU_MAX_DESCRIPTION_BYTES ((uint64_t)64 << 20)

/* ---- fmu_archive.c ------------------------------------------------------ */

typedef struct fmu_unpacked {
    char *dir;   /* the folder holding modelDescription.xml (absolute) */
    int owned;   /* 1: a scratch folder made here, removed by fmu_unpacked_free */
} fmu_unpacked;

/* path: a .fmu file (a zip archive) or an FMU's unpacked folder (used in
 * place, not owned). A zip is extracted into a fresh folder of its own
 * (mkdtemp, mode 0700, under $TMPDIR or /tmp). Refused, naming the entry:
 * an absolute name, a ".." component, a symbolic link or anything but a
 * regular file or folder, a name seen twice, more than FMU_MAX_ENTRIES
 * entries, more than max_bytes in all (the sizes the archive declares
 * are checked first, and the bytes actually written are counted, so a
 * lying header does not get past), a damaged entry (CRC), and an archive
 * without modelDescription.xml. Nothing is created outside the folder (files
 * are opened relative to it, O_NOFOLLOW|O_EXCL), and on any failure the
 * partly written folder is removed. 0, or TSR_E_LOAD / TSR_E_NOMEM /
 * TSR_E_IO with why ("'x.fmu': entry '../evil': ...").  */
int fmu_unpack(const char *path, uint64_t max_bytes, fmu_unpacked *out, char *why, size_t n);
/* Removes the folder when owned; frees dir. NULL and a zeroed struct are fine. */
void fmu_unpacked_free(fmu_unpacked *u);

/* ---- fmu_scratch.c ------------------------------------------------------ */

/* A fresh scratch folder (absolute, malloc'd), after removing this user's
 * scratch folders whose makers died; NULL with *code and why. */
char *fmu_scratch_make(char *why, size_t n, int *code);
/* The folder and all in it, never following a link: 0, or -1 with errno. */
int fmu_scratch_remove(const char *path);

/* ---- fmu_describe.c ----------------------------------------------------- */

typedef enum fmu_type {
    FMU_FLOAT64,
    FMU_FLOAT32,
    FMU_INT8,
    FMU_UINT8,
    FMU_INT16,
    FMU_UINT16,
    FMU_INT32,
    FMU_UINT32,
    FMU_INT64,
    FMU_UINT64,
    FMU_BOOLEAN,
    FMU_STRING,
    FMU_BINARY,
    FMU_CLOCK,
    FMU_ENUMERATION,
    FMU_TYPES
} fmu_type;

typedef enum fmu_causality {
    FMU_PARAMETER,
    FMU_CALCULATED_PARAMETER,
    FMU_INPUT,
    FMU_OUTPUT,
    FMU_LOCAL,
    FMU_INDEPENDENT,
    FMU_STRUCTURAL_PARAMETER
} fmu_causality;

typedef enum fmu_variability {
    FMU_CONSTANT,
    FMU_FIXED,
    FMU_TUNABLE,
    FMU_DISCRETE,
    FMU_CONTINUOUS
} fmu_variability;

typedef struct fmu_variable {
    char *name;
    char *description;     /* NULL when none */
    uint32_t vr;           /* valueReference */
    fmu_type type;
    fmu_causality causality;        /* default local */
    fmu_variability variability;    /* default continuous (Float*), else discrete */
    int has_start;
    double start;          /* numeric types and Boolean (0/1): the start value */
    int32_t derivative_of; /* Float64/32 with derivative="vr": index (in vars) of that state; -1 */
    int is_array;          /* has <Dimension> children: not served as a scalar */
    int line;              /* where it is in the file, for messages */
} fmu_variable;

typedef struct fmu_interface {
    int present;                     /* the element exists */
    char *model_identifier;
    int provides_directional_derivatives;
    int provides_adjoint_derivatives;
    int can_get_and_set_fmu_state;
    int can_serialize_fmu_state;
    int can_be_instantiated_only_once_per_process;
    int needs_completed_integrator_step; /* ME; default 0 when absent (FMI 3.0's schema) */
    int can_handle_variable_communication_step_size; /* CS */
    int has_event_mode;              /* CS */
    double fixed_internal_step_size; /* CS; 0 when not given */
} fmu_interface;

typedef struct fmu_description {
    char *fmi_version;               /* "3.0" (anything else is refused) */
    char *model_name;
    char *instantiation_token;
    char *description;               /* NULL when none */
    char *generation_tool;           /* NULL when none */
    fmu_interface me, cs;            /* ModelExchange, CoSimulation */
    int has_start_time, has_stop_time, has_tolerance, has_step_size;
    double start_time, stop_time, tolerance, step_size; /* DefaultExperiment */
    fmu_variable *vars;
    int32_t n_vars;
    /* ModelStructure, as indices into vars, in the file's order */
    int32_t *outputs, n_outputs;
    int32_t *derivatives, n_derivatives;       /* ContinuousStateDerivative */
    int32_t n_event_indicators;
    int32_t n_clocks;                          /* Clock variables */
    int32_t *by_name;  /* indices of vars sorted by name (fmu_find_variable) */
} fmu_description;

/* Read the modelDescription.xml at path (named shown in messages; NULL:
 * the path itself; at most
 * FMU_MAX_DESCRIPTION_BYTES) into *d. Refused with the file, line and
 * cause: XML that is not well formed, a DOCTYPE or any entity declaration,
 * a root other than fmiModelDescription, an fmiVersion other than 3.x
 * (FMI 1.0 and 2.0 are named as such), no ModelExchange and no
 * CoSimulation, a missing modelName, modelIdentifier, instantiationToken,
 * variable name or valueReference, a modelIdentifier that is not a C
 * identifier (it names the binary's file), a value that is not a finite
 * number (or integer of the variable's type) where one is required, an
 * unknown causality or variability, two variables with one name or one
 * valueReference (FMI 3.0 makes them unique across every type), a
 * derivative= that names no Float variable, a ModelStructure
 * valueReference that names no variable (a ContinuousStateDerivative's
 * one without derivative=), elements nested more than 64 deep. Messages
 * read "<shown> line 12: <Float64 name="k">: valueReference "x" is not an
 * unsigned integer". 0, or TSR_E_LOAD / TSR_E_NOMEM / TSR_E_IO with why. */
int fmu_describe_file(const char *path, const char *shown, fmu_description *d, char *why,
                      size_t n);
/* The same on text in memory; shown names it in messages. */
int fmu_describe_text(const char *xml, size_t len, const char *shown, fmu_description *d,
                      char *why, size_t n);
/* Frees what *d holds and zeroes it; a zeroed struct is fine. */
void fmu_description_free(fmu_description *d);
/* The index in d->vars of the variable with this name, or -1. */
int32_t fmu_find_variable(const fmu_description *d, const char *name);
const char *fmu_type_name(fmu_type t);             /* "Float64" */
const char *fmu_causality_name(fmu_causality c);   /* "parameter" */
const char *fmu_variability_name(fmu_variability v);

/* ---- fmu_library.c ------------------------------------------------------ */

/* The functions an importer calls, found by their standard names. Those of
 * the interface not in use, and the derivative and state functions the
 * description does not claim, are NULL. */
typedef struct fmu_api {
    fmi3GetVersionTYPE *get_version;
    fmi3InstantiateModelExchangeTYPE *instantiate_model_exchange;
    fmi3InstantiateCoSimulationTYPE *instantiate_co_simulation;
    fmi3FreeInstanceTYPE *free_instance;
    fmi3EnterInitializationModeTYPE *enter_initialization_mode;
    fmi3ExitInitializationModeTYPE *exit_initialization_mode;
    fmi3EnterEventModeTYPE *enter_event_mode;
    fmi3TerminateTYPE *terminate;
    fmi3ResetTYPE *reset;
    fmi3GetFloat64TYPE *get_float64;
    fmi3SetFloat64TYPE *set_float64;
    fmi3GetInt32TYPE *get_int32;
    fmi3SetInt32TYPE *set_int32;
    fmi3GetBooleanTYPE *get_boolean;
    fmi3SetBooleanTYPE *set_boolean;
    fmi3GetDirectionalDerivativeTYPE *get_directional_derivative;
    fmi3GetAdjointDerivativeTYPE *get_adjoint_derivative;
    fmi3GetFMUStateTYPE *get_fmu_state;
    fmi3SetFMUStateTYPE *set_fmu_state;
    fmi3FreeFMUStateTYPE *free_fmu_state;
    /* Model Exchange */
    fmi3UpdateDiscreteStatesTYPE *update_discrete_states;
    fmi3EnterContinuousTimeModeTYPE *enter_continuous_time_mode;
    fmi3CompletedIntegratorStepTYPE *completed_integrator_step;
    fmi3SetTimeTYPE *set_time;
    fmi3SetContinuousStatesTYPE *set_continuous_states;
    fmi3GetContinuousStatesTYPE *get_continuous_states;
    fmi3GetContinuousStateDerivativesTYPE *get_continuous_state_derivatives;
    fmi3GetNumberOfContinuousStatesTYPE *get_number_of_continuous_states;
    fmi3GetNumberOfEventIndicatorsTYPE *get_number_of_event_indicators;
    /* Co-Simulation */
    fmi3DoStepTYPE *do_step;
} fmu_api;

typedef enum fmu_kind { FMU_MODEL_EXCHANGE, FMU_CO_SIMULATION } fmu_kind;

typedef struct fmu_library {
    void *dl;
    fmu_api api;
    char *so_path;
    int isolated;        /* loaded with dlmopen into a namespace of its own */
    int once_held;       /* holds the process's one instance of a once-only FMU */
    int keep_loaded;     /* an instance went Fatal and was never freed: its code stays */
    char *once_key;
} fmu_library;

/* Load binaries/x86_64-linux/<modelIdentifier>.so of the interface `kind`
 * from the unpacked folder dir: checked as an ELF object first, with
 * dlopen (mode inproc) or dlmopen(LM_ID_NEWLM) (isolated, and a second
 * inproc load of an FMU that may be instantiated only once per process),
 * its functions found. Refused with the cause: no binary for this platform
 * (naming the platforms there are, or a source-only FMU), a binary that is
 * not a shared object for this machine, a function the interface needs
 * that it does not export, an fmi3GetVersion that is not 3.x. */
int fmu_library_open(fmu_library *lib, const char *dir, const fmu_description *d, fmu_kind kind,
                     tsr_mode mode, tsr_component *c, char *why, size_t n);
void fmu_library_close(fmu_library *lib);

/* ---- fmu_instance.c ----------------------------------------------------- */

typedef struct fmu_instance {
    const fmu_api *api;
    fmi3Instance handle;
    tsr_component *c;     /* whose log the FMU writes to */
    int fatal;            /* it returned Fatal: no function may be called again */
    char last[512];       /* the FMU's last Warning-or-worse message, for errors */
    char *resource_path;
} fmu_instance;

/* Instantiate the interface `kind` (not visible, logging on when the
 * component's log level is debug or info, no event mode for
 * Co-Simulation). 0, or TSR_E_LOAD with why (the FMU's own message when it
 * logged one: a wrong instantiation token, a second instance where only
 * one is allowed). */
int fmu_instance_make(fmu_instance *fi, const fmu_library *lib, const fmu_description *d,
                      fmu_kind kind, const char *dir, tsr_component *c, char *why, size_t n);
void fmu_instance_free(fmu_instance *fi);
/* A status returned by the FMU function fn: 0 for OK and Warning (logged
 * by the FMU itself), else -1 with why ("fmi3DoStep returned Error: <the
 * FMU's message>"); after Fatal the instance is marked and every later
 * fmu_instance_usable fails. */
int fmu_status(fmu_instance *fi, fmi3Status s, const char *fn, char *why, size_t n);
int fmu_instance_usable(const fmu_instance *fi, char *why, size_t n);
/* Model Exchange, in Initialization or Event Mode: fmi3UpdateDiscreteStates
 * until the FMU needs no more (at most FMU_MAX_EVENT_ITERATIONS), then
 * fmi3EnterContinuousTimeMode. 0, or -1 with why (also when the FMU asks
 * to terminate). */
#define FMU_MAX_EVENT_ITERATIONS 100
int fmu_event_iteration(fmu_instance *fi, char *why, size_t n);

/* ---- fmu_fields.c ------------------------------------------------------- */

/* A form's schema as it is built: inputs and outputs, each tied to the
 * variable it stands for (var, an index into the description's vars; -1
 * for the form's own fields such as t), with storage for names, docs,
 * dims and defaults that lives as long as the component. */
typedef struct fmu_schema {
    tsr_field *in, *out;
    int32_t n_in, n_out, cap;
    int32_t *in_var, *out_var;
    tsr_dim *in_dims, *out_dims;      /* FMU_MAX_FIELD_RANK per field */
    tsr_array *defaults;              /* one per input */
    void **owned;                     /* names, docs, default data */
    int32_t n_owned, owned_cap;
} fmu_schema;

/* The most dims a form's field has (the trajectory x: (n, nx)). */
#define FMU_MAX_FIELD_RANK 2
/* Steps of a trajectory's default grid without DefaultExperiment's stepSize. */
#define FMU_DEFAULT_STEPS 100

/* A valid field name made from an FMU's name (malloc'd; NULL: out of
 * memory): dotted identifiers are kept, every other character made '_'. */
char *fmu_field_name(const char *name);
/* Room for cap inputs and cap outputs. 0 or TSR_E_NOMEM. */
int fmu_schema_init(fmu_schema *s, int32_t cap);
void fmu_schema_free(fmu_schema *s);
/* A field named after variable var's name: the name itself when it is a
 * valid field name (dotted identifiers: "spring.k"), else with every other
 * character made '_' ("der(x)" -> "der_x_"). Refused (TSR_E_LOAD, why
 * naming both variables) when two variables, or a variable and one of the
 * form's own fields (taken: NULL-terminated), come to one name. */
int fmu_schema_add(fmu_schema *s, int output, const char *name, const char *doc,
                   tsr_dtype dtype, int32_t rank, const char *dim_symbol, int64_t dim_size,
                   uint32_t flags, int32_t var, char *why, size_t n);
/* The same with rank (<= FMU_MAX_FIELD_RANK) dims of any symbols and sizes. */
int fmu_schema_add_dims(fmu_schema *s, int output, const char *name, const char *doc,
                        tsr_dtype dtype, int32_t rank, const tsr_dim *dims, uint32_t flags,
                        int32_t var, char *why, size_t n);
int fmu_schema_add_variable(fmu_schema *s, const fmu_description *d, int output, int32_t var,
                            tsr_dtype dtype, int32_t rank, const char *dim_symbol,
                            uint32_t flags, const char *const *taken, char *why, size_t n);
/* The last input's default: count values (rank 0: one) copied as dtype. */
int fmu_schema_default(fmu_schema *s, const double *values, int64_t count, char *why, size_t n);
/* Every scalar parameter (causality parameter, variability fixed or
 * tunable, not an array) of type Float64 (a differentiable float64
 * input), Int32 (int32) or Boolean (bool), with its start value as its
 * default; others are left at their start values, and logged once. Their
 * variables are appended to vars (*n_vars of them). */
int fmu_schema_add_parameters(fmu_schema *s, const fmu_description *d, tsr_component *c,
                              const char *const *taken, int32_t *vars, int32_t *n_vars,
                              char *why, size_t n);

/* Set the values of the parameters `vars` (an input field each, in
 * order) from inputs[first..]: the FMU's Set function of each type. */
int fmu_set_parameters(fmu_instance *fi, const fmu_description *d, const int32_t *vars,
                       int32_t n_vars, const tsr_array *inputs, char *why, size_t n);

/* A trajectory's grid t (n,): at least one point, finite, strictly
 * increasing, and with fixed_step one step throughout (1e-9 relative).
 * 0, or -1 with why naming 't' and the point. */
int fmu_check_grid(const tsr_array *t, int fixed_step, char *why, size_t n);

/* ---- the component: fmu_backend.c and the forms ------------------------ */

typedef enum fmu_form {
    FMU_FORM_COSIM,      /* "#cosim": a Co-Simulation trajectory over a grid t */
    FMU_FORM_RHS,        /* "#rhs": the Model Exchange right-hand side */
    FMU_FORM_SIMULATE    /* "#simulate": a Model Exchange trajectory, integrated here */
} fmu_form;

/* The backend's state: the unpacked FMU, its description, binary and one
 * instance, and the form's schema with each field's variables. Calls are
 * serialised (the descriptor is not thread-safe), so the scratch below is
 * the running call's. */
typedef struct fmu_model {
    tsr_component *c;
    fmu_form form;
    fmu_kind kind;
    fmu_unpacked unpacked;
    fmu_description d;
    fmu_library lib;
    fmu_instance inst;
    fmu_schema schema;
    tsr_plugin desc;
    char *label;                     /* the model's name for the descriptor */
    /* parameters: inputs param_field .. param_field + n_params - 1 */
    int32_t param_field, n_params, *params;
    /* Float64 input and output variables (Co-Simulation: fields of their own;
     * Model Exchange: the vectors u and y) */
    int32_t input_field, n_inputs, *inputs;
    int32_t n_outputs, *outputs;
    /* Model Exchange: the continuous states and their derivatives, paired */
    int32_t n_states, *states, *derivatives;
    int used;                        /* an instance that ran a call (Co-Simulation) */
    int ready;                       /* Model Exchange: in Continuous-Time Mode */
    double *param_now;               /* Model Exchange: the parameters as last set */
    fmi3ValueReference *vr;          /* scratch: value references */
    double *values, *values2;        /* scratch: values */
    void *sim;                       /* #simulate: the integrator's (fmu_simulate.c) */
} fmu_model;

/* Model Exchange: m->states and m->derivatives (room for the description's
 * derivatives) paired in ModelStructure's order of
 * ContinuousStateDerivative, and m->n_states; refused when there are none,
 * when a derivative is not a scalar Float64 naming its state, or when the
 * binary's fmi3GetNumberOfContinuousStates disagrees. */
int fmu_find_states(fmu_model *m, char *why, size_t n);

/* fmu_fields.c, for the forms: the (nx,) field name of the continuous
 * states, its doc lead followed by their names, their start values as its
 * default; and each scalar Float64 variable of causality which (input or
 * output) as an (n,) field over the grid with flags, appended to
 * m->inputs or m->outputs (others are logged at info and left out). */
int fmu_schema_add_states(fmu_model *m, const char *name, const char *lead, char *why,
                          size_t n);
int fmu_schema_add_signals(fmu_model *m, fmu_causality which, uint32_t flags,
                           const char *const *taken, char *why, size_t n);
/* The model's index lists and scratch, sized from its variables, and an
 * empty schema. 0 or TSR_E_NOMEM. */
int fmu_model_scratch(fmu_model *m, char *why, size_t n);
/* m->desc from the built schema, with apply as its apply endpoint; the
 * form adds its derivative endpoints or fd_method. */
void fmu_schema_describe(fmu_model *m, tsr_endpoint_fn apply);

/* fmu_cosim.c, fmu_rhs.c: build m->schema and m->desc for the form (the
 * description, binary and instance are ready). 0, or TSR_E_* with why. */
int fmu_cosim_build(fmu_model *m, char *why, size_t n);
int fmu_rhs_build(fmu_model *m, char *why, size_t n);
/* fmu_simulate.c: the same for #simulate; fmu_simulate_free releases
 * m->sim (NULL is fine). */
int fmu_simulate_build(fmu_model *m, char *why, size_t n);
void fmu_simulate_free(void *sim);
/* Add the last input's default: t's grid from DefaultExperiment (startTime
 * to stopTime in steps of stepSize, or FMU_DEFAULT_STEPS steps; 0..1 when
 * there is none). 0, or TSR_E_NOMEM with why. */
int fmu_default_grid(fmu_model *m, char *why, size_t n);

#endif
