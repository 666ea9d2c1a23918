/* SPDX-License-Identifier: MIT */
/* The HTTP side, on libmicrohttpd: a small, well-kept embeddable HTTP/1.1
 * server in Debian, with keep-alive, a thread pool, connection and memory
 * limits and timeouts of its own, so that none of that is written here.
 * A request's headers and body are gathered (the body up to
 * max_body_bytes; past it the rest is read and dropped, then answered
 * 413), handed to serve_handle, and its answer queued; one access-log line
 * per request. Each connection's steps go to deadlines.c, which ends those
 * whose headers or body trickle in past their deadline; libmicrohttpd
 * itself refuses connections past max_connections_per_address from one
 * address (closed as soon as accepted), so that one client cannot take
 * every slot. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "deadlines.h"
#include "linger.h"
#include "umbridge.h"
#include "serve_internal.h"

struct http_server {
    serve_config cfg;
    struct MHD_Daemon *daemon;
    serve_deadlines *deadlines;
    serve_linger linger;
    uint16_t port;
};

/* What one request gathers across the access handler's calls. */
typedef struct pending {
    char *body;
    size_t len, cap;
    int too_large;
    struct timespec started;
} pending;

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Keep the next part of the body, or count it as too much. */
static void gather(pending *p, const char *data, size_t size, uint64_t max) {
    if (p->too_large || p->len + size > max) {
        p->too_large = 1;
        return;
    }
    if (p->len + size + 1 > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->len + size + 1) cap *= 2;
        char *grown = realloc(p->body, cap);
        if (!grown) {
            p->too_large = 1; /* answered 413: no memory for it either way */
            return;
        }
        p->body = grown;
        p->cap = cap;
    }
    memcpy(p->body + p->len, data, size);
    p->len += size;
    p->body[p->len] = '\0';
}

/* The client's address, printable ("-" when unknown). */
static void peer_of(struct MHD_Connection *conn, char *peer, size_t n) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(peer, n, "-");
    if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET) {
        const unsigned char *a = (const unsigned char *)&((const struct sockaddr_in *)
                                                              ci->client_addr)->sin_addr;
        snprintf(peer, n, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
    }
}

/* The connection's entry in deadlines.c (NULL: untracked). */
static serve_conn *tracked(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void access_log(const struct http_server *s, struct MHD_Connection *conn, const char *method,
                       const char *url, int status, const pending *p, size_t out_len) {
    if (!s->cfg.opts.log) return;
    char peer[64];
    peer_of(conn, peer, sizeof peer);
    char line[1024];
    snprintf(line, sizeof line, "%s %s %.200s %d in=%zu out=%zu ms=%.3f", peer, method, url,
             status, p->len, out_len, seconds_since(&p->started) * 1e3);
    s->cfg.opts.log(s->cfg.opts.log_user, line);
}

static void free_json_text(void *body) { tsr_json_free(body); }

/* The body goes to libmicrohttpd as it is (no copy: an answer of a 1e6
 * array is megabytes), with the function that frees it; rs no longer
 * owns it. */
static enum MHD_Result answer(struct MHD_Connection *conn, serve_response *rs) {
    static char empty[1];
    char *body = rs->body ? rs->body : empty;
    void (*release)(void *) = !rs->body ? NULL : rs->free_body ? free_json_text : free;
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback(rs->len, body, release);
    if (!r) return MHD_NO; /* rs still owns the body */
    rs->body = NULL;
    if (rs->content_type) MHD_add_response_header(r, "Content-Type", rs->content_type);
    if (rs->allow) MHD_add_response_header(r, "Allow", rs->allow);
    if (rs->bearer_challenge) MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned)rs->status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **state) {
    (void)version;
    struct http_server *s = cls;
    pending *p = *state;
    if (!p) { /* the headers have come: start gathering */
        if (!(p = calloc(1, sizeof *p))) return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &p->started);
        *state = p;
        deadlines_headers_done(s->deadlines, tracked(conn));
        /* A body of announced length is gathered in one buffer, not grown. */
        const char *length =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        unsigned long long announced = length ? strtoull(length, NULL, 10) : 0;
        if (announced > s->cfg.opts.max_body_bytes) {
            p->too_large = 1;
        } else if (announced && (p->body = malloc(announced + 1))) {
            p->cap = announced + 1;
        }
        return MHD_YES;
    }
    if (*upload_size) {
        gather(p, upload_data, *upload_size, s->cfg.opts.max_body_bytes);
        *upload_size = 0;
        return MHD_YES;
    }
    deadlines_body_done(s->deadlines, tracked(conn));
    serve_request rq = {
        .method = method,
        .path = url,
        .accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept"),
        .authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization"),
        .body = p->body,
        .body_len = p->len,
        .body_too_large = p->too_large,
    };
    serve_response rs;
    serve_handle(&s->cfg, &rq, &rs);
    size_t out_len = rs.len;
    enum MHD_Result ok = answer(conn, &rs);
    access_log(s, conn, method, url, rs.status, p, out_len);
    if (rs.free_body)
        rs.free_body(rs.body);
    else
        free(rs.body);
    return ok;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode why) {
    struct http_server *s = cls;
    pending *p = *state;
    if (p) free(p->body);
    free(p);
    *state = NULL;
    deadlines_answered(s->deadlines, tracked(conn));
    if (why == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        linger_after_answer(&s->linger, ci ? ci->connect_fd : -1);
    }
}

