/* SPDX-License-Identifier: MIT */
/* The table of FFI ops and the FfiOp Python type that owns one entry
 * (see ffi_ops.h). tessera.jax asks the component for an op per
 * (endpoint, wrt fields, batch, result layout) and passes its handle to
 * the custom call. */
#include "ext.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ffi_ops.h"

#define CHUNK_BITS 8
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096u              /* up to a million ops alive at once */

static ffi_op *_Atomic chunks[MAX_CHUNKS];
static uint32_t n_entries;            /* entries handed out so far */
static uint32_t *free_list;           /* retired entries, for reuse */
static uint32_t n_free, cap_free;
/* Allocation and retirement happen with the GIL held; this lock covers the
 * exit hook, which may run while XLA threads still look ops up. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static ffi_op *entry(uint32_t index) {
    ffi_op *chunk = atomic_load(&chunks[index >> CHUNK_BITS]);
    return chunk ? &chunk[index & (CHUNK_SIZE - 1)] : NULL;
}

/* A free entry, or NULL when out of memory. */
static ffi_op *entry_alloc(uint32_t *index) {
    pthread_mutex_lock(&table_lock);
    ffi_op *op = NULL;
    if (n_free > 0) {
        *index = free_list[--n_free];
        op = entry(*index);
    } else if (n_entries < MAX_CHUNKS * CHUNK_SIZE) {
        uint32_t i = n_entries;
        if (!atomic_load(&chunks[i >> CHUNK_BITS])) {
            ffi_op *chunk = calloc(CHUNK_SIZE, sizeof *chunk);
            if (chunk) {
                for (uint32_t k = 0; k < CHUNK_SIZE; k++) pthread_mutex_init(&chunk[k].lock, NULL);
                atomic_store(&chunks[i >> CHUNK_BITS], chunk);
            }
        }
        if ((op = entry(i))) {
            *index = i;
            n_entries++;
        }
    }
    pthread_mutex_unlock(&table_lock);
    return op;
}

static void entry_release(uint32_t index) {
    pthread_mutex_lock(&table_lock);
    if (n_free == cap_free) {
        uint32_t cap = cap_free ? 2 * cap_free : 64;
        uint32_t *grown = realloc(free_list, cap * sizeof *grown);
        if (!grown) {  /* the entry is lost, nothing else */
            pthread_mutex_unlock(&table_lock);
            return;
        }
        free_list = grown;
        cap_free = cap;
    }
    free_list[n_free++] = index;
    pthread_mutex_unlock(&table_lock);
}

ffi_op *ffi_op_enter(uint64_t handle) {
    uint32_t index = (uint32_t)handle;
    if (index >= MAX_CHUNKS * CHUNK_SIZE) return NULL;
    ffi_op *op = entry(index);
    if (!op) return NULL;
    atomic_fetch_add(&op->inflight, 1);
    if (atomic_load(&op->live) != handle) {
        atomic_fetch_sub(&op->inflight, 1);
        return NULL;
    }
    return op;
}

void ffi_op_leave(ffi_op *op) { atomic_fetch_sub(&op->inflight, 1); }

tsr_call *ffi_op_take_call(ffi_op *op, char *why, size_t n) {
    tsr_call *call = NULL;
    pthread_mutex_lock(&op->lock);
    if (op->n_idle > 0) call = op->idle[--op->n_idle];
    pthread_mutex_unlock(&op->lock);
    if (call) return call;
    if (!(call = tsr_call_new(op->c, op->ep))) {
        snprintf(why, n, "out of memory for a call object");
        return NULL;
    }
    if (op->ep != TSR_EP_APPLY &&
        tsr_call_set_wrt(call, (const char *const *)op->wrt_in, op->n_wrt_in,
                         (const char *const *)op->wrt_out, op->n_wrt_out) != 0) {
        snprintf(why, n, "%s", tsr_call_errmsg(call));
        tsr_call_free(call);
        return NULL;
    }
    return call;
}

void ffi_op_give_call(ffi_op *op, tsr_call *call) {
    pthread_mutex_lock(&op->lock);
    if (op->n_idle == op->cap_idle) {
        int32_t cap = op->cap_idle ? 2 * op->cap_idle : 4;
        tsr_call **grown = realloc(op->idle, (size_t)cap * sizeof *grown);
        if (grown) {
            op->idle = grown;
            op->cap_idle = cap;
        }
    }
    if (op->n_idle < op->cap_idle) {
        op->idle[op->n_idle++] = call;
        call = NULL;
    }
    pthread_mutex_unlock(&op->lock);
    tsr_call_free(call);
}

