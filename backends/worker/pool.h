/* SPDX-License-Identifier: MIT */
/* Worker mode, the host's side: the worker backend's state (one pool of
 * worker processes, and the shared-memory arena or the spool through which
 * arrays cross) and what its files share. Built on core's backend
 * interface only. */
#ifndef TESSERA_WORKER_POOL_H
#define TESSERA_WORKER_POOL_H

#include <pthread.h>

#include "core/backend.h"
#include "codecs/binref_file.h"
#include "shm/arena.h"
#include "worker/spool.h"
#include "worker_proc.h"

typedef struct pool_slot {
    worker_proc proc;
    int busy;                   /* lent to a call */
    int dead;                   /* died or was killed; `death` says how */
    int respawn;                /* dead because a cancel stopped it: started again at
                                   the next call that needs it, whatever `restart` says */
    char death[512];
} pool_slot;

/* Idle workers are looked at for a death at most this often, by a call
 * that takes a worker (pool_acquire), and at tsr_component_restart. */
#define POOL_SWEEP_MS 100
/* How long tsr_close waits for a host's stderr that has stopped taking
 * the workers' last lines. */
#define POOL_CLOSE_FLUSH_MS 200

typedef struct worker_pool {
    pthread_mutex_t lock;       /* busy, dead, death, last_death, swept_ms */
    pthread_cond_t freed;
    int n;
    pool_slot *slots;
    int last_death;             /* the slot that died last */
    uint64_t swept_ms;          /* when idle workers were last looked at */
    _Atomic uint64_t dropped;   /* printed lines stderr did not take, not yet reported */
    char *exe;                  /* tessera-worker */
    char *config;               /* the plugin's configuration as JSON */
    char **env;                 /* "NAME=VALUE", NULL-terminated */
} worker_pool;

typedef struct imported_schema imported_schema;

/* What the worker backend keeps for a component (backend_state). */
typedef struct worker_backend {
    arena *arena;               /* arrays cross here (shared memory), or */
    spool *spool;               /* here (the files transport); one of the two */
    worker_pool *pool;
    imported_schema *schema;    /* the worker's schema; owns the descriptor */
} worker_backend;

static inline worker_backend *worker_backend_of(const tsr_component *c) {
    return backend_state(c);
}

/* What the worker backend keeps for a call (call_backend_slot). */
typedef struct proxy_call {
    int last_worker;            /* the pool slot used last */
    int32_t n_staging;
    int32_t n_in;               /* the component's inputs: staging[n_in...] hold seeds */
    result_buf staging[];       /* arena copies of inputs, then seeds */
} proxy_call;

/* Start opts.workers workers; the first one's schema JSON goes to *schema. */
int pool_start(tsr_component *c, char **schema, tsr_error *err);
void pool_stop(tsr_component *c);
/* A free live worker, preferably slot `prefer`; blocks while all live
 * ones are busy. A dead worker is skipped; with restart=auto a dead one is
 * started again when it is the preferred one or no live one is free. NULL
 * with TSR_E_WORKER when no worker is left (restart=never: the message
 * names the last death and tsr_component_restart), or with why a restart
 * failed. At most every POOL_SWEEP_MS it first looks at the idle workers
 * for deaths (counted and logged as any other). */
pool_slot *pool_acquire(tsr_component *c, int prefer, int *code, char *why, size_t n);
void pool_release(tsr_component *c, pool_slot *s);
/* After a death or a kill, during a call or found between calls: the
 * slot is skipped from now on, the death counted and logged once (WARN). */
void pool_mark_dead(tsr_component *c, pool_slot *s, const char *why);
/* The same for a worker killed because it did not stop at a cancel: not a
 * failure of the plugin (logged at INFO), and the slot's worker is started
 * again at the next call that needs it. */
void pool_mark_stopped(tsr_component *c, pool_slot *s, const char *why);
int pool_slot_index(const tsr_component *c, const pool_slot *s);
/* tsr_component_restart: start again every worker that died, also those
 * that died idle and unseen. */
int pool_restart(tsr_component *c);
/* Log (WARN) how many printed lines the host's stderr dropped since the
 * last report, and write what waits for stderr (waiting up to wait_ms
 * while it takes more). After each call, at restart and at close. */
void pool_report_output(tsr_component *c, int wait_ms);

/* proxy_call.c: run a validated call in a worker (the backend's invoke),
 * and release what a call kept. */
int worker_invoke(tsr_call *call);
void worker_call_free(tsr_component *c, void *call_state);
/* The host's side of a worker's CHAN_ALLOC request and of its final
 * answer (CHAN_DONE), reading the block as hostile input; apart for the
 * fuzz target of the host's side. */
void worker_answer_alloc(tsr_call *call, chan_block *b);
int worker_answer_done(tsr_call *call, chan_block *b);

/* schema_import.c: a worker's schema (JSON) as a descriptor. */
int schema_import(const char *text, imported_schema **out, char *why, size_t n);
const tsr_plugin *schema_import_descriptor(const imported_schema *s);
void schema_import_free(imported_schema *s);

/* proxy_files.c: the files transport, host side. files_start makes the
 * spool (shm_why: why shared memory could not be used, logged at INFO;
 * NULL when files were asked for). During a call in slot `slot`:
 * files_wire appends an input or seed to the request's file (opening the
 * writer *w on first use) and sets its binref; files_flush writes them;
 * files_read_results reads the results the worker wrote into the call's
 * buffers; files_end removes both files of the slot, whatever happened. */
int files_start(tsr_component *c, const char *shm_why, tsr_error *err);
int files_wire(tsr_call *call, int slot, binref_writer **w, const tsr_array *a, size_t bytes,
               binref *ref);
int files_flush(tsr_call *call, binref_writer *w);
int files_read_results(tsr_call *call, int slot, const chan_request_view *v);
void files_end(tsr_call *call, int slot, binref_writer *w);

#endif
