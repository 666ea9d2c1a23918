/* SPDX-License-Identifier: MIT */
/* The counted core (core.h): the tsr_component shared by everything that
 * may outlive a close(), closed by its last reference, and the list of
 * open cores that the exit hook closes. */
#include "core.h"

#if TSR_PY_HAVE_XLA_FFI
#include "ffi_table.h"
#endif

static comp_core *open_cores;

comp_core *core_new(tsr_component *c) {
    comp_core *core = PyMem_Calloc(1, sizeof *core);
    if (!core) return (comp_core *)PyErr_NoMemory();
    core->c = c;
    core->refs = 1;
    core->next = open_cores;
    if (open_cores) open_cores->prev = core;
    open_cores = core;
    return core;
}

void core_incref(comp_core *core) { core->refs++; }

void core_decref(comp_core *core) {
    if (--core->refs > 0) return;
    if (!core->abandoned) {
        tsr_component *c = core->c;
        /* Stopping a worker waits for it: let other threads run. */
        Py_BEGIN_ALLOW_THREADS
        tsr_close(c);
        Py_END_ALLOW_THREADS
    }
    if (core->prev) core->prev->next = core->next;
    else if (open_cores == core) open_cores = core->next;
    if (core->next) core->next->prev = core->prev;
    PyMem_Free(core);
}

void core_close_all(void) {
    Py_ssize_t n = 0;
    for (comp_core *core = open_cores; core; core = core->next) n += !core->abandoned;
    tsr_component **open = PyMem_Calloc((size_t)n + 1, sizeof *open);
    if (!open) return;
    /* Mark them all first: closing releases the GIL, and the list may
     * change meanwhile. Views may outlive this; they are not read after
     * exit, and their owners free nothing of an abandoned core. */
    n = 0;
    for (comp_core *core = open_cores; core; core = core->next) {
        if (core->abandoned) continue;
        core->abandoned = 1;
#if TSR_PY_HAVE_XLA_FFI
        ffi_ops_abandon(core->c);
#endif
        open[n++] = core->c;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) tsr_close(open[i]);
    Py_END_ALLOW_THREADS
    PyMem_Free(open);
}
