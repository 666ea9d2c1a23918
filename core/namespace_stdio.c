/* SPDX-License-Identifier: MIT */
/* An isolated component (dlmopen) has a C library of its own, with its
 * own stdout and stderr FILEs, and nothing writes their buffers out: the
 * process's exit flushes only the main namespace's streams. What the
 * component printed without a newline (or, on a pipe, anything under a
 * buffer's worth) would be lost, so closing it flushes its streams, as
 * the exit of a process of its own would have. A component dlopen'd into
 * the process's own namespace shares its streams: nothing to do. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"

void backend_flush_namespace_stdio(void *dl) {
    if (!dl) return;
    /* the handle's own lookup finds the namespace's fflush, not ours */
    void *sym = dlsym(dl, "fflush");
    int (*flush)(FILE *);
    if (!sym) return;
    memcpy(&flush, &sym, sizeof flush);   /* object pointer to function pointer */
    if (flush != fflush) flush(NULL);   /* ours: in the process's namespace, flushed at exit */
}
