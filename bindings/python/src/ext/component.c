/* SPDX-License-Identifier: MIT */
/* The Component type: open, close, schema, and the entry points of calls
 * (apply, _call, _abstract_eval, _ffi_op). It sits on top of the
 * extension's other files: they are given its core and fields, never the
 * Component itself. */
#include "component.h"

#include "arena.h"
#include "errors.h"
#include "interrupt.h"
#include "pool.h"
#include "results.h"
#if TSR_PY_HAVE_XLA_FFI
#include "ffi_ops.h"
#endif

/* ---- Component ------------------------------------------------------------------ */

int component_check_open(ComponentObject *self) {
    if (self->core && !self->core->abandoned) return 0;
    raise_tessera(TSR_E_ARGUMENT, "the component is closed");
    return -1;
}

/* Copy a dict of str -> str into options through `set`. */
static int set_pairs(PyObject *pairs, const char *what, tsr_options *opts,
                     int (*set)(tsr_options *, const char *, const char *, tsr_error *)) {
    if (!pairs || pairs == Py_None) return 0;
    if (!PyDict_Check(pairs)) {
        PyErr_Format(PyExc_TypeError, "%s must be a dict of str", what);
        return -1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(pairs, &pos, &key, &value)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        const char *v = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : NULL;
        if (!k || !v) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s: keys and values must be str, got %R: %R",
                             what, key, value);
            return -1;
        }
        tsr_error err = {0};
        int rc = set(opts, k, v, &err);
        if (rc != 0) {
            raise_tessera_at(rc, err.message[0] ? err.message : "out of memory", err.loc);
            return -1;
        }
    }
    return 0;
}

static int set_option(tsr_options *o, const char *k, const char *v, tsr_error *e) {
    return tsr_options_set(o, k, v, e);
}
static int set_config(tsr_options *o, const char *k, const char *v, tsr_error *e) {
    (void)e;
    return tsr_options_set_config(o, k, v);
}
static int set_env(tsr_options *o, const char *k, const char *v, tsr_error *e) {
    (void)e;
    return tsr_options_set_env(o, k, v);
}

static int Component_init(ComponentObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"path", "options", "config", "env", NULL};
    PyObject *path_obj, *options = NULL, *config = NULL, *env = NULL;
    if (self->core) {
        PyErr_SetString(PyExc_RuntimeError, "Component.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&|OOO", kwlist, PyUnicode_FSConverter,
                                     &path_obj, &options, &config, &env))
        return -1;
    tsr_options *opts = tsr_options_new();
    if (!opts) {
        Py_DECREF(path_obj);
        PyErr_NoMemory();
        return -1;
    }
    int rc = -1;
    if (set_pairs(options, "options", opts, set_option) == 0 &&
        set_pairs(config, "config", opts, set_config) == 0 &&
        set_pairs(env, "env", opts, set_env) == 0) {
        const char *path = PyBytes_AS_STRING(path_obj);
        tsr_component *c = NULL;
        tsr_error err = {0};
        int st;
        /* Loading may start a worker and wait for it. */
        Py_BEGIN_ALLOW_THREADS
        st = tsr_open(path, opts, &c, &err);
        Py_END_ALLOW_THREADS
        if (st != 0) {
            raise_tessera_at(st, err.message, err.loc);
        } else if (!(self->core = core_new(c))) {
            tsr_close(c);
        } else if (schema_load(&self->fields, c) == 0 && (self->pools = PyDict_New()) &&
                   (self->ffi_ops = PyDict_New())) {
            rc = 0;
        }
    }
    tsr_options_free(opts);
    Py_DECREF(path_obj);
    return rc;
}

static void close_component(ComponentObject *self) {
    comp_core *core = self->core;
    if (!core) return;
    /* First: a close() from another thread while the GIL is released below
     * finds nothing left to do. */
    self->core = NULL;
#if TSR_PY_HAVE_XLA_FFI
    ffi_ops_retire_all(self->ffi_ops);
#endif
    PyObject *apply_pool = self->apply_pool;
    self->apply_pool = NULL;
    if (apply_pool) pool_clear((PoolObject *)apply_pool);
    Py_XDECREF(apply_pool);
    if (self->pools) {
        PyObject *key, *pool;
        Py_ssize_t pos = 0;
        while (PyDict_Next(self->pools, &pos, &key, &pool)) pool_clear((PoolObject *)pool);
        PyDict_Clear(self->pools);
    }
    core_decref(core);
}

