/* The worker's side, shared by its serving loop (worker_serve.c) and the
 * running of one request (worker_request.c). Internal to the worker. */
#ifndef TESSERA_TRANSPORT_WORKER_SERVE_H
#define TESSERA_TRANSPORT_WORKER_SERVE_H

#include "../core/internal.h"
#include "arena.h"
#include "channel.h"

/* What the worker keeps between requests. */
typedef struct worker_state {
    chan_end end;
    arena_view *view;
    tsr_component *comp;            /* the plugin, loaded in-process here */
    int host_pidfd;                 /* readable once the host is gone */
    int host_gone;
    _Atomic int finished;           /* the serving loop has returned and run fini */
    /* The request being served: its layout, and the plugin's view of it in
     * private memory (grown as needed, kept across requests). */
    chan_request_view v;
    tsr_endpoint ep;
    int32_t n_results, n_wrt_in;
    tsr_array *inputs, *seeds, *results;
    void **given;                   /* data pointer each result was given */
    int32_t *wrt_in, *wrt_out;
    size_t cap_inputs, cap_seeds, cap_results, cap_wrt_in, cap_wrt_out, cap_given;
} worker_state;

/* Run the request in the control block; leaves status, message and the
 * results' headers there for CHAN_DONE. Never trusts the block. */
void serve_request(worker_state *ws);
void serve_release(worker_state *ws);

/* Diagnostics of the plugin and of the worker: "LEVEL: message" on
 * stderr, which the host forwards line by line. */
void worker_log(tsr_log_level level, const char *message);

#endif
