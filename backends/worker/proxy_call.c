/* SPDX-License-Identifier: MIT */
/* A call in worker mode: the validated call is written to a worker's
 * channel as binrefs, the worker runs the endpoint on the same pages, and
 * its answer is read back. Inputs already in the arena cross by reference;
 * others are copied once into call-owned staging buffers in the arena.
 * With the files transport the binrefs name files instead (proxy_files.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/invalid_input.h"
#include "pool.h"

/* The call's state here, made at its first run: the slot it used last
 * and its staging buffers (n_in inputs, then up to max(n_in, n_out) seeds,
 * more when paths inside JSON fields make the seeds more). */
static proxy_call *proxy_of(tsr_call *call) {
    void **slot = call_backend_slot(call);
    proxy_call *pc = *slot;
    int32_t seeds = call_args(call)->n_seeds;
    if (pc && seeds <= pc->n_staging - pc->n_in) return pc;   /* every call's path */
    component_schema s = backend_schema(call_component(call));
    int32_t n = s.n_in + (s.n_in > s.n_out ? s.n_in : s.n_out);
    if (s.n_in + seeds > n) n = s.n_in + seeds;
    proxy_call *grown = realloc(pc, sizeof *pc + (size_t)n * sizeof pc->staging[0]);
    if (!grown) return NULL;
    if (!pc) grown->last_worker = call_lane(call);
    int32_t had = pc ? grown->n_staging : 0;
    memset(&grown->staging[had], 0, (size_t)(n - had) * sizeof grown->staging[0]);
    grown->n_staging = n;
    grown->n_in = s.n_in;
    /* Only a differentiable JSON field's entries carry paths. */
    grown->json_wrt = 0;
    for (int32_t i = 0; i < s.n_in + s.n_out; i++) {
        const tsr_field *f = i < s.n_in ? &s.in[i].field : &s.out[i - s.n_in].field;
        if (f->kind == TSR_KIND_JSON && (f->flags & TSR_FIELD_DIFFERENTIABLE)) grown->json_wrt = 1;
    }
    return *slot = grown;
}

void worker_call_free(tsr_component *c, void *call_state) {
    proxy_call *pc = call_state;
    for (int32_t k = 0; k < pc->n_staging; k++) result_release(c, &pc->staging[k]);
    free(pc);
}

/* The binref of an array, copying it into the arena when it lies outside
 * (with files: appending it to the request's file through *fw). */
static int wire_input(tsr_call *call, int slot, const tsr_array *a, int text, result_buf *staging,
                      binref_writer **fw, wire_array *w) {
    tsr_component *c = call_component(call);
    worker_backend *wb = worker_backend_of(c);
    size_t bytes = 0;
    shape_bytes(a, &bytes); /* validated before: cannot overflow */
    /* Text crosses with the NUL core put after it (request.c checks it). */
    bytes += (size_t)(text != 0);
    w->dtype = a->dtype;
    w->rank = a->rank;
    memcpy(w->shape, a->shape, (size_t)a->rank * sizeof(int64_t));
    memset(&w->ref, 0, sizeof w->ref);
    /* An absent optional input crosses as what it is: dtype invalid, rank
     * 0, no bytes (request.c knows it by that). */
    /* abstract_eval sends shapes only, but the bytes of text (options). */
    if ((call_args(call)->endpoint == TSR_EP_ABSTRACT_EVAL && !text) || tsr_input_absent(a))
        return 0;
    if (wb->spool) {
        uint64_t t0 = backend_now_ns();
        int rc = files_wire(call, slot, fw, a, bytes, &w->ref);
        backend_count(c, BACKEND_STAT_COPY_NS, backend_now_ns() - t0);
        return rc;
    }
    if (bytes > 0 && (uintptr_t)a->data % wire_alignment(a->dtype) == 0 &&
        arena_locate(wb->arena, a->data, bytes, &w->ref) == 0) {
        backend_count(c, BACKEND_STAT_BY_REF, bytes);
        return 0;
    }
    char why[300];
    void *copy = result_reserve(c, staging, bytes, why, sizeof why);
    if (!copy)
        return call_fail(call, TSR_E_SHM, "cannot stage %zu input bytes in shared memory: %s",
                         bytes, why);
    if (bytes) {
        /* Only a copy pays for its clock pair. */
        uint64_t t0 = backend_now_ns();
        memcpy(copy, a->data, bytes);
        backend_count(c, BACKEND_STAT_COPY_NS, backend_now_ns() - t0);
    }
    arena_locate(wb->arena, copy, bytes ? bytes : 1, &w->ref);
    w->ref.bytes = bytes;
    backend_count(c, BACKEND_STAT_COPIED, bytes);
    return 0;
}

