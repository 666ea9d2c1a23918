/* SPDX-License-Identifier: MIT */
/* Pools of call objects and one run: bind the arguments, run with the GIL
 * released, hand the Slot to the caller to read its results, take it back.
 *
 * A run takes a slot out of its pool and puts it back once its results are
 * read, so a pool holds only idle slots and taking one costs the same
 * whatever results are alive: results never pin a slot (results.c copies
 * small ones and hands the buffers of large ones over before the slot runs
 * again). Concurrent runs (threads, or an input converted by Python code
 * that calls the component) each use a slot of their own; a loop uses one
 * slot and allocates nothing. */
#include "pool.h"

#include <string.h>

#include "convert.h"
#include "errors.h"
#include "interrupt.h"
#include "results.h"

/* Names of the pool's wrt fields, for tsr_call_set_wrt (the library's
 * own strings, valid while the component is open). */
static int set_wrt(PoolObject *pool, tsr_call *call) {
    int32_t n = pool->n_wrt_in + pool->n_wrt_out;
    const char **names = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof *names);
    if (!names) return TSR_E_NOMEM;
    for (int32_t k = 0; k < pool->n_wrt_in; k++) names[k] = pool->wrt_in[k].cname;
    for (int32_t k = 0; k < pool->n_wrt_out; k++)
        names[pool->n_wrt_in + k] = pool->wrt_out[k].cname;
    int rc = tsr_call_set_wrt(call, names, pool->n_wrt_in, names + pool->n_wrt_in,
                              pool->n_wrt_out);
    PyMem_Free(names);
    return rc;
}

static int has_wrt(tsr_endpoint ep) {
    return ep == TSR_EP_JVP || ep == TSR_EP_VJP || ep == TSR_EP_JACOBIAN || ep == TSR_EP_HVP;
}

/* A slot of the pool around `call` (taken over), or a new call when call
 * is NULL. */
static SlotObject *pool_slot_new(PoolObject *pool, tsr_call *call) {
    if (!call) {
        if (!(call = tsr_call_new(pool->core->c, pool->ep))) return (SlotObject *)PyErr_NoMemory();
        int rc = has_wrt(pool->ep) ? set_wrt(pool, call) : 0;
        if (rc != 0) {
            if (rc == TSR_E_NOMEM) PyErr_NoMemory();
            else raise_call_error(call, rc);
            tsr_call_free(call);
            return NULL;
        }
    }
    return slot_new(pool->core, call, pool->fields->n_in + pool->n_wrt_in + pool->n_wrt_out);
}

/* An idle slot whose last results are handed over, or a new one: the
 * caller's reference, or NULL with an exception set. */
static SlotObject *pool_acquire(PoolObject *pool) {
    while (pool->n_idle > 0) {
        SlotObject *s = pool->idle[--pool->n_idle];
        if (results_detach(s) == 0) return s;
        /* Its results could not be handed over: it never runs again, and
         * the arrays that view them keep it until they go. */
        Py_DECREF(s);
    }
    return pool_slot_new(pool, NULL);
}

void pool_release(PoolObject *pool, SlotObject *slot) {
    if (!pool->closed && pool->n_idle < POOL_IDLE_KEEP) {
        pool->idle[pool->n_idle++] = slot;
        return;
    }
    /* Freed: results still viewed keep only their own buffers. */
    if (!slot->core->abandoned) results_detach(slot);
    Py_DECREF(slot);
}

/* ---- Pool ------------------------------------------------------------------ */

void pool_clear(PoolObject *pool) {
    pool->closed = 1;
    while (pool->n_idle > 0) {
        SlotObject *s = pool->idle[--pool->n_idle];
        if (!s->core->abandoned) results_detach(s);
        Py_DECREF(s);
    }
}

static void free_wrt(field_meta *m, int32_t n) {
    for (int32_t k = 0; m && k < n; k++) Py_XDECREF(m[k].name);
    PyMem_Free(m);
}

static void Pool_dealloc(PoolObject *self) {
    pool_clear(self);
    free_wrt(self->wrt_in, self->n_wrt_in);
    free_wrt(self->wrt_out, self->n_wrt_out);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyTypeObject Pool_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera._ext.Pool",
    .tp_doc = "The idle call objects of one endpoint and one choice of wrt fields.",
    .tp_basicsize = sizeof(PoolObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)Pool_dealloc,
};

