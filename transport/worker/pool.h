/* The workers of a worker-mode component (core/worker_pool.c). */
#ifndef TESSERA_CORE_WORKER_POOL_H
#define TESSERA_CORE_WORKER_POOL_H

#include <pthread.h>

#include "core/internal.h"
#include "transport/shm/arena.h"
#include "transport/payload/binref_file.h"
#include "spool.h"
#include "worker_proc.h"

typedef struct pool_slot {
    worker_proc proc;
    int busy;                   /* lent to a call */
    int dead;                   /* died or was killed; `death` says how */
    char death[512];
} pool_slot;

typedef struct worker_pool {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    int n;
    pool_slot *slots;
    char *exe;                  /* tessera-worker */
    char *config;               /* the plugin's configuration as JSON */
    char **env;                 /* "NAME=VALUE", NULL-terminated */
} worker_pool;

/* Start opts.workers workers; the first one's schema JSON goes to *schema. */
int pool_start(tsr_component *c, char **schema, tsr_error *err);
void pool_stop(tsr_component *c);
/* A free worker, preferably slot `prefer`; blocks while all are busy.
 * A dead worker is restarted (restart=auto) or reported. NULL on error. */
pool_slot *pool_acquire(tsr_component *c, int prefer, int *code, char *why, size_t n);
void pool_release(tsr_component *c, pool_slot *s);
/* After a death or a kill during a call. */
void pool_mark_dead(tsr_component *c, pool_slot *s, const char *why);
int pool_slot_index(const tsr_component *c, const pool_slot *s);

/* worker_call.c: run call->args in a worker. */
int worker_invoke(tsr_call *call);
/* The host's side of a worker's CHAN_ALLOC request and of its final
 * answer (CHAN_DONE), reading the block as hostile input; apart for the
 * fuzz target of the host's side. */
void worker_answer_alloc(tsr_call *call, chan_block *b);
int worker_answer_done(tsr_call *call, chan_block *b);

/* worker_files.c: the files transport, host side. files_start makes the
 * spool (shm_why: why shared memory could not be used, logged at INFO;
 * NULL when files were asked for). During a call in slot call->last_worker:
 * files_wire appends an input or seed to the request's file (opening the
 * writer *w on first use) and sets its binref; files_flush writes them;
 * files_read_results reads the results the worker wrote into the call's
 * buffers; files_end removes both files of the slot, whatever happened. */
int files_start(tsr_component *c, const char *shm_why, tsr_error *err);
void files_slot_tag(const tsr_call *call, char tag[SPOOL_TAG_MAX]);
int files_wire(tsr_call *call, binref_writer **w, const tsr_array *a, size_t bytes, binref *ref);
int files_flush(tsr_call *call, binref_writer *w);
int files_read_results(tsr_call *call, const chan_request_view *v);
void files_end(tsr_call *call, binref_writer *w);

#endif
