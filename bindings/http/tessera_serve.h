/* SPDX-License-Identifier: MIT */
/*
 * Serving a component over HTTP with Tesseract's REST API (libtessera-serve,
 * the library behind `tessera serve` and Python's tessera.serve):
 *
 *   GET  /health                  {"status": "ok"}
 *   GET  /openapi.json            the endpoints and the schema, as tesseract-core's
 *                                 clients read them
 *   POST /apply, /jacobian, /jacobian_vector_product,
 *        /vector_jacobian_product, /abstract_eval
 *                                 Tesseract's request and response bodies; an
 *                                 endpoint the component lacks is absent (404)
 *   GET /Info; POST /ModelInfo, /InputSizes, /OutputSizes, /Evaluate,
 *        /Gradient, /ApplyJacobian, /ApplyHessian, their *ShMem variants
 *        and /TestShMem
 *                                 UM-Bridge (protocol 1.0), the component as
 *                                 its one model (umbridge.h has the mapping)
 *
 * The output encoding comes from the Accept header (application/json,
 * application/json+base64, application/json+binref with an output
 * directory); anything else is answered 406 naming the accepted ones. A
 * request the component refuses is answered 422 with Tesseract's
 * {"detail": [{"type", "loc", "msg", "input"}]}; a failure of the component
 * 500 with a JSON body naming it and the cause; a body over
 * max_body_bytes 413; a missing or wrong bearer token 401 (every route
 * but /health, which load balancers ask without one).
 *
 * Requests run on a pool of threads; calls of a component that is not
 * thread-safe are serialised by the library, and a worker-mode component
 * with workers=N runs N at once. The server never installs signal handlers.
 *
 * Slow and many clients: a request's line and headers must all come within
 * header_timeout_s of the connection opening (on a kept-alive connection,
 * of its request line, and at most idle_timeout_s + header_timeout_s after
 * the previous answer), its body within body_timeout_s of the headers,
 * however slowly they trickle in; past it the connection is closed without
 * an answer (and a line logged). A connection silent for idle_timeout_s is
 * closed. One address holds at most max_connections_per_address
 * connections at once: the ones past it are closed as soon as accepted, so
 * that others (a load balancer's /health) still find a slot. Past
 * max_connections in all, new connections wait in the kernel's backlog
 * until one closes.
 */
#ifndef TESSERA_SERVE_PUBLIC_H
#define TESSERA_SERVE_PUBLIC_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/payload.h"
#include "tessera/tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One line per request: method, path, status, bytes in and out, time; and
 * one per connection closed past a deadline (from the server's own thread). */
typedef void (*http_serve_log_fn)(void *user, const char *line);

/* struct_size first; members left zero take their defaults. */
typedef struct http_serve_options {
    uint32_t struct_size;
    const char *host;            /* address to bind; default "127.0.0.1" */
    uint16_t port;               /* 0: any free port (http_serve_port says which) */
    const char *token;           /* bearer token the requests must carry; NULL: none */
    const char *input_dir;       /* where binref inputs are read; NULL: refused */
    const char *output_dir;      /* where json+binref outputs go; NULL: not offered */
    tsr_encoding default_encoding; /* no Accept, or * / *: default json */
    int32_t lz4;                 /* base64 and binref outputs as lz4 frames */
    uint64_t max_body_bytes;     /* default 1 GiB */
    uint32_t threads;            /* request threads; default 4 */
    uint32_t max_connections;    /* default 256 */
    uint32_t idle_timeout_s;     /* a connection silent this long is closed; default 60 */
    http_serve_log_fn log;        /* access log; NULL: none */
    void *log_user;
    uint32_t header_timeout_s;   /* a request's line and headers within this; default 10 */
    uint32_t body_timeout_s;     /* its body within this of the headers; default 300 */
    uint32_t max_connections_per_address; /* at most max_connections (TSR_E_ARGUMENT
                                             otherwise); default max_connections / 4 */
    const char *umbridge_sizes;  /* UM-Bridge sizes of symbolic dims, "n=2,m=3", for
                                    /InputSizes and /OutputSizes when config gives none */
    uint32_t linger_us;          /* after answering the only connection open, wait this
                                    long awake for its next request (linger.c); default
                                    200, HTTP_SERVE_NO_LINGER: not at all */
} http_serve_options;

#define HTTP_SERVE_NO_LINGER UINT32_MAX

typedef struct http_server http_server;

/* Serve c (which must outlive the server) until http_serve_stop. 0, or a
 * TSR_E_* code with the cause in err (the address in use, ...). */
int http_serve_start(tsr_component *c, const http_serve_options *opts, http_server **out,
                    tsr_error *err);
/* The port the server listens on. */
uint16_t http_serve_port(const http_server *s);
/* Stop accepting, finish the requests in progress, release everything. */
void http_serve_stop(http_server *s);

/* The OpenAPI document of c as GET /openapi.json answers it; *out is
 * released with tsr_json_free. */
int http_serve_openapi(const tsr_component *c, const http_serve_options *opts, char **out,
                      tsr_error *err);

/* The docs page of c as GET /docs answers it and `tessera docs` writes it:
 * one self-contained HTML document, every field with its kind, dtype,
 * shape, default and description, each endpoint and an example request.
 * component_arg is how its command lines name the component (NULL: its
 * path). *page is NUL-terminated, released with free(). 0, or a TSR_E_*
 * code with err set. */
int http_serve_docs(const tsr_component *c, const char *component_arg, char **page,
                    tsr_error *err);

#ifdef __cplusplus
}
#endif

#endif
