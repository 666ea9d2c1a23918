/* SPDX-License-Identifier: MIT */
/* Runs with the GIL released that Ctrl-C can stop.
 *
 * Python's signal handlers run only in the main thread, and only when it
 * checks (PyErr_CheckSignals); a thread that waits in C with the GIL
 * released never does. So a run from the main thread hands the library a
 * cancel check (tsr_call_set_cancel_check), which the library calls, in
 * this same thread, about every CHECK_MS while the run waits for a worker
 * or while its in-process plugin polls tsr_ctx_cancelled; never during a
 * shorter run, so short calls pay nothing but two stores. The check takes
 * the GIL, runs the pending handlers and, when one raised (Ctrl-C's
 * KeyboardInterrupt, or any handler's exception), keeps the exception and
 * cancels the call; the exception is raised once the run has returned.
 * Runs from other threads get no check: their signals wait for the main
 * thread as before.
 *
 * An in-process Python component runs in this interpreter, where Ctrl-C
 * raises KeyboardInterrupt inside the component itself. The bridge
 * (backends/python/bridge/endpoints.c) ends that call with TSR_E_CANCELLED
 * and keeps the exception in this thread's state dict; it is raised here
 * as it was, not as the component's failure (a PluginError, which an
 * optimiser's `except Exception` retry would swallow). */
#include "interrupt.h"

#include "errors.h"

#define CHECK_MS 50

/* What a signal handler raised during the run (owned references). */
typedef struct run_state {
    int raised;
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc;
#else
    PyObject *type, *value, *tb;
#endif
} run_state;

static unsigned long main_thread;   /* threading.main_thread().ident, once known */
static int main_known;

static int in_main_thread(void) {
    if (!main_known) {
        PyObject *threading = PyImport_ImportModule("threading");
        PyObject *main = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
        PyObject *ident = main ? PyObject_GetAttrString(main, "ident") : NULL;
        unsigned long id = ident ? PyLong_AsUnsignedLong(ident) : 0;
        Py_XDECREF(ident);
        Py_XDECREF(main);
        Py_XDECREF(threading);
        if (PyErr_Occurred()) {
            PyErr_Clear();   /* unknown: no check, as before */
            return 0;
        }
        main_thread = id;
        main_known = 1;
    }
    return PyThread_get_thread_ident() == main_thread;
}

/* Called by the library in the thread that runs the call, GIL released. */
static int check_signals(void *user) {
    run_state *st = user;
    if (st->raised) return 1;
    PyGILState_STATE g = PyGILState_Ensure();
    if (PyErr_CheckSignals() != 0) {
#if PY_VERSION_HEX >= 0x030C0000
        st->exc = PyErr_GetRaisedException();
#else
        PyErr_Fetch(&st->type, &st->value, &st->tb);
#endif
        st->raised = 1;
    }
    PyGILState_Release(g);
    return st->raised;
}

/* The bridge's key (BRIDGE_INTERRUPT_KEY in backends/python/bridge/bridge.h). */
#define COMPONENT_INTERRUPT_KEY "tessera.component_interrupt"

/* The KeyboardInterrupt an in-process Python component left in this
 * thread's state dict, raised; 0 when there is none. */
static int raise_component_interrupt(void) {
    PyObject *dict = PyThreadState_GetDict();   /* borrowed */
    PyObject *exc = dict ? PyDict_GetItemString(dict, COMPONENT_INTERRUPT_KEY) : NULL;
    if (!exc) return 0;
    Py_INCREF(exc);
    if (PyDict_DelItemString(dict, COMPONENT_INTERRUPT_KEY) != 0) PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    PyObject *type = (PyObject *)Py_TYPE(exc);
    Py_INCREF(type);
    PyErr_Restore(type, exc, PyException_GetTraceback(exc));
#endif
    return 1;
}

int run_call(tsr_call *call, int64_t batch) {
    run_state st = {0};
    int checked = in_main_thread();
    if (checked) tsr_call_set_cancel_check(call, check_signals, &st, CHECK_MS);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = batch > 0 ? tsr_call_run_batch(call, batch) : tsr_call_run(call);
    Py_END_ALLOW_THREADS
    if (checked) tsr_call_set_cancel_check(call, NULL, NULL, 0);
    if (st.raised) {
        /* The handler's exception wins, whatever the run came to: it would
         * have been raised had the signal come just after the call. */
#if PY_VERSION_HEX >= 0x030C0000
        PyErr_SetRaisedException(st.exc);
#else
        PyErr_Restore(st.type, st.value, st.tb);
#endif
        return -1;
    }
    if (rc == TSR_E_CANCELLED && raise_component_interrupt()) return -1;
    if (rc != 0) {
        raise_call_error(call, rc);
        return -1;
    }
    return 0;
}
