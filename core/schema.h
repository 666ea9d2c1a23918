/* SPDX-License-Identifier: MIT */
/* A component's schema as the host resolved it at load (descriptor.c):
 * fields with their dims classified and symbols numbered, and the shape
 * checks made from it. Part of the backend interface: backends that build
 * on a schema (manifests) read it; only descriptor.c writes it. */
#ifndef TESSERA_CORE_SCHEMA_H
#define TESSERA_CORE_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/tessera.h"

/* Sanity bounds on a descriptor, to refuse garbage rather than walk it. */
#define SCHEMA_MAX_FIELDS 4096
#define SCHEMA_MAX_NAME 256
#define SCHEMA_MAX_SYMBOLS 1024   /* distinct symbolic dims (ids are int16) */
#define SCHEMA_MAX_CHOICES 4096   /* choices of one TEXT field */
#define SCHEMA_MAX_CHOICE_BYTES 4096
/* Entries of one derivative list (jvp_inputs, ...): paths inside JSON
 * fields may name more entries than there are fields. */
#define SCHEMA_MAX_WRT 1024
/* Longest path inside a JSON field in such a list, in bytes. */
#define SCHEMA_MAX_PATH 4096

/* Kind of one declared dimension, resolved once at load. */
enum dim_kind { DIM_FIXED, DIM_ANY, DIM_SYMBOL };

/* The host's validated copy of one schema field. The public part (field)
 * points at `dims`; strings still point into the plugin's static data,
 * which lives as long as the plugin stays loaded. */
typedef struct field_info {
    tsr_field field;
    tsr_dim dims[TSR_MAX_FIELD_RANK];
    uint8_t kind[TSR_MAX_FIELD_RANK];  /* enum dim_kind */
    int16_t sym[TSR_MAX_FIELD_RANK];   /* symbol id for DIM_SYMBOL, else -1 */
    /* Outputs only: every dimension is fixed or a symbol that some input
     * that cannot be left out binds, so the host can compute the shape
     * before the call. */
    uint8_t shape_static;
    /* Inputs only: the host's copy of the field's default (defaults.c);
     * field.default_value points here when there is one. */
    tsr_array default_copy;
} field_info;

/* A view of one component's resolved schema (backend_schema). */
typedef struct component_schema {
    int32_t n_in, n_out;
    const field_info *in, *out;
    int32_t n_sym;
    const char *const *sym_names;    /* n_sym symbol names, in id order */
} component_schema;

/* shape.c: checks shared by validation of inputs, seeds and results.
 * shape_count and shape_bytes are array_shape_count and array_shape_bytes
 * (codecs/array_buffer.h) for an array. */
int64_t shape_count(const int64_t *shape, int32_t rank);   /* -1 on overflow */
int shape_bytes(const tsr_array *a, size_t *bytes);          /* -1 on overflow */
const char *shape_str(const int64_t *shape, int32_t rank, char *buf, size_t n);
const char *field_shape_str(const field_info *f, char *buf, size_t n);
/* Check an array's dims against a field's declared dims, binding symbols in
 * symval (and noting in sym_from which field bound each). On mismatch
 * writes a cause into why and returns -1. */
int shape_match(const field_info *f, const int64_t *shape, int32_t rank, int64_t *symval,
                const char **sym_from, const char *const *sym_names, char *why, size_t n);
/* Shape of a field from bound symbols; 0 if every dim is known, else -1. */
int shape_from_symbols(const field_info *f, const int64_t *symval, int64_t *shape);

/* defaults.c: check field f's default and optional flag against the
 * field (fi, already loaded) and copy the default into fi; `what` is
 * "input" or "output". 0, or TSR_E_DESCRIPTOR / TSR_E_NOMEM with the cause
 * in err naming the component and the field. defaults_free releases the
 * copies of n fields. */
int defaults_load(const char *component, field_info *fi, const tsr_field *f, const char *what,
                  tsr_error *err);
void defaults_free(field_info *fs, int32_t n);
/* Before validation of a call that left inputs out: each takes its
 * default or, when optional, is absent (tsr_input_absent). TSR_E_MISSING
 * for one that may not be left out, or that the call differentiates. */
int defaults_fill(tsr_call *call);

/* The layout of tsr_args by endpoint (plugin.h), shared by the host and
 * the worker: whether ep takes differentiation lists, how many seeds and
 * results it has for n_wi wrt inputs and n_wo wrt outputs (results: -1
 * for apply and abstract_eval, one per output), and the names of its lists
 * ("jvp_inputs", ...). hvp: cotangents of the outputs, then tangents of
 * the inputs; one result per input. */
static inline int ep_is_derivative(tsr_endpoint ep) {
    return ep == TSR_EP_JVP || ep == TSR_EP_VJP || ep == TSR_EP_JACOBIAN || ep == TSR_EP_HVP;
}
static inline int32_t ep_seed_count(tsr_endpoint ep, int32_t n_wi, int32_t n_wo) {
    return ep == TSR_EP_JVP ? n_wi : ep == TSR_EP_VJP ? n_wo : ep == TSR_EP_HVP ? n_wo + n_wi : 0;
}
static inline int64_t ep_result_count(tsr_endpoint ep, int32_t n_wi, int32_t n_wo) {
    return ep == TSR_EP_JVP ? n_wo
           : ep == TSR_EP_VJP || ep == TSR_EP_HVP ? n_wi
           : ep == TSR_EP_JACOBIAN ? (int64_t)n_wi * n_wo
                                   : -1;
}
static inline const char *ep_wrt_in_label(tsr_endpoint ep) {
    return ep == TSR_EP_JVP ? "jvp_inputs" : ep == TSR_EP_VJP ? "vjp_inputs"
           : ep == TSR_EP_HVP ? "hvp_inputs" : "jac_inputs";
}
static inline const char *ep_wrt_out_label(tsr_endpoint ep) {
    return ep == TSR_EP_JVP ? "jvp_outputs" : ep == TSR_EP_VJP ? "vjp_outputs"
           : ep == TSR_EP_HVP ? "hvp_outputs" : "jac_outputs";
}

/* component.c: the index of the field called name, or -1. */
int32_t find_field(const field_info *fs, int32_t n, const char *name);

#endif
