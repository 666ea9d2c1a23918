/* SPDX-License-Identifier: MIT */
/* The remote backend: a component served over HTTP by a Tesseract
 * (tesseract-core's `tesseract-runtime serve`, or `tessera serve`), opened
 * from its URL. Its schema comes from the server's /openapi.json
 * (remote_schema.c, remote_fields.c); each call (remote_call.c) POSTs
 * Tesseract's request body with arrays in base64 (remote_request.c) on
 * one of the component's lanes (remote_lanes.c), each a kept-alive
 * connection (core/http, on libcurl loaded at the first open), and the answer is decoded into the call's results
 * (remote_response.c) or turned into the call's error (remote_status.c). */
#ifndef TESSERA_CORE_REMOTE_H
#define TESSERA_CORE_REMOTE_H

#include <pthread.h>
#include <stdint.h>

#include <jansson.h>

#include "core/backend.h"
#include "core/http/http_client.h"
#include "core/http/http_url.h"
#include "remote_schema.h"

/* Where an answer goes: the call's arguments, whose results are written,
 * and how a result whose shape depends on values gets its buffer once
 * the answer says its shape: from the call (the backend's invoke) or from
 * the endpoint's context (a call served to another process); NULL, with
 * a code and a cause, when refused. */
typedef struct remote_sink {
    const tsr_args *args;
    void *(*alloc)(void *user, int32_t k, int *code, char *why, size_t n);
    void *user;
} remote_sink;

typedef struct remote_lane {
    http_lane http;
    int busy;
} remote_lane;

typedef struct remote_backend {
    remote_schema *schema;
    char *base_shown;                /* the URL given, without a password */
    char *openapi_url, *openapi_shown;
    char *url[TSR_EP_COUNT];         /* each endpoint's URL */
    char *shown[TSR_EP_COUNT];       /* the same without a password, for messages */
    struct curl_slist *post_headers, *get_headers;
    long timeout_ms;                 /* each call's request; 0: none */
    long connect_ms;                 /* connecting, and the open's request */
    uint64_t max_body;               /* an answer's bytes; 0: none */
    int curl_up;                     /* http_global_up was called */
    int locks_made;
    pthread_mutex_t lock;            /* guards the lanes' busy flags */
    pthread_cond_t freed;
    int32_t n_lanes;
    remote_lane *lanes;
} remote_backend;

/* remote_lanes.c: make n lanes (0, or a TSR_E_* code with why; stop
 * releases what start made, after a failure too); take a free lane for a
 * call, starting with lane first, waiting while all are busy (NULL: cx
 * says the call was cancelled meanwhile), and give it back. */
int remote_lanes_start(remote_backend *rb, int32_t n, char *why, size_t wn);
void remote_lanes_stop(remote_backend *rb);
remote_lane *remote_lane_take(remote_backend *rb, int32_t first, const http_cancel *cx);
void remote_lane_give(remote_backend *rb, remote_lane *l);

/* remote_call.c: one call to the server: its request body, a free lane
 * (the first one tried: lane), the exchange (cancelled as cx says) and the
 * answer into sink. 0, or the call's error code with the cause in why;
 * *sent: the array bytes the request carried. */
int remote_call(remote_backend *rb, const remote_sink *sink, int32_t lane, const http_cancel *cx,
                uint64_t *sent, char *why, size_t n);

/* remote_url.c: whether path is an http:// or https:// URL (each
 * endpoint's URL: core/http/http_url.h). */
int remote_url_claims(const char *path);

/* remote_token.c: "Authorization: Bearer <token>" from the file named by
 * the configuration key token_file (tsr_options_set_config), malloc'd;
 * NULL with 0 when none is named. TSR_E_IO or TSR_E_ARGUMENT with why. */
int remote_token_header(const struct tsr_options *o, char **header, char *why, size_t n);
/* Wipe and free a header that held a token. */
void remote_token_free(char *header);

/* A JSON value's nesting Tessera walks (abstract_eval's arrays inside
 * one, the arrays inside an answer's JSON result). */
#define REMOTE_MAX_JSON_DEPTH 256

/* remote_json.c: v as compact JSON text, malloc'd; NULL when out of
 * memory or nested deeper than JW_MAX_DEPTH. */
char *remote_json_text(json_t *v);

/* remote_paths.c: the paths of a call's wrt entries (out: 0 wrt_in, 1
 * wrt_out), NULL when the host sets none; entry k's path, its field's
 * name when paths is NULL. */
const char *const *remote_wrt_paths(const tsr_args *a, int out);
const char *remote_wrt_path(const tsr_field *fields, const int32_t *idx, const char *const *paths,
                            int32_t k);

/* remote_request.c: the body of a call, Tesseract's request for the
 * call's endpoint with arrays in base64 (malloc'd, *len bytes); *bytes:
 * the array bytes it carries. 0, or a TSR_E_* code with why naming the
 * field. */
int remote_request_body(const remote_schema *s, const tsr_args *a, char **body, size_t *len,
                        uint64_t *bytes, char *why, size_t n);

/* remote_response.c: decode a successful answer into sink's results.
 * 0, or TSR_E_PLUGIN_RESULT (an
 * answer that is not what the call expects), TSR_E_NOMEM or TSR_E_LIMIT,
 * with why naming the field. */
int remote_response_read(const remote_schema *s, const remote_sink *sink, const char *text,
                         size_t len, char *why, size_t n);

/* remote_status.c: an answer whose HTTP status is not a success: the code
 * of the call's failure and its cause ("HTTP 422: inputs.a: ..."). */
int remote_status_error(long status, const char *body, size_t len, char *why, size_t n);
/* The start of a body on one line (at most 300 bytes, "..." when cut). */
void remote_excerpt(const char *text, size_t len, char *out, size_t n);

#endif
