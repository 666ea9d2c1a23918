/* SPDX-License-Identifier: MIT */
/*
 * tessera._ext: the C half of the Python bindings. Declarations shared by
 * the extension's files; nothing here is a public interface.
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

#ifndef TSR_PY_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#define PY_ARRAY_UNIQUE_SYMBOL tessera_ext_ARRAY_API
#include <numpy/arrayobject.h>

#include <tessera/tessera.h>

/* ---- the counted component (component.c) ----------------------------------- */

typedef struct comp_core {
    tsr_component *c;              /* NULL once closed */
    Py_ssize_t refs;
    int abandoned;                 /* closed at exit under live views: touch nothing */
    struct comp_core *prev, *next; /* every open core, for the exit hook */
} comp_core;

void core_incref(comp_core *core);
/* The last reference runs tsr_close and frees the core. */
void core_decref(comp_core *core);
/* Close every component still open (at interpreter exit), so that no
 * worker or shared memory outlives the process's Python side. */
void core_close_all(void);

/* ---- schema (schema.c) ------------------------------------------------------ */

/* What the binding needs of a field on the hot path. */
typedef struct field_meta {
    PyObject *name;        /* str, interned */
    const char *cname;     /* the library's copy, valid while the core is open */
    tsr_dtype dtype;
    char np_kind;          /* numpy dtype kind: b i u f c */
    int np_size;           /* bytes per element */
    int differentiable;
} field_meta;

/* ---- Component (component.c) ------------------------------------------------ */

typedef struct ComponentObject {
    PyObject_HEAD
    comp_core *core;           /* NULL after close() */
    int32_t n_in, n_out;
    field_meta *in, *out;
    PyObject *apply_pool;      /* Pool for apply, made on first use */
    PyObject *pools;           /* dict: (endpoint, wrt_in, wrt_out) -> Pool */
    PyObject *ffi_ops;         /* dict: key -> FfiOp (made by tessera.jax) */
    PyObject *weakrefs;
    /* Some field names are dotted paths ("mesh.nodes"): apply's inputs may
     * come nested and its outputs go back nested (tessera._nesting). */
    int nested_in, nested_out;
} ComponentObject;

extern PyTypeObject Component_Type;

/* 0 when calls may be made, else -1 with an exception set. */
int component_check_open(ComponentObject *self);

int schema_load(ComponentObject *self);
void schema_free(ComponentObject *self);
/* (name, version, description, inputs, outputs), each field as
 * (name, dtype name, dims, differentiable, doc) with dims a tuple of int
 * (fixed), str (symbol) or None (any size). */
PyObject *schema_describe(ComponentObject *self);

/* ---- dtypes and input conversion (convert.c) -------------------------------- */

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
 * with "component 'X', endpoint 'Y': " (comp and ep). Returns 0, or -1
 * with an exception.
 *
 * cell (16 bytes, aligned; or NULL): where a Python or NumPy scalar is
 * written as a 0-d array without calling Python, when the Python side
 * would accept it (the same rules, the same values; anything it refuses
 * still goes to it, for its error). It must stay untouched until the run
 * has finished: a Slot's own cells (scalar_cell). */
int convert_array(PyObject *obj, const field_meta *f, const char *what, tsr_array *out,
                  PyObject **keep, void *cell, ComponentObject *comp, tsr_endpoint ep);

/* The Python function that coerces objects (set by tessera at import). */
extern PyObject *coerce_fn;
/* The Python functions that turn nested inputs into dotted names and
 * dotted outputs into nested dicts (set by tessera at import):
 * flatten_fn(component, inputs, endpoint) -> dict, nest_fn(dict) -> dict. */
extern PyObject *flatten_fn, *nest_fn;

/* ---- tessera.serve (serve.c) --------------------------------------------------- */

PyObject *serve_start(PyObject *module, PyObject *args);
PyObject *serve_port(PyObject *module, PyObject *capsule);
PyObject *serve_stop(PyObject *module, PyObject *capsule);

/* ---- errors (errors.c) ------------------------------------------------------- */

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

/* ---- pools, slots and runs (pool.c) ------------------------------------------ */

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

