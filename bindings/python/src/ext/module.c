/* SPDX-License-Identifier: MIT */
/* The module tessera._ext: its types, the hooks the Python package installs
 * (error classes, input coercion, the exit hook) and the XLA FFI handler. */
#include "ext.h"

#include "arena.h"
#include "component.h"
#include "convert.h"
#include "core.h"
#include "errors.h"
#include "pool.h"
#include "results.h"
#include "serve.h"
#include "slot.h"
#if TSR_PY_HAVE_XLA_FFI
#include "ffi_handler.h"
#include "ffi_ops.h"
#endif

static PyObject *set_coerce(PyObject *module, PyObject *fn) {
    (void)module;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "_set_coerce: a callable");
        return NULL;
    }
    Py_INCREF(fn);
    Py_XSETREF(coerce_fn, fn);
    Py_RETURN_NONE;
}

static PyObject *set_nesting(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *flatten, *nest;
    if (!PyArg_ParseTuple(args, "OO", &flatten, &nest)) return NULL;
    if (!PyCallable_Check(flatten) || !PyCallable_Check(nest)) {
        PyErr_SetString(PyExc_TypeError, "_set_nesting: two callables");
        return NULL;
    }
    Py_INCREF(flatten);
    Py_INCREF(nest);
    Py_XSETREF(flatten_fn, flatten);
    Py_XSETREF(nest_fn, nest);
    Py_RETURN_NONE;
}

static PyObject *set_values(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *encode, *decode;
    if (!PyArg_ParseTuple(args, "OO", &encode, &decode)) return NULL;
    if (!PyCallable_Check(encode) || !PyCallable_Check(decode)) {
        PyErr_SetString(PyExc_TypeError, "_set_values: two callables");
        return NULL;
    }
    Py_INCREF(encode);
    Py_INCREF(decode);
    Py_XSETREF(encode_fn, encode);
    Py_XSETREF(decode_fn, decode);
    Py_RETURN_NONE;
}

static PyObject *close_all(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    core_close_all();
    Py_RETURN_NONE;
}

static PyObject *strerror_fn(PyObject *module, PyObject *code) {
    (void)module;
    long c = PyLong_AsLong(code);
    if (c == -1 && PyErr_Occurred()) return NULL;
    return PyUnicode_FromString(tsr_strerror((int)c));
}

static PyObject *debug_counts(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return results_debug_counts();
}

static PyObject *set_copy_limit(PyObject *module, PyObject *limit) {
    (void)module;
    Py_ssize_t n = PyLong_AsSsize_t(limit);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "_set_copy_limit: bytes >= 0");
        return NULL;
    }
    Py_ssize_t was = result_copy_limit;
    result_copy_limit = n;
    return PyLong_FromSsize_t(was);
}

#if TSR_PY_HAVE_XLA_FFI
static PyObject *ffi_capsule(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return ffi_handler_capsule();
}
#endif

static PyMethodDef module_methods[] = {
    {"_set_error_types", set_error_types, METH_VARARGS,
     "_set_error_types($module, classes, fallback, names, /)\n--\n\n"
     "classes {code: class}, fallback a class, names {code: 'TSR_E_...'}"},
    {"_set_coerce", set_coerce, METH_O, "_set_coerce($module, fn, /)\n--\n\nfn(obj, dtype, name, what) -> ndarray"},
    {"_set_nesting", set_nesting, METH_VARARGS,
     "_set_nesting($module, flatten, nest, /)\n--\n\nflatten(component, inputs, endpoint) -> {dotted name: "
     "value}; nest({dotted name: value}) -> nested dicts"},
    {"_set_values", set_values, METH_VARARGS,
     "_set_values($module, encode, decode, /)\n--\n\nencode(value, kind, name, what, component, endpoint) -> "
     "UTF-8 bytes of a TEXT or JSON input; decode(bytes, kind) -> its Python value"},
    {"error_type", error_type_fn, METH_O,
     "error_type($module, code, /)\n--\n\nThe library's one-word kind of failure (tsr_error_type)"},
    {"_close_all", close_all, METH_NOARGS,
     "_close_all($module, /)\n--\n\nClose every component still open (the exit hook): workers stop, shared memory goes."},
    {"strerror", strerror_fn, METH_O,
     "strerror($module, code, /)\n--\n\nThe library's short description of an error code."},
    {"_serve_start", serve_start, METH_VARARGS,
     "_serve_start($module, component, host, port, token, input_dir, output_dir, encoding, "
     "lz4, max_body_bytes, threads, /)\n--\n\nA running server (capsule)."},
    {"_serve_port", serve_port, METH_O, "_serve_port($module, server, /)\n--\n\nThe port the server listens on."},
    {"_serve_stop", serve_stop, METH_O, "_serve_stop($module, server, /)\n--\n\nStop the server now."},
    {"_debug_counts", debug_counts, METH_NOARGS,
     "_debug_counts($module, /)\n--\n\nCounters of this process: calls (call objects alive), results_in_call (results viewed "
     "in a call's buffer), results_owned (results whose buffer was handed over), copy_limit."},
    {"_set_copy_limit", set_copy_limit, METH_O,
     "_set_copy_limit($module, limit, /)\n--\n\nThe previous limit; results of at most this many bytes are "
     "copied out (for measurements)."},
#if TSR_PY_HAVE_XLA_FFI
    {"_ffi_handler", ffi_capsule, METH_NOARGS,
     "_ffi_handler($module, /)\n--\n\nThe XLA FFI handler as a PyCapsule, for jax.ffi.register_ffi_target."},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tessera._ext",
    .m_doc = "The C half of tessera: components, zero-copy arrays, the XLA FFI handler.",
    .m_size = -1,
    .m_methods = module_methods,
};

static int add_type(PyObject *m, PyTypeObject *t, const char *name) {
    if (PyType_Ready(t) < 0) return -1;
    Py_INCREF(t);
    if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__ext(void) {
    if (numpy_api_import() != 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (add_type(m, &Component_Type, "Component") < 0 || add_type(m, &Slot_Type, "Slot") < 0 ||
        add_type(m, &Pool_Type, "Pool") < 0 ||
        add_type(m, &ArenaBuffer_Type, "ArenaBuffer") < 0 ||
        add_type(m, &ResultBuffer_Type, "ResultBuffer") < 0 ||
#if TSR_PY_HAVE_XLA_FFI
        add_type(m, &FfiOp_Type, "FfiOp") < 0 ||
#endif
        PyModule_AddIntConstant(m, "HAVE_XLA_FFI", TSR_PY_HAVE_XLA_FFI) < 0 ||
        PyModule_AddIntConstant(m, "MAX_RANK", TSR_MAX_RANK) < 0 ||
        PyModule_AddObject(m, "LIBRARY_VERSION", PyUnicode_FromString(tsr_version())) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
