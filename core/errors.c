/* SPDX-License-Identifier: MIT */
/* Error messages: every one names the component, and for calls the
 * endpoint, before the cause. A call's failure also says where in the
 * request it lies (its loc), for machine-readable errors. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

void error_set(tsr_error *err, int code, const char *fmt, ...) {
    if (!err) return;
    err->code = code;
    err->loc[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

/* "component 'name'" once the descriptor is known, else its path. */
const char *comp_label(const tsr_component *c) {
    return (c->desc && c->desc->name) ? c->desc->name : c->path;
}

__attribute__((format(printf, 3, 0)))
static int call_vfail(tsr_call *call, int code, const char *fmt, va_list ap) {
    int n = snprintf(call->errmsg, sizeof call->errmsg, "component '%s', endpoint '%s': ",
                     comp_label(call->comp), tsr_endpoint_name(call->ep));
    if (n < 0) n = 0;
    call->cause_at = (size_t)n < sizeof call->errmsg ? (size_t)n : 0;
    if ((size_t)n < sizeof call->errmsg)
        vsnprintf(call->errmsg + n, sizeof call->errmsg - (size_t)n, fmt, ap);
    call->errcode = code;
    call->errtype[0] = '\0';
    return code;
}

int call_fail(tsr_call *call, int code, const char *fmt, ...) {
    call->errloc[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    call_vfail(call, code, fmt, ap);
    va_end(ap);
    return code;
}

void call_set_loc(tsr_call *call, const char *section, const char *name) {
    if (name)
        snprintf(call->errloc, sizeof call->errloc, "%s.%s", section, name);
    else
        snprintf(call->errloc, sizeof call->errloc, "%s", section);
}

int call_fail_at(tsr_call *call, int code, const char *section, const char *name,
                 const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    call_vfail(call, code, fmt, ap);
    va_end(ap);
    call_set_loc(call, section, name);
    return code;
}

/* The message without its "component ..., endpoint ...: " prefix. */
const char *call_cause(const tsr_call *call) { return call->errmsg + call->cause_at; }

/* "" after a success, also one (a batch's) that cleared only the code. */
TSR_API const char *tsr_call_errloc(const tsr_call *call) {
    return call && call->errcode ? call->errloc : "";
}

/* The endpoint's own type of an invalid input, else the code's. */
TSR_API const char *tsr_call_errtype(const tsr_call *call) {
    if (!call || !call->errcode) return "";
    return call->errtype[0] ? call->errtype : tsr_error_type(call->errcode);
}
