/* SPDX-License-Identifier: MIT */
/* The Slot (slot.h): one call object of a pool, counted while it lives so
 * that tests can see how many there are. Its results are read and handed
 * over by results.c; pools take and give slots back (pool.c). */
#include "slot.h"

static Py_ssize_t live_calls;

Py_ssize_t slot_live_calls(void) { return live_calls; }

static void Slot_dealloc(SlotObject *self) {
    /* No ResultBuffer is linked here: each holds a reference to its slot. */
    if (self->core) {
        if (!self->core->abandoned) tsr_call_free(self->call);
        core_decref(self->core);
    }
    live_calls--;
    PyMem_Free(self->held);
    PyMem_Free(self->cells);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyTypeObject Slot_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera._ext.Slot",
    .tp_doc = "One call object of a pool.",
    .tp_basicsize = sizeof(SlotObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)Slot_dealloc,
};

SlotObject *slot_new(comp_core *core, tsr_call *call, int32_t n_cells) {
    scalar_cell *cells = PyMem_Malloc((size_t)(n_cells > 0 ? n_cells : 1) * sizeof *cells);
    if (!cells) {
        tsr_call_free(call);
        return (SlotObject *)PyErr_NoMemory();
    }
    SlotObject *slot = PyObject_New(SlotObject, &Slot_Type);
    if (!slot) {
        PyMem_Free(cells);
        tsr_call_free(call);
        return NULL;
    }
    slot->cells = cells;
    slot->n_cells = n_cells;
    slot->core = core;
    core_incref(core);
    slot->call = call;
    slot->held = NULL;
    slot->cap_held = 0;
    live_calls++;
    return slot;
}