/* Idle slots a pool keeps; beyond them a finished slot is freed. */
#define POOL_IDLE_KEEP 4

typedef struct PoolObject {
    PyObject_HEAD
    ComponentObject *comp;     /* borrowed: the Component owns its pools */
    tsr_endpoint ep;
    int32_t n_wrt_in, n_wrt_out;
    int32_t *wrt_in, *wrt_out; /* field indices */
    SlotObject *idle[POOL_IDLE_KEEP];  /* owned references */
    int n_idle;
    int closed;                /* pool_clear ran: slots coming back are freed */
} PoolObject;

extern PyTypeObject Slot_Type;
extern PyTypeObject Pool_Type;

/* A pool for an endpoint and differentiation targets (tuples of names,
 * checked by the library). New reference, or NULL with an exception set. */
PoolObject *pool_new(ComponentObject *comp, tsr_endpoint ep, PyObject *wrt_in,
                     PyObject *wrt_out);
/* Take a slot, bind inputs (a dict by field name) and seeds (a dict, or
 * NULL for none), run (with a leading batch axis when batch > 0) and
 * return the slot, the caller's alone until pool_release, or NULL with an
 * exception set. */
SlotObject *pool_run(PoolObject *pool, PyObject *inputs, PyObject *seeds, int64_t batch);
/* Give the slot back (steals the reference), after reading its results. */
void pool_release(PoolObject *pool, SlotObject *slot);
/* Let go of every idle slot (at close); results still viewed live on. */
void pool_clear(PoolObject *pool);
/* Call objects alive in every pool (idle, running or kept by results). */
Py_ssize_t pool_live_calls(void);

/* ---- runs (interrupt.c) -------------------------------------------------------- */

/* Run the call (with a leading batch axis when batch > 0) with the GIL
 * released. From the main thread, a signal handler that raises meanwhile
 * (Ctrl-C: KeyboardInterrupt) cancels it within about 50 ms
 * (tsr_call_cancel) and its exception is raised. 0, or -1 with an
 * exception set (the handler's, or the library's failure). */
int run_call(tsr_call *call, int64_t batch);

/* ---- results (results.c) ----------------------------------------------------- */

extern PyTypeObject ResultBuffer_Type;
/* Results of at most this many bytes are copied out (see the README). */
#define RESULT_COPY_LIMIT_DEFAULT 4096
extern Py_ssize_t result_copy_limit;

/* Result k of the slot's last run as a NumPy array (new reference): a
 * copy, or a view whose base is a ResultBuffer. */
PyObject *result_array(SlotObject *slot, int32_t k);
/* Every result, as a tuple of arrays. */
PyObject *result_tuple(SlotObject *slot);
/* apply: {output name: array}. */
PyObject *result_dict(SlotObject *slot, const field_meta *out, int32_t n_out);
/* Before the slot runs again: hand over the buffers of its results still
 * viewed to their ResultBuffers. 0, or -1 when one could not be (the slot
 * must then not run again; its viewers keep it). */
int results_detach(SlotObject *slot);
/* {"calls", "results_in_call", "results_owned", "copy_limit"}: counters
 * for tests and benchmarks. */
PyObject *results_debug_counts(void);

/* ---- arena buffers (arena.c) ------------------------------------------------- */

extern PyTypeObject ArenaBuffer_Type;
/* component.empty(shape, dtype): a NumPy array in memory from tsr_component_alloc. */
PyObject *arena_empty(ComponentObject *comp, PyObject *shape, PyObject *dtype);

/* ---- XLA FFI (ffi_ops.c, ffi_handler.c), when built with jaxlib's headers -- */

#if TSR_PY_HAVE_XLA_FFI
extern PyTypeObject FfiOp_Type;
/* Make the FFI op for a key (cached by the component). */
PyObject *ffi_op_get(ComponentObject *comp, PyObject *args);
/* Retire every op of a component that is being closed. */
void ffi_ops_retire_all(ComponentObject *comp);
/* A PyCapsule holding the handler, for jax.ffi.register_ffi_target. */
PyObject *ffi_handler_capsule(void);
#endif

#endif /* TESSERA_PY_EXT_H */
