/* SPDX-License-Identifier: MIT */
/* An answer that is not a success, as the call's error: a validation
 * error (422 with {"detail": [{type, loc, msg, input}]}) becomes the
 * closest Tessera code with each detail's place and message; a server
 * error (5xx) TSR_E_PLUGIN with its status and the start of its body. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "remote.h"

/* How much of a body a message shows. */
#define EXCERPT_MAX 300
/* How many of a 422's details a message lists. */
#define DETAILS_MAX 4

void remote_excerpt(const char *text, size_t len, char *out, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < len && i < EXCERPT_MAX && k + 4 < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        out[k++] = ch == '\n' || ch == '\r' || ch == '\t' ? ' ' : ch < 0x20 ? '?' : (char)ch;
    }
    out[k] = '\0';
    if (len > k) snprintf(out + k, n - k, "...");
}

/* loc without its leading "body": ["body", "inputs", "a", 0] -> inputs.a[0]. */
static void loc_text(json_t *loc, char *out, size_t n) {
    size_t used = 0;
    json_t *part;
    size_t i;
    out[0] = '\0';
    json_array_foreach(loc, i, part) {
        int w = 0;
        if (json_is_integer(part))
            w = snprintf(out + used, n - used, "[%lld]", (long long)json_integer_value(part));
        else if (json_is_string(part) && !(i == 0 && strcmp(json_string_value(part), "body") == 0))
            w = snprintf(out + used, n - used, "%s%s", used ? "." : "", json_string_value(part));
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
}

static int has_part(json_t *loc, const char *name) {
    json_t *part;
    size_t i;
    json_array_foreach(loc, i, part)
        if (json_is_string(part) && strcmp(json_string_value(part), name) == 0) return 1;
    return 0;
}

/* The Tessera code closest to a pydantic error. */
static int detail_code(json_t *item) {
    json_t *type = json_object_get(item, "type"), *loc = json_object_get(item, "loc");
    const char *t = json_is_string(type) ? json_string_value(type) : "";
    if (strcmp(t, "missing") == 0) return TSR_E_MISSING;
    if (strcmp(t, "extra_forbidden") == 0) return TSR_E_UNKNOWN_FIELD;
    if (has_part(loc, "dtype")) return TSR_E_DTYPE;
    if (has_part(loc, "shape")) return TSR_E_SHAPE;
    return TSR_E_PAYLOAD;
}

/* "HTTP 422: inputs.a: msg; inputs.b: msg"; 0 when the body has no list
 * of details. */
static int validation_error(const char *body, size_t len, char *why, size_t n) {
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *detail = json_object_get(root, "detail");
    int code = 0;
    if (json_is_string(detail)) {
        code = TSR_E_PAYLOAD;
        snprintf(why, n, "HTTP 422: %s", json_string_value(detail));
    } else if (json_is_array(detail) && json_array_size(detail) > 0) {
        code = detail_code(json_array_get(detail, 0));
        size_t used = (size_t)snprintf(why, n, "HTTP 422:");
        json_t *item;
        size_t i;
        json_array_foreach(detail, i, item) {
            char where[256];
            json_t *msg = json_object_get(item, "msg");
            loc_text(json_object_get(item, "loc"), where, sizeof where);
            int w = i == DETAILS_MAX
                        ? snprintf(why + used, n - used, " (and %zu more)", json_array_size(detail) - i)
                        : snprintf(why + used, n - used, "%s %s: %s", i ? ";" : "",
                                   where[0] ? where : "the request",
                                   json_is_string(msg) ? json_string_value(msg) : "invalid");
            if (w < 0 || (size_t)w >= n - used || i == DETAILS_MAX) break;
            used += (size_t)w;
        }
    }
    json_decref(root);
    return code;
}

int remote_status_error(long status, const char *body, size_t len, char *why, size_t n) {
    if (status == 422) {
        int code = validation_error(body, len, why, n);
        if (code) return code;
    }
    char start[EXCERPT_MAX + 8];
    remote_excerpt(body, len, start, sizeof start);
    const char *hint = "";
    int code = TSR_E_PAYLOAD;
    if (status >= 500) code = TSR_E_PLUGIN;
    else if (status == 401 || status == 403) {
        code = TSR_E_PLUGIN;
        hint = " (a server that wants a bearer token: give its file with the configuration "
               "key token_file)";
    } else if (status == 404 || status == 405 || status == 406) code = TSR_E_UNSUPPORTED;
    else if (status == 413) code = TSR_E_LIMIT;
    else if (status < 400) code = TSR_E_PLUGIN_RESULT; /* redirects are not followed */
    snprintf(why, n, "HTTP %ld%s: %s", status, hint, start[0] ? start : "(no body)");
    return code;
}