static void free_names(char **names, int32_t n) {
    for (int32_t k = 0; names && k < n; k++) free(names[k]);
    free(names);
}

/* Stop answering and wait for the handler calls in flight. */
static void op_invalidate(ffi_op *op) {
    atomic_store(&op->live, 0);
    while (atomic_load(&op->inflight) > 0) sched_yield();
}

/* Release what the op holds; free_calls is 0 when its component was
 * already closed (at exit). */
static void op_clear(ffi_op *op, int free_calls) {
    for (int32_t k = 0; k < op->n_idle; k++)
        if (free_calls) tsr_call_free(op->idle[k]);
    free(op->idle);
    free_names(op->seed_names, op->n_seeds);
    free_names(op->wrt_in, op->n_wrt_in);
    free_names(op->wrt_out, op->n_wrt_out);
    free(op->input_at);
    free(op->ret_map);
    op->idle = NULL;
    op->n_idle = op->cap_idle = 0;
    op->seed_names = op->wrt_in = op->wrt_out = NULL;
    op->input_at = op->ret_map = NULL;
    op->c = NULL;
}

void ffi_ops_abandon(const tsr_component *c) {
    pthread_mutex_lock(&table_lock);
    for (uint32_t i = 0; i < n_entries; i++) {
        ffi_op *op = entry(i);
        if (op && op->c == c && atomic_load(&op->live)) op_invalidate(op);
    }
    pthread_mutex_unlock(&table_lock);
}

/* ---- the Python type ---------------------------------------------------------- */

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
    ffi_op *op = entry(self->index);
    Py_BEGIN_ALLOW_THREADS
    op_invalidate(op);
    Py_END_ALLOW_THREADS
    op_clear(op, !core->abandoned);
    entry_release(self->index);
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
            free_names(out, (int32_t)len);
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

static PyObject *ffi_op_new(ComponentObject *comp, PyObject *args) {
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
    ffi_op *op = entry_alloc(&index);
    if (!op) return PyErr_NoMemory();
    op->c = comp->core->c;
    op->ep = (tsr_endpoint)ep;
    op->batch = batch;
    op->n_inputs = op->n_seeds = op->n_wrt_in = op->n_wrt_out = op->n_rets = 0;
    int ok = (op->input_at = dup_ints(input_at, &op->n_inputs)) &&
             check_input_at(op, comp->n_in) == 0 &&
             (op->seed_names = dup_names(seed_names, &op->n_seeds)) &&
             (op->wrt_in = dup_names(wrt_in, &op->n_wrt_in)) &&
             (op->wrt_out = dup_names(wrt_out, &op->n_wrt_out)) &&
             (op->ret_map = dup_ints(ret_map, &op->n_rets));
    if (!ok || check_wrt(op) != 0) {
        op_clear(op, 1);
        entry_release(index);
        return NULL;
    }
    FfiOpObject *self = PyObject_New(FfiOpObject, &FfiOp_Type);
    if (!self) {
        op_clear(op, 1);
        entry_release(index);
        return NULL;
    }
    op->generation = op->generation + 1 ? op->generation + 1 : 1;
    self->index = index;
    self->handle = (uint64_t)op->generation << 32 | index;
    self->core = comp->core;
    core_incref(self->core);
    atomic_store(&op->live, self->handle);
    return (PyObject *)self;
}

PyObject *ffi_op_get(ComponentObject *comp, PyObject *args) {
    if (component_check_open(comp) != 0) return NULL;
    PyObject *op = PyDict_GetItemWithError(comp->ffi_ops, args);
    if (op) return Py_NewRef(op);
    if (PyErr_Occurred() || !(op = ffi_op_new(comp, args))) return NULL;
    if (PyDict_SetItem(comp->ffi_ops, args, op) != 0) Py_CLEAR(op);
    return op;
}

void ffi_ops_retire_all(ComponentObject *comp) {
    if (!comp->ffi_ops) return;
    PyObject *key, *op;
    Py_ssize_t pos = 0;
    while (PyDict_Next(comp->ffi_ops, &pos, &key, &op)) op_retire((FfiOpObject *)op);
    PyDict_Clear(comp->ffi_ops);
}