/* The UTF-8 names of a tuple of str (valid while the tuple lives). */
static const char **tuple_names(PyObject *names, Py_ssize_t *n) {
    if (names == NULL || names == Py_None) {
        *n = 0;
        return PyMem_Calloc(1, sizeof(char *));
    }
    if (!PyTuple_Check(names)) {
        PyErr_SetString(PyExc_TypeError, "wrt fields must be a tuple of names");
        return NULL;
    }
    *n = PyTuple_GET_SIZE(names);
    const char **out = PyMem_Calloc((size_t)*n + 1, sizeof *out);
    if (!out) return (const char **)PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < *n; k++) {
        PyObject *name = PyTuple_GET_ITEM(names, k);
        if (!PyUnicode_Check(name) || !(out[k] = PyUnicode_AsUTF8(name))) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "wrt fields must be str");
            PyMem_Free(out);
            return NULL;
        }
    }
    return out;
}

/* The fields of names the library has accepted: a field's meta, or for a
 * path inside a JSON field a float64 array of that name (its seeds are
 * float arrays whose shape the component checks). */
static field_meta *wrt_fields(PyObject *names, const char **cnames, Py_ssize_t n,
                              const field_meta *fs, int32_t n_fs) {
    field_meta *m = PyMem_Calloc((size_t)n + 1, sizeof *m);
    if (!m) return (field_meta *)PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < n; k++) {
        const field_meta *found = NULL;
        for (int32_t i = 0; i < n_fs && !found; i++)
            if (strcmp(cnames[k], fs[i].cname) == 0) found = &fs[i];
        if (found && found->kind == TSR_KIND_ARRAY) {
            m[k] = *found;
        } else {
            m[k].cname = cnames[k];  /* the str's UTF-8, kept with its name */
            m[k].dtype = TSR_FLOAT64;
            m[k].np_kind = 'f';
            m[k].np_size = 8;
            m[k].differentiable = 1;
            m[k].kind = TSR_KIND_ARRAY;
        }
        m[k].name = Py_NewRef(found ? found->name : PyTuple_GET_ITEM(names, k));
    }
    return m;
}

PoolObject *pool_new(PyObject *owner, comp_core *core, const comp_fields *fields,
                     tsr_endpoint ep, PyObject *wrt_in, PyObject *wrt_out) {
    PoolObject *pool = PyObject_New(PoolObject, &Pool_Type);
    if (!pool) return NULL;
    pool->owner = owner;
    pool->core = core;
    pool->fields = fields;
    pool->ep = ep;
    pool->n_wrt_in = pool->n_wrt_out = 0;
    pool->wrt_in = pool->wrt_out = NULL;
    pool->n_idle = 0;
    pool->closed = 0;
    Py_ssize_t n_in = 0, n_out = 0;
    const char **in = tuple_names(wrt_in, &n_in);
    const char **out = in ? tuple_names(wrt_out, &n_out) : NULL;
    tsr_call *call = out ? tsr_call_new(core->c, ep) : NULL;
    int ok = 0;
    if (out && !call) {
        PyErr_NoMemory();
    } else if (call) {
        /* The library checks the names: known, differentiable, named once. */
        int rc = has_wrt(ep) ? tsr_call_set_wrt(call, in, (int32_t)n_in, out, (int32_t)n_out) : 0;
        if (rc != 0) {
            raise_call_error(call, rc);
        } else if ((pool->wrt_in = wrt_fields(wrt_in, in, n_in, fields->in, fields->n_in)) &&
                   (pool->n_wrt_in = (int32_t)n_in,
                    pool->wrt_out = wrt_fields(wrt_out, out, n_out, fields->out, fields->n_out))) {
            pool->n_wrt_out = (int32_t)n_out;
            SlotObject *first = pool_slot_new(pool, call);
            call = NULL;  /* taken over, or freed on failure */
            ok = first != NULL;
            if (ok) pool->idle[pool->n_idle++] = first;
        }
    }
    tsr_call_free(call);
    PyMem_Free(in);
    PyMem_Free(out);
    if (!ok) {
        Py_DECREF(pool);
        return NULL;
    }
    return pool;
}

/* ---- one run ------------------------------------------------------------------ */

/* The most arrays one run binds without allocating. */
#define KEEP_INLINE 16

typedef struct keep_list {
    PyObject *inline_items[KEEP_INLINE];
    PyObject **items;
    Py_ssize_t n, cap;
} keep_list;