/* Results the host sized are passed as binrefs; the others (data NULL)
 * as a shape with -1 for the dims the plugin decides. */
static void wire_result(tsr_call *call, const tsr_array *r, wire_array *w) {
    w->dtype = r->dtype;
    w->rank = r->rank;
    memcpy(w->shape, r->shape, (size_t)r->rank * sizeof(int64_t));
    memset(&w->ref, 0, sizeof w->ref);
    size_t bytes = 0;
    if (r->data && shape_bytes(r, &bytes) == 0) {
        /* Host-sized results are arena buffers of at least 64 bytes; with
         * files only their size travels (the worker uses its own memory). */
        arena *a = worker_backend_of(call_component(call))->arena;
        if (a) arena_locate(a, r->data, bytes ? bytes : 1, &w->ref);
        w->ref.bytes = bytes;
    }
}

/* The request's layout from the host's own counts: the worker can change
 * those in the block, and must not move where the host reads. */
static int host_layout(const tsr_call *call, chan_block *b, chan_request_view *v) {
    const tsr_args *a = call_args(call);
    return chan_request_layout_of(b, a->n_inputs, a->n_wrt_in, a->n_wrt_out, a->n_seeds,
                                  a->n_results, v);
}

/* Entries of the derivative lists on JSON fields cross with their paths
 * (channel.h); an array field's entry is its field, as its index says. */
static int entry_has_path(const component_schema *sc, int in, int32_t f) {
    return (in ? sc->in : sc->out)[f].field.kind == TSR_KIND_JSON;
}

