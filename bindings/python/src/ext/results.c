/* SPDX-License-Identifier: MIT */
/* Results as NumPy arrays that view the call's buffers (in the arena in
 * worker mode) and keep them alive through their base, the Slot. */
#include "ext.h"

static PyObject *view_of(SlotObject *slot, const tsr_array *r) {
    int typenum = dtype_to_typenum(r->dtype);
    if (typenum < 0) {
        PyErr_Format(PyExc_RuntimeError, "tessera: result with invalid dtype %d", (int)r->dtype);
        return NULL;
    }
    npy_intp dims[TSR_MAX_RANK];
    for (int32_t d = 0; d < r->rank; d++) dims[d] = (npy_intp)r->shape[d];
    /* Writeable: the buffer is the caller's until the slot runs again, which
     * it does not while this array lives. (NumPy also refuses to export
     * read-only arrays through DLPack.) */
    PyObject *arr = PyArray_New(&PyArray_Type, r->rank, dims, typenum, NULL, r->data, 0,
                                NPY_ARRAY_CARRAY, NULL);
    if (!arr) return NULL;
    if (PyArray_SetBaseObject((PyArrayObject *)arr, Py_NewRef((PyObject *)slot)) != 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

PyObject *result_array(SlotObject *slot, int32_t k) {
    const tsr_array *r = tsr_call_result(slot->call, k);
    if (!r) {
        PyErr_Format(PyExc_IndexError, "tessera: no result %d", (int)k);
        return NULL;
    }
    return view_of(slot, r);
}

PyObject *result_tuple(SlotObject *slot) {
    int32_t n = tsr_call_n_results(slot->call);
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int32_t k = 0; k < n; k++) {
        PyObject *a = result_array(slot, k);
        if (!a) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, a);
    }
    return t;
}

PyObject *result_dict(SlotObject *slot, const field_meta *out, int32_t n_out) {
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (int32_t k = 0; k < n_out; k++) {
        PyObject *a = result_array(slot, k);
        if (!a || PyDict_SetItem(d, out[k].name, a) != 0) {
            Py_XDECREF(a);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(a);
    }
    return d;
}
