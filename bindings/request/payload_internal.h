/* SPDX-License-Identifier: MIT */
/*
 * The parsed request, shared by the files that build it (payload_parse.c,
 * payload_inputs.c, payload_wrt.c) and those that use it (payload_bind.c,
 * payload_results.c).
 */
#ifndef TESSERA_CODECS_INTERNAL_H
#define TESSERA_CODECS_INTERNAL_H

#include <stdbool.h>

#include <jansson.h>

#include <tessera/payload.h>

#include "codecs/array_decode.h"
#include "codecs/array_encode.h"
#include "codecs/payload_error.h"

/* A TEXT or JSON input (tsr_field.kind). A JSON value's tree and its
 * decoded arrays live only until the payload is parsed; then text holds
 * the compact JSON the component gets. */
typedef struct kind_value {
    char *text;             /* owned; NULL: not given, or an array field */
    json_t *tree;           /* JSON, while parsing */
    decoded_array *arrays;  /* the array objects inside tree, in order */
    size_t n_arrays, cap_arrays;
} kind_value;

struct tsr_payload {
    const tsr_component *component;
    tsr_endpoint endpoint;
    bool abstract;          /* abstract_eval: shapes and dtypes only */

    int32_t n_inputs;       /* the schema's */
    decoded_array *inputs;    /* by schema index */
    bool *given;            /* by schema index */
    kind_value *kinds;      /* by schema index: TEXT and JSON inputs */

    char **wrt_in;          /* jac_inputs / jvp_inputs / vjp_inputs, each once */
    int32_t n_wrt_in;
    char **wrt_out;         /* jac_outputs / jvp_outputs / vjp_outputs */
    int32_t n_wrt_out;

    /* jvp: tangents, parallel to wrt_in; vjp and hvp: cotangents,
     * parallel to wrt_out; NULL otherwise. */
    decoded_array *seeds;
    int32_t n_seeds;
    /* hvp: the tangents, parallel to wrt_in; NULL otherwise. */
    decoded_array *tangents;
    int32_t n_tangents;
};

/* Decode request["inputs"] into p->inputs; every schema input must be given. */
int payload_read_inputs(tsr_payload *p, json_t *inputs, const payload_ctx *ctx);

/* payload_kinds.c: a TEXT input (a JSON string) and a JSON input (its
 * subtree, arrays inside decoded now, binrefs among them queued). */
int payload_read_text(tsr_payload *p, int32_t index, json_t *value, const char *path,
                      const payload_ctx *ctx);
int payload_read_json(tsr_payload *p, int32_t index, json_t *value, const char *path,
                      const payload_ctx *ctx);
/* Once binref arrays are read: each JSON input as compact text, its
 * arrays in base64. Needs ctx->hoist still. */
int payload_finish_json(tsr_payload *p, const payload_ctx *ctx);
void kind_value_release_tree(kind_value *kv);
/* Buffers that must outlive the writing of a response: the arrays of a
 * JSON result, whose binref bytes the sink writes only when finished. */
typedef struct kept_buffers {
    void **items;
    size_t n, cap;
} kept_buffers;
void kept_buffers_free(kept_buffers *k);

/* A TEXT result as a JSON string, a JSON result as its tree with every
 * array object in the encoding of out (its decoded data left in keep
 * until the sink is finished). */
int payload_write_kind_result(json_writer *jw, const tsr_field *field, const tsr_array *a,
                              const array_out *out, kept_buffers *keep, const payload_ctx *ctx,
                              const char *path);

/* Decode the wrt lists and, for jvp and vjp, the tangent or cotangent
 * vector (hvp: both), from the request object. */
int payload_read_wrt(tsr_payload *p, json_t *request, const payload_ctx *ctx);

/* The component's max_payload_bytes, max_payload_values, max_array_bytes
 * and max_call_bytes (core/limits.c); 0: none. */
uint64_t component_payload_limit(const tsr_component *c);
uint64_t component_payload_values(const tsr_component *c);
void component_array_limits(const tsr_component *c, uint64_t *array, uint64_t *call);

/* The request keys of an endpoint, NULL-terminated; "inputs" first. */
const char *const *payload_keys(tsr_endpoint ep);

#endif /* TESSERA_CODECS_INTERNAL_H */
