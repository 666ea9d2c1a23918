/* SPDX-License-Identifier: MIT */
/* The bridge's entry points (pybridge.h): import the glue and, through
 * it, the component; describe it; release it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"

#define EXPORT __attribute__((visibility("default")))

/* Arrays from (buffer, dtype code, shape) triples: read-only NumPy views;
 * None for an absent optional input (dtype code 0).
 * Kept beside the bridge rather than in the glue: the layout of what
 * crosses is the bridge's business. */
static const char views_source[] =
    "import numpy as _np\n"
    "_DT = (None, _np.bool_, _np.int8, _np.int16, _np.int32, _np.int64, _np.uint8,\n"
    "       _np.uint16, _np.uint32, _np.uint64, _np.float16, _np.float32, _np.float64,\n"
    "       _np.complex64, _np.complex128)\n"
    "def views(bufs, codes, shapes):\n"
    "    return [None if c == 0 else _np.frombuffer(b, _DT[c]).reshape(s)\n"
    "            for b, c, s in zip(bufs, codes, shapes)]\n";

/* Import a module from a file: the glue. */
static PyObject *import_file(const char *name, const char *path) {
    PyObject *util = PyImport_ImportModule("importlib.util");
    if (!util) return NULL;
    PyObject *spec = PyObject_CallMethod(util, "spec_from_file_location", "ss", name, path);
    PyObject *module = spec && spec != Py_None
                           ? PyObject_CallMethod(util, "module_from_spec", "O", spec)
                           : NULL;
    if (spec == Py_None && !PyErr_Occurred())
        PyErr_Format(PyExc_ImportError, "cannot import %s", path);
    PyObject *loader = module ? PyObject_GetAttrString(spec, "loader") : NULL;
    PyObject *ran = loader ? PyObject_CallMethod(loader, "exec_module", "O", module) : NULL;
    if (!ran) Py_CLEAR(module);
    Py_XDECREF(ran);
    Py_XDECREF(loader);
    Py_XDECREF(spec);
    Py_DECREF(util);
    return module;
}

static PyObject *make_views(void) {
    PyObject *globals = PyDict_New();
    if (!globals) return NULL;
    PyObject *builtins = PyEval_GetBuiltins();
    PyDict_SetItemString(globals, "__builtins__", builtins);
    PyObject *ran = PyRun_String(views_source, Py_file_input, globals, globals);
    PyObject *views = ran ? PyDict_GetItemString(globals, "views") : NULL;
    Py_XINCREF(views);
    Py_XDECREF(ran);
    Py_DECREF(globals);
    return views;
}

static void release(pycomponent *pc) {
    for (int e = 0; e < TSR_EP_COUNT; e++) Py_CLEAR(pc->endpoint[e]);
    Py_CLEAR(pc->views);
    Py_CLEAR(pc->component);
    Py_CLEAR(pc->glue);
    descriptor_free(pc);
    free(pc);
}

/* Import the glue and the component; describe it. */
static int load(pycomponent *pc, const pybridge_request *req, char *why, size_t n) {
    pc->views = make_views();
    if (!pc->views) {
        char text[1024];
        exception_text(NULL, text, sizeof text);
        snprintf(why, n, "cannot use NumPy in the component's interpreter: %s", text);
        return TSR_E_LOAD;
    }
    pc->glue = import_file("tessera_pycomponent", req->glue_path);
    pc->component = pc->glue ? PyObject_CallMethod(pc->glue, "load", "s", req->api_path) : NULL;
    if (!pc->component) {
        char text[3072];
        exception_text(pc->glue, text, sizeof text);
        snprintf(why, n, "the component failed to load: %s%s", text,
                 req->import_hint ? req->import_hint : "");
        return TSR_E_LOAD;
    }
    char detail[1024];
    if (descriptor_build(pc, detail, sizeof detail) != 0) {
        if (PyErr_Occurred()) exception_text(pc->glue, detail, sizeof detail);
        snprintf(why, n, "cannot describe the component: %s", detail);
        return TSR_E_DESCRIPTOR;
    }
    return 0;
}

EXPORT int pybridge_open(const pybridge_request *req, const tsr_plugin **desc, void **state,
                             char *why, size_t n) {
    if (!req || req->struct_size < sizeof *req) {
        snprintf(why, n, "the Python bridge does not match this library");
        return TSR_E_ABI;
    }
    PyGILState_STATE gil;
    if (interpreter_enter(req->python, &gil, why, n) != 0) return TSR_E_LOAD;
    pycomponent *pc = calloc(1, sizeof *pc);
    int rc = pc ? load(pc, req, why, n) : TSR_E_NOMEM;
    if (!pc) snprintf(why, n, "out of memory");
    if (rc && pc) release(pc);
    if (!rc) {
        *desc = &pc->desc;
        *state = pc;
    }
    streams_flush();   /* what the import printed */
    PyGILState_Release(gil);
    return rc;
}

EXPORT void pybridge_close(void *state) {
    if (!state) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    release(state);
    streams_flush();
    PyGILState_Release(gil);
}
