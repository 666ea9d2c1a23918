/* SPDX-License-Identifier: MIT */
/* One call to the server, the same whoever runs it (the backend's invoke
 * in this process, or an endpoint served to another process): the
 * request body, a free lane, the exchange, and the answer or its error. */
#include <stdio.h>
#include <stdlib.h>

#include "remote.h"

int remote_call(remote_backend *rb, const remote_sink *sink, int32_t lane, const http_cancel *cx,
                uint64_t *sent, char *why, size_t n) {
    const tsr_args *a = sink->args;
    char *body = NULL;
    size_t len = 0;
    int rc = remote_request_body(rb->schema, a, &body, &len, sent, why, n);
    remote_lane *l = rc ? NULL : remote_lane_take(rb, lane, cx);
    if (!rc && !l) {
        snprintf(why, n, "cancelled while waiting for a free connection");
        rc = TSR_E_CANCELLED;
    }
    if (rc) {
        free(body);
        return rc;
    }
    http_request r = {.url = rb->url[a->endpoint], .headers = rb->post_headers, .body = body,
                      .len = len, .timeout_ms = rb->timeout_ms, .connect_ms = rb->connect_ms,
                      .max_body = rb->max_body, .cancel = cx};
    long status;
    rc = http_exchange(&l->http, &r, &status, why, n);
    free(body);
    if (!rc && (status < 200 || status > 299))
        rc = remote_status_error(status, l->http.body.data, l->http.body.len, why, n);
    else if (!rc)
        rc = remote_response_read(rb->schema, sink, l->http.body.data, l->http.body.len, why, n);
    remote_lane_give(rb, l);
    return rc;
}
