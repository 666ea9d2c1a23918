/* SPDX-License-Identifier: MIT */
/* Python objects given for fields -> tsr_array views, without a copy when
 * the memory already has the field's layout. */
#include <math.h>
#include <string.h>

#include "convert.h"

#include <numpy/arrayscalars.h>

#include "errors.h"

PyObject *coerce_fn, *encode_fn;

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

/* The section of a location for what a value was given as: "inputs" for
 * an input, else the argument's own name ("tangent_vector"). */
static const char *field_section(const char *what) {
    return strcmp(what, "input") == 0 ? "inputs" : what;
}

static int view_array(PyArrayObject *a, const field_meta *f, const char *what, tsr_array *out,
                      const comp_core *core, tsr_endpoint ep) {
    int nd = PyArray_NDIM(a);
    if (nd > TSR_MAX_RANK) {
        char msg[512];
        const char *name = core && core->c && !core->abandoned ? tsr_component_name(core->c) : "?";
        snprintf(msg, sizeof msg,
                 "component '%s', endpoint '%s': %s '%s': rank %d is out of range (0 to %d)",
                 name, tsr_endpoint_name(ep), what, PyUnicode_AsUTF8(f->name), nd, TSR_MAX_RANK);
        char loc[TSR_ERRMSG_MAX];
        snprintf(loc, sizeof loc, "%s.%s", field_section(what), f->cname);
        raise_tessera_at(TSR_E_SHAPE, msg, loc);
        return -1;
    }
    out->data = PyArray_DATA(a);
    out->dtype = f->dtype;
    out->rank = nd;
    const npy_intp *dims = PyArray_DIMS(a);
    for (int d = 0; d < nd; d++) out->shape[d] = (int64_t)dims[d];
    return 0;
}

/* ---- scalars ---------------------------------------------------------------
 * A Python bool, int or float, or a NumPy scalar, written into the slot's
 * cell for the field as the 0-d array tessera._coerce would have made: the
 * same rules (Python numbers: the same kind or a wider one, if the value
 * fits; NumPy scalars: here only conversions NumPy calls "safe", which
 * every value survives) and the same values. Only what the Python side
 * accepts is done here; everything it refuses or must check value by value
 * (narrowing, float16, complex numbers, subclasses) goes to it, so the
 * errors are its own. 1 when written, 0 when Python must decide (no
 * exception set). */

static int in_range(long long v, long long lo, long long hi) { return lo <= v && v <= hi; }

static int put_int(const field_meta *f, long long v, void *cell) {
    switch (f->dtype) {
    case TSR_INT8:
        if (!in_range(v, INT8_MIN, INT8_MAX)) return 0;
        *(int8_t *)cell = (int8_t)v;
        return 1;
    case TSR_INT16:
        if (!in_range(v, INT16_MIN, INT16_MAX)) return 0;
        *(int16_t *)cell = (int16_t)v;
        return 1;
    case TSR_INT32:
        if (!in_range(v, INT32_MIN, INT32_MAX)) return 0;
        *(int32_t *)cell = (int32_t)v;
        return 1;
    case TSR_INT64: *(int64_t *)cell = (int64_t)v; return 1;
    case TSR_UINT8:
        if (!in_range(v, 0, UINT8_MAX)) return 0;
        *(uint8_t *)cell = (uint8_t)v;
        return 1;
    case TSR_UINT16:
        if (!in_range(v, 0, UINT16_MAX)) return 0;
        *(uint16_t *)cell = (uint16_t)v;
        return 1;
    case TSR_UINT32:
        if (!in_range(v, 0, UINT32_MAX)) return 0;
        *(uint32_t *)cell = (uint32_t)v;
        return 1;
    case TSR_UINT64:
        if (v < 0) return 0;
        *(uint64_t *)cell = (uint64_t)v;
        return 1;
    default: return 0;
    }
}

/* A real value for a float or complex field; refused (0) where the Python
 * side would report an overflow: a finite value that the field's type
 * cannot hold. */
static int put_real(const field_meta *f, double d, void *cell) {
    float x;
    switch (f->dtype) {
    case TSR_FLOAT64: *(double *)cell = d; return 1;
    case TSR_COMPLEX128: ((double *)cell)[0] = d; ((double *)cell)[1] = 0.0; return 1;
    case TSR_FLOAT32:
    case TSR_COMPLEX64:
        x = (float)d;
        if (isfinite(d) && !isfinite(x)) return 0;
        ((float *)cell)[0] = x;
        if (f->dtype == TSR_COMPLEX64) ((float *)cell)[1] = 0.0f;
        return 1;
    default: return 0;  /* float16: Python */
    }
}

