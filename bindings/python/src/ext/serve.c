/* SPDX-License-Identifier: MIT */
/* tessera.serve: libtessera-serve in this process, for tests and
 * notebooks. The server keeps the component's core alive until it stops,
 * so closing the Component while it serves releases nothing under it.
 * Requests run on the server's threads; Python components take the GIL
 * there as in any call. */
#include "serve.h"

#include "component.h"
#include "errors.h"
#include "tessera_serve.h"

typedef struct served {
    http_server *srv;
    comp_core *core;
} served;

static void served_stop(served *s) {
    if (!s || !s->srv) return;
    Py_BEGIN_ALLOW_THREADS
    http_serve_stop(s->srv); /* waits for requests that may need the GIL */
    Py_END_ALLOW_THREADS
    s->srv = NULL;
    core_decref(s->core);
    s->core = NULL;
}

static void capsule_free(PyObject *capsule) {
    served *s = PyCapsule_GetPointer(capsule, "tessera.server");
    served_stop(s);
    PyMem_Free(s);
}

static const char *opt_str(PyObject *v) { return v == Py_None ? NULL : PyUnicode_AsUTF8(v); }

/* _serve_start(component, host, port, token, input_dir, output_dir,
 * encoding, lz4, max_body_bytes, threads) -> capsule */
PyObject *serve_start(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *comp, *host, *token, *in_dir, *out_dir;
    int port, encoding, lz4;
    unsigned long long max_body;
    unsigned int threads;
    if (!PyArg_ParseTuple(args, "O!OiOOOipKI", &Component_Type, &comp, &host, &port, &token,
                          &in_dir, &out_dir, &encoding, &lz4, &max_body, &threads))
        return NULL;
    ComponentObject *c = (ComponentObject *)comp;
    if (component_check_open(c) != 0) return NULL;
    http_serve_options o = {.struct_size = sizeof o, .host = opt_str(host), .port = (uint16_t)port,
                           .token = opt_str(token), .input_dir = opt_str(in_dir),
                           .output_dir = opt_str(out_dir),
                           .default_encoding = (tsr_encoding)encoding, .lz4 = lz4,
                           .max_body_bytes = max_body, .threads = threads};
    if (PyErr_Occurred()) return NULL;
    served *s = PyMem_Calloc(1, sizeof *s);
    if (!s) return PyErr_NoMemory();
    tsr_error err = TSR_ERROR_INIT;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = http_serve_start(c->core->c, &o, &s->srv, &err);
    Py_END_ALLOW_THREADS
    if (rc) {
        PyMem_Free(s);
        raise_tessera_at(rc, err.message, err.loc);
        return NULL;
    }
    s->core = c->core;
    core_incref(s->core);
    PyObject *capsule = PyCapsule_New(s, "tessera.server", capsule_free);
    if (!capsule) {
        served_stop(s);
        PyMem_Free(s);
    }
    return capsule;
}

PyObject *serve_port(PyObject *module, PyObject *capsule) {
    (void)module;
    served *s = PyCapsule_GetPointer(capsule, "tessera.server");
    return s ? PyLong_FromLong(s->srv ? http_serve_port(s->srv) : 0) : NULL;
}

PyObject *serve_stop(PyObject *module, PyObject *capsule) {
    (void)module;
    served *s = PyCapsule_GetPointer(capsule, "tessera.server");
    if (!s) return NULL;
    served_stop(s);
    Py_RETURN_NONE;
}
