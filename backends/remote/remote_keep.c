/* SPDX-License-Identifier: MIT */
/* What a served schema keeps: copies of the strings and blocks its
 * descriptor points to, freed with it (remote_schema_free). */
#include <stdlib.h>
#include <string.h>

#include "remote_schema_read.h"

/* Strings kept with the schema, for its fields and its descriptor alike;
 * remote_schema_free frees them. */
char *remote_keep(remote_schema *s, const char *text) {
    char **grown = realloc(s->strings, (s->n_strings + 1) * sizeof *grown);
    if (!grown) return NULL;
    s->strings = grown;
    char *copy = strdup(text);
    if (copy) s->strings[s->n_strings++] = copy;
    return copy;
}

void *remote_keep_block(remote_schema *s, size_t n) {
    char **grown = realloc(s->strings, (s->n_strings + 1) * sizeof *grown);
    if (!grown) return NULL;
    s->strings = grown;
    void *block = calloc(1, n ? n : 1);
    if (block) s->strings[s->n_strings++] = block;
    return block;
}

