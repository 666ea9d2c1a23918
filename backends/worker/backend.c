/* SPDX-License-Identifier: MIT */
/* The worker backend: the component runs in worker processes (a pool,
 * pool.c) and the host sends it validated calls (proxy_call.c). Arrays
 * cross through a shared-memory arena, which also provides the calls'
 * result buffers, or through files where shared memory cannot be used. */
#include <stdlib.h>
#include <string.h>

#include "pool.h"

static void *arena_source_alloc(void *user, size_t bytes, char *why, size_t n) {
    return arena_alloc(user, bytes, why, n);
}

static void arena_source_free(void *user, void *p) { arena_free(user, p); }

/* The shared-memory transport: the arena, then the workers. */
static int start_shm(tsr_component *c, worker_backend *wb, char **schema, tsr_error *err) {
    char why[TSR_ERRMSG_MAX - 64];
    /* memfd segments: nothing of a host that died is left to remove. */
    int rc = arena_create(&wb->arena, 0, why, sizeof why);
    if (rc) {
        error_set(err, rc, "cannot load '%s' in a worker: %s", tsr_component_path(c), why);
        return rc;
    }
    arena_set_limit(wb->arena, backend_options(c)->max_arena_bytes);
    backend_set_buffers(c, &(buffer_source){.alloc = arena_source_alloc,
                                            .free = arena_source_free,
                                            .user = wb->arena,
                                            .fail_code = TSR_E_SHM});
    return pool_start(c, schema, err);
}

/* The cause in "cannot load '<path>' in a worker: <cause>". */
static const char *worker_cause(const char *message) {
    const char *at = strstr(message, " in a worker: ");
    return at ? at + strlen(" in a worker: ") : message;
}

/* Start the workers over shared memory or files (transport "auto" falls
 * back to files when shared memory cannot be had: memfd_create refused,
 * or not enough memory for the arena), and take
 * the schema the first one sends. */
static int worker_open(tsr_component *c, tsr_error *err) {
    const struct tsr_options *o = backend_options(c);
    worker_backend *wb = calloc(1, sizeof *wb);
    if (!wb) {
        error_set(err, TSR_E_NOMEM, "cannot load '%s': out of memory", tsr_component_path(c));
        return TSR_E_NOMEM;
    }
    backend_set_state(c, wb);
    backend_set_lanes(c, o->workers);
    /* e.g. a Python component's environment */
    int prepared = backend_prepare(c, tsr_component_path(c), o, err);
    if (prepared) return prepared;
    char why[TSR_ERRMSG_MAX - 64];
    char *schema = NULL;
    int rc = TSR_E_SHM;
    tsr_error shm_err = {0};
    if (o->transport != TRANSPORT_FILES) {
        rc = start_shm(c, wb, &schema, &shm_err);
        if (rc && (rc != TSR_E_SHM || o->transport == TRANSPORT_SHM)) {
            error_set(err, rc, "%s", shm_err.message);
            return rc;
        }
    }
    if (rc) {
        pool_stop(c);
        backend_set_buffers(c, NULL);
        arena_destroy(wb->arena);
        wb->arena = NULL;
        rc = files_start(c, o->transport == TRANSPORT_FILES ? NULL
                                                                : worker_cause(shm_err.message),
                         err);
        if (!rc) rc = pool_start(c, &schema, err);
        if (rc) return rc;
    }
    rc = schema_import(schema, &wb->schema, why, sizeof why);
    free(schema);
    if (rc) {
        error_set(err, rc, "cannot load '%s' in a worker: %s", tsr_component_path(c), why);
        return rc;
    }
    return backend_set_descriptor(c, schema_import_descriptor(wb->schema), err);
}

/* The plugin's fini runs in the worker, when it is told to exit. */
static void worker_close(tsr_component *c) {
    worker_backend *wb = worker_backend_of(c);
    if (!wb) return;
    pool_stop(c);
    arena_destroy(wb->arena);
    spool_destroy(wb->spool); /* after the workers: nothing writes there any more */
    schema_import_free(wb->schema);
    free(wb);
}

static int worker_claims(const char *path, const struct tsr_options *opts) {
    (void)path;
    return opts->mode == TSR_MODE_WORKER;
}

const backend_ops worker_backend_ops = {
    .name = "worker",
    .claims = worker_claims,
    .open = worker_open,
    .invoke = worker_invoke,
    .close = worker_close,
    .restart = pool_restart,
    .call_free = worker_call_free,
    .prepares_results_elsewhere = 1,
};
