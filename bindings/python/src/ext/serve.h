/* SPDX-License-Identifier: MIT */
/* tessera.serve: libtessera-serve in this process (serve.c). */
#ifndef TESSERA_PY_SERVE_H
#define TESSERA_PY_SERVE_H

#include "ext.h"

PyObject *serve_start(PyObject *module, PyObject *args);
PyObject *serve_port(PyObject *module, PyObject *capsule);
PyObject *serve_stop(PyObject *module, PyObject *capsule);

#endif /* TESSERA_PY_SERVE_H */
