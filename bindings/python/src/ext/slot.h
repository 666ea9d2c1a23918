/* SPDX-License-Identifier: MIT */
/* The Slot (slot.c): one tsr_call of a pool, with room for scalar
 * arguments and the results of its last run still viewed in its buffers. */
#ifndef TESSERA_PY_SLOT_H
#define TESSERA_PY_SLOT_H

#include "ext.h"

#include "core.h"

typedef struct ResultBufferObject ResultBufferObject;

/* Room for one scalar argument, bound as a 0-d array (convert_array). */
typedef union scalar_cell {
    _Alignas(16) unsigned char bytes[16];
    double d[2];
    int64_t i;
} scalar_cell;

typedef struct SlotObject {
    PyObject_HEAD
    comp_core *core;           /* counted */
    tsr_call *call;
    /* One per input, then one per seed (n_in + n_wrt_in + n_wrt_out),
     * made with the slot and kept: scalars given for fields live here
     * while the slot runs. */
    scalar_cell *cells;
    int32_t n_cells;
    /* The ResultBuffers of the last run's results still in the call's
     * buffers, by result index (borrowed: each holds a reference to the
     * slot and clears its entry when it dies); NULL where none. */
    ResultBufferObject **held;
    int32_t cap_held;
} SlotObject;

extern PyTypeObject Slot_Type;

/* A slot around call (taken over: freed on failure), counting core, with
 * n_cells scalar cells. New reference, or NULL with an exception set. */
SlotObject *slot_new(comp_core *core, tsr_call *call, int32_t n_cells);
/* Call objects alive in slots (idle, running or kept by results). */
Py_ssize_t slot_live_calls(void);

#endif /* TESSERA_PY_SLOT_H */