static void Component_dealloc(ComponentObject *self) {
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    close_component(self);
    Py_CLEAR(self->pools);
    Py_CLEAR(self->ffi_ops);
    schema_free(&self->fields);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Component_close(ComponentObject *self, PyObject *unused) {
    (void)unused;
    close_component(self);
    Py_RETURN_NONE;
}

static PyObject *Component_get_closed(ComponentObject *self, void *unused) {
    (void)unused;
    return PyBool_FromLong(!self->core || self->core->abandoned);
}

static PyObject *Component_get_mode(ComponentObject *self, void *unused) {
    (void)unused;
    if (component_check_open(self) != 0) return NULL;
    static const char *const names[] = {"inproc", "isolated", "worker"};
    tsr_mode m = tsr_component_mode(self->core->c);
    return PyUnicode_FromString((unsigned)m < 3 ? names[m] : "unknown");
}

static PyObject *Component_get_hvp_source(ComponentObject *self, void *unused) {
    (void)unused;
    if (component_check_open(self) != 0) return NULL;
    static const char *const names[] = {"none", "native", "fd_vjp", "fd_apply"};
    tsr_hvp_source s = tsr_component_hvp_source(self->core->c);
    return PyUnicode_FromString((unsigned)s < 4 ? names[s] : "unknown");
}

static PyObject *Component_get_address(ComponentObject *self, void *unused) {
    (void)unused;
    if (component_check_open(self) != 0) return NULL;
    return PyLong_FromVoidPtr(self->core->c);
}

static PyObject *Component_schema(ComponentObject *self, PyObject *unused) {
    (void)unused;
    if (component_check_open(self) != 0) return NULL;
    return schema_describe(self->core->c);
}

static int endpoint_arg(PyObject *name, tsr_endpoint *ep) {
    const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    int e = s ? tsr_endpoint_from_name(s) : -1;
    if (e < 0) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "unknown endpoint %R", name);
        return -1;
    }
    *ep = (tsr_endpoint)e;
    return 0;
}

static PyObject *Component_has_endpoint(ComponentObject *self, PyObject *args) {
    PyObject *name;
    int native = 0;
    tsr_endpoint ep;
    if (!PyArg_ParseTuple(args, "O|p", &name, &native) || endpoint_arg(name, &ep) != 0 ||
        component_check_open(self) != 0)
        return NULL;
    return PyBool_FromLong(native ? tsr_component_has_native_endpoint(self->core->c, ep)
                                  : tsr_component_has_endpoint(self->core->c, ep));
}

/* One endpoint's figures: {calls, errors, total_s, mean_s}. */
static PyObject *endpoint_figures(const tsr_stats *s, int e) {
    double total = (double)s->endpoint_ns[e] / 1e9;
    return Py_BuildValue("{sKsKsdsd}", "calls", (unsigned long long)s->endpoint_calls[e], "errors",
                         (unsigned long long)s->endpoint_errors[e], "total_s", total, "mean_s",
                         total / (double)s->endpoint_calls[e]);
}

static PyObject *Component_stats(ComponentObject *self, PyObject *unused) {
    (void)unused;
    if (component_check_open(self) != 0) return NULL;
    tsr_stats s = TSR_STATS_INIT;
    tsr_component_stats(self->core->c, &s);
    PyObject *d = Py_BuildValue(
        "{sKsKsKsKsKsdsd}", "calls", (unsigned long long)s.calls, "bytes_copied",
        (unsigned long long)s.bytes_copied, "bytes_by_ref", (unsigned long long)s.bytes_by_ref,
        "worker_starts", (unsigned long long)s.worker_starts, "worker_deaths",
        (unsigned long long)s.worker_deaths, "worker_wait_s", (double)s.worker_wait_ns / 1e9,
        "copy_s", (double)s.copy_ns / 1e9);
    PyObject *eps = d ? PyDict_New() : NULL;
    if (!eps || PyDict_SetItemString(d, "endpoints", eps) != 0) goto fail;
    /* Only the endpoints that were called: the others have nothing to say. */
    for (int e = 0; e < TSR_EP_COUNT; e++) {
        if (!s.endpoint_calls[e]) continue;
        PyObject *f = endpoint_figures(&s, e);
        int rc = f ? PyDict_SetItemString(eps, tsr_endpoint_name((tsr_endpoint)e), f) : -1;
        Py_XDECREF(f);
        if (rc != 0) goto fail;
    }
    Py_DECREF(eps);
    return d;
fail:
    Py_XDECREF(eps);
    Py_XDECREF(d);
    return NULL;
}

