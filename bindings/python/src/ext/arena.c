/* SPDX-License-Identifier: MIT */
/* component.empty(): arrays in memory from tsr_component_alloc, which in worker mode
 * is the shared-memory arena, so that they reach the worker by reference.
 * The ArenaBuffer is the arrays' base and calls tsr_component_free_buffer when the last
 * array that views it dies. */
#include "arena.h"

#include "convert.h"
#include "errors.h"

typedef struct ArenaBufferObject {
    PyObject_HEAD
    comp_core *core;   /* counted */
    void *data;
    size_t bytes;
} ArenaBufferObject;

static void ArenaBuffer_dealloc(ArenaBufferObject *self) {
    if (self->core) {
        if (!self->core->abandoned) tsr_component_free_buffer(self->core->c, self->data);
        core_decref(self->core);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyTypeObject ArenaBuffer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera._ext.ArenaBuffer",
    .tp_doc = "Memory from tsr_component_alloc; the base of the arrays component.empty returns.",
    .tp_basicsize = sizeof(ArenaBufferObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)ArenaBuffer_dealloc,
};

PyObject *arena_empty(comp_core *core, PyObject *shape, PyObject *dtype) {
    PyArray_Descr *descr = NULL;
    if (!PyArray_DescrConverter(dtype, &descr)) return NULL;
    if (dtype_from_numpy(descr) == TSR_DTYPE_INVALID || !PyArray_ISNBO(descr->byteorder)) {
        PyErr_Format(PyExc_TypeError,
                     "empty: dtype %R is not one of Tessera's (bool, int8-64, uint8-64, "
                     "float16/32/64, complex64/128, native byte order)",
                     (PyObject *)descr);
        Py_DECREF(descr);
        return NULL;
    }
    PyArray_Dims dims = {NULL, 0};
    if (PyLong_Check(shape)) {
        shape = Py_BuildValue("(O)", shape);
        if (!shape || !PyArray_IntpConverter(shape, &dims)) {
            Py_XDECREF(shape);
            Py_DECREF(descr);
            return NULL;
        }
        Py_DECREF(shape);
    } else if (!PyArray_IntpConverter(shape, &dims)) {
        Py_DECREF(descr);
        return NULL;
    }
    size_t bytes = (size_t)PyDataType_ELSIZE(descr);
    int bad = dims.len > TSR_MAX_RANK;
    for (int d = 0; d < dims.len && !bad; d++) {
        if (dims.ptr[d] < 0 || (dims.ptr[d] > 0 && bytes > SIZE_MAX / (size_t)dims.ptr[d])) bad = 1;
        else bytes *= (size_t)dims.ptr[d];
    }
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "empty: invalid shape (negative, too many dims or too "
                                          "large)");
        PyDimMem_FREE(dims.ptr);
        Py_DECREF(descr);
        return NULL;
    }
    void *data = tsr_component_alloc(core->c, bytes);
    if (!data) {
        PyDimMem_FREE(dims.ptr);
        Py_DECREF(descr);
        raise_tessera(tsr_component_mode(core->c) == TSR_MODE_WORKER ? TSR_E_SHM
                                                                          : TSR_E_NOMEM,
                      "empty: tsr_component_alloc could not provide the memory");
        return NULL;
    }
    ArenaBufferObject *buf = PyObject_New(ArenaBufferObject, &ArenaBuffer_Type);
    if (!buf) {
        tsr_component_free_buffer(core->c, data);
        PyDimMem_FREE(dims.ptr);
        Py_DECREF(descr);
        return NULL;
    }
    buf->core = core;
    core_incref(core);
    buf->data = data;
    buf->bytes = bytes;
    /* PyArray_NewFromDescr steals descr. */
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, dims.len, dims.ptr, NULL, data,
                                         NPY_ARRAY_CARRAY, NULL);
    PyDimMem_FREE(dims.ptr);
    if (!arr) {
        Py_DECREF(buf);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)buf) != 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}