/* A connection opens (tracked from now, its fd open until it is reported
 * closed) or closes. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode what) {
    struct http_server *s = cls;
    if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
        linger_closed(&s->linger);
        deadlines_closed(s->deadlines, *socket_context);
        *socket_context = NULL;
        return;
    }
    linger_opened(&s->linger);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return;
    char peer[64];
    peer_of(conn, peer, sizeof peer);
    *socket_context = deadlines_opened(s->deadlines, ci->connect_fd, peer);
    /* Out of memory to track it: a connection without deadlines is not
     * kept (libmicrohttpd sees the socket end and closes it). */
    if (!*socket_context) (void)shutdown(ci->connect_fd, SHUT_RDWR);
}

/* The request line came (the headers are still to come). */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *conn) {
    (void)uri;
    struct http_server *s = cls;
    deadlines_request_line(s->deadlines, tracked(conn));
    return NULL; /* the access handler's first call still sees *state NULL */
}

static char *copy_or_null(const char *s) { return s ? strdup(s) : NULL; }

void serve_config_free(serve_config *cfg) {
    free(cfg->host);
    free(cfg->token);
    free(cfg->input_dir);
    free(cfg->output_dir);
    free(cfg->umbridge_sizes);
    free(cfg->openapi);
    free(cfg->docs);
}

int serve_config_make(serve_config *cfg, tsr_component *c, const http_serve_options *o,
                      tsr_error *err) {
    memset(cfg, 0, sizeof *cfg);
    cfg->component = c;
    if (o) memcpy(&cfg->opts, o, o->struct_size < sizeof cfg->opts ? o->struct_size
                                                                    : sizeof cfg->opts);
    http_serve_options *d = &cfg->opts;
    d->struct_size = sizeof *d;
    if (!d->max_body_bytes) d->max_body_bytes = (uint64_t)1 << 30;
    if (!d->threads) d->threads = 4;
    if (!d->max_connections) d->max_connections = 256;
    if (!d->idle_timeout_s) d->idle_timeout_s = 60;
    if (!d->header_timeout_s) d->header_timeout_s = 10;
    if (!d->body_timeout_s) d->body_timeout_s = 300;
    if (!d->linger_us) d->linger_us = 200;
    else if (d->linger_us == HTTP_SERVE_NO_LINGER) d->linger_us = 0;
    if (!d->max_connections_per_address)
        d->max_connections_per_address = d->max_connections / 4 ? d->max_connections / 4 : 1;
    if (d->max_connections_per_address > d->max_connections) {
        snprintf(err->message, sizeof err->message,
                 "max_connections_per_address %u is more than max_connections %u",
                 (unsigned)d->max_connections_per_address, (unsigned)d->max_connections);
        snprintf(err->loc, sizeof err->loc, "max_connections_per_address");
        return err->code = TSR_E_ARGUMENT;
    }
    if (um_sizes_check(d->umbridge_sizes, err->message, sizeof err->message)) {
        snprintf(err->loc, sizeof err->loc, "umbridge_sizes");
        return err->code = TSR_E_ARGUMENT;
    }
    cfg->umbridge_sizes = copy_or_null(d->umbridge_sizes);
    d->umbridge_sizes = cfg->umbridge_sizes;
    cfg->host = strdup(d->host ? d->host : "127.0.0.1");
    cfg->token = copy_or_null(d->token);
    cfg->input_dir = copy_or_null(d->input_dir);
    cfg->output_dir = copy_or_null(d->output_dir);
    d->host = cfg->host;
    d->token = cfg->token;
    d->input_dir = cfg->input_dir;
    d->output_dir = cfg->output_dir;
    json_t *doc = serve_openapi_doc(c, d);
    cfg->openapi = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    int rc = http_serve_docs(c, NULL, &cfg->docs, err);
    if (rc != 0) {
        serve_config_free(cfg);
        return rc;
    }
    if (!cfg->host || !cfg->openapi || (d->token && !cfg->token) ||
        (d->input_dir && !cfg->input_dir) || (d->output_dir && !cfg->output_dir) ||
        (d->umbridge_sizes && !cfg->umbridge_sizes)) {
        serve_config_free(cfg);
        snprintf(err->message, sizeof err->message, "out of memory");
        err->loc[0] = '\0';
        return err->code = TSR_E_NOMEM;
    }
    return 0;
}

