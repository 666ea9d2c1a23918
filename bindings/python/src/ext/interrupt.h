/* SPDX-License-Identifier: MIT */
/* Runs with the GIL released that Ctrl-C can stop (interrupt.c). */
#ifndef TESSERA_PY_INTERRUPT_H
#define TESSERA_PY_INTERRUPT_H

#include "ext.h"

/* Run the call (with a leading batch axis when batch > 0) with the GIL
 * released. From the main thread, a signal handler that raises meanwhile
 * (Ctrl-C: KeyboardInterrupt) cancels it within about 50 ms
 * (tsr_call_cancel) and its exception is raised. 0, or -1 with an
 * exception set (the handler's, or the library's failure). */
int run_call(tsr_call *call, int64_t batch);

#endif /* TESSERA_PY_INTERRUPT_H */
