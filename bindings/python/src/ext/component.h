/* SPDX-License-Identifier: MIT */
/* The Component type (component.c), on top of the extension's other
 * files: it owns the schema, the pools and the FFI ops of one counted
 * core. */
#ifndef TESSERA_PY_COMPONENT_H
#define TESSERA_PY_COMPONENT_H

#include "ext.h"

#include "core.h"
#include "schema.h"

typedef struct ComponentObject {
    PyObject_HEAD
    comp_core *core;           /* NULL after close() */
    comp_fields fields;
    PyObject *apply_pool;      /* Pool for apply, made on first use */
    PyObject *pools;           /* dict: (endpoint, wrt_in, wrt_out) -> Pool */
    PyObject *ffi_ops;         /* dict: key -> FfiOp (made by tessera.jax) */
    PyObject *weakrefs;
} ComponentObject;

extern PyTypeObject Component_Type;

/* 0 when calls may be made, else -1 with an exception set. */
int component_check_open(ComponentObject *self);

/* The Python functions that turn nested inputs into dotted names and
 * dotted outputs into nested dicts (set by tessera at import):
 * flatten_fn(component, inputs, endpoint) -> dict, nest_fn(dict) -> dict. */
extern PyObject *flatten_fn, *nest_fn;

#endif /* TESSERA_PY_COMPONENT_H */
