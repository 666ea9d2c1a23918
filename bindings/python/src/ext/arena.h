/* SPDX-License-Identifier: MIT */
/* component.empty(): arrays in memory from tsr_component_alloc (arena.c). */
#ifndef TESSERA_PY_ARENA_H
#define TESSERA_PY_ARENA_H

#include "ext.h"

#include "core.h"

extern PyTypeObject ArenaBuffer_Type;
/* empty(shape, dtype) of an open component: a NumPy array in memory from
 * tsr_component_alloc, whose base counts core. */
PyObject *arena_empty(comp_core *core, PyObject *shape, PyObject *dtype);

#endif /* TESSERA_PY_ARENA_H */
