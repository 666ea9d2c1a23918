/* SPDX-License-Identifier: MIT */
/* One exchange with a UM-Bridge server (umbridge.h): the request's JSON,
 * the answer read as a JSON object within the component's limits, and an
 * answer that is not a success as an error in UM-Bridge's terms
 * ({"error": {"type": ..., "message": ...}}). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umbridge.h"

static const char *const route_names[UMB_ROUTES] = {
    "Info", "ModelInfo", "InputSizes", "OutputSizes",
    "Evaluate", "Gradient", "ApplyJacobian", "ApplyHessian",
};

const char *umb_route_name(umb_route r) { return route_names[r]; }

/* At most this much of a body in a message. */
#define EXCERPT_MAX 200

static void excerpt(const char *text, size_t len, char *out, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < len && i < EXCERPT_MAX && k + 4 < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        out[k++] = ch < 0x20 ? ' ' : (char)ch;
    }
    out[k] = '\0';
    if (len > k) snprintf(out + k, n - k, "...");
}

/* The Tessera code of a UM-Bridge error type. */
static int error_code(const char *type, long status) {
    if (strcmp(type, "UnsupportedFeature") == 0) return TSR_E_UNSUPPORTED;
    if (strcmp(type, "ModelNotFound") == 0) return TSR_E_LOAD;
    if (strcmp(type, "InvalidInput") == 0) return TSR_E_PAYLOAD;
    if (strcmp(type, "InvalidOutput") == 0) return TSR_E_PLUGIN_RESULT;
    return status >= 500 ? TSR_E_PLUGIN : TSR_E_PAYLOAD;
}

static int status_error(long status, const char *body, size_t len, char *why, size_t n) {
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *e = json_object_get(root, "error");
    json_t *type = json_object_get(e, "type"), *msg = json_object_get(e, "message");
    int code;
    if (json_is_string(type)) {
        code = error_code(json_string_value(type), status);
        snprintf(why, n, "HTTP %ld: %s: %s", status, json_string_value(type),
                 json_is_string(msg) ? json_string_value(msg) : "(no message)");
    } else {
        char text[EXCERPT_MAX + 8];
        excerpt(body, len, text, sizeof text);
        code = status >= 500 ? TSR_E_PLUGIN : status == 404 ? TSR_E_UNSUPPORTED : TSR_E_PAYLOAD;
        snprintf(why, n, "HTTP %ld, not a UM-Bridge error: %s", status, len ? text : "(empty body)");
    }
    json_decref(root);
    return code;
}

int umb_exchange(umb_model *m, umb_route r, json_t *body, const http_cancel *cx, long timeout_ms,
                 json_t **answer, char *why, size_t n) {
    *answer = NULL;
    char cause[TSR_ERRMSG_MAX - 256];
    char *text = NULL;
    int rc = 0;
    if (body) {
        /* Every POST names the model and carries the config. */
        if (json_object_set_new(body, "name", json_string(m->name)) != 0 ||
            json_object_set(body, "config", m->config) != 0 ||
            !(text = json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(17)))) {
            snprintf(cause, sizeof cause, "out of memory for the request");
            rc = TSR_E_NOMEM;
        }
    }
    long status = 0;
    if (!rc) {
        http_request q = {.url = m->url[r], .headers = m->headers, .body = text,
                          .len = text ? strlen(text) : 0, .timeout_ms = timeout_ms,
                          .connect_ms = m->connect_ms, .max_body = m->max_body, .cancel = cx};
        pthread_mutex_lock(&m->lock);
        rc = http_exchange(&m->lane, &q, &status, cause, sizeof cause);
        if (!rc && (status < 200 || status > 299))
            rc = status_error(status, m->lane.body.data, m->lane.body.len, cause, sizeof cause);
        else if (!rc) {
            json_error_t je;
            /* jansson refuses NaN, Infinity and numbers out of double's range. */
            *answer = json_loadb(m->lane.body.data, m->lane.body.len, JSON_REJECT_DUPLICATES, &je);
            if (!json_is_object(*answer)) {
                char text_start[EXCERPT_MAX + 8];
                excerpt(m->lane.body.data, m->lane.body.len, text_start, sizeof text_start);
                if (*answer)
                    snprintf(cause, sizeof cause, "the answer is not a JSON object: %s", text_start);
                else
                    snprintf(cause, sizeof cause, "the answer is not JSON (%s at line %d column %d)",
                             je.text, je.line, je.column);
                json_decref(*answer);
                *answer = NULL;
                rc = TSR_E_PLUGIN_RESULT;
            }
        }
        pthread_mutex_unlock(&m->lock);
    }
    free(text);
    if (rc) snprintf(why, n, "%s %s: %s", body ? "POST" : "GET", m->shown[r], cause);
    return rc;
}
