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
#include "codecs/payload_error.h"

struct tsr_payload {
    const tsr_component *component;
    tsr_endpoint endpoint;
    bool abstract;          /* abstract_eval: shapes and dtypes only */

    int32_t n_inputs;       /* the schema's */
    decoded_array *inputs;    /* by schema index */
    bool *given;            /* by schema index */

    char **wrt_in;          /* jac_inputs / jvp_inputs / vjp_inputs, each once */
    int32_t n_wrt_in;
    char **wrt_out;         /* jac_outputs / jvp_outputs / vjp_outputs */
    int32_t n_wrt_out;

    /* jvp: tangents, parallel to wrt_in; vjp: cotangents, parallel to
     * wrt_out; NULL otherwise. */
    decoded_array *seeds;
    int32_t n_seeds;
};

/* Decode request["inputs"] into p->inputs; every schema input must be given. */
int payload_read_inputs(tsr_payload *p, json_t *inputs, const payload_ctx *ctx);

/* Decode the wrt lists and, for jvp and vjp, the tangent or cotangent
 * vector, from the request object. */
int payload_read_wrt(tsr_payload *p, json_t *request, const payload_ctx *ctx);

/* The component's max_payload_bytes, max_payload_values, max_array_bytes
 * and max_call_bytes (core/limits.c); 0: none. */
uint64_t component_payload_limit(const tsr_component *c);
uint64_t component_payload_values(const tsr_component *c);
void component_array_limits(const tsr_component *c, uint64_t *array, uint64_t *call);

/* The request keys of an endpoint, NULL-terminated; "inputs" first. */
const char *const *payload_keys(tsr_endpoint ep);

#endif /* TESSERA_CODECS_INTERNAL_H */
