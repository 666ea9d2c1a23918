/* SPDX-License-Identifier: MIT */
/* One call of a Python component: the arguments become read-only NumPy
 * views of the host's buffers (no copy), the glue runs the component's
 * endpoint, and each result array is copied once into the buffer the host
 * gave (or asked for, when the shape depends on values); a TEXT or JSON
 * value is its bytes both ways, and the wrt entries' paths go with the
 * derivatives' indices. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bridge.h"

/* A list of n ints. */
static PyObject *int_list(const int32_t *v, int32_t n) {
    PyObject *list = PyList_New(n);
    for (int32_t i = 0; list && i < n; i++) {
        PyObject *x = PyLong_FromLong(v[i]);
        if (!x) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, x);
    }
    return list;
}

/* A list of n str (None where an entry or the array is NULL). */
static PyObject *str_list(const char *const *v, int32_t n) {
    PyObject *list = PyList_New(n);
    for (int32_t i = 0; list && i < n; i++) {
        PyObject *x = v && v[i] ? PyUnicode_FromString(v[i]) : Py_NewRef(Py_None);
        if (!x) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, x);
    }
    return list;
}

static PyObject *shape_tuple(const tsr_array *a) {
    PyObject *t = PyTuple_New(a->rank);
    for (int32_t k = 0; t && k < a->rank; k++) {
        PyObject *x = PyLong_FromLongLong(a->shape[k]);
        if (!x) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, k, x);
    }
    return t;
}

size_t bridge_dtype_size(tsr_dtype d) {
    static const unsigned char size[TSR_DTYPE_COUNT] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8,
                                                        2, 4, 8, 8, 16};
    return d > 0 && d < TSR_DTYPE_COUNT ? size[d] : 0;
}

/* Whether a buffer's struct format is dtype d (NumPy writes "<d", "d", "l" or "q"). */
int bridge_format_is(const char *format, tsr_dtype d) {
    static const char *const formats[TSR_DTYPE_COUNT] = {
        "", "?", "b", "h", "i", "lq", "B", "H", "I", "LQ", "e", "f", "d", "Zf", "Zd"};
    if (!format) return 0;
    while (*format == '<' || *format == '=' || *format == '@' || *format == '|') format++;
    if (d <= 0 || d >= TSR_DTYPE_COUNT || !*format) return 0;
    if (format[0] == 'Z') return strcmp(format, formats[d]) == 0;
    return format[1] == '\0' && strchr(formats[d], format[0]) != NULL;
}

static size_t array_bytes(const tsr_array *a) {
    size_t bytes = bridge_dtype_size(a->dtype);
    for (int32_t k = 0; k < a->rank; k++) bytes *= (size_t)a->shape[k];
    return bytes;
}

/* Read-only NumPy views of n arrays (the glue's views function). */
static PyObject *views_of(pycomponent *pc, const tsr_array *arrays, int32_t n) {
    PyObject *bufs = PyList_New(n), *codes = PyList_New(n), *shapes = PyList_New(n);
    PyObject *out = NULL;
    if (!bufs || !codes || !shapes) goto done;
    for (int32_t i = 0; i < n; i++) {
        const tsr_array *a = &arrays[i];
        static char empty[1];
        PyObject *mv = PyMemoryView_FromMemory(a->data ? (char *)a->data : empty,
                                               (Py_ssize_t)array_bytes(a), PyBUF_READ);
        PyObject *code = PyLong_FromLong(a->dtype);
        PyObject *shape = shape_tuple(a);
        if (!mv || !code || !shape) {
            Py_XDECREF(mv);
            Py_XDECREF(code);
            Py_XDECREF(shape);
            goto done;
        }
        PyList_SET_ITEM(bufs, i, mv);
        PyList_SET_ITEM(codes, i, code);
        PyList_SET_ITEM(shapes, i, shape);
    }
    out = PyObject_CallFunctionObjArgs(pc->views, bufs, codes, shapes, NULL);
done:
    Py_XDECREF(bufs);
    Py_XDECREF(codes);
    Py_XDECREF(shapes);
    return out;
}

