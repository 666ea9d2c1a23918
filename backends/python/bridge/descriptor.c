/* SPDX-License-Identifier: MIT */
/* A Python component's descriptor: its fields from the glue's
 * Component.inputs and .outputs, (name, dtype, dims, differentiable, doc)
 * tuples, the inputs' defaults from Component.defaults, and an endpoint
 * function wherever the component has the endpoint. The descriptor owns
 * copies of every string and default. Field kinds (TEXT with its choices,
 * JSON), any-rank arrays (TSR_RANK_ANY) and zero outputs come from the
 * glue as they are; defaults of TEXT and JSON fields are uint8 arrays of
 * their text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"

static const char *const endpoint_names[TSR_EP_COUNT] = {"apply", "jvp", "vjp", "jacobian",
                                                          "abstract_eval", "hvp"};

/* A copy kept with the descriptor; NULL when out of memory. */
static const char *keep(pycomponent *pc, const char *s) {
    char **grown = realloc(pc->strings, (pc->n_strings + 1) * sizeof *grown);
    if (!grown) return NULL;
    pc->strings = grown;
    char *copy = strdup(s);
    if (copy) pc->strings[pc->n_strings++] = copy;
    return copy;
}

/* A str attribute of the component, kept; "" when it has none. */
static const char *keep_attr(pycomponent *pc, const char *name) {
    PyObject *v = PyObject_GetAttrString(pc->component, name);
    const char *s = v && PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    if (!s) PyErr_Clear();
    const char *kept = keep(pc, s ? s : "");
    Py_XDECREF(v);
    return kept;
}

/* A TEXT field's choices, kept; f->choices stays NULL for any text. */
static int read_choices(pycomponent *pc, PyObject *list, tsr_field *f, char *why, size_t n) {
    Py_ssize_t count = list && PyList_Check(list) ? PyList_Size(list) : 0;
    if (count == 0) return 0;
    const char **choices = calloc((size_t)count, sizeof *choices);
    char **grown = choices ? realloc(pc->choice_lists, (pc->n_choice_lists + 1) * sizeof *grown)
                           : NULL;
    if (!grown) {
        free(choices);
        snprintf(why, n, "out of memory");
        return -1;
    }
    pc->choice_lists = grown;
    pc->choice_lists[pc->n_choice_lists++] = (char *)choices;
    for (Py_ssize_t k = 0; k < count; k++) {
        const char *c = PyUnicode_AsUTF8(PyList_GetItem(list, k));
        if (!c) {
            PyErr_Clear();
            snprintf(why, n, "input or output '%s': choice %zd is not text", f->name, k);
            return -1;
        }
        if (!(choices[k] = keep(pc, c))) {
            snprintf(why, n, "out of memory");
            return -1;
        }
    }
    f->choices = choices;
    f->n_choices = (int32_t)count;
    return 0;
}

/* One (name, dtype, dims, differentiable, doc, kind, choices) tuple into
 * f and its dims; dims None is an array of any rank. A TEXT or JSON field
 * is also described as a uint8 array of any length (what its value is on
 * the ABI). */
static int read_field(pycomponent *pc, PyObject *t, tsr_field *f, tsr_dim *dims,
                      const char *side, char *why, size_t n) {
    const char *name = NULL, *doc = NULL;
    int dtype = 0, diff = 0, kind = TSR_KIND_ARRAY;
    PyObject *shape = NULL, *choices = NULL;
    if (!PyTuple_Check(t) ||
        !PyArg_ParseTuple(t, "siOpz|iO", &name, &dtype, &shape, &diff, &doc, &kind, &choices) ||
        (shape != Py_None && !PyList_Check(shape)) || kind < TSR_KIND_ARRAY ||
        kind > TSR_KIND_JSON) {
        PyErr_Clear();
        snprintf(why, n, "the glue gave a malformed %s field", side);
        return -1;
    }
    Py_ssize_t rank = shape == Py_None ? TSR_RANK_ANY : PyList_Size(shape);
    if (rank > TSR_MAX_FIELD_RANK) {
        snprintf(why, n, "%s '%s' has rank %zd; Tessera fields have at most %d axes", side, name,
                 rank, TSR_MAX_FIELD_RANK);
        return -1;
    }
    for (Py_ssize_t k = 0; k < rank; k++) {
        PyObject *d = PyList_GetItem(shape, k);
        dims[k] = (tsr_dim){NULL, d == Py_None ? TSR_DIM_ANY : PyLong_AsLongLong(d)};
        if (PyErr_Occurred() || (d != Py_None && dims[k].size < 0)) {
            PyErr_Clear();
            snprintf(why, n, "%s '%s': axis %zd is neither a size nor None", side, name, k);
            return -1;
        }
    }
    *f = (tsr_field){.name = keep(pc, name), .dtype = (tsr_dtype)dtype, .rank = (int32_t)rank,
                     .dims = rank > 0 ? dims : NULL,
                     .flags = diff ? TSR_FIELD_DIFFERENTIABLE : 0,
                     .doc = doc && *doc ? keep(pc, doc) : NULL, .kind = (uint32_t)kind};
    if (!f->name || (doc && *doc && !f->doc)) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    return kind == TSR_KIND_TEXT ? read_choices(pc, choices, f, why, n) : 0;
}

