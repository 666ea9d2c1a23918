/* SPDX-License-Identifier: MIT */
/* A failed request's answer. What the caller sent wrong is a 422 in
 * Tesseract's (FastAPI's) form, {"detail": [{"type", "loc", "msg",
 * "input"}]}, so that tesseract-core's client raises its ValidationError;
 * what the component did wrong is a 500 whose body names the component,
 * the endpoint and the cause (never a bare 500); a component without a
 * worker left to take calls, or without shared memory now, is a 503. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_internal.h"

void serve_json(serve_response *rs, int status, json_t *v) {
    rs->status = status;
    rs->content_type = "application/json";
    rs->body = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!rs->body) {
        rs->status = 500;
        rs->len = 0;
        return;
    }
    rs->len = strlen(rs->body);
}

void serve_detail(serve_response *rs, int status, const char *fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    serve_json(rs, status, json_pack("{s:s}", "detail", text));
}

/* The 422 body is the library's (tsr_error_detail_json), which the CLI
 * writes too: the same bytes for the same request. */
static void validation_error(serve_response *rs, const tsr_error *err, const char *type,
                             const char *request, size_t request_len) {
    char *body = NULL;
    if (tsr_error_detail_json_typed(type, err->code, err->loc, err->message, request, request_len,
                                    &body)) {
        rs->status = 500;
        rs->len = 0;
        return;
    }
    rs->status = 422;
    rs->content_type = "application/json";
    rs->body = body;
    rs->free_body = tsr_json_free;
    rs->len = strlen(body);
}

void serve_error(serve_response *rs, const tsr_error *err, const char *type, const char *endpoint,
                 const char *component, const char *request, size_t request_len) {
    switch (err->code) {
    case TSR_E_PAYLOAD:
    case TSR_E_MISSING:
    case TSR_E_UNKNOWN_FIELD:
    case TSR_E_DTYPE:
    case TSR_E_SHAPE:
    case TSR_E_NOT_DIFFERENTIABLE:
    case TSR_E_LIMIT:
    case TSR_E_ARGUMENT:
    case TSR_E_IO: /* a binref the request named */
    case TSR_E_VALUE: /* a value the schema or the endpoint refused */
        validation_error(rs, err, type, request, request_len);
        return;
    case TSR_E_WORKER:
        /* No worker left to take calls (restart=never): come back later.
         * A call whose worker died is the component's failure: 500. */
        if (!strstr(err->message, "died earlier")) goto component;
        /* fall through */
    case TSR_E_SHM:
    case TSR_E_NOMEM:
        serve_json(rs, 503, json_pack("{s:s, s:s, s:s, s:s}", "detail", err->message, "component",
                                      component, "endpoint", endpoint, "error",
                                      tsr_strerror(err->code)));
        return;
    default:
    component:
        serve_json(rs, 500, json_pack("{s:s, s:s, s:s, s:s}", "detail", err->message, "component",
                                      component, "endpoint", endpoint, "error",
                                      tsr_strerror(err->code)));
    }
}