/* (shape, dtype code) of each input, for abstract_eval; (shape, code,
 * bytes) for a TEXT or JSON input whose value the host passed. */
static PyObject *abstract_inputs(const pycomponent *pc, const tsr_args *a) {
    PyObject *list = PyList_New(a->n_inputs);
    for (int32_t i = 0; list && i < a->n_inputs; i++) {
        const tsr_array *in = &a->inputs[i];
        PyObject *shape = shape_tuple(in);
        int text = pc->desc.inputs[i].kind != TSR_KIND_ARRAY && in->data && in->rank == 1;
        PyObject *pair = !shape ? NULL
                         : text ? Py_BuildValue("(Niy#)", shape, (int)in->dtype,
                                                (const char *)in->data, (Py_ssize_t)in->shape[0])
                                : Py_BuildValue("(Ni)", shape, (int)in->dtype);
        if (!pair) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, pair);
    }
    return list;
}

/* abstract_eval's answer: (shape, dtype) per output into the results. */
static int store_abstract(tsr_ctx *ctx, const tsr_args *a, PyObject *out) {
    for (int32_t k = 0; k < a->n_results; k++) {
        PyObject *pair = PySequence_GetItem(out, k);
        PyObject *shape = NULL;
        int code = 0;
        if (!pair || !PyArg_ParseTuple(pair, "Oi", &shape, &code) || !PySequence_Check(shape) ||
            PySequence_Size(shape) > TSR_MAX_RANK) {
            Py_XDECREF(pair);
            PyErr_Clear();
            return tsr_ctx_errorf(ctx, "abstract_eval of output %d: not a (shape, dtype) pair", k);
        }
        tsr_array *r = &a->results[k];
        r->rank = (int32_t)PySequence_Size(shape);
        for (int32_t d = 0; d < r->rank; d++) {
            PyObject *x = PySequence_GetItem(shape, d);
            r->shape[d] = x ? PyLong_AsLongLong(x) : -1;
            Py_XDECREF(x);
        }
        Py_DECREF(pair);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return tsr_ctx_errorf(ctx, "abstract_eval of output %d: a dimension is not an int", k);
        }
        r->dtype = (tsr_dtype)code;
    }
    return 0;
}

/* A TEXT or JSON result: the glue's bytes into a buffer of their length. */
static int store_text(tsr_ctx *ctx, const tsr_args *a, int32_t k, PyObject *item) {
    tsr_array *r = &a->results[k];
    char *text = NULL;
    Py_ssize_t len = 0;
    if (PyBytes_AsStringAndSize(item, &text, &len) != 0) {
        PyErr_Clear();
        return tsr_ctx_errorf(ctx, "result %d: unreadable bytes", k);
    }
    if (r->data && (r->dtype != TSR_UINT8 || r->rank != 1 || r->shape[0] != len))
        return tsr_ctx_errorf(ctx, "result %d: %zd bytes of text, the host gave room for a "
                              "different array", k, len);
    if (!r->data) {
        r->dtype = TSR_UINT8;
        r->rank = 1;
        r->shape[0] = len;
        if (!tsr_ctx_alloc(ctx, k)) return -1; /* the host said why */
    }
    if (len) memcpy(r->data, text, (size_t)len);
    return 0;
}

/* The dtype of a buffer's struct format; TSR_DTYPE_INVALID if none. */
static tsr_dtype format_dtype(const char *format, Py_ssize_t itemsize) {
    for (int d = 1; d < TSR_DTYPE_COUNT; d++)
        if (bridge_format_is(format, (tsr_dtype)d) && bridge_dtype_size((tsr_dtype)d) ==
                                                          (size_t)itemsize)
            return (tsr_dtype)d;
    return TSR_DTYPE_INVALID;
}

