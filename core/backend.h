/* SPDX-License-Identifier: MIT */
/* The backend interface: how one way of providing a component's endpoints
 * plugs into core. A component is a schema plus a backend; core validates
 * every call against the schema, sizes the results, and hands the call to
 * its backend's invoke. The backends: a dlopen/dlmopen plugin
 * (backends/plugin), a libffi manifest (backends/manifest) and the worker proxy
 * (backends/worker); core names them in one table only (backends.c).
 *
 * A backend includes this header (with options.h and schema.h, which it
 * pulls in) and the public headers, never core/internal.h: what it needs
 * from a component or a call goes through the functions below. It keeps
 * its own state (a worker pool, a manifest's call plans) behind
 * backend_state, and per call behind call_backend_slot. */
#ifndef TESSERA_CORE_BACKEND_H
#define TESSERA_CORE_BACKEND_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/options.h"
#include "core/schema.h"
#include "tessera/tessera.h"

typedef struct backend_ops {
    const char *name;
    /* 1 when this backend serves `path` opened with `opts`; where several
     * would, the order of the table in backends.c decides. */
    int (*claims)(const char *path, const struct tsr_options *opts);
    /* Load the component: give it a schema (backend_set_descriptor) and
     * keep what it made (backend_set_state). On failure err says why, and
     * close runs all the same to release what was made. */
    int (*open)(tsr_component *c, tsr_error *err);
    /* Run a call that core has validated: call_args(call) holds its arrays,
     * and the results the host could size have their buffers. 0, or the
     * call's failure (call_fail). */
    int (*invoke)(tsr_call *call);
    /* Release everything open made, after a failed open too. */
    void (*close)(tsr_component *c);
    /* Optional (NULL: nothing to do). tsr_component_restart. */
    int (*restart)(tsr_component *c);
    /* Optional: release what invoke kept in *call_backend_slot(call). */
    void (*call_free)(tsr_component *c, void *call_state);
    /* Optional: what a backend does once in the host before another
     * process opens the component with it (worker mode): build the
     * environment a Python component runs in, and tell the workers. */
    int (*prepare)(tsr_component *c, tsr_error *err);
    /* Optional: 1 when the component at path says it may end the process
     * it runs in (a manifest's "may_exit"), why in why; it then runs in a
     * worker unless the host chose the mode. */
    int (*may_end_process)(const char *path, char *why, size_t n);
    /* 1 when results are cleared (option unwritten) where the endpoint
     * runs, in another process, so core does not clear them here too. */
    int prepares_results_elsewhere;
} backend_ops;

/* backends.c: the backend that serves path with opts (never NULL). When
 * that is worker mode only because the component may end the process
 * (the host did not choose a mode), why says so; else why is "". */
const backend_ops *backend_for(const char *path, const struct tsr_options *opts, char *why,
                               size_t n);
/* The name of the backend whose code answers for path ("python",
 * "plugin", "manifest", "remote"): the one backend_for would choose
 * without worker mode, so that a message can say what to change where. */
const char *backend_code_name(const char *path, const struct tsr_options *opts);
/* For a backend that runs components elsewhere: run the prepare of the
 * backend that will open c's path (with c's options opts) there (none:
 * 0). The path and options are given, so that the table asks nothing of
 * the component (component.c uses the table, not the other way). */
int backend_prepare(tsr_component *c, const char *path, const struct tsr_options *opts,
                    tsr_error *err);

/* own_dir.c: the directory of the file this code is linked into:
 * libtessera.so, a Python extension, or the executable of a host linked
 * with libtessera.a (from /proc/self/exe: dladdr names it by argv[0],
 * which may be relative or a bare name). "" when unknown. */
void backend_own_dir(char *dir, size_t n);

/* elf_check.c: whether the shared object at path can be given to dlopen
 * without the loader faulting on it (an ELF shared object for this host,
 * its program headers and loadable segments inside the file). 0, or -1
 * with the cause in why. */
int backend_check_elf(const char *path, char *why, size_t n);