/* The component's list attribute `attr` as fields; the count in *count. */
static PyObject *field_list(pycomponent *pc, const char *attr, Py_ssize_t *count, char *why,
                            size_t n) {
    PyObject *list = PyObject_GetAttrString(pc->component, attr);
    if (!list || !PyList_Check(list)) {
        PyErr_Clear();
        Py_XDECREF(list);
        snprintf(why, n, "the glue's component has no list '%s'", attr);
        return NULL;
    }
    *count = PyList_Size(list);
    return list;
}

static int read_fields(pycomponent *pc, PyObject *ins, Py_ssize_t n_in, PyObject *outs,
                       Py_ssize_t n_out, char *why, size_t n) {
    Py_ssize_t total = n_in + n_out;
    pc->fields = calloc(total ? (size_t)total : 1, sizeof *pc->fields);
    pc->dims = calloc(total ? (size_t)total * TSR_MAX_FIELD_RANK : 1, sizeof *pc->dims);
    if (!pc->fields || !pc->dims) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    for (Py_ssize_t i = 0; i < total; i++) {
        PyObject *t = i < n_in ? PyList_GetItem(ins, i) : PyList_GetItem(outs, i - n_in);
        if (read_field(pc, t, &pc->fields[i], pc->dims + i * TSR_MAX_FIELD_RANK,
                       i < n_in ? "input" : "output", why, n) != 0)
            return -1;
    }
    return 0;
}

/* One input's default from the glue: None (Optional[X] = None) makes it
 * optional; an array of the field's dtype is copied as its default;
 * anything else (a default that does not convert) leaves it required. */