/* Copy result k from a C-contiguous array of the result's dtype (the glue
 * casts) into the host's buffer, asking for one when the host could not
 * size it (then also its rank, and its dtype when the host left it unset:
 * a derivative at a path inside a JSON value). */
static int store_one(tsr_ctx *ctx, const tsr_args *a, int32_t k, PyObject *item) {
    if (PyBytes_Check(item)) return store_text(ctx, a, k, item);
    tsr_array *r = &a->results[k];
    Py_buffer v;
    if (PyObject_GetBuffer(item, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        return tsr_ctx_errorf(ctx, "result %d is not a C-contiguous array", k);
    }
    int rc = 0;
    if (r->data == NULL && v.ndim <= TSR_MAX_RANK) {
        if (r->dtype == TSR_DTYPE_INVALID) r->dtype = format_dtype(v.format, v.itemsize);
        r->rank = v.ndim;
    }
    if (!bridge_format_is(v.format, r->dtype) ||
        (size_t)v.itemsize != bridge_dtype_size(r->dtype) ||
        v.ndim != r->rank || v.ndim > TSR_MAX_RANK) {
        rc = tsr_ctx_errorf(ctx, "result %d has %d axes of items '%s'; %d axes of dtype %d expected",
                            k, v.ndim, v.format ? v.format : "?", r->rank, (int)r->dtype);
    } else if (r->data == NULL) {
        for (int32_t d = 0; d < r->rank; d++) r->shape[d] = v.shape[d];
        if (!tsr_ctx_alloc(ctx, k)) rc = -1; /* the host said why */
    } else {
        for (int32_t d = 0; d < r->rank && !rc; d++)
            if (v.shape[d] != r->shape[d])
                rc = tsr_ctx_errorf(ctx, "result %d has size %zd on axis %d; %lld expected", k,
                                    v.shape[d], d, (long long)r->shape[d]);
    }
    if (!rc && v.len) memcpy(r->data, v.buf, (size_t)v.len);
    PyBuffer_Release(&v);
    return rc;
}

static int store_results(tsr_ctx *ctx, const tsr_args *a, PyObject *out) {
    if (!PySequence_Check(out) || PySequence_Size(out) != a->n_results) {
        PyErr_Clear();
        return tsr_ctx_errorf(ctx, "the glue returned %zd results; %d expected",
                              PySequence_Check(out) ? PySequence_Size(out) : -1, a->n_results);
    }
    for (int32_t k = 0; k < a->n_results; k++) {
        PyObject *item = PySequence_GetItem(out, k);
        int rc = item ? store_one(ctx, a, k, item) : -1;
        Py_XDECREF(item);
        if (rc) return rc;
    }
    return 0;
}

/* The endpoint's Python call; NULL with an exception pending. The views
 * it made are left in views[0] (inputs) and views[1] (seeds) for the
 * caller to look at after the call. */
static PyObject *call_endpoint(pycomponent *pc, const tsr_args *a, PyObject *views[2]) {
    PyObject *fn = pc->endpoint[a->endpoint];
    if (a->endpoint == TSR_EP_ABSTRACT_EVAL) {
        PyObject *shapes = abstract_inputs(pc, a);
        PyObject *out = shapes ? PyObject_CallOneArg(fn, shapes) : NULL;
        Py_XDECREF(shapes);
        return out;
    }
    PyObject *inputs = views[0] = views_of(pc, a->inputs, a->n_inputs);
    if (!inputs) return NULL;
    if (a->endpoint == TSR_EP_APPLY) return PyObject_CallOneArg(fn, inputs);
    PyObject *wrt_in = int_list(a->wrt_in, a->n_wrt_in);
    PyObject *wrt_out = int_list(a->wrt_out, a->n_wrt_out);
    PyObject *seeds = NULL;
    if (a->endpoint != TSR_EP_JACOBIAN) seeds = views[1] = views_of(pc, a->seeds, a->n_seeds);
    int paths = a->struct_size >= offsetof(tsr_args, wrt_out_paths) + sizeof a->wrt_out_paths;
    PyObject *in_paths = paths ? str_list(a->wrt_in_paths, a->n_wrt_in) : Py_NewRef(Py_None);
    PyObject *out_paths = paths ? str_list(a->wrt_out_paths, a->n_wrt_out) : Py_NewRef(Py_None);
    PyObject *out = NULL;
    if (wrt_in && wrt_out && in_paths && out_paths && a->endpoint == TSR_EP_JACOBIAN)
        out = PyObject_CallFunctionObjArgs(fn, inputs, wrt_in, wrt_out, in_paths, out_paths,
                                           NULL);
    else if (wrt_in && wrt_out && in_paths && out_paths && seeds)
        out = PyObject_CallFunctionObjArgs(fn, inputs, wrt_in, wrt_out, seeds, in_paths,
                                           out_paths, NULL);
    Py_XDECREF(wrt_in);
    Py_XDECREF(wrt_out);
    Py_XDECREF(in_paths);
    Py_XDECREF(out_paths);
    return out;
}

/* A view still referenced after the call was kept by the component (a
 * cache, a global): the memory under it is the caller's, or the arena's,
 * and the next call reuses it. Said once per component. */
static void check_kept(tsr_ctx *ctx, pycomponent *pc, PyObject *views, int seeds) {
    for (Py_ssize_t i = 0; views && !pc->warned_kept && i < PyList_GET_SIZE(views); i++) {
        PyObject *view = PyList_GET_ITEM(views, i);
        if (view == Py_None || Py_REFCNT(view) <= 1) continue;   /* None: an absent input */
        char text[512];
        snprintf(text, sizeof text,
                 "the component kept %s%s%s after the call: a view of memory that is not its "
                 "own and that later calls reuse; keep a copy (numpy.array(x)) instead",
                 seeds ? "a tangent or cotangent" : "input '",
                 seeds ? "" : pc->desc.inputs[i].name, seeds ? "" : "'");
        tsr_ctx_log(ctx, TSR_LOG_WARN, text);
        pc->warned_kept = 1;
    }
}

/* A KeyboardInterrupt out of the component: in a Python host, Ctrl-C
 * (the host's SIGINT handler, run while the component ran in the host's
 * interpreter), which the host must get as it would have outside the
 * call, not as the component's failure that an `except Exception` takes.
 * The call ends cancelled; the exception itself waits for the host's
 * tessera module under BRIDGE_INTERRUPT_KEY. An interpreter the bridge
 * started has no such handler and no one to take it: there the call is
 * only cancelled. */
static int interrupted(tsr_ctx *ctx) {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *value = PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb) PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
#endif
    PyObject *dict = value && interpreter_is_hosts() ? PyThreadState_GetDict() : NULL;
    if (dict && PyDict_SetItemString(dict, BRIDGE_INTERRUPT_KEY, value) != 0) PyErr_Clear();
    Py_XDECREF(value);
    tsr_ctx_error(ctx, "interrupted (KeyboardInterrupt in the component)");
    return TSR_E_CANCELLED;
}

int endpoint_run(tsr_ctx *ctx, const tsr_args *a) {
    pycomponent *pc = ctx->state;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *views[2] = {NULL, NULL};
    PyObject *out = call_endpoint(pc, a, views);
    int rc;
    if (!out && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
        rc = interrupted(ctx);
    } else if (!out) {
        char text[4096];
        exception_text(pc->glue, text, sizeof text);
        tsr_ctx_error(ctx, text);
        rc = -1;
    } else {
        rc = a->endpoint == TSR_EP_ABSTRACT_EVAL ? store_abstract(ctx, a, out)
                                                 : store_results(ctx, a, out);
        Py_DECREF(out);
    }
    check_kept(ctx, pc, views[0], 0);
    check_kept(ctx, pc, views[1], 1);
    Py_XDECREF(views[0]);
    Py_XDECREF(views[1]);
    streams_flush();   /* what the call printed, before the host reports on it */
    PyGILState_Release(gil);
    return rc;
}
