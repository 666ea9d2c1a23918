/* SPDX-License-Identifier: MIT */
/* The remote backend (remote.h): opening a URL (its /openapi.json as the
 * schema), running a call as one HTTP request on a free lane (the
 * backend's invoke in this process; the descriptor's endpoints when a
 * worker serves the component to its host), closing.
 * Options: "workers" lanes (connections) for calls at once; "timeout_ms"
 * for each call's request (0: none); "start_timeout_ms" for connecting
 * and for the open's request; "max_payload_bytes" for an answer's size;
 * the configuration key "token_file" for a bearer token. The mode does
 * not matter (nothing is loaded in this process) except "worker", which
 * sends the calls through a worker process that opens the URL itself
 * (failures then arrive as TSR_E_PLUGIN, with the same message). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"

#define USER_AGENT "User-Agent: tessera/" TSR_VERSION_STRING

static int remote_claims(const char *path, const struct tsr_options *opts) {
    (void)opts;
    return remote_url_claims(path);
}

/* The URL for messages before it is parsed: a URL with credentials is
 * not shown. */
static const char *shown_path(const remote_backend *rb, const char *path) {
    if (rb && rb->base_shown) return rb->base_shown;
    return strchr(path, '@') ? "(a URL with credentials)" : path;
}

static int make_urls(remote_backend *rb, const char *base, char *why, size_t n) {
    char *plain = NULL;
    int rc = http_url_join(base, "", &plain, &rb->base_shown, why, n);
    free(plain);
    if (!rc) rc = http_url_join(base, "/openapi.json", &rb->openapi_url, &rb->openapi_shown, why, n);
    for (int e = 0; !rc && e < TSR_EP_COUNT; e++)
        rc = http_url_join(base, remote_endpoint_path((tsr_endpoint)e), &rb->url[e],
                           &rb->shown[e], why, n);
    return rc;
}

static int make_headers(remote_backend *rb, const struct tsr_options *o, char *why, size_t n) {
    char *auth = NULL;
    int rc = remote_token_header(o, &auth, why, n);
    if (rc) return rc;
    /* Arrays come back in base64 (decoded ~15x faster than JSON lists);
     * "Expect:" keeps libcurl from waiting for a 100-continue on large
     * bodies. auth, last, may be NULL. */
    const char *post[] = {"Content-Type: application/json", "Accept: application/json+base64",
                          "Expect:", USER_AGENT, auth, NULL};
    const char *get[] = {"Accept: application/json", USER_AGENT, auth, NULL};
    rb->post_headers = http_header_list(post);
    rb->get_headers = http_header_list(get);
    remote_token_free(auth);
    if (rb->post_headers && rb->get_headers) return 0;
    snprintf(why, n, "out of memory");
    return TSR_E_NOMEM;
}

static int remote_endpoint(tsr_ctx *ctx, const tsr_args *args);

/* A server without a Tesseract's document may be a UM-Bridge server (GET
 * /Info answers its protocol and models): then the message says how to
 * open one of its models (the UM-Bridge backend claims a URL with a
 * #model fragment or the option umbridge_model; no claim probes the
 * network). "" when it is not one. */
static void umbridge_hint(remote_backend *rb, const char *base, char *hint, size_t n) {
    hint[0] = '\0';
    char *url = NULL, *shown = NULL, why[256];
    if (http_url_join(base, "/Info", &url, &shown, why, sizeof why) != 0) return;
    http_request r = {.url = url, .headers = rb->get_headers, .timeout_ms = rb->connect_ms,
                      .connect_ms = rb->connect_ms, .max_body = 64 * 1024,
                      .max_body_name = "the size of an answer to GET /Info (a fixed limit)"};
    long status;
    http_lane *l = &rb->lanes[0].http;
    json_t *info = NULL;
    if (http_exchange(l, &r, &status, why, sizeof why) == 0 && status == 200)
        info = json_loadb(l->body.data, l->body.len, 0, NULL);
    json_t *models = json_object_get(info, "models");
    if (json_is_number(json_object_get(info, "protocolVersion")) && json_is_array(models)) {
        const char *first = json_string_value(json_array_get(models, 0));
        snprintf(hint, n,
                 "; the server answers GET /Info as a UM-Bridge server with %zu model(s): open "
                 "one as %s#%s, or with the option umbridge_model",
                 json_array_size(models), rb->base_shown ? rb->base_shown : "URL",
                 first ? first : "NAME");
    }
    json_decref(info);
    free(url);
    free(shown);
}

/* GET /openapi.json on the first lane and read it as the schema. */
static int fetch_schema(remote_backend *rb, const char *base, char *why, size_t n) {
    http_lane *l = &rb->lanes[0].http;
    http_request r = {.url = rb->openapi_url, .headers = rb->get_headers,
                      .timeout_ms = rb->connect_ms, .connect_ms = rb->connect_ms,
                      .max_body = rb->max_body};
    /* A document is parsed whole: it gets a cap of its own, below the
     * payloads' (remote_schema.h). */
    if (!r.max_body || r.max_body > REMOTE_MAX_DOC_BYTES) {
        r.max_body = REMOTE_MAX_DOC_BYTES;
        r.max_body_name = "the size a served /openapi.json may have (a fixed limit)";
    }
    long status;
    char cause[TSR_ERRMSG_MAX - 256];
    int rc = http_exchange(l, &r, &status, cause, sizeof cause);
    if (!rc && (status < 200 || status > 299)) {
        remote_status_error(status, l->body.data, l->body.len, cause, sizeof cause);
        rc = TSR_E_LOAD;
    }
    if (!rc) rc = remote_schema_read(l->body.data, l->body.len, remote_endpoint, &rb->schema,
                                     cause, sizeof cause);
    if (rc == TSR_E_LOAD) {
        char hint[512];
        umbridge_hint(rb, base, hint, sizeof hint);
        size_t used = strlen(cause);
        snprintf(cause + used, sizeof cause - used, "%s", hint);
    }
    if (rc) snprintf(why, n, "GET %s: %s", rb->openapi_shown, cause);
    return rc;
}

