/* SPDX-License-Identifier: MIT */
/* Shared by the two halves of reading an OpenAPI document: the document
 * (remote_schema.c: where the models are, endpoints, the descriptor) and
 * its properties (remote_fields.c: one property, one field or a nested
 * model). */
#ifndef TESSERA_CORE_REMOTE_SCHEMA_READ_H
#define TESSERA_CORE_REMOTE_SCHEMA_READ_H

#include <jansson.h>

#include "remote_schema.h"

/* Nested models deeper than this, or $refs chained longer, are refused
 * (a document that refers to itself would otherwise never end); so are
 * documents that take more than REMOTE_MAX_VISITS properties to read (a
 * model that refers to itself twice doubles at each level). */
#define REMOTE_MAX_DEPTH 32
#define REMOTE_MAX_VISITS 65536

typedef struct field_reader {
    remote_schema *s;
    json_t *schemas;                 /* components.schemas */
    json_t *diff;                    /* the side's differentiable_arrays, or NULL */
    const char *side;                /* "input" or "output" */
    size_t *visits;                  /* properties read so far, both sides */
    char *why;
    size_t n;
} field_reader;

/* A TEXT field's choices: at most this many. */
#define REMOTE_MAX_CHOICES 4096

/* A copy of text kept with the schema; NULL when out of memory. */
char *remote_keep(remote_schema *s, const char *text);
/* A block of n bytes kept with the schema (zeroed); NULL when out of memory. */
void *remote_keep_block(remote_schema *s, size_t n);

/* v with $ref (to components.schemas), single-entry allOf and Optional
 * (anyOf/oneOf with one alternative besides null) followed; the first
 * "description" and "default" met on the way in *doc and *dflt (either may
 * be NULL). NULL with why set when a $ref leads nowhere. */
json_t *remote_resolve(const field_reader *r, json_t *v, const char *name, json_t **doc,
                       json_t **dflt);

/* remote_schema_defaults.c: what input field k, just read, takes when a
 * request leaves it out (required: the model lists it as required; dflt:
 * the property's "default", or NULL). Always 0. remote_defaults_link
 * points each input's default_value at its default once the fields no
 * longer move; remote_defaults_free releases them. */
int remote_read_default(const field_reader *r, int32_t k, json_t *dflt, int required);
void remote_defaults_link(remote_schema *s, int32_t n_in);
void remote_defaults_free(remote_schema *s);

/* remote_values.c: fields that are not arrays. Whether v (resolved)
 * describes a string (a TEXT field); whether v is a schema a JSON field
 * can hold (0, or TSR_E_DESCRIPTOR with why); whether the JSON field name
 * of schema prop holds differentiable arrays; field f's choices from v's
 * "enum" or "const"; what input k takes when left out (as
 * remote_read_default; also keeps the default's JSON for abstract_eval). */
int remote_is_text(json_t *v);
int remote_json_check(const field_reader *r, json_t *v, const char *name);
int remote_json_differentiable(const field_reader *r, json_t *prop, const char *name);
int remote_text_choices(const field_reader *r, json_t *v, tsr_field *f);
int remote_value_default(const field_reader *r, int32_t k, json_t *dflt, int required);

/* Append the fields of model's properties, their names under prefix
 * ("" at the top). 0, or a TSR_E_* code with why set. */
int remote_read_fields(const field_reader *r, json_t *model, const char *prefix, int depth);

#endif