static int read_default(PyObject *value, tsr_field *f, tsr_array *dst,
                        char *why, size_t n) {
    if (f->kind != TSR_KIND_ARRAY) {
        /* TEXT / JSON: its text (a JSON field's None default is "null") */
        char *text = NULL;
        Py_ssize_t len = 0;
        if (!PyBytes_Check(value) || PyBytes_AsStringAndSize(value, &text, &len) != 0) {
            PyErr_Clear();
            return 0;
        }
        if ((size_t)len > TSR_MAX_DEFAULT_BYTES) return 0;   /* left required */
        void *copy = malloc((size_t)len + 1);
        if (!copy) {
            snprintf(why, n, "out of memory");
            return -1;
        }
        memcpy(copy, text, (size_t)len);
        ((char *)copy)[len] = '\0';
        *dst = (tsr_array){.data = copy, .dtype = TSR_UINT8, .rank = 1, .shape = {len}};
        f->default_value = dst;
        return 0;
    }
    if (value == Py_None) {
        f->flags |= TSR_FIELD_OPTIONAL;
        return 0;
    }
    Py_buffer v;
    if (PyObject_GetBuffer(value, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        return 0;
    }
    int rc = 0;
    if (bridge_format_is(v.format, f->dtype) &&
        (size_t)v.itemsize == bridge_dtype_size(f->dtype) && v.ndim == f->rank &&
        (size_t)v.len <= TSR_MAX_DEFAULT_BYTES) {
        void *copy = malloc(v.len ? (size_t)v.len : 1);
        if (copy) {
            memcpy(copy, v.buf, (size_t)v.len);
            *dst = (tsr_array){.data = copy, .dtype = f->dtype, .rank = f->rank};
            for (int d = 0; d < v.ndim; d++) dst->shape[d] = v.shape[d];
            f->default_value = dst;
        } else {
            snprintf(why, n, "out of memory");
            rc = -1;
        }
    }
    PyBuffer_Release(&v);
    return rc;
}

/* Component.defaults: {dotted input name: default}. */
static int read_defaults(pycomponent *pc, Py_ssize_t n_in, char *why, size_t n) {
    pc->defaults = calloc(n_in ? (size_t)n_in : 1, sizeof *pc->defaults);
    pc->n_defaults = (size_t)n_in;
    if (!pc->defaults) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    PyObject *defaults = PyObject_GetAttrString(pc->component, "defaults");
    if (!defaults || !PyDict_Check(defaults)) {
        PyErr_Clear();
        Py_XDECREF(defaults);
        return 0;   /* a glue without defaults: every input is required */
    }
    int rc = 0;
    for (Py_ssize_t i = 0; i < n_in && !rc; i++) {
        PyObject *value = PyDict_GetItemString(defaults, pc->fields[i].name);
        if (value) rc = read_default(value, &pc->fields[i], &pc->defaults[i], why, n);
    }
    Py_DECREF(defaults);
    return rc;
}

/* Which endpoints the component has: bound methods of the Component. */
static int read_endpoints(pycomponent *pc, char *why, size_t n) {
    PyObject *have = PyObject_GetAttrString(pc->component, "endpoints");
    if (!have || !PyAnySet_Check(have)) {
        PyErr_Clear();
        Py_XDECREF(have);
        snprintf(why, n, "the glue's component has no set 'endpoints'");
        return -1;
    }
    for (int e = 0; e < TSR_EP_COUNT; e++) {
        PyObject *key = PyUnicode_FromString(endpoint_names[e]);
        int has = key ? PySet_Contains(have, key) : -1;
        Py_XDECREF(key);
        if (has == 1) pc->endpoint[e] = PyObject_GetAttrString(pc->component, endpoint_names[e]);
        if (has < 0 || (has == 1 && !pc->endpoint[e])) {
            PyErr_Clear();
            Py_DECREF(have);
            snprintf(why, n, "the glue's component lacks its '%s' method", endpoint_names[e]);
            return -1;
        }
    }
    Py_DECREF(have);
    if (!pc->endpoint[TSR_EP_APPLY]) {
        snprintf(why, n, "the component has no apply");
        return -1;
    }
    return 0;
}

int descriptor_build(pycomponent *pc, char *why, size_t n) {
    Py_ssize_t n_in = 0, n_out = 0;
    PyObject *ins = field_list(pc, "inputs", &n_in, why, n);
    PyObject *outs = ins ? field_list(pc, "outputs", &n_out, why, n) : NULL;
    int rc = outs ? read_fields(pc, ins, n_in, outs, n_out, why, n) : -1;
    Py_XDECREF(ins);
    Py_XDECREF(outs);
    if (rc == 0) rc = read_defaults(pc, n_in, why, n);
    if (rc == 0) rc = read_endpoints(pc, why, n);
    if (rc) return rc;
    tsr_plugin *d = &pc->desc;
    *d = (tsr_plugin){TSR_PLUGIN_HEADER};
    d->name = keep_attr(pc, "name");
    d->version = keep_attr(pc, "version");
    d->description = keep_attr(pc, "description");
    if (!d->name || !d->version || !d->description) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    d->inputs = pc->fields;
    d->n_inputs = (int32_t)n_in;
    d->outputs = pc->fields + n_in;
    d->n_outputs = (int32_t)n_out;
    /* The GIL serialises the component's calls whatever the host does. */
    d->apply = endpoint_run;
    d->jvp = pc->endpoint[TSR_EP_JVP] ? endpoint_run : NULL;
    d->vjp = pc->endpoint[TSR_EP_VJP] ? endpoint_run : NULL;
    d->jacobian = pc->endpoint[TSR_EP_JACOBIAN] ? endpoint_run : NULL;
    d->abstract_eval = pc->endpoint[TSR_EP_ABSTRACT_EVAL] ? endpoint_run : NULL;
    return 0;
}

void descriptor_free(pycomponent *pc) {
    for (size_t i = 0; i < pc->n_strings; i++) free(pc->strings[i]);
    free(pc->strings);
    free(pc->fields);
    free(pc->dims);
    for (size_t i = 0; i < pc->n_choice_lists; i++) free(pc->choice_lists[i]);
    free(pc->choice_lists);
    pc->choice_lists = NULL;
    pc->n_choice_lists = 0;
    for (size_t i = 0; pc->defaults && i < pc->n_defaults; i++) free(pc->defaults[i].data);
    free(pc->defaults);
    pc->defaults = NULL;
    pc->strings = NULL;
    pc->fields = NULL;
    pc->dims = NULL;
}
