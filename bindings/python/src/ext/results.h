/* SPDX-License-Identifier: MIT */
/* A Slot's results as NumPy arrays (results.c): copies, or views whose
 * base is a ResultBuffer. */
#ifndef TESSERA_PY_RESULTS_H
#define TESSERA_PY_RESULTS_H

#include "ext.h"

#include "schema.h"
#include "slot.h"

extern PyTypeObject ResultBuffer_Type;
/* Results of at most this many bytes are copied out (see the README). */
#define RESULT_COPY_LIMIT_DEFAULT 4096
extern Py_ssize_t result_copy_limit;

/* Result k of the slot's last run as a NumPy array (new reference): a
 * copy, or a view whose base is a ResultBuffer. */
PyObject *result_array(SlotObject *slot, int32_t k);
/* Every result, as a tuple of arrays. */
PyObject *result_tuple(SlotObject *slot);
/* A TEXT or JSON output of the call's last run as its Python value (a
 * str; the decoded JSON value), made by tessera._values.decode. */
PyObject *result_value(const tsr_call *call, const field_meta *f);
/* The Python function that decodes text results (set by tessera). */
extern PyObject *decode_fn;
/* apply: {output name: array, or value for TEXT and JSON outputs}. */
PyObject *result_dict(SlotObject *slot, const field_meta *out, int32_t n_out);
/* Before the slot runs again: hand over the buffers of its results still
 * viewed to their ResultBuffers. 0, or -1 when one could not be (the slot
 * must then not run again; its viewers keep it). */
int results_detach(SlotObject *slot);
/* {"calls", "results_in_call", "results_owned", "copy_limit"}: counters
 * for tests and benchmarks. */
PyObject *results_debug_counts(void);

#endif /* TESSERA_PY_RESULTS_H */
