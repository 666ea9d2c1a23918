/* SPDX-License-Identifier: MIT */
/* The bridge's parts: the interpreter (interpreter.c), the component's
 * descriptor (descriptor.c) and its endpoints (endpoints.c). Everything
 * here runs with the GIL held unless said otherwise. */
#ifndef TESSERA_CORE_PYTHON_BRIDGE_H
#define TESSERA_CORE_PYTHON_BRIDGE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "backends/python/pybridge.h"
#include "tessera/tessera.h"

typedef struct pycomponent {
    PyObject *component;             /* the glue's Component */
    PyObject *glue;                  /* the glue module (format_error) */
    PyObject *views;                 /* views(buffers, dtype codes, shapes) -> arrays */
    PyObject *endpoint[TSR_EP_COUNT]; /* bound methods, NULL where absent */
    tsr_plugin desc;
    tsr_field *fields;               /* inputs, then outputs */
    tsr_dim *dims;
    tsr_array *defaults;             /* one per input: its default, where it has one */
    size_t n_defaults;
    char **strings;                  /* what the descriptor points to */
    size_t n_strings;
    char **choice_lists;             /* the TEXT fields' choices arrays */
    size_t n_choice_lists;
    int warned_kept;                 /* a kept view was reported */
} pycomponent;

/* interpreter.c: start the interpreter (once per process, never stopped:
 * extension modules such as NumPy cannot be initialised twice) or join
 * the host's. Called without the GIL; returns with it held on success. */
int interpreter_enter(const char *python, PyGILState_STATE *gil, char *why, size_t n);

/* Whether the interpreter is the host's (a Python program), not one this
 * bridge started. */
int interpreter_is_hosts(void);

/* Where endpoint_run leaves a KeyboardInterrupt raised inside a component
 * for a Python host: this key of the thread's state dict (PyThreadState_
 * GetDict), the thread that ran the call. The tessera module's run_call
 * (bindings/python/src/ext/interrupt.c) takes it from there, under the
 * same name, and raises it. */
#define BRIDGE_INTERRUPT_KEY "tessera.component_interrupt"

/* The pending Python exception as text (type, message, the component's
 * traceback lines), cleared. */
void exception_text(PyObject *glue, char *buf, size_t n);

/* Write out what the component printed (sys.stdout, sys.stderr): the
 * interpreter is never finalised, so nothing else would, and a line
 * printed on a pipe or a file would wait in its buffer for ever. */
void streams_flush(void);

/* descriptor.c: the descriptor from the glue's Component. */
int descriptor_build(pycomponent *pc, char *why, size_t n);
void descriptor_free(pycomponent *pc);

/* endpoints.c: the endpoint functions of every Python component. */
int endpoint_run(tsr_ctx *ctx, const tsr_args *args);
/* Bytes per element of a dtype; 0 if invalid (libtessera's
 * tsr_dtype_size: the bridge does not link libtessera). */
size_t bridge_dtype_size(tsr_dtype d);
/* Whether a buffer's struct format is dtype d. */
int bridge_format_is(const char *format, tsr_dtype d);

#endif
