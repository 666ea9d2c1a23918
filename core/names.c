/* SPDX-License-Identifier: MIT */
/* Names of endpoints and error codes; how messages name an input or a
 * seed. (Dtypes are named in codecs/dtype.c.) */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const endpoint_names[TSR_EP_COUNT] = {
    [TSR_EP_APPLY] = "apply",       [TSR_EP_JVP] = "jvp",
    [TSR_EP_VJP] = "vjp",           [TSR_EP_JACOBIAN] = "jacobian",
    [TSR_EP_ABSTRACT_EVAL] = "abstract_eval", [TSR_EP_HVP] = "hvp",
};

TSR_API const char *tsr_endpoint_name(tsr_endpoint ep) {
    if ((int)ep < 0 || (int)ep >= TSR_EP_COUNT) return "unknown endpoint";
    return endpoint_names[ep];
}

TSR_API int tsr_endpoint_from_name(const char *name) {
    if (!name) return -1;
    if (strcmp(name, "abstract-eval") == 0) return TSR_EP_ABSTRACT_EVAL;
    for (int e = 0; e < TSR_EP_COUNT; e++)
        if (strcmp(endpoint_names[e], name) == 0) return e;
    return -1;
}

TSR_API const char *tsr_strerror(int code) {
    switch ((tsr_status)code) {
    case TSR_OK: return "success";
    case TSR_E_ARGUMENT: return "invalid argument";
    case TSR_E_NOMEM: return "out of memory";
    case TSR_E_LOAD: return "cannot load plugin";
    case TSR_E_ABI: return "incompatible plugin ABI";
    case TSR_E_DESCRIPTOR: return "malformed plugin descriptor";
    case TSR_E_UNSUPPORTED: return "not supported";
    case TSR_E_UNKNOWN_FIELD: return "unknown field";
    case TSR_E_MISSING: return "missing argument";
    case TSR_E_DTYPE: return "dtype mismatch";
    case TSR_E_SHAPE: return "shape mismatch";
    case TSR_E_NOT_DIFFERENTIABLE: return "field is not differentiable";
    case TSR_E_PLUGIN: return "plugin reported an error";
    case TSR_E_PLUGIN_RESULT: return "plugin returned an invalid result";
    case TSR_E_INIT: return "plugin init failed";
    case TSR_E_PAYLOAD: return "malformed payload";
    case TSR_E_IO: return "input/output error";
    case TSR_E_WORKER: return "worker process failed";
    case TSR_E_TIMEOUT: return "call timed out";
    case TSR_E_SHM: return "shared memory unavailable or full";
    case TSR_E_LIMIT: return "limit exceeded";
    case TSR_E_CANCELLED: return "call cancelled";
    case TSR_E_VALUE: return "value not allowed";
    }
    return "unknown error code";
}

const char *array_label(const char *what, const char *name, char *buf, size_t n) {
    if (strcmp(what, "input") == 0) snprintf(buf, n, "input '%s'", name);
    else snprintf(buf, n, "%s['%s']", what, name);
    return buf;
}

const char *array_section(const char *what) {
    return strcmp(what, "input") == 0 ? "inputs" : what;
}
