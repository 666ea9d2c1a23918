/* The schema a worker sends its host at start: tsr_schema_to_json's text
 * plus what only the loaded plugin knows. */
#ifndef TESSERA_TRANSPORT_SCHEMA_JSON_H
#define TESSERA_TRANSPORT_SCHEMA_JSON_H

#include <stdbool.h>

#include "tessera/tessera.h"

typedef struct schema_worker_extra {
    unsigned implemented;   /* bit ep: the plugin itself has endpoint ep */
    bool thread_safe;       /* TSR_PLUGIN_THREAD_SAFE */
} schema_worker_extra;

/* tsr_schema_to_json's object with two more keys: "implemented" (the
 * endpoints the plugin has, whereas "endpoints" also lists abstract_eval
 * when the schema alone gives every output shape) and "thread_safe".
 * Malloc'd text, or NULL when out of memory. */
char *schema_json_for_worker(const tsr_component *c, const schema_worker_extra *extra);

#endif