static int keep_reserve(keep_list *k, Py_ssize_t n) {
    k->items = k->inline_items;
    k->cap = KEEP_INLINE;
    k->n = 0;
    if (n <= KEEP_INLINE) return 0;
    k->items = PyMem_Calloc((size_t)n, sizeof(PyObject *));
    if (!k->items) {
        PyErr_NoMemory();
        return -1;
    }
    k->cap = n;
    return 0;
}

static void keep_release(keep_list *k) {
    for (Py_ssize_t i = 0; i < k->n; i++) Py_DECREF(k->items[i]);
    if (k->items != k->inline_items) PyMem_Free(k->items);
}

/* A key of `inputs` that names no input: the library reports it. */
static int report_unknown_input(SlotObject *slot, const comp_fields *fs, PyObject *inputs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(inputs, &pos, &key, &value)) {
        int known = 0;
        for (int32_t i = 0; i < fs->n_in && !known; i++)
            known = PyUnicode_Check(key) && PyUnicode_Compare(key, fs->in[i].name) == 0;
        if (known) continue;
        if (!PyUnicode_Check(key)) {
            PyErr_Format(PyExc_TypeError, "input names must be str, got %R", key);
            return -1;
        }
        const char *name = PyUnicode_AsUTF8(key);
        if (!name) return -1;
        tsr_array dummy = {.dtype = TSR_FLOAT64};
        int rc = tsr_call_set_input(slot->call, name, &dummy);
        raise_call_error(slot->call, rc ? rc : TSR_E_UNKNOWN_FIELD);
        return -1;
    }
    return 0;
}

static int bind_inputs(SlotObject *slot, PoolObject *pool, PyObject *inputs, keep_list *keep) {
    const comp_fields *fs = pool->fields;
    Py_ssize_t found = 0;
    for (int32_t i = 0; i < fs->n_in; i++) {
        PyObject *v = PyDict_GetItemWithError(inputs, fs->in[i].name);
        tsr_array a;
        if (!v) {
            if (PyErr_Occurred()) return -1;
            tsr_call_set_input_at(slot->call, i, NULL);  /* the run reports it missing */
            continue;
        }
        found++;
        int rc;
        if (fs->in[i].kind == TSR_KIND_TEXT || fs->in[i].kind == TSR_KIND_JSON) {
            const char *text = convert_text(v, &fs->in[i], "input", &keep->items[keep->n],
                                            pool->owner, pool->ep);
            if (!text) return -1;
            keep->n++;
            rc = tsr_call_set_text(slot->call, fs->in[i].cname, text);
        } else {
            if (convert_array(v, &fs->in[i], "input", &a, &keep->items[keep->n],
                              &slot->cells[i], pool->owner, slot->core, pool->ep) != 0)
                return -1;
            keep->n++;
            rc = tsr_call_set_input_at(slot->call, i, &a);
        }
        if (rc != 0) {
            raise_call_error(slot->call, rc);
            return -1;
        }
    }
    if (found != PyDict_GET_SIZE(inputs)) return report_unknown_input(slot, fs, inputs);
    return 0;
}

/* One dict of seeds: jvp's tangents of wrt inputs, vjp's (and hvp's)
 * cotangents of wrt outputs, hvp's tangents of wrt inputs. `cell0` is the
 * first of the slot's cells they use. */
