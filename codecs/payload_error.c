/* SPDX-License-Identifier: MIT */
#include "payload_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The loc of a message's path: the field, not the element within its
 * array ("inputs.x[3]" is "inputs.x"), and an item of a top-level list as
 * a dotted index ("jvp_inputs[1]" is "jvp_inputs.1"). */
static void loc_of_path(const char *path, char *loc, size_t size) {
    size_t n = path != NULL ? strcspn(path, "[") : 0;
    if (n >= size) n = size - 1;
    memcpy(loc, path != NULL ? path : "", n);
    loc[n] = '\0';
    if (path == NULL || path[n] != '[' || memchr(path, '.', n) != NULL) return;
    size_t digits = strspn(path + n + 1, "0123456789");
    if (digits > 0 && path[n + 1 + digits] == ']' && n + 1 + digits < size) {
        loc[n] = '.';
        memcpy(loc + n + 1, path + n + 1, digits);
        loc[n + 1 + digits] = '\0';
    }
}

int payload_fail(const payload_ctx *ctx, int code, const char *path, const char *fmt, ...) {
    if (ctx->err == NULL) return code;
    loc_of_path(path, ctx->err->loc, sizeof ctx->err->loc);
    char cause[TSR_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);

    char where[TSR_ERRMSG_MAX / 2] = "";
    size_t used = 0;
    if (ctx->component != NULL)
        used += (size_t)snprintf(where + used, sizeof where - used, "component '%s'", ctx->component);
    if (ctx->endpoint != NULL && used < sizeof where)
        used += (size_t)snprintf(where + used, sizeof where - used, "%sendpoint '%s'",
                                 used ? ", " : "", ctx->endpoint);
    if (path != NULL && path[0] != '\0' && used < sizeof where)
        snprintf(where + used, sizeof where - used, "%sfield '%s'", used ? ", " : "", path);

    ctx->err->code = code;
    char *msg = ctx->err->message;
    size_t cap = sizeof ctx->err->message, len = 0;
    if (where[0] != '\0') {
        len = strlen(where);
        memcpy(msg, where, len);
        memcpy(msg + len, ": ", 2);
        len += 2;
    }
    /* A long cause is cut at the end of the message. */
    size_t n = strlen(cause);
    if (n > cap - 1 - len) n = cap - 1 - len;
    memcpy(msg + len, cause, n);
    msg[len + n] = '\0';
    return code;
}

void payload_ok(const payload_ctx *ctx) {
    if (ctx->err == NULL) return;
    ctx->err->code = TSR_OK;
    ctx->err->message[0] = '\0';
    ctx->err->loc[0] = '\0';
}

/* Copy src into dst, ending in "..." when it had to be cut. */
static void fit(char dst[PAYLOAD_PATH_MAX], const char *src, int needed) {
    if (needed < PAYLOAD_PATH_MAX) {
        memcpy(dst, src, (size_t)needed + 1);
        return;
    }
    memcpy(dst, src, PAYLOAD_PATH_MAX - 4);
    memcpy(dst + PAYLOAD_PATH_MAX - 4, "...", 4);
}

void path_join(char dst[PAYLOAD_PATH_MAX], const char *parent, const char *child) {
    char tmp[2 * PAYLOAD_PATH_MAX];
    int n = parent[0] ? snprintf(tmp, sizeof tmp, "%s.%s", parent, child)
                      : snprintf(tmp, sizeof tmp, "%s", child);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof tmp) n = (int)sizeof tmp - 1;
    fit(dst, tmp, n);
}

void path_index(char dst[PAYLOAD_PATH_MAX], const char *parent, size_t index) {
    char tmp[2 * PAYLOAD_PATH_MAX];
    int n = snprintf(tmp, sizeof tmp, "%s[%zu]", parent, index);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof tmp) n = (int)sizeof tmp - 1;
    fit(dst, tmp, n);
}
