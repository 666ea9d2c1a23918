/* SPDX-License-Identifier: MIT */
/* The cause an abstract_eval that cannot be answered gives (shape_hint.c). */
#ifndef TESSERA_CORE_SHAPE_HINT_H
#define TESSERA_CORE_SHAPE_HINT_H

#include <stddef.h>

#include "tessera/tessera.h"

/* Which outputs' shapes are unknown before the call and what to add
 * where, as text in buf (NUL-terminated, cut short to n). */
void shape_hint(const tsr_component *c, char *buf, size_t n);

#endif /* TESSERA_CORE_SHAPE_HINT_H */
