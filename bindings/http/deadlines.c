/* SPDX-License-Identifier: MIT */
/* Deadlines of a server's connections: each one tracked from its opening
 * to its closing, with the time by which its request's headers (or body)
 * must have come; a sweep thread, a few times a second, shuts down the
 * socket of each one past it, and libmicrohttpd, seeing the socket end,
 * closes the connection itself (no answer: the client was not sending
 * one). libmicrohttpd reports a connection closed before it closes its fd,
 * and the sweep touches an fd only under the lock that deadlines_closed
 * takes, so it never shuts down an fd reused by a later connection. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "deadlines.h"

#define SWEEP_MS 200
#define LOG_PER_SWEEP 16 /* lines a sweep writes; past them, a count */

enum phase { WAIT_HEADERS, WAIT_BODY, ANSWERING };

struct serve_conn {
    serve_conn *prev, *next;
    int fd;
    enum phase phase;
    uint64_t due_ms; /* 0 while answering */
    int ended;       /* shut down by the sweep; libmicrohttpd closes it */
    char peer[48];
};

struct serve_deadlines {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t sweeper;
    int stopping;
    serve_conn *head;
    uint32_t header_s, body_s;
    uint64_t header_ms, body_ms, idle_ms;
    http_serve_log_fn log;
    void *log_user;
};

static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

typedef struct ended_line {
    char peer[48];
    enum phase phase;
} ended_line;

/* Shut down the connections past their deadline; what was ended goes to
 * lines (up to LOG_PER_SWEEP), the rest is counted. Under the lock. */
static size_t sweep_once(serve_deadlines *d, ended_line *lines, size_t *more) {
    uint64_t now = now_ms();
    size_t n = 0;
    *more = 0;
    for (serve_conn *c = d->head; c; c = c->next) {
        if (c->ended || !c->due_ms || now < c->due_ms) continue;
        /* A failure (ENOTCONN) means the peer is gone already, which
         * libmicrohttpd sees as well: it closes the connection either way. */
        (void)shutdown(c->fd, SHUT_RDWR);
        c->ended = 1;
        if (n < LOG_PER_SWEEP) {
            memcpy(lines[n].peer, c->peer, sizeof lines[n].peer);
            lines[n++].phase = c->phase;
        } else {
            (*more)++;
        }
    }
    return n;
}

static void log_ended(const serve_deadlines *d, const ended_line *lines, size_t n, size_t more) {
    char line[256];
    for (size_t k = 0; k < n; k++) {
        int body = lines[k].phase == WAIT_BODY;
        snprintf(line, sizeof line, "%.47s closed: its request %s did not all come within %u s",
                 lines[k].peer, body ? "body" : "headers", body ? d->body_s : d->header_s);
        d->log(d->log_user, line);
    }
    if (more) {
        snprintf(line, sizeof line, "and %zu more connections closed past their deadline", more);
        d->log(d->log_user, line);
    }
}