/* namespace_stdio.c: before dlclose of an isolated (dlmopen) component:
 * write out its C library's stdio buffers (what it printed), which no
 * exit of this process would. dl: its handle; one from dlopen (the
 * process's namespace, whose streams exit flushes) or NULL: nothing. */
void backend_flush_namespace_stdio(void *dl);

/* ---- a component, as a backend sees it --------------------------------- */

const struct tsr_options *backend_options(const tsr_component *c);
component_schema backend_schema(const tsr_component *c);
void *backend_state(const tsr_component *c);
void backend_set_state(tsr_component *c, void *state);
/* Validate a descriptor and make it the component's schema and endpoints
 * (descriptor.c); it must outlive the component. */
int backend_set_descriptor(tsr_component *c, const tsr_plugin *d, tsr_error *err);
/* Whether d can be the default of input field f (whose dims are `dims`):
 * the checks a descriptor's defaults pass at load (dtype, rank, fixed
 * dims, at most TSR_MAX_DEFAULT_BYTES, data when it has elements). 0, or
 * -1 with the cause in why ("its default has rank 2, the field 1"). A
 * backend that builds a schema from elsewhere (a served OpenAPI document)
 * asks before it offers a default that loading would refuse. */
int backend_default_mismatch(const tsr_field *f, const tsr_dim *dims, const tsr_array *d,
                             char *why, size_t n);
/* What endpoints find in ctx->state (NULL until set). */
void backend_set_endpoint_state(tsr_component *c, void *state);
/* Run a plugin's init with a context of this component (configuration,
 * logging, errors); *state is what it made. TSR_E_INIT with the plugin's
 * message in err when it fails. */
int backend_run_init(tsr_component *c, tsr_init_fn init, void **state, tsr_error *err);

/* An environment variable for c's worker processes (option env). 0 or
 * TSR_E_NOMEM. */
int backend_set_worker_env(tsr_component *c, const char *name, const char *value);

/* Where a component's buffers (results, staged inputs, tsr_component_alloc) come
 * from when not from the heap: the worker's shared-memory arena. */
typedef struct buffer_source {
    void *(*alloc)(void *user, size_t bytes, char *why, size_t n);
    void (*free)(void *user, void *p);
    void *user;
    int fail_code;                   /* a call's code when none is left (TSR_E_SHM) */
} buffer_source;
void backend_set_buffers(tsr_component *c, const buffer_source *src);
/* How many calls the backend runs at once (a batch's lanes); 1 by default. */
void backend_set_lanes(tsr_component *c, int32_t lanes);

/* Counters of tsr_component_stats. */
typedef enum backend_stat {
    BACKEND_STAT_CALLS,
    BACKEND_STAT_COPIED,             /* bytes copied to cross to the backend */
    BACKEND_STAT_BY_REF,             /* bytes that crossed by reference */
    BACKEND_STAT_STARTS,             /* worker processes started */
    BACKEND_STAT_DEATHS,             /* worker processes that died */
    BACKEND_STAT_WAIT_NS,            /* ns waiting for a worker's answer */
    BACKEND_STAT_COPY_NS,            /* ns copying inputs in and results out */
    BACKEND_STAT_COUNT
} backend_stat;
void backend_count(tsr_component *c, backend_stat which, uint64_t n);
/* CLOCK_MONOTONIC in nanoseconds (vDSO: some 20 ns), for the _NS counters. */
uint64_t backend_now_ns(void);