static int bind_seed_dict(SlotObject *slot, PoolObject *pool, PyObject *seeds, keep_list *keep,
                          int tangents, int32_t cell0) {
    const field_meta *fs = tangents ? pool->wrt_in : pool->wrt_out;
    int32_t n = tangents ? pool->n_wrt_in : pool->n_wrt_out;
    const char *what = tangents ? "tangent_vector" : "cotangent_vector";
    int (*set)(tsr_call *, const char *, const tsr_array *) =
        pool->ep == TSR_EP_HVP && tangents ? tsr_call_set_tangent : tsr_call_set_seed;
    if (seeds && !PyDict_Check(seeds)) {
        PyErr_Format(PyExc_TypeError, "%s must be a dict of arrays by field name, not %.100s",
                     what, Py_TYPE(seeds)->tp_name);
        return -1;
    }
    Py_ssize_t found = 0;
    for (int32_t k = 0; k < n; k++) {
        const field_meta *f = &fs[k];
        PyObject *v = seeds ? PyDict_GetItemWithError(seeds, f->name) : NULL;
        if (!v && PyErr_Occurred()) return -1;
        tsr_array a;
        if (v) {
            found++;
            if (convert_array(v, f, what, &a, &keep->items[keep->n], &slot->cells[cell0 + k],
                              pool->owner, slot->core, pool->ep) != 0)
                return -1;
            keep->n++;
        }
        int rc = set(slot->call, f->cname, v ? &a : NULL);
        if (rc != 0) {
            raise_call_error(slot->call, rc);
            return -1;
        }
    }
    if (seeds && found != PyDict_GET_SIZE(seeds)) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(seeds, &pos, &key, &value)) {
            int known = 0;
            for (int32_t k = 0; k < n && !known; k++)
                known = PyUnicode_Check(key) && PyUnicode_Compare(key, fs[k].name) == 0;
            if (known) continue;
            if (!PyUnicode_Check(key)) {
                PyErr_Format(PyExc_TypeError, "%s keys must be str, got %R", what, key);
                return -1;
            }
            tsr_array dummy = {.dtype = TSR_FLOAT64};
            int rc = set(slot->call, PyUnicode_AsUTF8(key), &dummy);
            raise_call_error(slot->call, rc ? rc : TSR_E_UNKNOWN_FIELD);
            return -1;
        }
    }
    return 0;
}

/* jvp seeds are tangents of wrt inputs, vjp seeds cotangents of wrt
 * outputs; hvp's are a pair (cotangents of wrt outputs, tangents of wrt
 * inputs), as the library orders them. */
static int bind_seeds(SlotObject *slot, PoolObject *pool, PyObject *seeds, keep_list *keep) {
    int32_t n_in = pool->fields->n_in;
    if (pool->ep == TSR_EP_JVP) return bind_seed_dict(slot, pool, seeds, keep, 1, n_in);
    if (pool->ep == TSR_EP_VJP) return bind_seed_dict(slot, pool, seeds, keep, 0, n_in);
    if (pool->ep != TSR_EP_HVP) return 0;
    PyObject *cot = NULL, *tan = NULL;
    if (seeds && (!PyTuple_Check(seeds) || PyTuple_GET_SIZE(seeds) != 2)) {
        PyErr_Format(PyExc_TypeError,
                     "hvp seeds must be a pair (cotangent_vector, tangent_vector), not %.100s",
                     Py_TYPE(seeds)->tp_name);
        return -1;
    }
    if (seeds) {
        cot = PyTuple_GET_ITEM(seeds, 0);
        tan = PyTuple_GET_ITEM(seeds, 1);
    }
    return bind_seed_dict(slot, pool, cot, keep, 0, n_in) != 0 ||
                   bind_seed_dict(slot, pool, tan, keep, 1, n_in + pool->n_wrt_out) != 0
               ? -1
               : 0;
}

SlotObject *pool_run(PoolObject *pool, PyObject *inputs, PyObject *seeds, int64_t batch) {
    /* Closed meanwhile (by Python code run since the caller's check): the
     * core is no longer the pool's to use. */
    if (pool->closed) {
        raise_tessera(TSR_E_ARGUMENT, "the component is closed");
        return NULL;
    }
    if (!PyDict_Check(inputs)) {
        PyErr_Format(PyExc_TypeError, "inputs must be a dict of arrays by field name, not %.100s",
                     Py_TYPE(inputs)->tp_name);
        return NULL;
    }
    keep_list keep;
    if (keep_reserve(&keep, (Py_ssize_t)pool->fields->n_in + pool->n_wrt_in + pool->n_wrt_out) !=
        0)
        return NULL;
    SlotObject *slot = pool_acquire(pool);
    if (!slot) {
        keep_release(&keep);
        return NULL;
    }
    /* The slot is ours alone until pool_release: neither another run nor
     * a close() from another thread (while the GIL is released, or while
     * inputs are converted) can reach it. */
    int failed = bind_inputs(slot, pool, inputs, &keep) != 0 ||
                 bind_seeds(slot, pool, seeds, &keep) != 0;
    int rc = 0;
    if (!failed) {
        /* GIL released; Ctrl-C stops it (interrupt.c) */
        rc = run_call(slot->call, batch);
    }
    keep_release(&keep);
    if (failed || rc != 0) {
        pool_release(pool, slot);
        return NULL;
    }
    return slot;
}
