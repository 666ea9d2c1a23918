/* SPDX-License-Identifier: MIT */
/* Library failures as Python exceptions: tessera registers one class per
 * TSR_E_* code (tessera/_errors.py), and failures raise the class of their
 * code with the library's message. */
#include "errors.h"

#include <stdlib.h>
#include <string.h>

/* {code (int): class}, and the class for codes it does not name. */
static PyObject *classes;
static PyObject *fallback;

/* For messages made where no exception can be raised (the XLA FFI handler,
 * without the GIL): the class and code names by -code. Written at import,
 * read-only after. */
#define N_CODES 64
static char *class_names[N_CODES];
static char *code_names[N_CODES];

static void keep_name(char **slot, PyObject *name) {
    const char *text = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!text) {
        PyErr_Clear();
        return;
    }
    size_t len = strlen(text) + 1;
    char *copy = malloc(len);
    if (!copy) return;
    memcpy(copy, text, len);
    free(*slot);
    *slot = copy;
}

PyObject *set_error_types(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *mapping, *base, *names = NULL;
    if (!PyArg_ParseTuple(args, "O!O|O!", &PyDict_Type, &mapping, &base, &PyDict_Type, &names))
        return NULL;
    Py_INCREF(mapping);
    Py_INCREF(base);
    Py_XSETREF(classes, mapping);
    Py_XSETREF(fallback, base);
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(mapping, &pos, &key, &value)) {
        long code = PyLong_AsLong(key);
        if (code == -1 && PyErr_Occurred()) return NULL;
        if (code >= 0 || -code >= N_CODES) continue;
        PyObject *name = PyObject_GetAttrString(value, "__name__");
        keep_name(&class_names[-code], name);
        Py_XDECREF(name);
    }
    pos = 0;
    while (names && PyDict_Next(names, &pos, &key, &value)) {
        long code = PyLong_AsLong(key);
        if (code == -1 && PyErr_Occurred()) return NULL;
        if (code < 0 && -code < N_CODES) keep_name(&code_names[-code], value);
    }
    Py_RETURN_NONE;
}

/* The library's advice in the words of a Python user. */
static const struct {
    const char *from, *to;
} advice[] = {
    {"tsr_component_restart", "Component.restart()"},
    {"open with restart=auto", "load with restart='auto'"},
};

size_t python_words(const char *in, char *out, size_t n) {
    size_t len = 0;
    while (*in) {
        const char *to = NULL;
        size_t skip = 1;
        for (size_t i = 0; i < sizeof advice / sizeof advice[0] && !to; i++) {
            size_t k = strlen(advice[i].from);
            if (strncmp(in, advice[i].from, k) == 0) {
                to = advice[i].to;
                skip = k;
            }
        }
        size_t add = to ? strlen(to) : 1;
        for (size_t j = 0; j < add; j++, len++)
            if (n && len < n - 1) out[len] = to ? to[j] : *in;
        in += skip;
    }
    if (n) out[len < n ? len : n - 1] = '\0';
    return len;
}

int tessera_message(char *out, size_t n, int code, const char *message) {
    const char *cls = code < 0 && -code < N_CODES ? class_names[-code] : NULL;
    const char *name = code < 0 && -code < N_CODES ? code_names[-code] : NULL;
    int head = snprintf(out, n, "tessera.%s: ", cls ? cls : "TesseraError");
    if (head < 0 || (size_t)head >= n) return head;
    size_t body = python_words(message, out + head, n - (size_t)head);
    size_t used = (size_t)head + body < n ? (size_t)head + body : n - 1;
    int tail = name ? snprintf(out + used, n - used, " [%s]", name)
                    : snprintf(out + used, n - used, " [code %d]", code);
    return (int)((size_t)head + body) + (tail > 0 ? tail : 0);
}

/* "inputs.mesh.nodes" -> ("inputs", "mesh", "nodes"), "jvp_inputs.1" ->
 * ("jvp_inputs", 1): list indices as ints, as pydantic gives them. */
static PyObject *loc_tuple(const char *loc) {
    if (!loc[0]) return PyTuple_New(0);
    PyObject *text = PyUnicode_DecodeUTF8(loc, (Py_ssize_t)strlen(loc), "replace");
    PyObject *dot = PyUnicode_FromString(".");
    PyObject *parts = text && dot ? PyUnicode_Split(text, dot, -1) : NULL;
    Py_XDECREF(text);
    Py_XDECREF(dot);
    if (!parts) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(parts);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *part = PyList_GET_ITEM(parts, i);
        const char *s = PyUnicode_AsUTF8(part);
        if (!s) {
            Py_DECREF(parts);
            return NULL;
        }
        int digits = s[0] != '\0';
        for (const char *c = s; *c && digits; c++) digits = *c >= '0' && *c <= '9';
        if (!digits) continue;
        PyObject *index = PyLong_FromUnicodeObject(part, 10);
        if (!index) {
            Py_DECREF(parts);
            return NULL;
        }
        PyList_SetItem(parts, i, index);  /* steals index, drops part */
    }
    PyObject *tuple = PyList_AsTuple(parts);
    Py_DECREF(parts);
    return tuple;
}

void raise_tessera_at(int code, const char *message, const char *loc) {
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
    /* The advice in Python's words (no replacement is twice as long as
     * what it replaces). */
    size_t cap = 2 * strlen(message) + 1;
    char *words = PyMem_Malloc(cap);
    if (!words) {
        PyErr_NoMemory();
        return;
    }
    python_words(message, words, cap);
    /* Plugins write the messages: decode them leniently. */
    PyObject *text = PyUnicode_DecodeUTF8(words, (Py_ssize_t)strlen(words), "replace");
    PyMem_Free(words);
    PyObject *where = text ? loc_tuple(loc ? loc : "") : NULL;
    PyObject *exc = where ? PyObject_CallFunction(cls, "iOO", code, text, where) : NULL;
    Py_XDECREF(text);
    Py_XDECREF(where);
    if (!exc) return;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
}

void raise_tessera(int code, const char *message) { raise_tessera_at(code, message, ""); }

void raise_call_error(const tsr_call *call, int code) {
    raise_tessera_at(code, tsr_call_errmsg(call), tsr_call_errloc(call));
}

PyObject *error_type_fn(PyObject *module, PyObject *code) {
    (void)module;
    long c = PyLong_AsLong(code);
    if (c == -1 && PyErr_Occurred()) return NULL;
    return PyUnicode_FromString(tsr_error_type((int)c));
}
