/* SPDX-License-Identifier: MIT */
/* The counted component (core.c): the tsr_component that the Component,
 * its Slots, ResultBuffers, ArenaBuffers, live FFI ops and servers share;
 * the last reference runs tsr_close (see ext.h). */
#ifndef TESSERA_PY_CORE_H
#define TESSERA_PY_CORE_H

#include "ext.h"

typedef struct comp_core {
    tsr_component *c;              /* NULL once closed */
    Py_ssize_t refs;
    int abandoned;                 /* closed at exit under live views: touch nothing */
    struct comp_core *prev, *next; /* every open core, for the exit hook */
} comp_core;

/* A core holding c (one reference), or NULL with MemoryError set (c is
 * then still the caller's). */
comp_core *core_new(tsr_component *c);
void core_incref(comp_core *core);
/* The last reference runs tsr_close and frees the core. */
void core_decref(comp_core *core);
/* Close every component still open (at interpreter exit), so that no
 * worker or shared memory outlives the process's Python side. */
void core_close_all(void);

#endif /* TESSERA_PY_CORE_H */
