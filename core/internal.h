/* SPDX-License-Identifier: MIT */
/* Internal structures of the core: the loaded component, the call object
 * and the plugin's context. Only core's own files include this; backends
 * see components and calls through backend.h. */
#ifndef TESSERA_CORE_INTERNAL_H
#define TESSERA_CORE_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/backend.h"
#include "core/options.h"
#include "core/schema.h"
#include "core/served.h"
#include "tessera/tessera.h"

/* SPSA directions when the component gives no fd_samples (descriptor.c,
 * and the fd_method option in component.c). */
#define FD_DEFAULT_SAMPLES 32u

struct tsr_component {
    char *path;
    tsr_mode mode;
    const backend_ops *backend;      /* what provides the endpoints (backends.c) */
    void *backend_state;             /* the backend's own, released by its close */
    const tsr_plugin *desc;          /* owned by the backend */
    tsr_endpoint_fn ep[TSR_EP_COUNT];
    void *endpoint_state;            /* ctx->state for the endpoints */
    int32_t n_in, n_out;
    field_info *in, *out;
    int32_t n_sym;
    const char **sym_names;          /* n_sym symbol names, in id order */
    int32_t *text_in;                /* indices of TEXT and JSON inputs, checked every run */
    int32_t n_text_in;
    int thread_safe;
    tsr_fd_method fd_method;         /* how missing derivatives are served */
    uint32_t fd_samples;
    double fd_step;
    int32_t lanes;                   /* calls the backend runs at once */
    buffer_source buffers;           /* alloc NULL: the heap */
    pthread_mutex_t lock;            /* serialises non-thread-safe plugins */
    struct tsr_options opts;         /* a private copy (config strings owned) */
    _Atomic uint64_t stats[BACKEND_STAT_COUNT];        /* by backend_stat */
    /* What tsr_call_run counted at each endpoint (stats.c). */
    _Atomic uint64_t ep_calls[TSR_EP_COUNT], ep_ns[TSR_EP_COUNT], ep_errors[TSR_EP_COUNT];
};

/* What a tsr_ctx really points to: the public part first, then the
 * host's bookkeeping. One per call object, plus a temporary one for
 * init and fini. */
typedef struct host_ctx {
    tsr_ctx pub;
    tsr_component *comp;
    struct tsr_call *call;           /* NULL during init and in a served call */
    /* A served call (core/served.c): who answers tsr_ctx_alloc. */
    served_alloc_fn alloc_hook;
    void *alloc_user;
    /* A served call: the host's cancel request in the channel (NULL: none). */
    const _Atomic uint32_t *served_cancel;
    /* A served call: its arguments, whose results tsr_ctx_alloc fills as
     * served_unwritten (UNWRITTEN_*) says. */
    const tsr_args *served_args;
    int served_unwritten;
    int plugin_msg_set;
    int alloc_code;                  /* 0, or why tsr_ctx_alloc (or ctx_limit_take) refused */
    uint64_t limit_used;             /* a served call: the bytes ctx_limit_take counted */
    /* Last: host_ctx_init clears only what comes before them. */
    char plugin_msg[TSR_ERRMSG_MAX];
    char alloc_msg[TSR_ERRMSG_MAX];
} host_ctx;

/* casting.c: one converted input or seed. */
typedef struct cast_slot {
    void *buf;                       /* 64-byte aligned, cap bytes */
    size_t cap;
    tsr_array saved;                 /* the caller's array while the copy stands in */
    int active;
} cast_slot;

/* Memory the caller gave for one result (tsr_call_set_result_buffer). */
typedef struct result_target {
    void *ptr;
    size_t bytes;
} result_target;

/* text.c: a TEXT or JSON input bound as an array, whose bytes are copied
 * at each run to put a NUL after them. */
typedef struct text_slot {
    const void *src;                 /* the caller's bytes */
    char *buf;                       /* the copy, cap bytes */
    size_t cap;
    uint8_t copy;                    /* bound by tsr_call_set_input: copy at each run */
} text_slot;