static PyObject *Component_restart(ComponentObject *self, PyObject *unused) {
    (void)unused;
    if (component_check_open(self) != 0) return NULL;
    int rc;
    tsr_component *c = self->core->c;
    Py_BEGIN_ALLOW_THREADS
    rc = tsr_component_restart(c);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        raise_tessera(rc, "restarting a worker failed (see the log for the cause)");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *Component_empty(ComponentObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"shape", "dtype", NULL};
    PyObject *shape, *dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O", kwlist, &shape, &dtype) ||
        component_check_open(self) != 0)
        return NULL;
    PyObject *f64 = NULL;
    if (!dtype) dtype = f64 = PyUnicode_FromString("float64");
    PyObject *arr = dtype ? arena_empty(self->core, shape, dtype) : NULL;
    Py_XDECREF(f64);
    return arr;
}

PyObject *flatten_fn, *nest_fn;

/* apply(inputs) -> {output: array}: the hot path, kept free of Python for
 * components whose field names have no dots. */
static PyObject *Component_apply(ComponentObject *self, PyObject *inputs) {
    if (component_check_open(self) != 0) return NULL;
    if (!self->apply_pool &&
        !(self->apply_pool = (PyObject *)pool_new((PyObject *)self, self->core, &self->fields,
                                                  TSR_EP_APPLY, NULL, NULL)))
        return NULL;
    /* Taken first: flattening runs Python code, and a close() there drops
     * the component's reference (the pool then refuses the run). */
    PyObject *pool = Py_NewRef(self->apply_pool);
    PyObject *flat = NULL;
    if (self->fields.nested_in && flatten_fn) {
        flat = PyObject_CallFunction(flatten_fn, "OOs", (PyObject *)self, inputs, "apply");
        if (!flat) {
            Py_DECREF(pool);
            return NULL;
        }
        inputs = flat;
    }
    SlotObject *slot = pool_run((PoolObject *)pool, inputs, NULL, 0);
    PyObject *out = slot ? result_dict(slot, self->fields.out, self->fields.n_out) : NULL;
    if (slot) pool_release((PoolObject *)pool, slot);
    Py_DECREF(pool);
    Py_XDECREF(flat);
    if (out && self->fields.nested_out && nest_fn)
        Py_SETREF(out, PyObject_CallOneArg(nest_fn, out));
    return out;
}

/* _call(endpoint, wrt_in, wrt_out, inputs, seeds=None, batch=0) -> tuple of
 * arrays in the library's result order. seeds: a dict; for hvp a pair of
 * dicts (cotangents of wrt_out, tangents of wrt_in). */
static PyObject *Component_call(ComponentObject *self, PyObject *args) {
    PyObject *ep_name, *wrt_in, *wrt_out, *inputs, *seeds = Py_None;
    long long batch = 0;
    tsr_endpoint ep;
    if (!PyArg_ParseTuple(args, "OO!O!O|OL", &ep_name, &PyTuple_Type, &wrt_in, &PyTuple_Type,
                          &wrt_out, &inputs, &seeds, &batch) ||
        endpoint_arg(ep_name, &ep) != 0 || component_check_open(self) != 0)
        return NULL;
    if (ep == TSR_EP_ABSTRACT_EVAL) {
        PyErr_SetString(PyExc_ValueError, "_call: use _abstract_eval for abstract_eval");
        return NULL;
    }
    PyObject *key = Py_BuildValue("(iOO)", (int)ep, wrt_in, wrt_out);
    if (!key) return NULL;
    PyObject *pool = PyDict_GetItemWithError(self->pools, key);
    if (pool) {
        Py_INCREF(pool);
    } else if (!PyErr_Occurred()) {
        pool = (PyObject *)pool_new((PyObject *)self, self->core, &self->fields, ep, wrt_in,
                                     wrt_out);
        if (pool && PyDict_SetItem(self->pools, key, pool) != 0) Py_CLEAR(pool);
    }
    Py_DECREF(key);
    if (!pool) return NULL;
    SlotObject *slot = pool_run((PoolObject *)pool, inputs, seeds == Py_None ? NULL : seeds,
                                (int64_t)batch);
    PyObject *out = slot ? result_tuple(slot) : NULL;
    if (slot) pool_release((PoolObject *)pool, slot);
    Py_DECREF(pool);
    return out;
}