static int numpy_scalar(PyObject *obj, const field_meta *f, void *cell) {
    PyArray_Descr *from = PyArray_DescrFromScalar(obj);
    if (!from) {
        PyErr_Clear();
        return 0;
    }
    int done = 0;
    tsr_dtype have = PyDataType_HASFIELDS(from) ? TSR_DTYPE_INVALID : dtype_from_numpy(from);
    if (have == f->dtype) {
        PyArray_ScalarAsCtype(obj, cell);
        done = 1;
    } else if (have != TSR_DTYPE_INVALID) {
        PyArray_Descr *to = PyArray_DescrFromType(dtype_to_typenum(f->dtype));
        if (to && PyArray_CanCastTypeTo(from, to, NPY_SAFE_CASTING))
            done = PyArray_CastScalarToCtype(obj, cell, to) == 0;
        Py_XDECREF(to);
        if (!done) PyErr_Clear();
    }
    Py_DECREF(from);
    return done;
}

static int scalar_fast(PyObject *obj, const field_meta *f, void *cell) {
    PyTypeObject *t = Py_TYPE(obj);
    int real = f->np_kind == 'f' || f->np_kind == 'c';
    if (t == &PyFloat_Type) return real ? put_real(f, PyFloat_AS_DOUBLE(obj), cell) : 0;
    /* np.float64 is a float: tessera._coerce takes it as a Python number. */
    if (t == &PyDoubleArrType_Type)
        return real ? put_real(f, PyArrayScalar_VAL(obj, Double), cell) : 0;
    if (t == &PyBool_Type) {
        int v = obj == Py_True;
        if (f->np_kind == 'b') {
            *(npy_bool *)cell = (npy_bool)v;
            return 1;
        }
        return real ? put_real(f, v, cell) : put_int(f, v, cell);
    }
    if (t == &PyLong_Type) {
        if (real) {
            double d = PyLong_AsDouble(obj);  /* float(obj), as Python rounds it */
            if (d == -1.0 && PyErr_Occurred()) {
                PyErr_Clear();
                return 0;
            }
            return put_real(f, d, cell);
        }
        if (f->np_kind != 'i' && f->np_kind != 'u') return 0;
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (overflow > 0 && f->dtype == TSR_UINT64) {
            unsigned long long u = PyLong_AsUnsignedLongLong(obj);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) {
                PyErr_Clear();
                return 0;
            }
            *(uint64_t *)cell = (uint64_t)u;
            return 1;
        }
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        return put_int(f, v, cell);
    }
    /* Other NumPy scalars (not subclasses of Python's numbers). */
    if (PyArray_IsScalar(obj, Generic) && !PyFloat_Check(obj) && !PyComplex_Check(obj) &&
        !PyLong_Check(obj))
        return numpy_scalar(obj, f, cell);
    return 0;
}

int convert_array(PyObject *obj, const field_meta *f, const char *what, tsr_array *out,
                  PyObject **keep, void *cell, PyObject *owner, const comp_core *core,
                  tsr_endpoint ep) {
    if (PyArray_Check(obj) && usable_in_place((PyArrayObject *)obj, f)) {
        if (view_array((PyArrayObject *)obj, f, what, out, core, ep) != 0) return -1;
        *keep = Py_NewRef(obj);
        return 0;
    }
    if (cell && !PyArray_Check(obj) && scalar_fast(obj, f, cell)) {
        /* A 0-d array in the cell; the library checks the field's rank as
         * it would for the array tessera._coerce makes. */
        out->data = cell;
        out->dtype = f->dtype;
        out->rank = 0;
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
                                          f->name, what, owner,
                                          tsr_endpoint_name(ep));
    if (!arr) return -1;
    if (!PyArray_Check(arr) || !usable_in_place((PyArrayObject *)arr, f)) {
        Py_DECREF(arr);
        PyErr_Format(PyExc_RuntimeError, "tessera: coercion of %s '%U' gave an unusable array",
                     what, f->name);
        return -1;
    }
    if (view_array((PyArrayObject *)arr, f, what, out, core, ep) != 0) {
        Py_DECREF(arr);
        return -1;
    }
    *keep = arr;
    return 0;
}

const char *convert_text(PyObject *obj, const field_meta *f, const char *what,
                         PyObject **keep, PyObject *owner, tsr_endpoint ep) {
    if (!encode_fn) {
        PyErr_SetString(PyExc_RuntimeError, "tessera._ext used without the tessera package");
        return NULL;
    }
    PyObject *b = PyObject_CallFunction(encode_fn, "OsOsOs", obj,
                                        f->kind == TSR_KIND_TEXT ? "text" : "json", f->name,
                                        what, owner, tsr_endpoint_name(ep));
    if (!b) return NULL;
    if (!PyBytes_Check(b)) {
        Py_DECREF(b);
        PyErr_Format(PyExc_RuntimeError, "tessera: encoding %s '%U' gave no bytes", what,
                     f->name);
        return NULL;
    }
    *keep = b;
    return PyBytes_AS_STRING(b);   /* NUL-terminated by bytes' own layout */
}
