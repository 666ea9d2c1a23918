/* SPDX-License-Identifier: MIT */
/* The interpreter the components run in: the host's, when the host is a
 * Python program, or one started here for the given executable (a venv's
 * python gives that venv's site-packages, as running it would). It is
 * never finalised: NumPy and most extension modules cannot be loaded
 * again into a finalised interpreter, and a worker ends with its process. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bridge.h"

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static char started_for[4096];       /* "" until this bridge started one */

/* Start an interpreter for `python`; called with start_lock held. The host
 * keeps its signal handlers (a library installs none), and the host's
 * argv is not the interpreter's. */
static int start(const char *python, char *why, size_t n) {
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, python);
    if (!PyStatus_Exception(st))
        st = PyConfig_SetBytesString(&config, &config.executable, python);
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
        snprintf(why, n, "cannot start the Python interpreter '%s': %s%s%s", python,
                 st.func ? st.func : "", st.func ? ": " : "", st.err_msg ? st.err_msg : "failed");
        return -1;
    }
    snprintf(started_for, sizeof started_for, "%s", python);
    PyEval_SaveThread(); /* endpoints take the GIL when they run */
    return 0;
}

int interpreter_enter(const char *python, PyGILState_STATE *gil, char *why, size_t n) {
    pthread_mutex_lock(&start_lock);
    int rc = 0;
    if (!Py_IsInitialized()) {
        if (python) {
            rc = start(python, why, n);
        } else {
            snprintf(why, n, "no Python interpreter was named to start");
            rc = -1;
        }
    } else if (started_for[0] && python && strcmp(started_for, python) != 0) {
        snprintf(why, n,
                 "this process already runs the Python interpreter '%s'; a component for '%s' "
                 "needs a process of its own: open it in worker mode",
                 started_for, python);
        rc = -1;
    }
    pthread_mutex_unlock(&start_lock);
    if (rc == 0) *gil = PyGILState_Ensure();
    return rc;
}

int interpreter_is_hosts(void) {
    pthread_mutex_lock(&start_lock);
    int hosts = started_for[0] == '\0';
    pthread_mutex_unlock(&start_lock);
    return hosts;
}

void exception_text(PyObject *glue, char *buf, size_t n) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb) PyException_SetTraceback(value, tb);
    PyObject *text = NULL;
    if (glue && value) text = PyObject_CallMethod(glue, "format_error", "O", value);
    if (!text && value) {
        PyErr_Clear();
        text = PyObject_Str(value);
    }
    const char *s = text ? PyUnicode_AsUTF8(text) : NULL;
    if (!s) PyErr_Clear();
    snprintf(buf, n, "%s", s ? s : "a Python exception that cannot be shown");
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

void streams_flush(void) {
    static const char *const names[] = {"stdout", "stderr"};
    for (size_t k = 0; k < 2; k++) {
        PyObject *stream = PySys_GetObject(names[k]);   /* borrowed; NULL or None: none */
        PyObject *done = stream && stream != Py_None ? PyObject_CallMethod(stream, "flush", NULL)
                                                     : NULL;
        Py_XDECREF(done);
        PyErr_Clear();   /* a closed or broken stream: its text is lost, the call is not */
    }
}