static uint32_t paths_bytes(const tsr_call *call) {
    const tsr_args *a = call_args(call);
    component_schema sc = backend_schema(call_component(call));
    uint64_t total = 0;
    for (int32_t k = 0; k < a->n_wrt_in; k++)
        if (entry_has_path(&sc, 1, a->wrt_in[k])) total += strlen(a->wrt_in_paths[k]) + 1;
    for (int32_t k = 0; k < a->n_wrt_out; k++)
        if (entry_has_path(&sc, 0, a->wrt_out[k])) total += strlen(a->wrt_out_paths[k]) + 1;
    return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

static void write_paths(const tsr_call *call, char *at) {
    const tsr_args *a = call_args(call);
    component_schema sc = backend_schema(call_component(call));
    for (int32_t k = 0; k < a->n_wrt_in + a->n_wrt_out; k++) {
        int in = k < a->n_wrt_in;
        int32_t j = in ? k : k - a->n_wrt_in;
        if (!entry_has_path(&sc, in, in ? a->wrt_in[j] : a->wrt_out[j])) continue;
        const char *p = in ? a->wrt_in_paths[j] : a->wrt_out_paths[j];
        size_t len = strlen(p) + 1;
        memcpy(at, p, len);
        at += len;
    }
}

static int write_request(tsr_call *call, proxy_call *pc, chan_end *end, binref_writer **fw) {
    chan_block *b = end->blk;
    const tsr_args *args = call_args(call);
    int slot = pc->last_worker;
    b->unwritten = backend_options(call_component(call))->unwritten;
    b->endpoint = args->endpoint;
    b->n_inputs = args->n_inputs;
    b->n_wrt_in = args->n_wrt_in;
    b->n_wrt_out = args->n_wrt_out;
    b->n_seeds = args->n_seeds;
    b->n_results = args->n_results;
    b->alloc_index = -1;
    b->status = 0;
    b->plugin_status = 0;
    b->message[0] = '\0';
    chan_request_view v;
    if (host_layout(call, b, &v) != 0)
        return call_fail(call, TSR_E_UNSUPPORTED,
                         "the request (%d inputs, %d results) does not fit the worker channel",
                         (int)args->n_inputs, (int)args->n_results);
    char why[300];
    size_t need = chan_request_bytes(args->n_inputs, args->n_wrt_in, args->n_wrt_out,
                                     args->n_seeds, args->n_results);
    uint32_t paths = pc->json_wrt ? paths_bytes(call) : 0;
    if (!chan_request_paths(b, need, paths))
        return call_fail(call, TSR_E_UNSUPPORTED,
                         "the request's paths inside JSON fields (%u bytes) do not fit the "
                         "worker channel",
                         (unsigned)paths);
    if (chan_reserve(end, need + paths, why, sizeof why) != 0)
        return call_fail(call, TSR_E_SHM, "cannot reserve the worker channel: %s", why);
    memcpy(v.wrt_in, args->wrt_in, (size_t)args->n_wrt_in * sizeof(int32_t));
    memcpy(v.wrt_out, args->wrt_out, (size_t)args->n_wrt_out * sizeof(int32_t));
    b->paths_bytes = paths;
    if (paths) write_paths(call, chan_request_paths(b, need, paths));
    int32_t n_in = args->n_inputs;
    component_schema sc = backend_schema(call_component(call));
    for (int32_t i = 0; i < n_in; i++) {
        int text = sc.in[i].field.kind != TSR_KIND_ARRAY;
        int rc = wire_input(call, slot, &args->inputs[i], text, &pc->staging[i], fw, &v.inputs[i]);
        if (rc) return rc;
    }
    for (int32_t k = 0; k < args->n_seeds; k++) {
        int rc = wire_input(call, slot, &args->seeds[k], 0, &pc->staging[n_in + k], fw,
                            &v.seeds[k]);
        if (rc) return rc;
    }
    for (int32_t k = 0; k < args->n_results; k++) wire_result(call, &args->results[k], &v.results[k]);
    if (!*fw) return 0;
    uint64_t t0 = backend_now_ns();
    int rc = files_flush(call, *fw);
    backend_count(call_component(call), BACKEND_STAT_COPY_NS, backend_now_ns() - t0);
    return rc;
}

/* CHAN_ALLOC: the plugin set the shape of result k; allocate it here,
 * with the same checks as in-process, and answer with its binref. What
 * the worker wrote is read once each: it could change it meanwhile. */
void worker_answer_alloc(tsr_call *call, chan_block *b) {
    chan_request_view v;
    int32_t k = b->alloc_index;
    char why[TSR_ERRMSG_MAX];
    int code = TSR_E_PLUGIN_RESULT;
    void *p = NULL;
    int32_t rank = -1;
    const tsr_args *args = call_args(call);
    if (host_layout(call, b, &v) == 0 && k >= 0 && k < args->n_results) rank = v.results[k].rank;
    if (rank < 0 || rank > TSR_MAX_RANK) {
        snprintf(why, sizeof why, "the worker asked for an invalid result (index %d)", (int)k);
    } else {
        tsr_array *r = &args->results[k];
        r->rank = rank;
        memcpy(r->shape, v.results[k].shape, (size_t)rank * sizeof(int64_t));
        /* A derivative inside a JSON field has the plugin's dtype (which
         * call_result_alloc checks); any other result keeps the host's. */
        r->dtype = (tsr_dtype)v.results[k].dtype;
        p = call_result_alloc(call, k, &code, why, sizeof why);
        if (p) wire_result(call, r, &v.results[k]);
    }
    b->status = p ? 0 : code;
    if (!p) snprintf(b->message, sizeof b->message, "%s", why);
}

/* The worker's final word on each result: its shape and where it lies. */
static int read_results(tsr_call *call, int slot, chan_block *b) {
    chan_request_view v;
    const tsr_args *args = call_args(call);
    worker_backend *wb = worker_backend_of(call_component(call));
    if (host_layout(call, b, &v) != 0)
        return call_fail(call, TSR_E_WORKER, "the worker corrupted its answer");
    for (int32_t k = 0; k < args->n_results; k++) {
        tsr_array *r = &args->results[k];
        const wire_array *w = &v.results[k];
        int32_t rank = w->rank; /* read once: the worker could change it */
        if (rank < 0 || rank > TSR_MAX_RANK)
            return call_fail(call, TSR_E_PLUGIN_RESULT, "result %d came back with rank %d",
                             (int)k, (int)rank);
        r->dtype = (tsr_dtype)w->dtype;
        r->rank = rank;
        memcpy(r->shape, w->shape, (size_t)rank * sizeof(int64_t));
        if (args->endpoint != TSR_EP_ABSTRACT_EVAL && r->data && wb->arena) {
            void *at = arena_address(wb->arena, &w->ref);
            if (at != r->data)
                return call_fail(call, TSR_E_PLUGIN_RESULT,
                                 "result %d came back at another place than it was given",
                                 (int)k);
        }
    }
    if (!wb->spool) return 0;   /* the results lie in the arena: no copy */
    uint64_t t0 = backend_now_ns();
    int rc = files_read_results(call, slot, &v);
    backend_count(call_component(call), BACKEND_STAT_COPY_NS, backend_now_ns() - t0);
    return rc;
}

/* CHAN_DONE: the worker's status, message and results. */
int worker_answer_done(tsr_call *call, chan_block *b) {
    int32_t status = b->status;
    proxy_call *pc = *call_backend_slot(call);
    if (status == 0) return read_results(call, pc ? pc->last_worker : 0, b);
    /* A copy: the worker could rewrite the block while we format. */
    char msg[sizeof b->message];
    memcpy(msg, b->message, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    /* An input the endpoint refused (served.c kept its "invalid:" line). */
    if (status == TSR_E_VALUE) return call_fail_plugin(call, TSR_E_VALUE, "", msg);
    return call_fail(call, status < 0 && status >= CHAN_STATUS_MIN ? status : TSR_E_WORKER, "%s",
                     msg);
}

static int check_for_cancel(void *call) { return call_cancel_check(call); }

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The call was cancelled while the worker of slot s had it: ask the worker
 * to stop (its plugin sees tsr_ctx_cancelled; a request it has not started
 * is refused) and wait cancel_grace_ms for the answer, refusing its
 * allocations meanwhile. A worker that answers has finished the request
 * and serves on. One that does not is killed, and its slot starts another
 * worker at the next call that needs one, whatever `restart` says. */
static int stop_in_worker(tsr_call *call, pool_slot *s, chan_block *b) {
    tsr_component *c = call_component(call);
    char why[TSR_ERRMSG_MAX - 160];
    long pid = (long)s->proc.pid;
    int grace = backend_options(c)->cancel_grace_ms;
    atomic_store(&b->cancel, 1);
    uint64_t until = now_ms() + (uint64_t)grace;
    uint32_t post = 0;
    int st;
    for (;;) {
        uint64_t t = now_ms();
        int left = t >= until ? 1 : (int)(until - t);
        st = worker_await(&s->proc, post, left, "did not stop", why, sizeof why);
        if (st != CHAN_ALLOC) break;
        b->status = TSR_E_CANCELLED;
        snprintf(b->message, sizeof b->message, "the call was cancelled");
        post = CHAN_ALLOC_DONE;
    }
    if (st == CHAN_DONE)
        return call_fail(call, TSR_E_CANCELLED,
                         b->status == 0 ? "cancelled; the worker (pid %ld) had finished the call, "
                                          "its results are dropped"
                                        : "cancelled; the worker (pid %ld) stopped the call and "
                                          "serves on",
                         pid);
    if (st == TSR_E_TIMEOUT) {
        pool_mark_stopped(c, s, why);
        return call_fail(call, TSR_E_CANCELLED,
                         "cancelled; the worker (pid %ld) did not stop within %d ms and was "
                         "killed; another starts at the next call",
                         pid, grace);
    }
    pool_mark_dead(c, s, why);
    return call_fail(call, TSR_E_CANCELLED, "cancelled; meanwhile %s", why);
}

/* One request to the worker of slot s, answering its allocation requests.
 * Returns 0, a failure of the call, or WORKER_DIED_IDLE when the worker was
 * found dead before it took the request (it died between calls): the
 * request never reached it, so it may go to another worker. A death after
 * the worker took the request fails the call: it may have had effects. */
#define WORKER_DIED_IDLE 1
static int exchange(tsr_call *call, proxy_call *pc, pool_slot *s) {
    tsr_component *c = call_component(call);
    const struct tsr_options *o = backend_options(c);
    char why[TSR_ERRMSG_MAX - 128];
    chan_block *b = s->proc.end.blk;
    binref_writer *fw = NULL;
    int rc = write_request(call, pc, &s->proc.end, &fw);
    atomic_store(&b->taken, 0);
    /* Relaxed: posting the request (a seq_cst store) publishes it. */
    if (atomic_load_explicit(&b->cancel, memory_order_relaxed))
        atomic_store_explicit(&b->cancel, 0, memory_order_relaxed);
    worker_cancel cx = {.flag = call_cancel_flag(call),
                        .fd = call_cancel_fd(call),
                        .check_ms = call_cancel_check_ms(call),
                        .check = check_for_cancel,
                        .user = call};
    uint32_t post = CHAN_REQUEST;
    while (rc == 0) {
        /* The wait alone: answering the worker's allocations is host work. */
        uint64_t t0 = backend_now_ns();
        int st = worker_roundtrip_cancel(&s->proc, post, o->timeout_ms, &cx, why, sizeof why);
        backend_count(c, BACKEND_STAT_WAIT_NS, backend_now_ns() - t0);
        if (st == TSR_E_CANCELLED) {
            rc = stop_in_worker(call, s, b);
        } else if (st < 0) {
            int idle = st == TSR_E_WORKER && !atomic_load(&b->taken);
            pool_mark_dead(c, s, why);
            rc = idle ? WORKER_DIED_IDLE : call_fail(call, st, "%s", why);
        } else if (st == CHAN_ALLOC) {
            worker_answer_alloc(call, b);
            post = CHAN_ALLOC_DONE;
            continue;
        } else {
            rc = worker_answer_done(call, b);
        }
        break;
    }
    /* After a success, a failure, a death or a timeout alike. */
    if (worker_backend_of(c)->spool) files_end(call, pc->last_worker, fw);
    return rc;
}

int worker_invoke(tsr_call *call) {
    tsr_component *c = call_component(call);
    proxy_call *pc = proxy_of(call);
    if (!pc) return call_fail(call, TSR_E_NOMEM, "out of memory");
    char why[TSR_ERRMSG_MAX - 128];
    int code = 0, rc;
    /* A worker found dead between calls never saw this request: it goes to
     * another live worker (or, restart=auto, to the restarted one); each
     * try uses up a worker, so the tries are bounded by the pool. */
    int tries = worker_backend_of(c)->pool->n + 1;
    for (int attempt = 0;; attempt++) {
        pool_slot *s = pool_acquire(c, pc->last_worker, &code, why, sizeof why);
        if (!s) {
            pool_report_output(c, 0);
            return call_fail(call, code, "%s", why);
        }
        pc->last_worker = pool_slot_index(c, s);
        rc = exchange(call, pc, s);
        if (rc == WORKER_DIED_IDLE) snprintf(why, sizeof why, "%s", s->death);
        pool_release(c, s);
        if (rc != WORKER_DIED_IDLE) break;
        if (attempt + 1 == tries) {
            pool_report_output(c, 0);
            return call_fail(call, TSR_E_WORKER, "%s", why);
        }
    }
    pool_report_output(c, 0);
    backend_count(c, BACKEND_STAT_CALLS, 1);
    return rc;
}
