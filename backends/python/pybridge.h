/* SPDX-License-Identifier: MIT */
/* Between the Python backend (python_backend.c, in libtessera) and the
 * bridge (bridge/, libtessera-python.so): the bridge embeds CPython, or
 * uses the interpreter of a host that already runs one, imports a
 * Tesseract's tesseract_api.py through the glue module
 * (tessera_pycomponent.py) and serves it as a descriptor whose endpoints
 * call into Python. libtessera does not link libpython: the backend loads
 * the interpreter's library and then the bridge, only when a Python
 * component is opened. */
#ifndef TESSERA_CORE_PYTHON_PYBRIDGE_H
#define TESSERA_CORE_PYTHON_PYBRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/plugin.h"

#define PYBRIDGE_OPEN_SYMBOL "pybridge_open"
#define PYBRIDGE_CLOSE_SYMBOL "pybridge_close"

typedef struct pybridge_request {
    uint32_t struct_size;
    const char *api_path;    /* the component's tesseract_api.py */
    const char *glue_path;   /* tessera_pycomponent.py */
    /* The interpreter to start when this process runs none yet (its
     * sys.executable: a venv's python gives that venv's packages). */
    const char *python;
    /* Appended to a failure to import the component (why worker mode
     * would help), or NULL. */
    const char *import_hint;
} pybridge_request;

/* Open: the component's descriptor (valid until close) and the state its
 * endpoints find in ctx->state. 0, or a TSR_E_* code with the cause in
 * why. */
typedef int (*pybridge_open_fn)(const pybridge_request *req, const tsr_plugin **desc,
                                void **state, char *why, size_t n);
typedef void (*pybridge_close_fn)(void *state);

/* What the bridge exports under those names. */
int pybridge_open(const pybridge_request *req, const tsr_plugin **desc, void **state,
                      char *why, size_t n);
void pybridge_close(void *state);

#endif
