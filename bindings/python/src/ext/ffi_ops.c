/* SPDX-License-Identifier: MIT */
/* The FfiOp Python type, which owns one entry of the table of FFI ops
 * (ffi_table.h). tessera.jax asks the component for an op per (endpoint,
 * wrt fields, batch, result layout) and passes its handle to the custom
 * call. */
#include "ffi_ops.h"

#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "ffi_table.h"

typedef struct FfiOpObject {
    PyObject_HEAD
    comp_core *core;    /* counted until retired */
    uint32_t index;
    uint64_t handle;
} FfiOpObject;

static void op_retire(FfiOpObject *self) {
    comp_core *core = self->core;
    if (!core) return;
    self->core = NULL;   /* first: retired once, even if another thread tries */
    ffi_op *op = ffi_table_entry(self->index);
    Py_BEGIN_ALLOW_THREADS
    ffi_op_invalidate(op);
    Py_END_ALLOW_THREADS
    ffi_op_clear(op, !core->abandoned);
    ffi_table_release(self->index);
    core_decref(core);
}

static void FfiOp_dealloc(FfiOpObject *self) {
    op_retire(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *FfiOp_get_handle(FfiOpObject *self, void *unused) {
    (void)unused;
    return PyLong_FromUnsignedLongLong(self->core ? self->handle : 0);
}

static PyGetSetDef FfiOp_getset[] = {
    {"handle", (getter)FfiOp_get_handle, NULL,
     "The custom call's 'handle' attribute (0 once the component is closed).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject FfiOp_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera._ext.FfiOp",
    .tp_doc = "What one tessera_call custom call runs; made by Component._ffi_op.",
    .tp_basicsize = sizeof(FfiOpObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)FfiOp_dealloc,
    .tp_getset = FfiOp_getset,
};

/* strdup of a tuple of str. */
static char **dup_names(PyObject *names, int32_t *n) {
    Py_ssize_t len = PyTuple_GET_SIZE(names);
    char **out = calloc((size_t)len + 1, sizeof *out);
    if (!out) return (char **)PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < len; k++) {
        const char *s = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, k));
        if (!s || !(out[k] = strdup(s))) {
            if (!PyErr_Occurred()) PyErr_NoMemory();
            ffi_names_free(out, (int32_t)len);
            return NULL;
        }
    }
    *n = (int32_t)len;
    return out;
}

/* A copy of a tuple of int. */
static int32_t *dup_ints(PyObject *ints, int32_t *n) {
    Py_ssize_t len = PyTuple_GET_SIZE(ints);
    int32_t *out = calloc((size_t)len + 1, sizeof *out);
    if (!out) return (int32_t *)PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < len; k++) {
        long v = PyLong_AsLong(PyTuple_GET_ITEM(ints, k));
        if (v == -1 && PyErr_Occurred()) {
            free(out);
            return NULL;
        }
        out[k] = (int32_t)v;
    }
    *n = (int32_t)len;
    return out;
}

/* The given inputs: schema indices, each once, in schema order. */
static int check_input_at(const ffi_op *op, int32_t n_schema_inputs) {
    for (int32_t k = 0; k < op->n_inputs; k++) {
        int32_t i = op->input_at[k];
        if (i < 0 || i >= n_schema_inputs || (k > 0 && i <= op->input_at[k - 1])) {
            PyErr_Format(PyExc_ValueError,
                         "_ffi_op: input indices must rise from 0 to %d, each once",
                         (int)n_schema_inputs - 1);
            return -1;
        }
    }
    return 0;
}

/* Check the wrt fields now, so that a bad choice fails at trace time. */
static int check_wrt(ffi_op *op) {
    char why[TSR_ERRMSG_MAX];
    tsr_call *call = ffi_op_take_call(op, why, sizeof why);
    if (!call) {
        raise_tessera(TSR_E_NOT_DIFFERENTIABLE, why);
        return -1;
    }
    ffi_op_give_call(op, call);
    return 0;
}

PyObject *ffi_op_new(comp_core *core, int32_t n_inputs, PyObject *args) {
    PyObject *ep_name, *wrt_in, *wrt_out, *input_at, *seed_names, *ret_map;
    long long batch;
    if (!PyArg_ParseTuple(args, "UO!O!O!O!LO!", &ep_name, &PyTuple_Type, &wrt_in, &PyTuple_Type,
                          &wrt_out, &PyTuple_Type, &input_at, &PyTuple_Type, &seed_names, &batch,
                          &PyTuple_Type, &ret_map))
        return NULL;
    int ep = tsr_endpoint_from_name(PyUnicode_AsUTF8(ep_name));
    if (ep < 0 || ep == TSR_EP_ABSTRACT_EVAL) {
        PyErr_Format(PyExc_ValueError, "_ffi_op: endpoint %R cannot be called from XLA", ep_name);
        return NULL;
    }
    uint32_t index;
    ffi_op *op = ffi_table_alloc(&index);
    if (!op) return PyErr_NoMemory();
    op->c = core->c;
    op->ep = (tsr_endpoint)ep;
    op->batch = batch;
    op->n_inputs = op->n_seeds = op->n_wrt_in = op->n_wrt_out = op->n_rets = 0;
    int ok = (op->input_at = dup_ints(input_at, &op->n_inputs)) &&
             check_input_at(op, n_inputs) == 0 &&
             (op->seed_names = dup_names(seed_names, &op->n_seeds)) &&
             (op->wrt_in = dup_names(wrt_in, &op->n_wrt_in)) &&
             (op->wrt_out = dup_names(wrt_out, &op->n_wrt_out)) &&
             (op->ret_map = dup_ints(ret_map, &op->n_rets));
    if (!ok || check_wrt(op) != 0) {
        ffi_op_clear(op, 1);
        ffi_table_release(index);
        return NULL;
    }
    FfiOpObject *self = PyObject_New(FfiOpObject, &FfiOp_Type);
    if (!self) {
        ffi_op_clear(op, 1);
        ffi_table_release(index);
        return NULL;
    }
    op->generation = op->generation + 1 ? op->generation + 1 : 1;
    self->index = index;
    self->handle = (uint64_t)op->generation << 32 | index;
    self->core = core;
    core_incref(core);
    atomic_store(&op->live, self->handle);
    return (PyObject *)self;
}

void ffi_ops_retire_all(PyObject *ops) {
    if (!ops) return;
    PyObject *key, *op;
    Py_ssize_t pos = 0;
    while (PyDict_Next(ops, &pos, &key, &op)) op_retire((FfiOpObject *)op);
    PyDict_Clear(ops);
}
