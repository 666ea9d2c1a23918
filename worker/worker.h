/* SPDX-License-Identifier: MIT */
/* The worker's side, shared by its request loop (request_loop.c), the
 * running of one request (request.c) and the files transport
 * (request_files.c). The worker opens the component with the public API and
 * serves it through core/served.h. */
#ifndef TESSERA_WORKER_WORKER_H
#define TESSERA_WORKER_WORKER_H

#include "core/served.h"
#include "shm/arena.h"
#include "shm/channel.h"

/* What the worker keeps between requests. */
typedef struct worker_state {
    chan_end end;
    arena_view *view;               /* shared memory; NULL with files */
    struct worker_files *files;     /* the files transport (worker_files.c), or NULL */
    tsr_component *comp;            /* the plugin, loaded in-process here */
    served *srv;                    /* core's side of serving it */
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
    const char **wrt_in_paths, **wrt_out_paths;   /* tsr_args': the fields' names */
    size_t cap_inputs, cap_seeds, cap_results, cap_wrt_in, cap_wrt_out, cap_given;
    char *path_buf;                 /* the request's paths inside JSON fields, copied */
    size_t cap_path_buf;
} worker_state;

/* Run the request in the control block; leaves status, message and the
 * results' headers there for CHAN_DONE. Never trusts the block. */
void worker_run_request(worker_state *ws);
void worker_release_request(worker_state *ws);

/* Room for a label naming an array: "jacobian block 'y'/'x'", with field
 * names of up to 256 bytes. */
#define SERVE_LABEL_MAX 600

/* ---- request_files.c: the files transport, worker side -------------------
 * Arrays come and go through the spool (spool.h): inputs and seeds are
 * read from "<tag>-in-0.bin" into private buffers, results are computed
 * in private buffers and written to "<tag>-out-0.bin", their binrefs
 * (seg 0, offset, bytes) naming where. Buffers are kept across requests. */
int files_open(worker_state *ws, const char *dir, const char *tag, int file_io, char *why,
               size_t n);
void files_close(worker_state *ws);
/* Before the arrays of a request are taken: room for its buffers, no
 * reads queued. 0 or TSR_E_NOMEM. */
int files_begin(worker_state *ws, const tsr_args *args, char *why, size_t n);
/* A private buffer for input or seed `slot` (inputs first, then seeds),
 * its bytes queued for reading from where ref says; what names it in
 * messages and must outlive the request. NULL with a cause in why. */
void *files_input(worker_state *ws, int32_t slot, const binref *ref, const char *what, char *why,
                  size_t n);
/* A private buffer of `bytes` for result k. NULL with a cause in why. */
void *files_result(worker_state *ws, int32_t k, uint64_t bytes, char *why, size_t n);
/* Read every queued input. 0 or TSR_E_IO / TSR_E_NOMEM with why. */
int files_read_inputs(worker_state *ws, char *why, size_t n);
/* Write the results that have data and set their binrefs. 0 or TSR_E_IO /
 * TSR_E_NOMEM with why; nothing is left in the spool on failure. */
int files_write_results(worker_state *ws, const tsr_args *args, char *why, size_t n);

/* Diagnostics of the plugin and of the worker: "LEVEL: message" on
 * stderr, which the host forwards line by line. */
void worker_log(tsr_log_level level, const char *message);

#endif
