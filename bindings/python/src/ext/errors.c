/* SPDX-License-Identifier: MIT */
/* Library failures as Python exceptions: tessera registers one class per
 * TSR_E_* code (tessera/_errors.py), and failures raise the class of their
 * code with the library's message. */
#include "ext.h"

/* {code (int): class}, and the class for codes it does not name. */
static PyObject *classes;
static PyObject *fallback;

PyObject *set_error_types(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *mapping, *base;
    if (!PyArg_ParseTuple(args, "O!O", &PyDict_Type, &mapping, &base)) return NULL;
    Py_INCREF(mapping);
    Py_INCREF(base);
    Py_XSETREF(classes, mapping);
    Py_XSETREF(fallback, base);
    Py_RETURN_NONE;
}

void raise_tessera(int code, const char *message) {
    PyObject *cls = NULL;
    if (classes) {
        PyObject *key = PyLong_FromLong(code);
        if (!key) return;
        cls = PyDict_GetItemWithError(classes, key);
        Py_DECREF(key);
        if (!cls && PyErr_Occurred()) return;
    }
    if (!cls) cls = fallback;
    if (!cls) {
        PyErr_Format(PyExc_RuntimeError, "tessera error %d: %s", code, message);
        return;
    }
    /* Plugins write the messages: decode them leniently. */
    PyObject *text = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace");
    if (!text) return;
    PyObject *exc = PyObject_CallFunction(cls, "iO", code, text);
    Py_DECREF(text);
    if (!exc) return;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
}
