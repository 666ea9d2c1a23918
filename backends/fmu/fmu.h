/* SPDX-License-Identifier: MIT */
/* The FMU backend: an FMI 3.0 Functional Mock-up Unit opened as a
 * component. Its pieces, one concern each:
 *   fmu_archive.c   a .fmu (a zip) unpacked into a private scratch folder,
 *                   refusing what could write outside it (libzip)
 *   fmu_describe.c  modelDescription.xml read into fmu_description (expat)
 * and, built on them, the binary, its instances and the component forms
 * (declared further down as they land). */
#ifndef TESSERA_BACKENDS_FMU_H
#define TESSERA_BACKENDS_FMU_H

#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"

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

/* Read the modelDescription.xml at path (at most
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
int fmu_describe_file(const char *path, fmu_description *d, char *why, size_t n);
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

#endif
