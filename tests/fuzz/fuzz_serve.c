/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the HTTP request handler of `tessera serve` (serve_handle),
 * as the server calls it once libmicrohttpd has parsed a request, on the
 * contract test plugin: any method, path, Accept and Authorization header
 * and body. Every answer must have a known status, a JSON body and, for a
 * refused request, nothing computed.
 *
 * Input: one selector byte, then four lines (method, path, Accept,
 * Authorization; "-" for an absent header) and the body. UM-Bridge's
 * routes (a path with a capital letter after the slash) answer refusals
 * with 400 and UM-Bridge's error shape, {"error": {"type", "message"}}.
 *   selector & 1      the server requires the bearer token "t0k"
 *   selector & 2      the body counts as over max_body_bytes
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindings/http/serve_internal.h"
#include "fuzz_component.h"
#include "fuzz_target.h"

static const serve_config *config(int with_token) {
    static serve_config cfg[2];
    static int made[2];
    if (!made[with_token]) {
        http_serve_options o = {.struct_size = sizeof o, .token = with_token ? "t0k" : NULL,
                               .max_body_bytes = 1 << 20};
        tsr_error err = TSR_ERROR_INIT;
        tsr_component *c = fuzz_component("fuzz_serve");
        if (serve_config_make(&cfg[with_token], c, &o, &err) != 0) abort();
        made[with_token] = 1;
    }
    return &cfg[with_token];
}

/* The next line of [*at, end) as a NUL-terminated copy in buf; NULL for "-". */
static const char *line(const char **at, const char *end, char *buf, size_t n) {
    const char *nl = memchr(*at, '\n', (size_t)(end - *at));
    size_t len = (size_t)((nl ? nl : end) - *at);
    if (len >= n) len = n - 1;
    memcpy(buf, *at, len);
    buf[len] = '\0';
    *at = nl ? nl + 1 : end;
    return strcmp(buf, "-") == 0 ? NULL : buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *at = (const char *)data + 1, *end = (const char *)data + size;
    char method[32], path[256], accept[256], auth[256];
    serve_request rq = {.method = line(&at, end, method, sizeof method),
                        .path = line(&at, end, path, sizeof path)};
    rq.accept = line(&at, end, accept, sizeof accept);
    rq.authorization = line(&at, end, auth, sizeof auth);
    rq.body = at;
    rq.body_len = (size_t)(end - at);
    rq.body_too_large = (data[0] & 2) != 0;
    if (!rq.method) rq.method = "";
    if (!rq.path) rq.path = "/";
    serve_response rs;
    serve_handle(config(data[0] & 1), &rq, &rs);
    static const int known[] = {200, 400, 401, 404, 405, 406, 413, 422, 500, 503};
    int ok = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok |= rs.status == known[i];
    int umbridge = rq.path[0] == '/' && rq.path[1] >= 'A' && rq.path[1] <= 'Z';
    if (!ok || (rs.status != 500 && !rs.body)) __builtin_trap();
    if (rs.status == 400 && !umbridge) __builtin_trap();
    if (rs.body) {
        json_error_t jerr;
        json_t *v = json_loadb(rs.body, rs.len, 0, &jerr);
        if (!v) __builtin_trap();
        if (rs.status == 422 && !json_is_array(json_object_get(v, "detail"))) __builtin_trap();
        if (umbridge && rs.status == 400) {
            json_t *e = json_object_get(v, "error");
            if (!json_is_string(json_object_get(e, "type")) ||
                !json_is_string(json_object_get(e, "message")))
                __builtin_trap();
        }
        json_decref(v);
    }
    if ((data[0] & 1) && rs.status == 200 && strcmp(rq.path, "/health") != 0 &&
        (!rq.authorization || !strstr(rq.authorization, "t0k")))
        __builtin_trap(); /* answered without the token */
    if (rs.free_body)
        rs.free_body(rs.body);
    else
        free(rs.body);
    return 0;
}
