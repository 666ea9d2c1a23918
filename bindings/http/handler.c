/* SPDX-License-Identifier: MIT */
/* One request, answered: the route (the API's endpoints, /health,
 * /openapi.json and /docs), the bearer token, the size limit, the
 * output format the Accept header asks for, then the endpoint. A pure
 * function of the request (no sockets), so that it can be fuzzed. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "endpoint_call.h"
#include "serve_internal.h"
#include "umbridge.h"

/* Constant time in the token's length: no early exit on the first
 * mismatch, so a timing does not tell how much of a guess was right. */
static int token_matches(const char *given, const char *token) {
    size_t n = strlen(token), m = strlen(given);
    unsigned char diff = (unsigned char)(n != m);
    for (size_t i = 0; i < n; i++) diff |= (unsigned char)(token[i] ^ (i < m ? given[i] : 0));
    return diff == 0;
}

static int authorised(const serve_config *cfg, const char *header) {
    if (!cfg->token) return 1;
    if (!header || strncasecmp(header, "Bearer ", 7) != 0) return 0;
    const char *given = header + 7;
    while (*given == ' ') given++;
    return token_matches(given, cfg->token);
}

/* One media range of an Accept header ("application/json+base64;q=0.9"):
 * the encoding it names (-1: none this server writes; -2: any), its q. */
static int media_encoding(const serve_config *cfg, const char *range, size_t len, double *q) {
    const char *semi = memchr(range, ';', len);
    size_t type_len = semi ? (size_t)(semi - range) : len;
    while (type_len && range[type_len - 1] == ' ') type_len--;
    *q = 1.0;
    for (const char *p = semi; p && p < range + len; p = memchr(p + 1, ';', (size_t)(range + len - p - 1))) {
        const char *v = p + 1;
        while (*v == ' ') v++;
        if (strncmp(v, "q=", 2) == 0) *q = strtod(v + 2, NULL);
    }
    static const struct {
        const char *type;
        int enc;
    } types[] = {{"application/json", TSR_ENCODING_JSON},
                 {"application/json+base64", TSR_ENCODING_BASE64},
                 {"application/json+binref", TSR_ENCODING_BINREF},
                 {"*/*", -2},
                 {"application/*", -2}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i].type) == type_len && strncasecmp(range, types[i].type, type_len) == 0) {
            if (types[i].enc == TSR_ENCODING_BINREF && !cfg->output_dir) return -1;
            return types[i].enc;
        }
    return -1;
}

/* The encoding for an Accept header: the acceptable one of highest q (the
 * first of equal q); the server's default for none or * / *. -1 when the
 * header accepts nothing this server writes. */
static int negotiate(const serve_config *cfg, const char *accept) {
    if (!accept || !*accept) return (int)cfg->opts.default_encoding;
    int best = -1;
    double best_q = 0;
    for (const char *p = accept; *p;) {
        size_t len = strcspn(p, ",");
        while (*p == ' ' && len) p++, len--;
        double q;
        int enc = media_encoding(cfg, p, len, &q);
        if (enc == -2) enc = (int)cfg->opts.default_encoding;
        if (enc >= 0 && q > best_q) {
            best = enc;
            best_q = q;
        }
        p += len + (p[len] == ',');
    }
    return best;
}

static const tsr_endpoint routes[] = {TSR_EP_APPLY, TSR_EP_JACOBIAN, TSR_EP_JVP, TSR_EP_VJP,
                                      TSR_EP_HVP, TSR_EP_ABSTRACT_EVAL};

/* The endpoint a path names, or -1. */
static int route_of(const char *path) {
    if (*path != '/') return -1;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strcmp(path + 1, serve_endpoint_route(routes[i])) == 0) return (int)routes[i];
    return -1;
}

/* A body made once at start (JSON unless the caller says otherwise). */
static void static_text(serve_response *rs, const char *text) {
    rs->status = 200;
    rs->content_type = "application/json";
    rs->body = strdup(text);
    rs->len = rs->body ? strlen(rs->body) : 0;
    if (!rs->body) rs->status = 500;
}

void serve_handle(const serve_config *cfg, const serve_request *rq, serve_response *rs) {
    memset(rs, 0, sizeof *rs);
    /* /health says nothing but "up": load balancers ask it without a token. */
    int health = strcmp(rq->path, "/health") == 0;
    if (!health && !authorised(cfg, rq->authorization)) {
        rs->bearer_challenge = 1;
        serve_detail(rs, 401, "a bearer token is required (Authorization: Bearer ...)");
        return;
    }
    /* UM-Bridge's routes, capitalised, beside Tesseract's (umbridge_route.c). */
    if (umbridge_handle(cfg, rq, rs)) return;
    int is_get = strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0;
    int is_post = strcmp(rq->method, "POST") == 0;
    /* /docs: the page `tessera docs` writes, as Tesseract serves its own
     * docs there; behind the token like the API it describes. */
    int docs = strcmp(rq->path, "/docs") == 0;
    if (health || docs || strcmp(rq->path, "/openapi.json") == 0) {
        if (!is_get) {
            rs->allow = "GET, HEAD";
            serve_detail(rs, 405, "Method Not Allowed");
            return;
        }
        static_text(rs, health ? "{\"status\":\"ok\"}" : docs ? cfg->docs : cfg->openapi);
        if (docs) rs->content_type = "text/html; charset=utf-8";
        return;
    }
    int ep = route_of(rq->path);
    if (ep < 0 || !tsr_component_has_endpoint(cfg->component, (tsr_endpoint)ep)) {
        serve_detail(rs, 404, "Not Found");
        return;
    }
    if (!is_post) {
        rs->allow = "POST";
        serve_detail(rs, 405, "Method Not Allowed");
        return;
    }
    if (rq->body_too_large) {
        serve_detail(rs, 413, "the request body is larger than max_body_bytes (%llu bytes)",
                     (unsigned long long)cfg->opts.max_body_bytes);
        return;
    }
    int enc = negotiate(cfg, rq->accept);
    if (enc < 0) {
        serve_detail(rs, 406,
                     "cannot answer in the format Accept asks for; accepted: application/json, "
                     "application/json+base64%s",
                     cfg->output_dir ? ", application/json+binref" : "");
        return;
    }
    endpoint_call(cfg, (tsr_endpoint)ep, (tsr_encoding)enc, rq->body, rq->body_len, rs);
}