static int remote_open(tsr_component *c, tsr_error *err) {
    const char *path = tsr_component_path(c);
    const struct tsr_options *o = backend_options(c);
    char why[TSR_ERRMSG_MAX - 128];
    remote_backend *rb = calloc(1, sizeof *rb);
    int rc = rb ? http_global_up(why, sizeof why) : TSR_E_NOMEM;
    if (!rb) snprintf(why, sizeof why, "out of memory");
    else backend_set_state(c, rb);
    if (!rc) {
        rb->curl_up = 1;
        rb->timeout_ms = o->timeout_ms;
        rb->connect_ms = o->start_timeout_ms;
        rb->max_body = o->max_payload_bytes;
        rc = make_urls(rb, path, why, sizeof why);
    }
    if (!rc) rc = make_headers(rb, o, why, sizeof why);
    if (!rc) rc = remote_lanes_start(rb, o->workers > 0 ? o->workers : 1, why, sizeof why);
    if (!rc) rc = fetch_schema(rb, path, why, sizeof why);
    if (rc) {
        error_set(err, rc, "cannot load '%s': %s", shown_path(rb, path), why);
        return rc; /* close releases what was made */
    }
    backend_set_lanes(c, rb->n_lanes);
    backend_set_endpoint_state(c, rb);
    return backend_set_descriptor(c, &rb->schema->desc, err);
}

/* ---- calls in this process: the backend's invoke ------------------------- */

static int check_call(void *call) { return call_cancel_check(call); }

static void *call_alloc(void *call, int32_t k, int *code, char *why, size_t n) {
    return call_result_alloc(call, k, code, why, n);
}

/* A cancel wakes the wait through the call's eventfd; the host's own
 * check runs as often as it asks. */
static int remote_invoke(tsr_call *call) {
    tsr_component *c = call_component(call);
    remote_backend *rb = backend_state(c);
    const tsr_args *a = call_args(call);
    remote_sink sink = {.args = a, .alloc = call_alloc, .user = call};
    http_cancel cx = {.flag = call_cancel_flag(call), .fd = call_cancel_fd(call),
                      .check_ms = call_cancel_check_ms(call), .check = check_call, .user = call};
    char why[TSR_ERRMSG_MAX - 128];
    uint64_t sent = 0;
    int rc = remote_call(rb, &sink, call_lane(call), &cx, &sent, why, sizeof why);
    backend_count(c, BACKEND_STAT_CALLS, 1);
    backend_count(c, BACKEND_STAT_COPIED, sent); /* inputs, as the other backends count */
    return rc ? call_fail(call, rc, "POST %s: %s", rb->shown[a->endpoint], why) : 0;
}

/* ---- calls served to another process: the descriptor's endpoints ------------ */

/* How often a served call looks at tsr_ctx_cancelled while it waits. */
#define SERVED_CHECK_MS 20

static int check_ctx(void *ctx) { return tsr_ctx_cancelled(ctx); }

static void *ctx_alloc(void *ctx, int32_t k, int *code, char *why, size_t n) {
    void *p = tsr_ctx_alloc(ctx, k);
    if (!p) {
        *code = TSR_E_PLUGIN_RESULT; /* the context holds the host's own reason */
        snprintf(why, n, "the host refused the result's buffer");
    }
    return p;
}

/* A worker process serves a remote component through these (core's
 * served_invoke runs a descriptor's functions); the failure's code does
 * not cross, its message does. */
static int remote_endpoint(tsr_ctx *ctx, const tsr_args *args) {
    remote_backend *rb = ctx->state;
    remote_sink sink = {.args = args, .alloc = ctx_alloc, .user = ctx};
    http_cancel cx = {.fd = -1, .check_ms = SERVED_CHECK_MS, .check = check_ctx, .user = ctx};
    char why[TSR_ERRMSG_MAX - 128], msg[TSR_ERRMSG_MAX];
    uint64_t sent = 0;
    int rc = remote_call(rb, &sink, 0, &cx, &sent, why, sizeof why);
    if (!rc) return 0;
    snprintf(msg, sizeof msg, "POST %s: %s", rb->shown[args->endpoint], why);
    tsr_ctx_error(ctx, msg);
    return -1;
}

static void remote_close(tsr_component *c) {
    remote_backend *rb = backend_state(c);
    if (!rb) return;
    remote_lanes_stop(rb);
    http_header_list_free(rb->post_headers);
    http_header_list_free(rb->get_headers);
    free(rb->base_shown);
    free(rb->openapi_url);
    free(rb->openapi_shown);
    for (int e = 0; e < TSR_EP_COUNT; e++) {
        free(rb->url[e]);
        free(rb->shown[e]);
    }
    remote_schema_free(rb->schema);
    if (rb->curl_up) http_global_down(); /* last: the handles above are gone */
    free(rb);
}

const backend_ops remote_backend_ops = {
    .name = "remote",
    .claims = remote_claims,
    .open = remote_open,
    .invoke = remote_invoke,
    .close = remote_close,
};