int http_serve_openapi(const tsr_component *c, const http_serve_options *opts, char **out,
                      tsr_error *err) {
    http_serve_options none = {.struct_size = sizeof none};
    json_t *doc = serve_openapi_doc(c, opts ? opts : &none);
    *out = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (*out) return 0;
    if (err) {
        err->code = TSR_E_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        err->loc[0] = '\0';
    }
    return TSR_E_NOMEM;
}

static int fail(tsr_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(tsr_error *err, int code, const char *fmt, ...) {
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
    err->loc[0] = '\0';
    return code;
}

int http_serve_start(tsr_component *c, const http_serve_options *opts, http_server **out,
                    tsr_error *err) {
    tsr_error scratch = TSR_ERROR_INIT;
    if (!err) err = &scratch;
    *out = NULL;
    if (!c) return fail(err, TSR_E_ARGUMENT, "http_serve_start: no component");
    struct http_server *s = calloc(1, sizeof *s);
    if (!s) return fail(err, TSR_E_NOMEM, "out of memory");
    int rc = serve_config_make(&s->cfg, c, opts, err);
    if (rc) {
        free(s);
        return rc;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(s->cfg.opts.port)};
    if (inet_pton(AF_INET, s->cfg.host, &addr.sin_addr) != 1) {
        serve_config_free(&s->cfg);
        free(s);
        return fail(err, TSR_E_ARGUMENT, "cannot serve on '%s': not an IPv4 address",
                    opts && opts->host ? opts->host : "");
    }
    if ((rc = deadlines_start(&s->deadlines, &s->cfg.opts, err)) != 0) {
        serve_config_free(&s->cfg);
        free(s);
        return rc;
    }
    const http_serve_options *o = &s->cfg.opts;
    linger_init(&s->linger, o->linger_us);
    /* MHD_USE_ITC: without it a stop wakes the threads by shutting the
     * listening socket, which a thread at its share of max_connections no
     * longer polls: the stop would wait until one of its connections ends. */
    s->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC, 0, NULL, NULL, on_request, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)o->threads, MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->max_connections_per_address,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->idle_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_URI_LOG_CALLBACK, on_request_line, s, MHD_OPTION_END);
    if (!s->daemon) {
        deadlines_free(s->deadlines);
        serve_config_free(&s->cfg);
        free(s);
        return fail(err, TSR_E_IO, "cannot serve on %s:%u: the address is in use or cannot be "
                    "bound", addr.sin_addr.s_addr ? (opts && opts->host ? opts->host : "")
                                                   : "0.0.0.0", (unsigned)ntohs(addr.sin_port));
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : s->cfg.opts.port;
    *out = s;
    return 0;
}

uint16_t http_serve_port(const http_server *s) { return s ? s->port : 0; }

void http_serve_stop(http_server *s) {
    if (!s) return;
    MHD_stop_daemon(s->daemon); /* reports every connection closed */
    deadlines_free(s->deadlines);
    serve_config_free(&s->cfg);
    free(s);
}
