/* SPDX-License-Identifier: MIT */
/* Inside libtessera-serve: a request as the HTTP layer (server.c) hands it
 * over and the answer it writes back. Everything between is a pure
 * function of the two (handler.c), which is what the fuzz target drives. */
#ifndef TESSERA_SERVE_INTERNAL_H
#define TESSERA_SERVE_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "tessera_serve.h"

typedef struct serve_config {
    tsr_component *component;
    http_serve_options opts;          /* strings below are the config's own copies */
    char *host, *token, *input_dir, *output_dir, *umbridge_sizes;
    char *openapi;                   /* GET /openapi.json, made once */
    char *docs;                      /* GET /docs (http_serve_docs), made once */
} serve_config;

typedef struct serve_request {
    const char *method;
    const char *path;                /* without the query */
    const char *accept;              /* headers, or NULL */
    const char *authorization;
    const char *body;
    size_t body_len;
    int body_too_large;              /* more than max_body_bytes came */
} serve_request;

typedef struct serve_response {
    int status;
    char *body;                      /* released with free_body */
    void (*free_body)(char *body);   /* NULL: free() */
    size_t len;
    const char *content_type;        /* static */
    const char *allow;               /* 405: the methods allowed; static */
    int bearer_challenge;            /* 401: ask for a bearer token */
} serve_response;

/* server.c: the options with their defaults, copies of the strings and
 * the OpenAPI document; 0 or TSR_E_NOMEM. */
int serve_config_make(serve_config *cfg, tsr_component *c, const http_serve_options *o,
                      tsr_error *err);
void serve_config_free(serve_config *cfg);

/* handler.c: answer one request. Never fails: out of memory is a 500
 * with an empty body. */
void serve_handle(const serve_config *cfg, const serve_request *rq, serve_response *rs);

/* errors.c: the answer to a failed request (request_len bytes, for the
 * input a 422 quotes), from the library's error; type is the call's
 * (tsr_call_errtype) or NULL for the code's. */
void serve_error(serve_response *rs, const tsr_error *err, const char *type, const char *endpoint,
                 const char *component, const char *request, size_t request_len);
/* A plain answer {"detail": text} with status. */
void serve_detail(serve_response *rs, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The JSON text of v (reference stolen) as the response body. */
void serve_json(serve_response *rs, int status, json_t *v);

/* openapi.c: the document, made once at start. */
json_t *serve_openapi_doc(const tsr_component *c, const http_serve_options *opts);

/* Tesseract's endpoint names: "apply", "jacobian_vector_product", ... */
const char *serve_endpoint_route(tsr_endpoint ep);

#endif
