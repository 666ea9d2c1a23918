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

/* The field a message names as a loc list: "field 'inputs.x'" gives
 * ["body", "inputs", "x"], "input 'x'" the same; ["body"] when it names
 * none. The earliest mention is the field at fault ("input 'b': ... from
 * field 'a'" is about b). */
static json_t *loc_of(const char *message) {
    static const struct {
        const char *mark, *prefix;
    } marks[] = {{"field '", NULL}, {"input '", "inputs"}, {"output '", "outputs"}};
    json_t *loc = json_pack("[s]", "body");
    const char *at = NULL, *prefix = NULL;
    size_t skip = 0;
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        const char *hit = strstr(message, marks[i].mark);
        if (hit && (!at || hit < at)) {
            at = hit;
            prefix = marks[i].prefix;
            skip = strlen(marks[i].mark);
        }
    }
    if (!at) return loc;
    if (prefix) json_array_append_new(loc, json_string(prefix));
    at += skip;
    const char *end = strchr(at, '\'');
    while (end && at < end) {
        const char *dot = memchr(at, '.', (size_t)(end - at));
        const char *stop = dot ? dot : end;
        json_array_append_new(loc, json_stringn(at, (size_t)(stop - at)));
        at = stop + 1;
    }
    return loc;
}

/* pydantic's names where one fits, so that clients read them as usual. */
static const char *type_of(int code) {
    switch (code) {
    case TSR_E_MISSING: return "missing";
    case TSR_E_UNKNOWN_FIELD: return "extra_forbidden";
    case TSR_E_DTYPE: return "dtype_error";
    case TSR_E_SHAPE: return "shape_error";
    case TSR_E_NOT_DIFFERENTIABLE: return "not_differentiable";
    case TSR_E_LIMIT: return "too_large";
    default: return "value_error";
    }
}

/* The message without braces: clients format it as a template. */
static json_t *message_text(const char *message) {
    char text[TSR_ERRMSG_MAX];
    snprintf(text, sizeof text, "%s", message);
    for (char *p = text; *p; p++)
        if (*p == '{') *p = '(';
        else if (*p == '}') *p = ')';
    return json_string(text);
}

void serve_error(serve_response *rs, const tsr_error *err, const char *endpoint,
                 const char *component) {
    switch (err->code) {
    case TSR_E_PAYLOAD:
    case TSR_E_MISSING:
    case TSR_E_UNKNOWN_FIELD:
    case TSR_E_DTYPE:
    case TSR_E_SHAPE:
    case TSR_E_NOT_DIFFERENTIABLE:
    case TSR_E_LIMIT:
    case TSR_E_ARGUMENT:
    case TSR_E_IO: { /* a binref the request named */
        json_t *item = json_pack("{s:s, s:o, s:o, s:n}", "type", type_of(err->code), "loc",
                                 loc_of(err->message), "msg", message_text(err->message),
                                 "input");
        serve_json(rs, 422, json_pack("{s:[o]}", "detail", item));
        return;
    }
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
