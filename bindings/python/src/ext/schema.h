/* SPDX-License-Identifier: MIT */
/* The component's schema, read once at open (schema.c): what the hot path
 * needs of each field, and a plain-tuple description for Python. */
#ifndef TESSERA_PY_SCHEMA_H
#define TESSERA_PY_SCHEMA_H

#include "ext.h"

/* What the binding needs of a field on the hot path. */
typedef struct field_meta {
    PyObject *name;        /* str, interned */
    const char *cname;     /* the library's copy, valid while the core is open */
    tsr_dtype dtype;
    char np_kind;          /* numpy dtype kind: b i u f c */
    int np_size;           /* bytes per element */
    int differentiable;
    uint32_t kind;         /* tsr_kind: TEXT and JSON values go as UTF-8 text */
} field_meta;

/* A component's inputs and outputs. */
typedef struct comp_fields {
    int32_t n_in, n_out;
    field_meta *in, *out;
    /* Some field names are dotted paths ("mesh.nodes"): apply's inputs may
     * come nested and its outputs go back nested (tessera._nesting). */
    int nested_in, nested_out;
} comp_fields;

/* Fill fs (zeroed) from c: 0, or -1 with an exception set (schema_free
 * then releases what was made). */
int schema_load(comp_fields *fs, const tsr_component *c);
void schema_free(comp_fields *fs);
/* (name, version, description, inputs, outputs), each field as
 * (name, dtype name, dims, differentiable, doc, default, optional, kind,
 * choices) with dims a tuple of int (fixed), str (symbol) or None (any
 * size), or None for an array of any rank (and for TEXT and JSON fields);
 * dtype name None for TEXT and JSON fields; kind "array", "text" or
 * "json"; choices a tuple of str, or None (any text). */
PyObject *schema_describe(const tsr_component *c);

#endif /* TESSERA_PY_SCHEMA_H */
