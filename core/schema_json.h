/* SPDX-License-Identifier: MIT */
/* The schema a worker sends its host at start: tsr_schema_to_json's text
 * plus what only the loaded plugin knows. */
#ifndef TESSERA_CODECS_SCHEMA_JSON_H
#define TESSERA_CODECS_SCHEMA_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "tessera/tessera.h"

typedef struct schema_worker_extra {
    unsigned implemented;   /* bit ep: the plugin itself has endpoint ep */
    bool thread_safe;       /* TSR_PLUGIN_THREAD_SAFE */
    tsr_fd_method fd_method;  /* finite-difference fallback, served by the host */
    uint32_t fd_samples;
    double fd_step;
} schema_worker_extra;

/* tsr_schema_to_json's object with more keys: "implemented" (the
 * endpoints the plugin has, whereas "endpoints" also lists those the host
 * serves: abstract_eval from the schema, derivatives by finite
 * differences), "thread_safe" and "fd" {"method", "samples", "step"}.
 * Malloc'd text, or NULL when out of memory. */
char *schema_json_for_worker(const tsr_component *c, const schema_worker_extra *extra);

/* The number of dims of every field of a JSON field list ("shape"
 * arrays): the schema a worker sends and a manifest's fields have the same
 * form, and both size one array of tsr_dim from it. */
struct json_t;
size_t schema_count_dims(struct json_t *list);

#endif