/* errors.c, log.c */
void error_set(tsr_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *comp_label(const tsr_component *c);
void comp_log(const tsr_component *c, tsr_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* stderr_sink.c: the library's lines on the host's stderr ("prefix: line",
 * or the line alone with prefix NULL; the default for log messages and for
 * what a worker prints). Never blocks: what fd 2 does not take now waits
 * in a bounded buffer (1 MiB) that later lines and stderr_flush write;
 * when it is full, lines are dropped until it has drained, and a note in
 * the stream then says how many. 1 when this line was dropped, else 0.
 * stderr_flush writes what waits; with wait_ms > 0 it also waits for fd 2
 * while it keeps taking bytes, each wait at most wait_ms. */
int stderr_line(const char *prefix, const char *line);
void stderr_flush(int wait_ms);

/* ---- a call, as a backend sees it -------------------------------------- */

tsr_component *call_component(const tsr_call *call);
/* The validated arguments: inputs, differentiation targets, seeds and
 * results in the endpoint's layout. A backend may write the results'
 * headers (results) and then let core check them. */
const tsr_args *call_args(const tsr_call *call);
/* What the host set for result k before the call: its buffer (NULL when
 * the plugin decides its shape) and its shape (-1 for unknown dims). */
const tsr_array *call_expected(const tsr_call *call, int32_t k);
/* Which of the backend's lanes the call would rather use (0, or the lane
 * of a batch's sub-call): a worker pool starts looking there. */
int32_t call_lane(const tsr_call *call);
/* A place for the backend's per-call state, NULL at first; released
 * with the call by the backend's call_free. */
void **call_backend_slot(tsr_call *call);
int call_fail(tsr_call *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* tsr_ctx_alloc on the host's side: the plugin set result k's shape
 * (args->results[k]); check it and give it a buffer. NULL with *code and
 * a cause in why when refused. */
void *call_result_alloc(tsr_call *call, int32_t k, int *code, char *why, size_t n);

/* Cancellation (tsr_call_cancel, cancel.c), for a backend whose invoke
 * waits: the request (nonzero: stop; shared by a batch's items and by
 * finite differences' apply with the call the host runs); an eventfd that
 * tsr_call_cancel writes, made at the first ask and owned by core (-1 when
 * none can be had: the wait then sees the request only when it wakes for
 * another reason); how often the host's check wants to run while this
 * thread waits (0: never, e.g. on a batch's other lanes); and running it
 * (nonzero: the call is cancelled, now or before). A sleeper that finds
 * the eventfd readable and the request clear drains it and looks again
 * at the request before it sleeps. */
const _Atomic uint32_t *call_cancel_flag(const tsr_call *call);
int call_cancel_fd(tsr_call *call);
int call_cancel_check_ms(const tsr_call *call);
int call_cancel_check(tsr_call *call);

/* Result k's name in messages: "output 'y'", "result for input 'x'", ... */
const char *call_result_name(const tsr_call *call, int32_t k, char *buf, size_t n);

/* In-process endpoints (the plugin and manifest backends' invoke): the
 * descriptor's function for the call's endpoint, serialised unless the
 * component is thread-safe. */
int invoke_in_process(tsr_call *call);

/* ---- buffers (buffer.c) ------------------------------------------------ */

/* A buffer owned by a call or a backend, TSR_ALIGNMENT-aligned, grown when
 * too small and kept otherwise, from the component's buffer source. */
typedef struct result_buf {
    void *ptr;
    size_t cap;
} result_buf;
void *result_reserve(tsr_component *c, result_buf *b, size_t bytes, char *why, size_t n);
void result_release(tsr_component *c, result_buf *b);
/* The code of a call that could not get a buffer: TSR_E_NOMEM, or the
 * buffer source's (TSR_E_SHM). */
int buffer_fail_code(const tsr_component *c);
/* For an endpoint running under a call: a scratch buffer kept with the
 * call (manifests stage arguments there). 0 with *out set (NULL when it
 * could not be had, why says why); -1 outside a call (init, a worker's
 * served call), where the endpoint uses memory of its own. */
int ctx_scratch(tsr_ctx *ctx, size_t bytes, void **out, char *why, size_t n);
/* Memory an endpoint holds for a call beyond its arrays (a manifest's
 * workspaces and staged copies), counted against max_array_bytes and
 * max_call_bytes before it is allocated: 0, or TSR_E_LIMIT with why
 * naming `what` and the option (the call then fails with it). Given back
 * (ctx_limit_give) when the endpoint no longer holds it. */
int ctx_limit_take(tsr_ctx *ctx, uint64_t bytes, const char *what, char *why, size_t n);
void ctx_limit_give(tsr_ctx *ctx, uint64_t bytes);

#endif
