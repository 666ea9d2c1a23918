/* SPDX-License-Identifier: MIT */
/*
 * tessera._ext: the C half of the Python bindings. The base every file of
 * the extension includes first (Python, NumPy's C API, the library); each
 * file's own declarations are in its header. Nothing here is a public
 * interface.
 *
 * The files, lowest first; each calls only files above it in this list:
 *
 *   numpy_api.c   NumPy's C API table (the one file that imports it)
 *   errors.c      library failures as Python exceptions
 *   interrupt.c   a run with the GIL released that Ctrl-C can stop
 *   ffi_table.c   the table of FFI ops, read by XLA's threads (no Python)
 *   core.c        the counted tsr_component (comp_core)
 *   schema.c      the fields as the hot path needs them (comp_fields)
 *   convert.c     Python objects -> tsr_array views
 *   slot.c        the Slot: one call object
 *   results.c     a Slot's results as NumPy arrays (ResultBuffer)
 *   pool.c        idle Slots of one endpoint, and one run
 *   arena.c       component.empty() (ArenaBuffer)
 *   ffi_ops.c     the FfiOp type that owns a table entry
 *   ffi_handler.c the XLA FFI handler
 *   component.c   the Component type, on top of all of these
 *   serve.c       tessera.serve
 *   module.c      the module tessera._ext
 *
 * Who keeps whom alive (no reference cycles):
 *
 *   comp_core   the tsr_component, counted: the Component object, every
 *               Slot, ResultBuffer, ArenaBuffer and live FFI op hold a
 *               reference, and the last one to let go runs tsr_close. So
 *               close() stops new calls at once but memory that arrays
 *               still view stays valid.
 *   Component   the Python object: schema, pools, FFI ops, close().
 *   Pool        the idle call objects (Slots) of one endpoint and one
 *               choice of differentiation targets. Owned by its Component
 *               only. A run takes a Slot out of it and puts it back, so the
 *               number of call objects is the number of runs at once (a
 *               few idle ones are kept), never the number of results alive.
 *   Slot        one tsr_call. Its results never stay in it while anything
 *               views them past its next run:
 *   results     small ones (at most result_copy_limit bytes) are copied
 *               into ordinary NumPy arrays that own their bytes. Larger
 *               ones are viewed in place, through a ResultBuffer: while it
 *               is alive and the Slot has not run again, the buffer is
 *               still the call's (a loop that drops its results reuses
 *               it); when the Slot is taken for its next run, every
 *               ResultBuffer still alive gets its buffer handed over
 *               (tsr_call_take_result) and frees it when its last array
 *               dies. A held result costs its own bytes, not a call.
 *   ArenaBuffer memory from tsr_component_alloc (component.empty), released with
 *               tsr_component_free_buffer when its last array dies.
 *
 * Every count here changes with the GIL held.
 */
#ifndef TESSERA_PY_EXT_H
#define TESSERA_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The table of NumPy's C API is defined in numpy_api.c only. */
#ifndef TSR_PY_NUMPY_API_C
#define NO_IMPORT_ARRAY
#endif
#define PY_ARRAY_UNIQUE_SYMBOL tessera_ext_ARRAY_API
#include <numpy/arrayobject.h>

#include <tessera/tessera.h>

/* Import NumPy's C API (module init, once): 0, or -1 with an exception
 * set (numpy_api.c). */
int numpy_api_import(void);

#endif /* TESSERA_PY_EXT_H */
