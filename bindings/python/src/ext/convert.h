/* SPDX-License-Identifier: MIT */
/* dtypes, and Python objects given for fields -> tsr_array views
 * (convert.c). */
#ifndef TESSERA_PY_CONVERT_H
#define TESSERA_PY_CONVERT_H

#include "ext.h"

#include "core.h"
#include "schema.h"

/* numpy dtype -> tsr dtype by kind and size, or TSR_DTYPE_INVALID. */
tsr_dtype dtype_from_numpy(PyArray_Descr *d);
/* tsr dtype -> numpy type number, or -1. */
int dtype_to_typenum(tsr_dtype dtype);

/* Turn a Python object given for a field into a tsr_array viewing its
 * memory. Arrays of the field's dtype that are C-contiguous, aligned and in
 * native byte order are used in place; anything else goes through the
 * Python-level coercion (tessera._coerce), which copies when Tesseract's
 * casting rule allows the conversion and refuses otherwise. *keep receives a new reference
 * that keeps the memory alive until the run has finished. `what` labels
 * messages ("input", "tangent_vector"); they begin, as the library's do,
 * with "component 'X', endpoint 'Y': " (core's component and ep); owner is
 * the Component, for tessera._coerce's messages. Returns 0, or -1 with an
 * exception.
 *
 * cell (16 bytes, aligned; or NULL): where a Python or NumPy scalar is
 * written as a 0-d array without calling Python, when the Python side
 * would accept it (the same rules, the same values; anything it refuses
 * still goes to it, for its error). It must stay untouched until the run
 * has finished: a Slot's own cells (scalar_cell). */
int convert_array(PyObject *obj, const field_meta *f, const char *what, tsr_array *out,
                  PyObject **keep, void *cell, PyObject *owner, const comp_core *core,
                  tsr_endpoint ep);

/* The UTF-8 text (NUL-terminated) of a Python value given for a TEXT or
 * JSON field, made by tessera._values.encode (a str for text, any
 * JSON-able value with arrays inside for JSON; its refusals name the
 * field). *keep receives the bytes object that holds it until the run has
 * finished. NULL with an exception set on failure. */
const char *convert_text(PyObject *obj, const field_meta *f, const char *what,
                         PyObject **keep, PyObject *owner, tsr_endpoint ep);

/* The Python functions that coerce objects and encode values (set by
 * tessera at import). */
extern PyObject *coerce_fn, *encode_fn;

#endif /* TESSERA_PY_CONVERT_H */