struct tsr_call {
    host_ctx ctx;                    /* first: (tsr_call *) == (host_ctx *) */
    tsr_component *comp;
    tsr_endpoint ep;
    /* inputs */
    tsr_array *inputs;               /* n_in */
    uint8_t *input_bound;            /* n_in */
    int32_t n_bound;
    text_slot *text;                 /* n_in, NULL until a text input is bound as an array */
    /* differentiation targets and their seeds */
    int32_t *wrt_in, *wrt_out;       /* capacity cap_wrt_in / cap_wrt_out */
    const char **wrt_in_paths, **wrt_out_paths;   /* the same capacities: tsr_args' paths */
    int32_t cap_wrt_in, cap_wrt_out; /* n_in / n_out, more when paths repeat a field */
    char *path_store;                /* the paths inside JSON fields (wrt_path.c) */
    int32_t n_wrt_in, n_wrt_out;
    int wrt_set;
    tsr_array *seeds;                /* n_in (jvp) or n_out (vjp) */
    uint8_t *seed_set;
    /* results */
    tsr_array *results;              /* capacity max(n_out, n_wrt_in, n_out*n_in) */
    tsr_array *expect;               /* what the host set before the call */
    result_buf *bufs;
    result_target *targets;          /* tsr_call_set_result_buffer (result_target.c) */
    size_t *result_bytes;            /* bytes of each result the host sized (result_fill.c) */
    int32_t n_targets;               /* how many targets are set */
    int32_t n_results, cap_results;
    void *backend_call;              /* the backend's per-call state (call_backend_slot) */
    int32_t lane;                    /* call_lane: a batch's sub-calls number theirs */
    /* batches (batch.c): a batch runs its items through sub-calls, one per
     * concurrent lane, whose results are slices of the batch's results */
    struct tsr_call *parent;
    int64_t item;
    struct tsr_call **subs;
    int32_t n_subs;
    struct tsr_call *fd_apply;       /* fd_fallback.c: evaluates apply; hvp_fallback.c: the
                                        apply, vjp or jacobian it differences */
    result_buf *fd_work;             /* fd_fallback.c: working copies of inputs, n_in */
    struct tsr_call **fd_lane_apply; /* fd_fallback.c, worker pools: the apply call of each
                                        lane after the first, n_fd_lanes - 1 */
    result_buf *fd_lane_work;        /* their working copies, n_in per lane */
    int32_t n_fd_lanes;              /* lanes set up so far (1: only fd_apply) */
    result_buf scratch;              /* ctx_scratch: an endpoint's staging (manifests) */
    int results_valid;
    /* The last run succeeded, every result was sized by the host, and no
     * dtype, rank or shape has changed since: the next run may skip shape
     * validation and result sizing (only data pointers moved). */
    int validated;
    tsr_args args;                   /* kept from the last validated run */
    /* symbol values during one run; -1 = unbound */
    int64_t *symval;
    const char **sym_from;           /* field that bound each symbol */
    uint64_t limit_used;             /* limits.c: bytes of this run's arrays so far */
    /* Cancellation (cancel.c). A batch's sub-calls and the apply call of
     * finite differences answer to the call the host runs: cancel_root
     * (the call itself for every call the host made). Only the root's
     * fields below are used. */
    struct tsr_call *cancel_root;
    _Atomic uint32_t cancel_req;     /* tsr_call_cancel asked; consumed by a root run */
    _Atomic int cancel_fd;           /* eventfd written by tsr_call_cancel; -1 until a
                                        backend that sleeps asks for it */
    tsr_cancel_check_fn check_fn;    /* tsr_call_set_cancel_check */
    void *check_user;
    int32_t check_ms;
    uint64_t check_next_ns;          /* in-process polls: when check_fn is due (0: unarmed) */
    pthread_t runner;                /* the thread running the root, while check_fn is set */
    /* casting=same_kind (casting.c): converted copies of inputs and
     * seeds of another dtype, reused while they fit, and the arrays as
     * the caller bound them while a run uses the copies */
    cast_slot *cast_in;              /* n_in, NULL until needed */
    cast_slot *cast_seed;            /* cap_results, NULL until needed */
    int errcode;
    size_t cause_at;                 /* where the cause starts in errmsg */
    char errmsg[TSR_ERRMSG_MAX];
    char errloc[TSR_ERRLOC_MAX];     /* tsr_call_errloc */
    char errtype[64];                /* tsr_call_errtype when the endpoint named one
                                        (invalid_input.c); "" for the code's */
};

/* log.c (comp_log: backend.h): message as a log line of component (its
 * label) under the options o: log_off and log_level filter it. */
void log_line(const struct tsr_options *o, tsr_log_level level, const char *component,
              const char *message);

/* log_env.c: a level's name ("debug" ... "error", or "off": *off set);
 * -1 for any other. log_env_default applies TESSERA_LOG to defaults. */
int log_level_parse(const char *value, tsr_log_level *level, int *off);
void log_env_default(struct tsr_options *o);

