/* SPDX-License-Identifier: MIT */
/* The FfiOp type (ffi_ops.c): the Python object that owns one entry of the
 * table of FFI ops (ffi_table.h) for tessera.jax. */
#ifndef TESSERA_PY_FFI_OPS_H
#define TESSERA_PY_FFI_OPS_H

#include "ext.h"

#include "core.h"

extern PyTypeObject FfiOp_Type;
/* A new FfiOp of an open component with n_inputs schema inputs, for
 * _ffi_op's arguments (endpoint, wrt_in, wrt_out, input_indices,
 * seed_names, batch, result_map). New reference, or NULL with an
 * exception set. */
PyObject *ffi_op_new(comp_core *core, int32_t n_inputs, PyObject *args);
/* Retire every op of the dict {key: FfiOp} of a component being closed,
 * and empty it (ops may be NULL). */
void ffi_ops_retire_all(PyObject *ops);

#endif /* TESSERA_PY_FFI_OPS_H */
