/* SPDX-License-Identifier: MIT */
/* A served Tesseract's schema: its /openapi.json read into a Tessera
 * descriptor. Fields come from components.schemas.Apply_InputSchema and
 * Apply_OutputSchema: arrays (properties.object_type.const == "array")
 * with their rank and fixed sizes from "shape" (prefixItems, minItems,
 * maxItems; an axis of any size is TSR_DIM_ANY; no minItems/maxItems:
 * TSR_RANK_ANY) and their dtype; nested models as dotted names; strings
 * as TEXT fields ("enum" or "const": their choices); every other value a
 * JSON schema describes (booleans, integers, numbers, null, unions,
 * lists, dicts, models inside them) as a JSON field, differentiable when
 * an array inside is. An input the model does not list as required is
 * optional, or has the property's "default" as its default. A side may
 * have no fields. Endpoints come from "paths". */
#ifndef TESSERA_CORE_REMOTE_SCHEMA_H
#define TESSERA_CORE_REMOTE_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/plugin.h"

/* How a field travels: an encoded array, a JSON string (TEXT) or a JSON
 * value (JSON). */
typedef enum remote_kind { REMOTE_ARRAY = 0, REMOTE_TEXT = 1, REMOTE_JSON = 2 } remote_kind;

typedef struct remote_field {
    remote_kind kind;
    /* A TEXT or JSON input's default in the schema, as JSON text (NULL:
     * none): what abstract_eval sends for it when it is given no value. */
    char *default_json;
    /* An input the server lets a request leave out, with a default Tessera
     * can hold (remote_schema_defaults.c); default_buf NULL: none. */
    tsr_array default_array;
    void *default_buf;
} remote_field;

typedef struct remote_schema {
    tsr_plugin desc;                 /* points into the members below */
    tsr_field *fields;               /* inputs, then outputs */
    tsr_dim *dims;                   /* TSR_MAX_FIELD_RANK per field */
    remote_field *extra;             /* parallel to fields */
    int32_t n_fields, cap;
    char **strings;                  /* every string the descriptor names */
    size_t n_strings;
} remote_schema;

/* What a served /openapi.json may cost before it is parsed: its bytes
 * (the download stops there, refused from its Content-Length when that
 * says more) and its JSON values (counted in the text, without parsing
 * it). tesseract-core describes a field in about 3.3 KB and 190 values,
 * so these admit some 5,000 fields, while a document of 100,000 fields
 * is refused before jansson builds it (which would take 0.5 s and 300 MB
 * for 18 MB of text). */
#define REMOTE_MAX_DOC_BYTES ((uint64_t)16 << 20)
#define REMOTE_MAX_DOC_VALUES ((size_t)1 << 20)

/* remote_schema_size.c: whether text holds more than max JSON values
 * (objects, arrays, strings, numbers, literals; keys are not counted),
 * by one pass that allocates nothing: 1 if so, else 0. */
int remote_doc_values_over(const char *text, size_t len, size_t max);

/* Read the OpenAPI document text. 0, or TSR_E_LOAD (not a Tesseract's
 * document), TSR_E_DESCRIPTOR (a field Tessera cannot represent) or
 * TSR_E_NOMEM, or TSR_E_LIMIT (more than REMOTE_MAX_DOC_VALUES values,
 * refused before it is parsed), with the cause in why. endpoint_fn is the descriptor's
 * function for every endpoint the document lists. */
int remote_schema_read(const char *text, size_t len, tsr_endpoint_fn endpoint_fn,
                       remote_schema **out, char *why, size_t n);
void remote_schema_free(remote_schema *s);

/* The path of an endpoint on the server ("/apply", "/jacobian", ...). */
const char *remote_endpoint_path(tsr_endpoint ep);

/* The extras of input i and of output o. */
const remote_field *remote_input(const remote_schema *s, int32_t i);
const remote_field *remote_output(const remote_schema *s, int32_t o);

#endif