/* _abstract_eval(((shape, dtype name) or None, ...) in input order) ->
 * ((shape, dtype name), ...) in output order; None: an input left out,
 * which takes its default or is absent. */
static PyObject *Component_abstract_eval(ComponentObject *self, PyObject *specs) {
    if (component_check_open(self) != 0) return NULL;
    if (!PyTuple_Check(specs) || PyTuple_GET_SIZE(specs) != self->fields.n_in) {
        PyErr_Format(PyExc_TypeError, "_abstract_eval: a tuple of %d (shape, dtype) pairs",
                     (int)self->fields.n_in);
        return NULL;
    }
    /* A call of its own: abstract_eval runs at trace time, not per step,
     * and may wait (on a busy worker, on the component's lock), so it runs
     * without the GIL, holding the core as other calls do. */
    comp_core *core = self->core;
    tsr_call *call = tsr_call_new(core->c, TSR_EP_ABSTRACT_EVAL);
    if (!call) return PyErr_NoMemory();
    core_incref(core);
    PyObject *out = NULL;
    for (int32_t i = 0; i < self->fields.n_in; i++) {
        PyObject *shape;
        const char *dtype;
        PyObject *spec = PyTuple_GET_ITEM(specs, i);
        if (spec == Py_None) continue;
        if (PyBytes_Check(spec)) {
            /* A TEXT or JSON input: its encoded value (the bytes stay
             * alive in specs until the run returns). */
            int rc = tsr_call_set_text(call, self->fields.in[i].cname, PyBytes_AS_STRING(spec));
            if (rc != 0) {
                raise_call_error(call, rc);
                goto done;
            }
            continue;
        }
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(specs, i), "O!s", &PyTuple_Type, &shape, &dtype))
            goto done;
        int dtype_code = tsr_dtype_from_name(dtype);
        if (dtype_code < 0) {
            raise_tessera(TSR_E_DTYPE, "abstract_eval: unknown dtype");
            goto done;
        }
        tsr_array a = {.data = NULL, .dtype = (tsr_dtype)dtype_code,
                       .rank = (int32_t)PyTuple_GET_SIZE(shape)};
        if (a.rank > TSR_MAX_RANK) {
            raise_tessera(TSR_E_SHAPE, "abstract_eval: rank out of range");
            goto done;
        }
        for (int32_t d = 0; d < a.rank; d++) {
            a.shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
            if (a.shape[d] == -1 && PyErr_Occurred()) goto done;
        }
        int rc = tsr_call_set_input_at(call, i, &a);
        if (rc != 0) {
            raise_call_error(call, rc);
            goto done;
        }
    }
    if (run_call(call, 0) != 0) goto done;
    out = PyTuple_New(self->fields.n_out);
    for (int32_t k = 0; out && k < self->fields.n_out; k++) {
        const tsr_array *r = tsr_call_result(call, k);
        if (self->fields.out[k].kind == TSR_KIND_TEXT ||
            self->fields.out[k].kind == TSR_KIND_JSON || !r) {
            /* A value, not an array: its shape is its length, known
             * only once it is computed. */
            PyTuple_SET_ITEM(out, k, Py_NewRef(Py_None));
            continue;
        }
        PyObject *shape = PyTuple_New(r->rank);
        for (int32_t d = 0; shape && d < r->rank; d++) {
            PyObject *v = PyLong_FromLongLong(r->shape[d]);
            if (!v) Py_CLEAR(shape);
            else PyTuple_SET_ITEM(shape, d, v);
        }
        PyObject *item = shape ? Py_BuildValue("(Ns)", shape, tsr_dtype_name(r->dtype)) : NULL;
        if (!item) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, k, item);
    }
done:
    if (!core->abandoned) tsr_call_free(call);
    core_decref(core);
    return out;
}

#if TSR_PY_HAVE_XLA_FFI
/* The FFI op for a key, made once and kept by the component until close. */
static PyObject *Component_ffi_op(ComponentObject *self, PyObject *args) {
    if (component_check_open(self) != 0) return NULL;
    PyObject *op = PyDict_GetItemWithError(self->ffi_ops, args);
    if (op) return Py_NewRef(op);
    if (PyErr_Occurred() || !(op = ffi_op_new(self->core, self->fields.n_in, args))) return NULL;
    if (PyDict_SetItem(self->ffi_ops, args, op) != 0) Py_CLEAR(op);
    return op;
}
#endif