/* stats.c: a run of tsr_call_run that started at started_ns
 * (backend_now_ns; 0: not timed) ended with rc: counted at its endpoint, and logged
 * at level debug. */
void stats_count_call(struct tsr_call *call, uint64_t started_ns, int rc);
/* Whether runs of call read the clock (call_timing, or level debug):
 * inline, on every run's path. */
static inline int call_timed(const struct tsr_call *call) {
    const struct tsr_options *o = &call->comp->opts;
    return !o->timing_off || (!o->log_off && o->log_level <= TSR_LOG_DEBUG);
}

/* errors.c (error_set, call_fail, comp_label: backend.h). call_fail_at:
 * call_fail with the loc "section.name" (name NULL: "section"), e.g.
 * ("inputs", "x"); call_set_loc sets the loc after a call_fail. */
const char *call_cause(const struct tsr_call *call);
int call_fail_at(struct tsr_call *call, int code, const char *section, const char *name,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void call_set_loc(struct tsr_call *call, const char *section, const char *name);

/* casting.c: option casting=same_kind. cast_accepts: whether an array of
 * dtype `given` may stand for a field of dtype `field` in this call.
 * cast_begin (before a run reaches its backend): the inputs and seeds of
 * another dtype are converted into the call's buffers and take their
 * place; 0, or the call failed (TSR_E_DTYPE naming field, index and
 * value; TSR_E_NOMEM). cast_end (after the run, whatever its outcome)
 * puts back the arrays the caller bound. cast_release frees the buffers
 * (tsr_call_free). */
int cast_accepts(const struct tsr_call *call, tsr_dtype given, tsr_dtype field);
int cast_begin(struct tsr_call *call);
void cast_end(struct tsr_call *call);
void cast_release(struct tsr_call *call);

/* text.c. text_bind_array: input i, a TEXT or JSON field, was bound to
 * array a (tsr_call_set_input). text_inputs_check, at each run after the
 * inputs' checks: copies what needs a NUL, then checks each text as UTF-8
 * and against its choices (TSR_E_VALUE, the call failed). */
int text_bind_array(struct tsr_call *call, int32_t i, const tsr_array *a);
int text_inputs_check(struct tsr_call *call);
void text_release(struct tsr_call *call);

/* wrt_path.c. wrt_path_field: the input or output whose name, followed
 * by '.', starts path (the longest such), or -1. call_wrt_reserve: room
 * for lists of n_in and n_out entries and n_results results (seeds too);
 * 0 or TSR_E_NOMEM. call_wrt_keep_paths: the call's own copies of the
 * paths that are not a field's name (TSR_E_NOMEM). call_has_free_entries:
 * whether an entry is on a JSON field (seeds and results free-form). */
int32_t wrt_path_field(const field_info *fs, int32_t n_fs, const char *path);
int call_wrt_reserve(struct tsr_call *call, int32_t n_in, int32_t n_out, int32_t n_results);
int call_wrt_keep_paths(struct tsr_call *call);
int call_has_free_entries(const struct tsr_call *call);

/* descriptor.c: validate a plugin's descriptor and copy its schema. */
int descriptor_load(tsr_component *c, const tsr_plugin *d, tsr_error *err);
void descriptor_free(tsr_component *c);

/* host_api.c: services offered to plugins through tsr_ctx. */
extern const tsr_host_api host_api_v1;
void host_ctx_init(host_ctx *hc, tsr_component *c, struct tsr_call *call);

/* component.c */
int schema_gives_shapes(const tsr_component *c);

/* call.c. call_run_begin and call_run_end: the steps of a run around the
 * endpoint's code (call_run.c, call_run_native); call_run_native: a run
 * without the finite-difference fallback, for the fallback's apply calls. */
typedef struct call_run_state {
    int skipped;     /* no code to run: abstract_eval from the schema */
    int by_fd;       /* the code is the finite-difference fallback */
    int cacheable;   /* the next run may take the fast path */
    int casting;     /* cast_begin ran: cast_end after */
    int here;        /* results filled here, checked for unwritten values */
} call_run_state;
int call_validate(struct tsr_call *call);
int call_run_begin(struct tsr_call *call, call_run_state *s);
int call_run_end(struct tsr_call *call, const call_run_state *s, int rc);
int call_run_native(struct tsr_call *call);

/* fd_fallback.c: jvp, vjp, jacobian by finite differences of apply;
 * hvp handed to hvp_fd_invoke (hvp_fallback.c: differences of the vjp or
 * of apply, as tsr_component_hvp_source says). */
int fd_invoke(struct tsr_call *call);
int hvp_fd_invoke(struct tsr_call *call);

/* lane_join.c: join a thread that runs a lane of call (a batch's items, or
 * finite differences' evaluations); meanwhile the host's cancel check keeps
 * its rhythm in the joining thread (the lanes wake at a cancel). */
void lane_join(struct tsr_call *call, pthread_t thread);

/* results.c: a batch item's results are its slices of the batch's. */
void batch_point_results(struct tsr_call *sub);

/* cancel.c. cancel_init: a new call is its own root, without eventfd.
 * cancel_begin: at the start of a run, TSR_E_CANCELLED (the call failed)
 * when a request is pending, else 0 (a root also notes its thread for the
 * check). cancel_end: at the end of a root's run, turns rc into
 * TSR_E_CANCELLED when a request is pending, and consumes it. */
static inline int cancel_pending(const struct tsr_call *call) {
    return atomic_load_explicit(&call->cancel_root->cancel_req, memory_order_relaxed) != 0;
}
void cancel_init(struct tsr_call *call);
void cancel_release(struct tsr_call *call);
int cancel_begin(struct tsr_call *call);
int cancel_end(struct tsr_call *call, int rc);
/* Whether the check is due and to be run by this thread, and running it:
 * 1 when the call is (now) cancelled. */
int cancel_poll_check(struct tsr_call *call);

/* limits.c: max_array_bytes and max_call_bytes. limit_check counts an
 * array of `bytes` toward this run's total (call->limit_used, reset when a
 * run's validation starts) or refuses it with TSR_E_LIMIT and a message
 * naming the array ("input 'x'" for what "input", "what['name']", or what
 * alone when name is NULL), the limit and the option that raises it.
 * limit_take does the same and fails the call. */
uint64_t limit_array_bytes(const tsr_array *a);   /* UINT64_MAX on overflow */
int limit_check(struct tsr_call *call, uint64_t bytes, const char *what, const char *name,
                char *why, size_t n);
int limit_take(struct tsr_call *call, uint64_t bytes, const char *what, const char *name);
/* limit_check on a running total of one's own (*used), for memory counted
 * outside a call object: a served call's scratch in a worker. */
int limit_check_total(const tsr_component *c, uint64_t *used, uint64_t bytes, const char *what,
                      char *why, size_t n);
/* max_payload_bytes, max_payload_values, max_array_bytes and
 * max_call_bytes, for transport/payload_parse.c (0: none). */
uint64_t component_payload_limit(const tsr_component *c);
uint64_t component_payload_values(const tsr_component *c);
void component_array_limits(const tsr_component *c, uint64_t *array, uint64_t *call);

/* result_target.c. result_place: the memory for result k of `bytes`
 * bytes: the caller's buffer when one is set and the plugin can write
 * there, else the call's own (call->bufs[k]); NULL with *code and why
 * (naming `name`) when the caller's buffer is too small or memory runs out.
 * results_aim (before a run) and results_deliver (after a successful one)
 * copy results out of a buffer source into the caller's buffers. */
void *result_place(struct tsr_call *call, int32_t k, size_t bytes, const char *name, int *code,
                   char *why, size_t n);
void results_aim(struct tsr_call *call);
void results_deliver(struct tsr_call *call);

/* result_fill.c. What a result holds before its endpoint runs, by mode
 * (option unwritten, UNWRITTEN_*): zeros, nothing (keep), or a marker (a
 * signalling NaN for floats, 0xA5 bytes otherwise), of which
 * result_unwritten_count counts the elements still holding it. Arrays
 * without data are left alone. */
void result_fill(int mode, const tsr_array *r);
void results_fill(int mode, const tsr_array *results, int32_t n);
/* The same for a call's results before its run, from the sizes its
 * validation kept in call->result_bytes (the fast path sizes nothing). */
void call_results_fill(struct tsr_call *call);
int64_t result_unwritten_count(const tsr_array *r);

/* results.c */
int32_t results_count(const struct tsr_call *call);
int results_prepare(struct tsr_call *call);
int results_check(struct tsr_call *call);
/* In mode unwritten=check: 1 with why naming the first result of
 * args->results that still holds the marker and how many of its elements
 * do, else 0 (always 0 in another mode); for calls and served calls alike.
 * results_unwritten_fail fails the call with it. */
int results_unwritten_why(const tsr_component *c, int mode, const tsr_args *args, char *why,
                          size_t n);
int results_unwritten_fail(struct tsr_call *call);

#endif
