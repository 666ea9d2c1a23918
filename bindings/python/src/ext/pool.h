/* SPDX-License-Identifier: MIT */
/* Pools of Slots and one run (pool.c). */
#ifndef TESSERA_PY_POOL_H
#define TESSERA_PY_POOL_H

#include "ext.h"

#include "core.h"
#include "schema.h"
#include "slot.h"

/* Idle slots a pool keeps; beyond them a finished slot is freed. */
#define POOL_IDLE_KEEP 4

typedef struct PoolObject {
    PyObject_HEAD
    /* Borrowed, all three: the Component owns its pools, and its close()
     * runs pool_clear before it lets go of the core. */
    PyObject *owner;           /* the Component, named in coercion messages */
    comp_core *core;           /* not used once closed */
    const comp_fields *fields; /* the Component's */
    tsr_endpoint ep;
    int32_t n_wrt_in, n_wrt_out;
    /* The wrt entries as fields: a whole field's own meta (name counted
     * again), or, for a path inside a JSON field ("weights.{a}"), a float64
     * array named by the path, whose cname is that str's UTF-8. */
    field_meta *wrt_in, *wrt_out;
    SlotObject *idle[POOL_IDLE_KEEP];  /* owned references */
    int n_idle;
    int closed;                /* pool_clear ran: no runs; slots coming back are freed */
} PoolObject;

extern PyTypeObject Pool_Type;

/* A pool for an endpoint and differentiation targets (tuples of names,
 * checked by the library) of an open component. New reference, or NULL
 * with an exception set. */
PoolObject *pool_new(PyObject *owner, comp_core *core, const comp_fields *fields,
                     tsr_endpoint ep, PyObject *wrt_in, PyObject *wrt_out);
/* Take a slot, bind inputs (a dict by field name) and seeds (a dict, for
 * hvp a pair of dicts (cotangents, tangents), or NULL for none), run (with a leading batch axis when batch > 0) and
 * return the slot, the caller's alone until pool_release, or NULL with an
 * exception set. */
SlotObject *pool_run(PoolObject *pool, PyObject *inputs, PyObject *seeds, int64_t batch);
/* Give the slot back (steals the reference), after reading its results. */
void pool_release(PoolObject *pool, SlotObject *slot);
/* Let go of every idle slot (at close); results still viewed live on. */
void pool_clear(PoolObject *pool);

#endif /* TESSERA_PY_POOL_H */