static PyMethodDef Component_methods[] = {
    {"close", (PyCFunction)Component_close, METH_NOARGS,
     "close($self, /)\n--\n\n"
     "Close the component: no calls after this. Workers stop and memory is released once "
     "no array returned by the component is alive any more."},
    {"apply", (PyCFunction)Component_apply, METH_O,
     "apply($self, inputs, /)\n--\n\n"
     "{output name: array} for inputs {input name: value}: small results copied, larger ones viewing the "
     "result buffers (which later calls never overwrite)."},
    {"_call", (PyCFunction)Component_call, METH_VARARGS,
     "_call($self, endpoint, wrt_in, wrt_out, inputs, seeds=None, batch=0, /)\n--\n\n"
     "The endpoint called with flat inputs: a tuple of arrays (hvp: seeds is the pair "
     "(cotangent_vector, tangent_vector))."},
    {"_abstract_eval", (PyCFunction)Component_abstract_eval, METH_O,
     "_abstract_eval($self, specs, /)\n--\n\n"
     "specs: ((shape, dtype) or encoded bytes of a TEXT/JSON input or None, ...) -> "
     "((shape, dtype) or None for a TEXT/JSON output, ...)"},
    {"_schema", (PyCFunction)Component_schema, METH_NOARGS,
     "_schema($self, /)\n--\n\n"
     "(name, version, description, inputs, outputs)"},
    {"has_endpoint", (PyCFunction)Component_has_endpoint, METH_VARARGS,
     "has_endpoint($self, name, native=False, /)\n--\n\n"
     "Whether the endpoint can be called (native: the "
     "plugin implements it itself, rather than by finite differences)."},
    {"stats", (PyCFunction)Component_stats, METH_NOARGS,
     "stats($self, /)\n--\n\n"
     "Counters since open: calls, bytes_copied, bytes_by_ref, worker_starts, worker_deaths, "
     "worker_wait_s and copy_s (worker mode: seconds waiting for the worker, and copying "
     "inputs in and results out), and endpoints: {name: {calls, errors, total_s, mean_s}} "
     "for each endpoint called."},
    {"restart", (PyCFunction)Component_restart, METH_NOARGS,
     "restart($self, /)\n--\n\n"
     "Worker mode: start again every worker that died."},
    {"empty", (PyCFunction)(void (*)(void))Component_empty, METH_VARARGS | METH_KEYWORDS,
     "empty($self, /, shape, dtype='float64')\n--\n\n"
     "An uninitialised array in memory that reaches the "
     "plugin without a copy (in worker mode: the shared-memory arena). 64-byte aligned."},
#if TSR_PY_HAVE_XLA_FFI
    {"_ffi_op", (PyCFunction)Component_ffi_op, METH_VARARGS,
     "_ffi_op($self, endpoint, wrt_in, wrt_out, input_indices, seed_names, batch, result_map, /)"
     "\n--\n\nThe FfiOp of one custom call, made once per key."},
#endif
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Component_getset[] = {
    {"closed", (getter)Component_get_closed, NULL, "True once closed.", NULL},
    {"mode", (getter)Component_get_mode, NULL, "'inproc', 'isolated' or 'worker'.", NULL},
    {"hvp_source", (getter)Component_get_hvp_source, NULL,
     "Where hvp comes from: 'native' (the component's own), 'fd_vjp' (central differences "
     "of its vjp), 'fd_apply' (second differences of apply) or 'none'.", NULL},
    {"_address", (getter)Component_get_address, NULL,
     "The tsr_component pointer, for calling the C API on the same component (ctypes); "
     "valid until close().", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject Component_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera._ext.Component",
    .tp_doc = "Component(path, options=None, config=None, env=None)\n--\n\n"
              "A loaded Tessera component (use tessera.load).",
    .tp_basicsize = sizeof(ComponentObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Component_init,
    .tp_dealloc = (destructor)Component_dealloc,
    .tp_methods = Component_methods,
    .tp_getset = Component_getset,
    .tp_weaklistoffset = offsetof(ComponentObject, weakrefs),
};
