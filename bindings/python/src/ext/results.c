/* SPDX-License-Identifier: MIT */
/* Results as NumPy arrays. Small ones are copied into arrays that own
 * their bytes; larger ones are views of the call's buffer (in the arena in
 * worker mode), whose base is a ResultBuffer.
 *
 * A ResultBuffer starts linked to its slot: the buffer is still the
 * call's, and the ResultBuffer holds a reference to the slot. If it dies
 * first, the call keeps and reuses the buffer (a loop that drops its
 * results allocates nothing). If the slot is taken for another run first,
 * results_detach hands the buffer over (tsr_call_take_result): the
 * ResultBuffer lets go of the slot and frees the buffer when its last
 * array dies. Either way, a result kept alive costs its own bytes, and no
 * call object stays pinned by it. */
#include "results.h"

#include <string.h>

#include "convert.h"

PyObject *decode_fn;

Py_ssize_t result_copy_limit = RESULT_COPY_LIMIT_DEFAULT;

static Py_ssize_t live_in_call, live_owned;

struct ResultBufferObject {
    PyObject_HEAD
    comp_core *core;   /* counted */
    void *data;
    SlotObject *slot;  /* while the buffer is the call's: a reference; else NULL */
    int32_t k;         /* the result's index in the slot's call */
};

static void ResultBuffer_dealloc(ResultBufferObject *self) {
    SlotObject *slot = self->slot;
    if (slot) {
        /* Still the call's: it reuses the buffer at its next run. */
        slot->held[self->k] = NULL;
        self->slot = NULL;
        live_in_call--;
        Py_DECREF(slot);
    } else {
        if (!self->core->abandoned) tsr_component_free_buffer(self->core->c, self->data);
        live_owned--;
    }
    core_decref(self->core);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyTypeObject ResultBuffer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera._ext.ResultBuffer",
    .tp_doc = "The memory of one result viewed in place: the base of its arrays.",
    .tp_basicsize = sizeof(ResultBufferObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)ResultBuffer_dealloc,
};

int results_detach(SlotObject *slot) {
    int rc = 0;
    for (int32_t k = 0; k < slot->cap_held; k++) {
        ResultBufferObject *h = slot->held[k];
        if (!h) continue;
        if (tsr_call_take_result(slot->call, k) != h->data) {
            rc = -1;   /* never expected; the slot must then not run again */
            continue;
        }
        slot->held[k] = NULL;
        h->slot = NULL;
        live_in_call--;
        live_owned++;
        Py_DECREF(slot);   /* the caller holds another reference */
    }
    return rc;
}

/* The ResultBuffer of result k of the slot's last run, linked. */
static PyObject *result_buffer(SlotObject *slot, int32_t k, void *data) {
    if (k >= slot->cap_held) {
        int32_t cap = tsr_call_n_results(slot->call);
        if (cap <= k) cap = k + 1;
        ResultBufferObject **grown = PyMem_Realloc(slot->held, (size_t)cap * sizeof *grown);
        if (!grown) return PyErr_NoMemory();
        memset(grown + slot->cap_held, 0, (size_t)(cap - slot->cap_held) * sizeof *grown);
        slot->held = grown;
        slot->cap_held = cap;
    }
    if (slot->held[k]) return Py_NewRef((PyObject *)slot->held[k]);
    ResultBufferObject *h = PyObject_New(ResultBufferObject, &ResultBuffer_Type);
    if (!h) return NULL;
    h->core = slot->core;
    core_incref(h->core);
    h->data = data;
    h->slot = (SlotObject *)Py_NewRef((PyObject *)slot);
    h->k = k;
    slot->held[k] = h;
    live_in_call++;
    return (PyObject *)h;
}

PyObject *result_array(SlotObject *slot, int32_t k) {
    const tsr_array *r = tsr_call_result(slot->call, k);
    if (!r) {
        PyErr_Format(PyExc_IndexError, "tessera: no result %d", (int)k);
        return NULL;
    }
    int typenum = dtype_to_typenum(r->dtype);
    if (typenum < 0) {
        PyErr_Format(PyExc_RuntimeError, "tessera: result with invalid dtype %d", (int)r->dtype);
        return NULL;
    }
    npy_intp dims[TSR_MAX_RANK];
    PyArray_Descr *descr = PyArray_DescrFromType(typenum);
    if (!descr) return NULL;
    /* The library checked the shape: the byte count does not overflow. */
    size_t bytes = (size_t)PyDataType_ELSIZE(descr);
    for (int32_t d = 0; d < r->rank; d++) {
        dims[d] = (npy_intp)r->shape[d];
        bytes *= (size_t)r->shape[d];
    }
    if (bytes <= (size_t)result_copy_limit) {
        /* PyArray_NewFromDescr steals descr; flags 0 with data NULL: C order. */
        PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, r->rank, dims, NULL, NULL, 0,
                                             NULL);
        if (arr && bytes) memcpy(PyArray_DATA((PyArrayObject *)arr), r->data, bytes);
        return arr;
    }
    PyObject *base = result_buffer(slot, k, r->data);
    if (!base) {
        Py_DECREF(descr);
        return NULL;
    }
    /* Writeable: the buffer is the caller's; no later run writes into it.
     * (NumPy also refuses to export read-only arrays through DLPack.) */
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, r->rank, dims, NULL, r->data,
                                         NPY_ARRAY_CARRAY, NULL);
    if (!arr) {
        Py_DECREF(base);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, base) != 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
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

PyObject *result_value(const tsr_call *call, const field_meta *f) {
    size_t len = 0;
    const char *text = tsr_call_output_text(call, f->cname, &len);
    if (!text) {
        PyErr_Format(PyExc_RuntimeError, "tessera: no text for output '%U'", f->name);
        return NULL;
    }
    if (!decode_fn) {
        PyErr_SetString(PyExc_RuntimeError, "tessera._ext used without the tessera package");
        return NULL;
    }
    PyObject *b = PyBytes_FromStringAndSize(text, (Py_ssize_t)len);
    if (!b) return NULL;
    PyObject *v = PyObject_CallFunction(decode_fn, "Ns", b,
                                        f->kind == TSR_KIND_TEXT ? "text" : "json");
    return v;
}

PyObject *result_dict(SlotObject *slot, const field_meta *out, int32_t n_out) {
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (int32_t k = 0; k < n_out; k++) {
        PyObject *a = out[k].kind == TSR_KIND_TEXT || out[k].kind == TSR_KIND_JSON
                          ? result_value(slot->call, &out[k])
                          : result_array(slot, k);
        if (!a || PyDict_SetItem(d, out[k].name, a) != 0) {
            Py_XDECREF(a);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(a);
    }
    return d;
}

PyObject *results_debug_counts(void) {
    return Py_BuildValue("{snsnsnsn}", "calls", slot_live_calls(), "results_in_call",
                         live_in_call, "results_owned", live_owned, "copy_limit",
                         result_copy_limit);
}