static void *sweep(void *arg) {
    serve_deadlines *d = arg;
    ended_line lines[LOG_PER_SWEEP];
    pthread_mutex_lock(&d->lock);
    while (!d->stopping) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_nsec += SWEEP_MS * 1000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        /* Woken early only to stop; a timeout or a spurious wake sweeps. */
        (void)pthread_cond_timedwait(&d->wake, &d->lock, &t);
        if (d->stopping) break;
        size_t more, n = sweep_once(d, lines, &more);
        if ((n || more) && d->log) { /* not under the lock: a log may be slow */
            pthread_mutex_unlock(&d->lock);
            log_ended(d, lines, n, more);
            pthread_mutex_lock(&d->lock);
        }
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static int fail(tsr_error *err, int code, const char *what, int eno) {
    snprintf(err->message, sizeof err->message, "cannot start the server's deadline sweep: %s%s%s",
             what, eno ? ": " : "", eno ? strerror(eno) : "");
    err->loc[0] = '\0';
    return err->code = code;
}

int deadlines_start(serve_deadlines **out, const http_serve_options *opts, tsr_error *err) {
    *out = NULL;
    serve_deadlines *d = calloc(1, sizeof *d);
    if (!d) return fail(err, TSR_E_NOMEM, "out of memory", 0);
    d->header_s = opts->header_timeout_s;
    d->body_s = opts->body_timeout_s;
    d->header_ms = (uint64_t)opts->header_timeout_s * 1000u;
    d->body_ms = (uint64_t)opts->body_timeout_s * 1000u;
    d->idle_ms = (uint64_t)opts->idle_timeout_s * 1000u;
    d->log = opts->log;
    d->log_user = opts->log_user;
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (rc) {
        free(d);
        return fail(err, TSR_E_NOMEM, "pthread_condattr_init", rc);
    }
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (!rc) rc = pthread_cond_init(&d->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (rc) {
        free(d);
        return fail(err, TSR_E_NOMEM, "pthread_cond_init", rc);
    }
    if ((rc = pthread_mutex_init(&d->lock, NULL)) != 0) {
        pthread_cond_destroy(&d->wake);
        free(d);
        return fail(err, TSR_E_NOMEM, "pthread_mutex_init", rc);
    }
    if ((rc = pthread_create(&d->sweeper, NULL, sweep, d)) != 0) {
        pthread_mutex_destroy(&d->lock);
        pthread_cond_destroy(&d->wake);
        free(d);
        return fail(err, TSR_E_NOMEM, "pthread_create", rc);
    }
    *out = d;
    return 0;
}

void deadlines_free(serve_deadlines *d) {
    if (!d) return;
    pthread_mutex_lock(&d->lock);
    d->stopping = 1;
    pthread_cond_signal(&d->wake);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->sweeper, NULL);
    /* Every connection was reported closed; none should be left. */
    for (serve_conn *c = d->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->wake);
    free(d);
}

serve_conn *deadlines_opened(serve_deadlines *d, int fd, const char *peer) {
    serve_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->fd = fd;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->phase = WAIT_HEADERS;
    pthread_mutex_lock(&d->lock);
    c->due_ms = now_ms() + d->header_ms;
    c->next = d->head;
    if (d->head) d->head->prev = c;
    d->head = c;
    pthread_mutex_unlock(&d->lock);
    return c;
}

void deadlines_request_line(serve_deadlines *d, serve_conn *c) {
    if (!c) return;
    pthread_mutex_lock(&d->lock);
    uint64_t due = now_ms() + d->header_ms;
    if (c->phase == WAIT_HEADERS && due < c->due_ms) c->due_ms = due;
    pthread_mutex_unlock(&d->lock);
}

void deadlines_headers_done(serve_deadlines *d, serve_conn *c) {
    if (!c) return;
    pthread_mutex_lock(&d->lock);
    c->phase = WAIT_BODY;
    c->due_ms = now_ms() + d->body_ms;
    pthread_mutex_unlock(&d->lock);
}

void deadlines_body_done(serve_deadlines *d, serve_conn *c) {
    if (!c) return;
    pthread_mutex_lock(&d->lock);
    c->phase = ANSWERING;
    c->due_ms = 0;
    pthread_mutex_unlock(&d->lock);
}

void deadlines_answered(serve_deadlines *d, serve_conn *c) {
    if (!c) return;
    pthread_mutex_lock(&d->lock);
    c->phase = WAIT_HEADERS;
    c->due_ms = now_ms() + d->idle_ms + d->header_ms;
    pthread_mutex_unlock(&d->lock);
}

void deadlines_closed(serve_deadlines *d, serve_conn *c) {
    if (!c) return;
    pthread_mutex_lock(&d->lock);
    if (c->prev) c->prev->next = c->next;
    else d->head = c->next;
    if (c->next) c->next->prev = c->prev;
    pthread_mutex_unlock(&d->lock);
    free(c);
}
