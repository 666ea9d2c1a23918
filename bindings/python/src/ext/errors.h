/* SPDX-License-Identifier: MIT */
/* Library failures as Python exceptions (errors.c). */
#ifndef TESSERA_PY_ERRORS_H
#define TESSERA_PY_ERRORS_H

#include "ext.h"

/* Raise the exception class registered for code, with the message (its
 * advice in Python's words, see python_words) and no location. */
void raise_tessera(int code, const char *message);
/* The same, with the library's location ("inputs.mesh.nodes", "" for none)
 * as the exception's .loc tuple. */
void raise_tessera_at(int code, const char *message, const char *loc);
/* The failure of a call: its code (or rc when it has none), message and
 * location. */
void raise_call_error(const tsr_call *call, int rc);
/* error_type(code) -> the library's one-word kind (tsr_error_type). */
PyObject *error_type_fn(PyObject *module, PyObject *code);
/* _set_error_types({code: class}, fallback class, {code: "TSR_E_..."}). */
PyObject *set_error_types(PyObject *module, PyObject *mapping);
/* The library's message with its advice in the words of a Python user
 * ("call tsr_component_restart" -> "call Component.restart()"), into out
 * (n bytes, truncated, always terminated). Returns the full length. No
 * Python API: callable without the GIL. */
size_t python_words(const char *in, char *out, size_t n);
/* "tessera.<Class>: <message in Python's words> [TSR_E_...]": how a failure
 * reads where no exception can be raised (the XLA FFI handler; JAX wraps
 * it). Returns what snprintf would. No Python API. */
int tessera_message(char *out, size_t n, int code, const char *message);

#endif /* TESSERA_PY_ERRORS_H */
