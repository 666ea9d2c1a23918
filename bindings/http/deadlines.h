/* SPDX-License-Identifier: MIT */
/* Deadlines of the connections of a server (deadlines.c): a request's
 * headers, then its body, must all come within a time of their own, however
 * slowly they trickle in (libmicrohttpd's own timeout only ends a
 * connection that is silent). server.c reports each step of a connection;
 * a sweep ends those past their deadline. */
#ifndef TESSERA_SERVE_DEADLINES_H
#define TESSERA_SERVE_DEADLINES_H

#include <stdint.h>

#include "tessera_serve.h"

typedef struct serve_deadlines serve_deadlines;
typedef struct serve_conn serve_conn;

/* Start the sweep; 0, or a TSR_E_* code with the cause in err. */
int deadlines_start(serve_deadlines **out, const http_serve_options *opts, tsr_error *err);
/* Stop the sweep and release everything; only once every connection has
 * been reported closed (after MHD_stop_daemon). */
void deadlines_free(serve_deadlines *d);

/* A connection accepted on fd from peer (printable); its headers are due
 * within header_timeout_s. NULL when out of memory (the caller ends it). */
serve_conn *deadlines_opened(serve_deadlines *d, int fd, const char *peer);
/* Its request line came: the headers are due within header_timeout_s of
 * it (or sooner, as they were). */
void deadlines_request_line(serve_deadlines *d, serve_conn *c);
/* Its headers came: the body is due within body_timeout_s. */
void deadlines_headers_done(serve_deadlines *d, serve_conn *c);
/* Its whole request came: no deadline while it is answered (the component
 * may take its time; a client that does not read is left to the idle
 * timeout). */
void deadlines_body_done(serve_deadlines *d, serve_conn *c);
/* Its answer went out: the next request on the connection, if any, must
 * have its headers within idle_timeout_s + header_timeout_s. */
void deadlines_answered(serve_deadlines *d, serve_conn *c);
/* libmicrohttpd is closing it, its fd still open: forget it (the sweep
 * never touches an fd after this, so never one reused by another). */
void deadlines_closed(serve_deadlines *d, serve_conn *c);

#endif
