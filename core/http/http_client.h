/* SPDX-License-Identifier: MIT */
/* HTTP on libcurl for the backends that reach servers (remote,
 * umbridge): one lane is one easy handle in a multi handle of its own, reused from call to call so that its
 * connection stays open (keep-alive), and waited on with curl_multi_poll
 * so that a cancel's eventfd wakes the wait at once. Nothing here knows
 * components or calls: a request is a URL, headers, a body and limits. */
#ifndef TESSERA_CORE_HTTP_CLIENT_H
#define TESSERA_CORE_HTTP_CLIENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

/* The answer's body, grown as it arrives and kept for the next request. */
typedef struct http_body {
    char *data;                      /* NUL-terminated once complete */
    size_t len, cap;
    uint64_t limit;                  /* 0: none */
    uint64_t declared;               /* the Content-Length that passed limit */
    uint64_t arrived;                /* the bytes that had arrived when the body passed it */
    int over;                        /* 1: the answer passed limit; 2: its Content-Length
                                        did; -1: no memory */
} http_body;

/* How a wait learns that its call was cancelled (all optional). */
typedef struct http_cancel {
    const _Atomic uint32_t *flag;    /* nonzero: stop */
    int fd;                          /* readable at a cancel; -1: none */
    int check_ms;                    /* run check this often; 0: never */
    int (*check)(void *user);        /* nonzero: stop */
    void *user;
} http_cancel;

typedef struct http_lane {
    CURL *easy;
    CURLM *multi;
    http_body body;
    char errbuf[CURL_ERROR_SIZE];
} http_lane;

typedef struct http_request {
    const char *url;
    const struct curl_slist *headers;
    const char *body;                /* NULL: GET */
    size_t len;
    long timeout_ms;                 /* the whole exchange; 0: none */
    long connect_ms;                 /* connecting; 0: libcurl's default */
    uint64_t max_body;               /* the answer's size; 0: none */
    const char *max_body_name;       /* that limit in a refusal; NULL: max_payload_bytes */
    const http_cancel *cancel;       /* NULL: not cancellable */
} http_request;

/* libcurl's global state, counted: up at each open (loading libcurl the
 * first time, http_curl.h), down at each close, so that it is released
 * when no remote component is left. Everything below needs it up. */
int http_global_up(char *why, size_t n);
void http_global_down(void);

/* 0, or TSR_E_NOMEM with why. A lane that failed to start is freed all
 * the same. */
int http_lane_init(http_lane *l, char *why, size_t n);
void http_lane_free(http_lane *l);

/* Send the request and wait for the whole answer: 0 with *status and the
 * body in l->body, or TSR_E_WORKER (no connection, or it broke),
 * TSR_E_TIMEOUT, TSR_E_CANCELLED, TSR_E_LIMIT (an answer over max_body:
 * refused from its head when its Content-Length says so, else as soon as
 * what arrived passes it, a chunked answer included) or TSR_E_NOMEM, with
 * the cause in why. */
int http_exchange(http_lane *l, const http_request *r, long *status, char *why, size_t n);

/* A header list from NULL-terminated lines; NULL when out of memory. */
struct curl_slist *http_header_list(const char *const *lines);
void http_header_list_free(struct curl_slist *list);

#endif
