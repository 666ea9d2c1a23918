/* SPDX-License-Identifier: MIT */
/* Python objects given for fields -> tsr_array views, without a copy when
 * the memory already has the field's layout. */
#include "ext.h"

PyObject *coerce_fn;

tsr_dtype dtype_from_numpy(PyArray_Descr *d) {
    /* By kind and size, not type number: int64 is both NPY_LONG and
     * NPY_LONGLONG on LP64. */
    int size = (int)PyDataType_ELSIZE(d);
    switch (d->kind) {
    case 'b': return size == 1 ? TSR_BOOL : TSR_DTYPE_INVALID;
    case 'i':
        return size == 1 ? TSR_INT8 : size == 2 ? TSR_INT16 : size == 4 ? TSR_INT32
             : size == 8 ? TSR_INT64 : TSR_DTYPE_INVALID;
    case 'u':
        return size == 1 ? TSR_UINT8 : size == 2 ? TSR_UINT16 : size == 4 ? TSR_UINT32
             : size == 8 ? TSR_UINT64 : TSR_DTYPE_INVALID;
    case 'f':
        return size == 2 ? TSR_FLOAT16 : size == 4 ? TSR_FLOAT32 : size == 8 ? TSR_FLOAT64
             : TSR_DTYPE_INVALID;
    case 'c': return size == 8 ? TSR_COMPLEX64 : size == 16 ? TSR_COMPLEX128 : TSR_DTYPE_INVALID;
    default: return TSR_DTYPE_INVALID;
    }
}

int dtype_to_typenum(tsr_dtype dtype) {
    switch (dtype) {
    case TSR_BOOL: return NPY_BOOL;
    case TSR_INT8: return NPY_INT8;
    case TSR_INT16: return NPY_INT16;
    case TSR_INT32: return NPY_INT32;
    case TSR_INT64: return NPY_INT64;
    case TSR_UINT8: return NPY_UINT8;
    case TSR_UINT16: return NPY_UINT16;
    case TSR_UINT32: return NPY_UINT32;
    case TSR_UINT64: return NPY_UINT64;
    case TSR_FLOAT16: return NPY_FLOAT16;
    case TSR_FLOAT32: return NPY_FLOAT32;
    case TSR_FLOAT64: return NPY_FLOAT64;
    case TSR_COMPLEX64: return NPY_COMPLEX64;
    case TSR_COMPLEX128: return NPY_COMPLEX128;
    default: return -1;
    }
}

/* An array the plugin can read where it lies: the field's element type in
 * native byte order, C-contiguous and aligned. */
static int usable_in_place(PyArrayObject *a, const field_meta *f) {
    PyArray_Descr *d = PyArray_DESCR(a);
    return d->kind == f->np_kind && PyDataType_ELSIZE(d) == f->np_size &&
           PyArray_ISNBO(d->byteorder) && PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a) &&
           !PyDataType_HASFIELDS(d);
}

static int view_array(PyArrayObject *a, const field_meta *f, const char *what, tsr_array *out,
                      ComponentObject *comp, tsr_endpoint ep) {
    int nd = PyArray_NDIM(a);
    if (nd > TSR_MAX_RANK) {
        char msg[512];
        const char *name = comp->core && comp->core->c ? tsr_component_name(comp->core->c) : "?";
        snprintf(msg, sizeof msg,
                 "component '%s', endpoint '%s': %s '%s': rank %d is out of range (0 to %d)",
                 name, tsr_endpoint_name(ep), what, PyUnicode_AsUTF8(f->name), nd, TSR_MAX_RANK);
        raise_tessera(TSR_E_SHAPE, msg);
        return -1;
    }
    out->data = PyArray_DATA(a);
    out->dtype = f->dtype;
    out->rank = nd;
    const npy_intp *dims = PyArray_DIMS(a);
    for (int d = 0; d < nd; d++) out->shape[d] = (int64_t)dims[d];
    return 0;
}

int convert_array(PyObject *obj, const field_meta *f, const char *what, tsr_array *out,
                  PyObject **keep, ComponentObject *comp, tsr_endpoint ep) {
    if (PyArray_Check(obj) && usable_in_place((PyArrayObject *)obj, f)) {
        if (view_array((PyArrayObject *)obj, f, what, out, comp, ep) != 0) return -1;
        *keep = Py_NewRef(obj);
        return 0;
    }
    if (!coerce_fn) {
        PyErr_SetString(PyExc_RuntimeError, "tessera._ext used without the tessera package");
        return -1;
    }
    /* Everything else (other dtypes, strides, torch and JAX arrays,
     * buffers, scalars, lists) is decided in Python, once per call. Its
     * refusals name the component and the endpoint as the library's do. */
    PyObject *arr = PyObject_CallFunction(coerce_fn, "OsOsOs", obj, tsr_dtype_name(f->dtype),
                                          f->name, what, (PyObject *)comp,
                                          tsr_endpoint_name(ep));
    if (!arr) return -1;
    if (!PyArray_Check(arr) || !usable_in_place((PyArrayObject *)arr, f)) {
        Py_DECREF(arr);
        PyErr_Format(PyExc_RuntimeError, "tessera: coercion of %s '%U' gave an unusable array",
                     what, f->name);
        return -1;
    }
    if (view_array((PyArrayObject *)arr, f, what, out, comp, ep) != 0) {
        Py_DECREF(arr);
        return -1;
    }
    *keep = arr;
    return 0;
}
