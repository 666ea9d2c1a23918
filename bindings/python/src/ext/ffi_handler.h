/* SPDX-License-Identifier: MIT */
/* The XLA FFI handler (ffi_handler.c). */
#ifndef TESSERA_PY_FFI_HANDLER_H
#define TESSERA_PY_FFI_HANDLER_H

#include "ext.h"

/* A PyCapsule holding the handler, for jax.ffi.register_ffi_target. */
PyObject *ffi_handler_capsule(void);

#endif /* TESSERA_PY_FFI_HANDLER_H */
