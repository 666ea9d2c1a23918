/* SPDX-License-Identifier: MIT */
/* The UM-Bridge backend: a model on a UM-Bridge server (protocol 1.0)
 * opened as a component. Its schema comes from the server
 * (umbridge_schema.c: GET /Info, POST /ModelInfo, /InputSizes,
 * /OutputSizes): inputs in0..inN and outputs out0..outM, float64 vectors
 * of the declared sizes. Each call (umbridge_call.c) maps an endpoint to
 * the model's routes (apply: Evaluate, vjp: Gradient, jvp: ApplyJacobian,
 * hvp: ApplyHessian), one request per pair of vectors, summed; values go
 * both ways as JSON lists (umbridge_values.c); every request is one
 * exchange on the component's one kept-alive connection
 * (umbridge_http.c, on core/http). */
#ifndef TESSERA_BACKENDS_UMBRIDGE_H
#define TESSERA_BACKENDS_UMBRIDGE_H

#include <pthread.h>
#include <stdint.h>

#include <jansson.h>

#include "core/backend.h"
#include "core/http/http_client.h"

typedef enum umb_route {
    UMB_INFO,
    UMB_MODEL_INFO,
    UMB_INPUT_SIZES,
    UMB_OUTPUT_SIZES,
    UMB_EVALUATE,
    UMB_GRADIENT,
    UMB_APPLY_JACOBIAN,
    UMB_APPLY_HESSIAN,
    UMB_ROUTES
} umb_route;

/* What a server may declare: vectors per side and values per vector
 * (each vector's bytes are also bounded by max_array_bytes at each call). */
#define UMB_MAX_VECTORS 1024
#define UMB_MAX_VECTOR_LEN ((int64_t)1 << 40)

typedef struct umb_model {
    char *url[UMB_ROUTES], *shown[UMB_ROUTES]; /* shown: without a password */
    char *base_shown;
    char *name;                      /* the model's name on the server */
    json_t *config;                  /* the config object every request carries */
    struct curl_slist *headers;
    long timeout_ms, connect_ms;
    uint64_t max_body;
    int curl_up, lock_made, lane_up;
    pthread_mutex_t lock;            /* one request at a time on the lane */
    http_lane lane;
    /* the schema */
    int32_t n_in, n_out;
    int64_t *sizes;                  /* n_in, then n_out */
    int supports[4];                 /* Evaluate, Gradient, ApplyJacobian, ApplyHessian */
    tsr_plugin desc;
    tsr_field *fields;               /* inputs, then outputs */
    tsr_dim *dims;
    char *names;                     /* "in0\0in1\0...out0\0..." */
} umb_model;

/* umbridge_http.c: one exchange on route r: POST body (given the
 * model's name and config here; NULL: a GET), the answer parsed as a
 * JSON object into *answer. An answer that is not a success becomes the
 * error, with UM-Bridge's error type and message when it has them. 0, or
 * a TSR_E_* code with why starting with the method and URL. */
int umb_exchange(umb_model *m, umb_route r, json_t *body, const http_cancel *cx, long timeout_ms,
                 json_t **answer, char *why, size_t n);
/* The route's name ("Gradient"). */
const char *umb_route_name(umb_route r);

/* umbridge_schema.c: discover the model (its name: m->name, NULL for the
 * server's only one) and build m->desc with endpoint_fn for each
 * endpoint the model supports. 0, or TSR_E_LOAD, TSR_E_NOMEM, ... with
 * why. */
int umb_discover(umb_model *m, tsr_endpoint_fn endpoint_fn, char *why, size_t n);

/* umbridge_values.c: a vector of len values as a JSON list (NaN and
 * infinities refused: JSON has none); a JSON answer's vector into out
 * (len finite numbers, else TSR_E_PLUGIN_RESULT naming what); the
 * inputs of a call as a list of lists. 0, or a TSR_E_* code with why. */
int umb_vector_json(const double *v, int64_t len, const char *what, json_t **out, char *why,
                    size_t n);
int umb_vector_read(json_t *v, int64_t len, const char *what, double *out, char *why, size_t n);
int umb_inputs_json(const umb_model *m, const tsr_args *a, json_t **out, char *why, size_t n);

/* umbridge_call.c: run a call validated by core (the results have their
 * buffers) against the model. 0, or a TSR_E_* code with why. */
int umb_run(umb_model *m, const tsr_args *a, const http_cancel *cx, char *why, size_t n);

#endif
