/* SPDX-License-Identifier: MIT */
/* The component's schema, read once at open: what the hot path needs of each
 * field (field_meta), and a plain-tuple description for the Python side. */
#include "schema.h"

#include <string.h>

static char numpy_kind(tsr_dtype d) {
    switch (d) {
    case TSR_BOOL: return 'b';
    case TSR_INT8: case TSR_INT16: case TSR_INT32: case TSR_INT64: return 'i';
    case TSR_UINT8: case TSR_UINT16: case TSR_UINT32: case TSR_UINT64: return 'u';
    case TSR_FLOAT16: case TSR_FLOAT32: case TSR_FLOAT64: return 'f';
    case TSR_COMPLEX64: case TSR_COMPLEX128: return 'c';
    default: return '?';
    }
}

static int load_fields(const tsr_component *c, int inputs, field_meta **out, int32_t *n_out) {
    int32_t n = inputs ? tsr_component_n_inputs(c) : tsr_component_n_outputs(c);
    field_meta *fs = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof *fs);
    if (!fs) {
        PyErr_NoMemory();
        return -1;
    }
    *out = fs;
    *n_out = n;
    for (int32_t i = 0; i < n; i++) {
        const tsr_field *f = inputs ? tsr_component_input(c, i) : tsr_component_output(c, i);
        fs[i].cname = f->name;
        fs[i].name = PyUnicode_InternFromString(f->name);
        if (!fs[i].name) return -1;
        fs[i].dtype = f->dtype;
        fs[i].np_kind = numpy_kind(f->dtype);
        fs[i].np_size = (int)tsr_dtype_size(f->dtype);
        fs[i].differentiable = (f->flags & TSR_FIELD_DIFFERENTIABLE) != 0;
        fs[i].kind = f->kind;
    }
    return 0;
}

static int any_dotted(const field_meta *fs, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (strchr(fs[i].cname, '.')) return 1;
    return 0;
}

int schema_load(comp_fields *fs, const tsr_component *c) {
    if (load_fields(c, 1, &fs->in, &fs->n_in) != 0 ||
        load_fields(c, 0, &fs->out, &fs->n_out) != 0)
        return -1;
    fs->nested_in = any_dotted(fs->in, fs->n_in);
    fs->nested_out = any_dotted(fs->out, fs->n_out);
    return 0;
}

static void free_fields(field_meta *fs, int32_t n) {
    for (int32_t i = 0; fs && i < n; i++) Py_XDECREF(fs[i].name);
    PyMem_Free(fs);
}

void schema_free(comp_fields *fs) {
    free_fields(fs->in, fs->n_in);
    free_fields(fs->out, fs->n_out);
    fs->in = fs->out = NULL;
    fs->n_in = fs->n_out = 0;
}

static int is_value_kind(const tsr_field *f) {
    return f->kind == TSR_KIND_TEXT || f->kind == TSR_KIND_JSON;
}

static const char *kind_name(const tsr_field *f) {
    return f->kind == TSR_KIND_TEXT ? "text" : f->kind == TSR_KIND_JSON ? "json" : "array";
}

/* dims as a tuple; None for any rank and for TEXT and JSON fields, whose
 * shape is their length in bytes. */
static PyObject *describe_dims(const tsr_field *f) {
    if (is_value_kind(f) || f->rank == TSR_RANK_ANY) return Py_NewRef(Py_None);
    PyObject *dims = PyTuple_New(f->rank);
    if (!dims) return NULL;
    for (int32_t d = 0; d < f->rank; d++) {
        PyObject *v;
        if (f->dims[d].symbol) v = PyUnicode_FromString(f->dims[d].symbol);
        else if (f->dims[d].size == TSR_DIM_ANY) v = Py_NewRef(Py_None);
        else v = PyLong_FromLongLong(f->dims[d].size);
        if (!v) {
            Py_DECREF(dims);
            return NULL;
        }
        PyTuple_SET_ITEM(dims, d, v);
    }
    return dims;
}

/* An input's default as (bytes, shape), or None when it has none. */
static PyObject *describe_default(const tsr_field *f) {
    const tsr_array *d = f->default_value;
    if (!d) return Py_NewRef(Py_None);
    size_t bytes = tsr_dtype_size(d->dtype);
    PyObject *shape = PyTuple_New(d->rank);
    if (!shape) return NULL;
    for (int32_t k = 0; k < d->rank; k++) {
        PyObject *v = PyLong_FromLongLong(d->shape[k]);
        if (!v) {
            Py_DECREF(shape);
            return NULL;
        }
        PyTuple_SET_ITEM(shape, k, v);
        bytes *= (size_t)d->shape[k];
    }
    return Py_BuildValue("(y#N)", (const char *)d->data, (Py_ssize_t)bytes, shape);
}

/* A TEXT field's choices as a tuple of str, or None (any text). */
static PyObject *describe_choices(const tsr_field *f) {
    if (f->kind != TSR_KIND_TEXT || !f->choices || f->n_choices <= 0) return Py_NewRef(Py_None);
    PyObject *t = PyTuple_New(f->n_choices);
    for (int32_t k = 0; t && k < f->n_choices; k++) {
        PyObject *v = PyUnicode_FromString(f->choices[k] ? f->choices[k] : "");
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, k, v);
    }
    return t;
}

static PyObject *describe_fields(const tsr_component *c, int inputs) {
    int32_t n = inputs ? tsr_component_n_inputs(c) : tsr_component_n_outputs(c);
    PyObject *list = PyTuple_New(n);
    if (!list) return NULL;
    for (int32_t i = 0; i < n; i++) {
        const tsr_field *f = inputs ? tsr_component_input(c, i) : tsr_component_output(c, i);
        PyObject *dims = describe_dims(f);
        PyObject *dflt = dims ? describe_default(f) : NULL;
        PyObject *choices = dflt ? describe_choices(f) : NULL;
        if (!choices) {
            Py_XDECREF(dims);
            Py_XDECREF(dflt);
            Py_DECREF(list);
            return NULL;
        }
        PyObject *item = Py_BuildValue("(szNOsNOsN)", f->name,
                                       is_value_kind(f) ? NULL : tsr_dtype_name(f->dtype), dims,
                                       (f->flags & TSR_FIELD_DIFFERENTIABLE) ? Py_True : Py_False,
                                       f->doc ? f->doc : "", dflt,
                                       (f->flags & TSR_FIELD_OPTIONAL) ? Py_True : Py_False,
                                       kind_name(f), choices);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyTuple_SET_ITEM(list, i, item);
    }
    return list;
}

PyObject *schema_describe(const tsr_component *c) {
    PyObject *ins = describe_fields(c, 1);
    PyObject *outs = ins ? describe_fields(c, 0) : NULL;
    if (!outs) {
        Py_XDECREF(ins);
        return NULL;
    }
    return Py_BuildValue("(sssNN)", tsr_component_name(c), tsr_component_version(c),
                         tsr_component_description(c), ins, outs);
}
