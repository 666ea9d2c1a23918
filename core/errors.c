/* SPDX-License-Identifier: MIT */
/* Error messages: every one names the component, and for calls the
 * endpoint, before the cause. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

void error_set(tsr_error *err, int code, const char *fmt, ...) {
    if (!err) return;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

/* "component 'name'" once the descriptor is known, else its path. */
const char *comp_label(const tsr_component *c) {
    return (c->desc && c->desc->name) ? c->desc->name : c->path;
}

int call_fail(tsr_call *call, int code, const char *fmt, ...) {
    int n = snprintf(call->errmsg, sizeof call->errmsg, "component '%s', endpoint '%s': ",
                     comp_label(call->comp), tsr_endpoint_name(call->ep));
    if (n < 0) n = 0;
    call->cause_at = (size_t)n < sizeof call->errmsg ? (size_t)n : 0;
    if ((size_t)n < sizeof call->errmsg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(call->errmsg + n, sizeof call->errmsg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    call->errcode = code;
    return code;
}

/* The message without its "component ..., endpoint ...: " prefix. */
const char *call_cause(const tsr_call *call) { return call->errmsg + call->cause_at; }
