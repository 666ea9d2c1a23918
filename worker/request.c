/* SPDX-License-Identifier: MIT */
/* One request in the worker: check what the host wrote, map its binrefs,
 * call the plugin's endpoint directly, and write the answer back.
 *
 * The host has validated the call against the schema already; the checks
 * here are what keeps a corrupted block from turning into a fault in the
 * plugin: counts, indices, dtypes and ranks against the schema, and every
 * array's byte count against its shape. */
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"
#include "core/schema.h"
#include "worker.h"

static int grow(void *pp, size_t *cap, size_t want, size_t elem) {
    void **p = pp;
    if (want <= *cap) return 0;
    void *q = realloc(*p, want * elem);
    if (!q) return -1;
    *p = q;
    *cap = want;
    return 0;
}

void worker_release_request(worker_state *ws) {
    free(ws->inputs);
    free(ws->seeds);
    free(ws->results);
    free(ws->given);
    free(ws->wrt_in);
    free(ws->wrt_out);
    free(ws->wrt_in_paths);
    free(ws->wrt_out_paths);
    free(ws->path_buf);
}

/* What result k must be, as core lays results out; 1 when it is a
 * derivative inside a JSON field (free-form: dtype and rank the plugin's). */
static int result_expect(const worker_state *ws, int32_t n_wi, int32_t k, tsr_dtype *dtype,
                         int32_t *rank) {
    result_layout l;
    result_layout_of(ws->comp, ws->ep, ws->wrt_in, n_wi, ws->wrt_out, k, &l);
    *dtype = l.dtype;
    *rank = l.rank;
    return l.free_form;
}

/* An array's name in messages, written only when a message needs it:
 * formatting it for every array of every request cost more than the rest
 * of the request's checks. section: "input", "tangent_vector" or
 * "cotangent_vector" with the field's name, or NULL for result `result`. */
typedef struct array_name {
    const char *section;
    const char *field;
    int32_t result;
} array_name;

static const char *name_text(const worker_state *ws, const array_name *an, char *buf,
                             size_t n) {
    if (!an->section) {
        result_layout l;
        result_layout_of(ws->comp, ws->ep, ws->wrt_in, ws->n_wrt_in, ws->wrt_out, an->result, &l);
        return result_layout_name(ws->comp, &l, buf, n);
    }
    return array_label(an->section, an->field, buf, n);
}

/* What an array must carry: data (inputs, seeds), a full shape only
 * (abstract_eval's inputs), a shape with dims still unknown (-1) and no
 * data (abstract_eval's results), data unless the shape is unknown
 * (results the plugin allocates itself), or data for a result (the host's
 * answer to tsr_ctx_alloc). */
enum { WANT_DATA, NO_DATA, SHAPE_ONLY, MAY_ALLOCATE, RESULT_DATA };

/* Where the bytes of a checked binref are: mapped from the arena, or with
 * files a private buffer (read from the spool for inputs and seeds).
 * slot: the input or seed's index (inputs first), or the result's. */
static void *resolve(worker_state *ws, const binref *ref, int data, int32_t slot,
                     const char *what, char *why, size_t n) {
    if (!ws->files) return arena_view_resolve(ws->view, ref, why, n);
    if (data == MAY_ALLOCATE || data == RESULT_DATA)
        return files_result(ws, slot, ref->bytes, why, n);
    return files_input(ws, slot, ref, what, why, n);
}

/* A wire array as the plugin sees it. `dtype` and `rank` are the schema's
 * (rank TSR_RANK_ANY: any the channel holds; served_check checks it);
 * slot and what as for resolve(). text: a TEXT or JSON input, whose bytes
 * are followed by a NUL (one more byte in the binref). */
static int take_array(worker_state *ws, const wire_array *w, tsr_array *a, tsr_dtype dtype,
                      int32_t rank, int data, int text, int32_t slot, const char *what,
                      const array_name *an, char *why, size_t n) {
    char label[SERVE_LABEL_MAX];
#define LABEL name_text(ws, an, label, sizeof label)
    binref ref = w->ref;
    int32_t wdtype = w->dtype, wrank = w->rank;
    if (rank == TSR_RANK_ANY && wrank >= 0 && wrank <= TSR_MAX_RANK) rank = wrank;
    if (wdtype != (int32_t)dtype || wrank != rank) {
        snprintf(why, n, "%s: dtype %d and rank %d sent, %s and rank %d expected", LABEL,
                 (int)wdtype, (int)wrank, tsr_dtype_name(dtype), (int)rank);
        return TSR_E_PAYLOAD;
    }
    a->dtype = dtype;
    a->rank = rank;
    memcpy(a->shape, w->shape, (size_t)rank * sizeof(int64_t));
    a->data = NULL;
    int unknown = 0, empty = 0;
    /* The product of the non-zero dims must stay small enough for the
     * plugin's own int64 arithmetic, even when another dim is 0. */
    uint64_t count = 1;
    for (int32_t d = 0; d < rank; d++) {
        int64_t dim = a->shape[d];
        if (dim == -1 && (data == MAY_ALLOCATE || data == SHAPE_ONLY)) {
            unknown = 1;
        } else if (dim < 0) {
            snprintf(why, n, "%s: dimension %d is %lld", LABEL, (int)d, (long long)dim);
            return TSR_E_PAYLOAD;
        } else if (dim == 0) {
            empty = 1;
        } else if ((uint64_t)dim > (UINT64_MAX >> 4) / count) {
            snprintf(why, n, "%s: the element count overflows", LABEL);
            return TSR_E_PAYLOAD;
        } else {
            count *= (uint64_t)dim;
        }
    }
    if (empty) count = 0;
    if (data == NO_DATA || data == SHAPE_ONLY || (unknown && ref.bytes == 0)) return 0;
    uint64_t bytes = count * tsr_dtype_size(dtype) + (uint64_t)(text != 0);
    if (unknown || ref.bytes != bytes) {
        snprintf(why, n, "%s: a binref of %llu bytes for %llu elements of %s", LABEL,
                 (unsigned long long)ref.bytes, (unsigned long long)count, tsr_dtype_name(dtype));
        return TSR_E_PAYLOAD;
    }
    /* Files are read into aligned buffers: any offset will do there. */
    if (!ws->files && ref.offset % wire_alignment(dtype) != 0) {
        snprintf(why, n, "%s: offset %llu is not aligned for %s", LABEL,
                 (unsigned long long)ref.offset, tsr_dtype_name(dtype));
        return TSR_E_PAYLOAD;
    }
    char cause[300];
    if (!(a->data = resolve(ws, &ref, data, slot, what, cause, sizeof cause))) {
        snprintf(why, n, "%s: %s", LABEL, cause);
        return TSR_E_PAYLOAD;
    }
    /* With files the bytes are read later, and the NUL put after them then
     * (files_text_nul); in the arena it must be there now. */
    if (text && !ws->files && ((const char *)a->data)[bytes - 1] != '\0') {
        snprintf(why, n, "%s: the text is not followed by a NUL", LABEL);
        return TSR_E_PAYLOAD;
    }
    return 0;
#undef LABEL
}

/* An optional input the host left out (proxy_call.c's wire_input): dtype
 * invalid and rank 0. Any other field sent so fails take_array's check. */
static int absent_on_wire(const wire_array *w, const tsr_field *f) {
    return (f->flags & TSR_FIELD_OPTIONAL) && w->dtype == (int32_t)TSR_DTYPE_INVALID &&
           w->rank == 0;
}

/* Fields to differentiate: each a differentiable field, named once. */
static int take_indices(const int32_t *src, int32_t count, const tsr_component *c, int inputs,
                        int32_t *dst, const char *label, char *why, size_t n) {
    int32_t limit = inputs ? tsr_component_n_inputs(c) : tsr_component_n_outputs(c);
    for (int32_t k = 0; k < count; k++) {
        int32_t f = src[k];
        if (f < 0 || f >= limit) {
            snprintf(why, n, "%s[%d] = %d is not a field index (0 to %d)", label, (int)k, (int)f,
                     (int)limit - 1);
            return TSR_E_PAYLOAD;
        }
        const tsr_field *field = inputs ? tsr_component_input(c, f) : tsr_component_output(c, f);
        if (!(field->flags & TSR_FIELD_DIFFERENTIABLE)) {
            snprintf(why, n, "%s names field '%s', which is not differentiable", label,
                     field->name);
            return TSR_E_PAYLOAD;
        }
        /* A JSON field may come once per path (take_paths checks those). */
        for (int32_t j = 0; field->kind != TSR_KIND_JSON && j < k; j++)
            if (dst[j] == f) {
                snprintf(why, n, "%s names field %d twice", label, (int)f);
                return TSR_E_PAYLOAD;
            }
        dst[k] = f;
    }
    return 0;
}

/* The differentiation lists and their paths, grown together. */
static int grow_wrt(worker_state *ws, size_t n_wi, size_t n_wo) {
    size_t cap_in = ws->cap_wrt_in, cap_out = ws->cap_wrt_out;
    if (grow(&ws->wrt_in, &ws->cap_wrt_in, n_wi, sizeof *ws->wrt_in) ||
        grow(&ws->wrt_out, &ws->cap_wrt_out, n_wo, sizeof *ws->wrt_out))
        return -1;
    /* the paths' capacities follow the indices' */
    if (ws->cap_wrt_in != cap_in || !ws->wrt_in_paths) {
        void *p = realloc(ws->wrt_in_paths, (ws->cap_wrt_in + 1) * sizeof *ws->wrt_in_paths);
        if (!p) return -1;
        ws->wrt_in_paths = p;
    }
    if (ws->cap_wrt_out != cap_out || !ws->wrt_out_paths) {
        void *p = realloc(ws->wrt_out_paths, (ws->cap_wrt_out + 1) * sizeof *ws->wrt_out_paths);
        if (!p) return -1;
        ws->wrt_out_paths = p;
    }
    return 0;
}

/* The paths of entries on JSON fields (channel.h), copied out of the
 * block (the host could rewrite it while the plugin runs) and checked:
 * each inside its field, in Tesseract's syntax, and the area used up. */
static int take_paths(worker_state *ws, chan_block *b, int32_t n_in, int32_t n_wi, int32_t n_wo,
                      int32_t n_s, int32_t n_r, char *why, size_t n) {
    const tsr_component *c = ws->comp;
    uint32_t bytes = b->paths_bytes;   /* read once */
    size_t at_req = chan_request_bytes(n_in, n_wi, n_wo, n_s, n_r);
    const char *src = chan_request_paths(b, at_req, bytes);
    if (!src) {
        snprintf(why, n, "its paths (%u bytes) do not fit the channel", (unsigned)bytes);
        return TSR_E_PAYLOAD;
    }
    if (bytes > ws->cap_path_buf) {
        char *p = realloc(ws->path_buf, bytes);
        if (!p) {
            snprintf(why, n, "out of memory");
            return TSR_E_NOMEM;
        }
        ws->path_buf = p;
        ws->cap_path_buf = bytes;
    }
    if (bytes) memcpy(ws->path_buf, src, bytes);
    size_t used = 0;
    for (int32_t k = 0; k < n_wi + n_wo; k++) {
        int in = k < n_wi;
        int32_t j = in ? k : k - n_wi;
        const tsr_field *f = in ? tsr_component_input(c, ws->wrt_in[j])
                                : tsr_component_output(c, ws->wrt_out[j]);
        if (f->kind != TSR_KIND_JSON) continue;
        char *p = ws->path_buf + used;
        char *end = used < bytes ? memchr(p, '\0', bytes - used) : NULL;
        char cause[300];
        if (!end) {
            snprintf(why, n, "the path of %s entry %d is missing or not NUL-terminated",
                     in ? "wrt_in" : "wrt_out", (int)j);
            return TSR_E_PAYLOAD;
        }
        if (wrt_path_check(f->name, p, cause, sizeof cause) != 0) {
            snprintf(why, n, "%s entry %d: %s", in ? "wrt_in" : "wrt_out", (int)j, cause);
            return TSR_E_PAYLOAD;
        }
        (in ? ws->wrt_in_paths : ws->wrt_out_paths)[j] = p;
        used += (size_t)(end - p) + 1;
    }
    if (used != bytes) {
        snprintf(why, n, "%u bytes of paths sent, %zu used by the entries on JSON fields",
                 (unsigned)bytes, used);
        return TSR_E_PAYLOAD;
    }
    return 0;
}

/* Counts of the request, checked against the endpoint and the schema. */
static int take_counts(worker_state *ws, chan_block *b, tsr_args *args, char *why, size_t n) {
    const tsr_component *c = ws->comp;
    int32_t n_in = b->n_inputs, n_wi = b->n_wrt_in, n_wo = b->n_wrt_out;
    int32_t n_s = b->n_seeds, n_r = b->n_results;
    if (chan_request_layout_of(b, n_in, n_wi, n_wo, n_s, n_r, &ws->v) != 0) {
        snprintf(why, n, "its counts (%d inputs, %d + %d fields to differentiate, %d seeds, %d "
                         "results) do not fit the channel",
                 (int)n_in, (int)n_wi, (int)n_wo, (int)n_s, (int)n_r);
        return TSR_E_PAYLOAD;
    }
    int32_t want_s = ep_seed_count(ws->ep, n_wi, n_wo);
    int grad = ep_is_derivative(ws->ep);
    int64_t want_r = grad ? ep_result_count(ws->ep, n_wi, n_wo) : tsr_component_n_outputs(c);
    int32_t c_in = tsr_component_n_inputs(c), c_out = tsr_component_n_outputs(c);
    /* Paths inside JSON fields may repeat a field, up to the host's bound. */
    int32_t max_wi = c_in > SCHEMA_MAX_WRT ? c_in : SCHEMA_MAX_WRT;
    int32_t max_wo = c_out > SCHEMA_MAX_WRT ? c_out : SCHEMA_MAX_WRT;
    if (n_in != c_in || n_wi > max_wi || n_wo > max_wo || n_s != want_s || n_r != want_r ||
        (!grad && (n_wi || n_wo))) {
        snprintf(why, n, "%d inputs, %d + %d fields to differentiate, %d seeds and %d results "
                         "do not match %s of a component with %d inputs and %d outputs",
                 (int)n_in, (int)n_wi, (int)n_wo, (int)n_s, (int)n_r,
                 tsr_endpoint_name(ws->ep), (int)c_in, (int)c_out);
        return TSR_E_PAYLOAD;
    }
    if (grow(&ws->inputs, &ws->cap_inputs, (size_t)n_in, sizeof *ws->inputs) ||
        grow(&ws->seeds, &ws->cap_seeds, (size_t)n_s, sizeof *ws->seeds) ||
        grow(&ws->results, &ws->cap_results, (size_t)n_r, sizeof *ws->results) ||
        grow_wrt(ws, (size_t)n_wi, (size_t)n_wo) ||
        grow(&ws->given, &ws->cap_given, (size_t)n_r, sizeof *ws->given)) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    *args = (tsr_args){
        .struct_size = sizeof(tsr_args),
        .endpoint = ws->ep,
        .inputs = ws->inputs,
        .n_inputs = n_in,
        .wrt_in = ws->wrt_in,
        .n_wrt_in = n_wi,
        .wrt_out = ws->wrt_out,
        .n_wrt_out = n_wo,
        .seeds = ws->seeds,
        .n_seeds = n_s,
        .results = ws->results,
        .n_results = n_r,
        .wrt_in_paths = ws->wrt_in_paths,
        .wrt_out_paths = ws->wrt_out_paths,
    };
    ws->n_results = n_r;
    ws->n_wrt_in = n_wi;
    int rc = take_indices(ws->v.wrt_in, n_wi, c, 1, ws->wrt_in, "wrt_in", why, n);
    if (!rc) rc = take_indices(ws->v.wrt_out, n_wo, c, 0, ws->wrt_out, "wrt_out", why, n);
    /* Whole fields: each entry's path is its field's name. */
    for (int32_t k = 0; !rc && k < n_wi; k++)
        ws->wrt_in_paths[k] = tsr_component_input(c, ws->wrt_in[k])->name;
    for (int32_t k = 0; !rc && k < n_wo; k++)
        ws->wrt_out_paths[k] = tsr_component_output(c, ws->wrt_out[k])->name;
    if (!rc) rc = take_paths(ws, b, n_in, n_wi, n_wo, n_s, n_r, why, n);
    return rc;
}

static int take_arrays(worker_state *ws, const tsr_args *args, char *why, size_t n) {
    const tsr_component *c = ws->comp;
    int abstract = ws->ep == TSR_EP_ABSTRACT_EVAL;
    /* abstract_eval too: the bytes of text inputs cross there as well. */
    if (ws->files) {
        int rc = files_begin(ws, args, why, n);
        if (rc) return rc;
    }
    for (int32_t i = 0; i < args->n_inputs; i++) {
        const tsr_field *f = tsr_component_input(c, i);
        array_name an = {"input", f->name, 0};
        if (absent_on_wire(&ws->v.inputs[i], f)) {
            ws->inputs[i] = (tsr_array){.data = NULL, .dtype = TSR_DTYPE_INVALID, .rank = 0};
            continue;   /* served_check refuses it where it may not be absent */
        }
        int text = f->kind != TSR_KIND_ARRAY;
        int rc = take_array(ws, &ws->v.inputs[i], &ws->inputs[i], f->dtype, f->rank,
                            abstract && !text ? NO_DATA : WANT_DATA, text, i, f->name, &an, why,
                            n);
        if (rc) return rc;
    }
    for (int32_t k = 0; k < args->n_seeds; k++) {
        /* jvp: tangents; vjp: cotangents; hvp: cotangents, then tangents. */
        int tangent = ws->ep == TSR_EP_JVP || (ws->ep == TSR_EP_HVP && k >= args->n_wrt_out);
        int32_t j = ws->ep == TSR_EP_HVP && tangent ? k - args->n_wrt_out : k;
        const tsr_field *f = tangent ? tsr_component_input(c, ws->wrt_in[j])
                                     : tsr_component_output(c, ws->wrt_out[j]);
        array_name an = {tangent ? "tangent_vector" : "cotangent_vector", f->name, 0};
        tsr_dtype dtype = f->dtype;
        int32_t rank = f->rank;
        if (f->kind == TSR_KIND_JSON) {
            /* Inside a JSON field: any float array, of any rank. */
            int32_t sent = ws->v.seeds[k].dtype;
            dtype = wrt_free_dtype(sent) ? (tsr_dtype)sent : TSR_FLOAT64;
            rank = TSR_RANK_ANY;
        }
        int rc = take_array(ws, &ws->v.seeds[k], &ws->seeds[k], dtype, rank, WANT_DATA, 0,
                            args->n_inputs + k, f->name, &an, why, n);
        if (rc) return rc;
    }
    for (int32_t k = 0; k < args->n_results; k++) {
        tsr_dtype dtype;
        int32_t rank;
        array_name an = {NULL, NULL, k};
        if (result_expect(ws, args->n_wrt_in, k, &dtype, &rank)) {
            /* Inside a JSON field: no buffer; the plugin shapes and allocates it. */
            if (ws->v.results[k].ref.bytes != 0) {
                snprintf(why, n, "result %d: a derivative inside a JSON field sent with a "
                                 "buffer",
                         (int)k);
                return TSR_E_PAYLOAD;
            }
            ws->results[k] = (tsr_array){.data = NULL, .dtype = TSR_FLOAT64, .rank = 0};
            ws->given[k] = NULL;
            continue;
        }
        int rc = take_array(ws, &ws->v.results[k], &ws->results[k], dtype, rank,
                            abstract ? SHAPE_ONLY : MAY_ALLOCATE, 0, k, NULL, &an, why, n);
        if (rc) return rc;
        ws->given[k] = ws->results[k].data;
    }
    return 0;
}

/* With files: each text input's buffer (read from the spool, the
 * worker's own) ends with the NUL the plugin relies on. */
static void files_text_nul(worker_state *ws, const tsr_args *args) {
    for (int32_t i = 0; i < args->n_inputs; i++) {
        const tsr_field *f = tsr_component_input(ws->comp, i);
        tsr_array *a = &ws->inputs[i];
        if (f->kind != TSR_KIND_ARRAY && a->data) ((char *)a->data)[a->shape[0]] = '\0';
    }
}

/* ---- tsr_ctx_alloc ------------------------------------------------------ */

/* tsr_ctx_alloc in the worker: the host allocates in its arena (it owns
 * the arena's bookkeeping) and answers with a binref: one extra round
 * trip, only for results whose shape depends on values. */
static void *alloc_refused(int *code, int refusal, char *why, size_t n, const char *msg) {
    if (why != msg) snprintf(why, n, "%s", msg);
    *code = refusal;
    return NULL;
}

static void *alloc_from_host(void *user, int32_t k, int *code, char *why, size_t n) {
    worker_state *ws = user;
    chan_block *b = ws->end.blk;
    if (ws->host_gone) return alloc_refused(code, TSR_E_WORKER, why, n, "the host is gone");
    if (k < 0 || k >= ws->n_results) {
        snprintf(why, n, "tsr_ctx_alloc: result index %d out of range (%d results)", (int)k,
                 (int)ws->n_results);
        return alloc_refused(code, TSR_E_PLUGIN_RESULT, why, n, why);
    }
    tsr_array *r = &ws->results[k];
    wire_array *w = &ws->v.results[k];
    if (r->rank < 0 || r->rank > TSR_MAX_RANK) {
        snprintf(why, n, "tsr_ctx_alloc: result %d has rank %d (0 to %d allowed)", (int)k,
                 (int)r->rank, TSR_MAX_RANK);
        return alloc_refused(code, TSR_E_PLUGIN_RESULT, why, n, why);
    }
    w->dtype = r->dtype;   /* the host reads it for a result inside a JSON field */
    w->rank = r->rank;
    memcpy(w->shape, r->shape, (size_t)r->rank * sizeof(int64_t));
    b->alloc_index = k;
    b->status = 0;
    chan_post(&ws->end, CHAN_ALLOC);
    struct pollfd host = {.fd = ws->host_pidfd, .events = POLLIN};
    int s = chan_wait(&ws->end, CHAN_BIT(CHAN_ALLOC_DONE), &host, 1, -1, NULL);
    if (s != CHAN_ALLOC_DONE) {
        ws->host_gone = 1;
        return alloc_refused(code, TSR_E_WORKER, why, n,
                             "the host went away during tsr_ctx_alloc");
    }
    int32_t status = b->status;
    if (status != 0) {
        char msg[sizeof b->message];
        memcpy(msg, b->message, sizeof msg); /* a copy: the host could rewrite it */
        msg[sizeof msg - 1] = '\0';
        return alloc_refused(code,
                             status < 0 && status >= CHAN_STATUS_MIN ? status : TSR_E_PLUGIN_RESULT,
                             why, n, msg);
    }
    /* The host's answer is checked like a request: it must hold the shape. */
    wire_array answer = *w;
    tsr_array a;
    tsr_dtype dtype;
    int32_t rank;
    /* Free-form: the dtype the plugin set, which the host accepted. */
    if (result_expect(ws, ws->n_wrt_in, k, &dtype, &rank)) dtype = r->dtype;
    array_name an = {NULL, NULL, k};
    int rc = take_array(ws, &answer, &a, dtype, r->rank, RESULT_DATA, 0, k, NULL, &an, why, n);
    if (rc) return alloc_refused(code, TSR_E_WORKER, why, n, why);
    if (memcmp(a.shape, r->shape, (size_t)r->rank * sizeof(int64_t)) != 0)
        return alloc_refused(code, TSR_E_WORKER, why, n, "the host allocated another shape");
    r->data = a.data;
    r->dtype = dtype;
    ws->given[k] = a.data;
    return a.data;
}

/* ---- running it ---------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static void answer(chan_block *b, int status,
                                                         const char *fmt, ...) {
    char msg[TSR_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->status = status;
    memcpy(b->message, msg, sizeof msg);
}

/* After a successful endpoint: results stay where they were given, and
 * their final headers go back on the wire (the host checks the shapes). */
static int write_results(worker_state *ws, const tsr_args *args, char *why, size_t n) {
    int abstract = ws->ep == TSR_EP_ABSTRACT_EVAL;
    for (int32_t k = 0; k < args->n_results; k++) {
        const tsr_array *r = &ws->results[k];
        wire_array *w = &ws->v.results[k];
        char name[SERVE_LABEL_MAX];
        array_name an = {NULL, NULL, k};
        tsr_dtype dtype;
        int32_t rank;
        /* Free-form: the host compares the dtype with the one it allocated. */
        if (result_expect(ws, args->n_wrt_in, k, &dtype, &rank)) dtype = r->dtype;
        if (r->rank < 0 || r->rank > TSR_MAX_RANK) {
            snprintf(why, n, "%s: rank %d set", name_text(ws, &an, name, sizeof name),
                     (int)r->rank);
            return TSR_E_PLUGIN_RESULT;
        }
        if (!abstract && (r->data != ws->given[k] || r->dtype != dtype)) {
            snprintf(why, n, "%s: the plugin changed its data pointer or dtype (results are "
                             "written in place, or allocated with tsr_ctx_alloc)",
                     name_text(ws, &an, name, sizeof name));
            return TSR_E_PLUGIN_RESULT;
        }
        w->dtype = r->dtype;
        w->rank = r->rank;
        memcpy(w->shape, r->shape, (size_t)r->rank * sizeof(int64_t));
    }
    return 0;
}

void worker_run_request(worker_state *ws) {
    atomic_store(&ws->end.blk->taken, 1);
    chan_block *b = ws->end.blk;
    tsr_component *c = ws->comp;
    char why[TSR_ERRMSG_MAX - 64];
    int32_t ep = b->endpoint;
    b->plugin_status = 0;
    if (ep < 0 || ep >= TSR_EP_COUNT) {
        answer(b, TSR_E_ARGUMENT, "malformed request from the host: endpoint %d does not exist",
               (int)ep);
        return;
    }
    ws->ep = (tsr_endpoint)ep;
    if (!tsr_component_has_native_endpoint(c, ws->ep)) {
        answer(b, TSR_E_UNSUPPORTED, "the plugin does not implement %s",
               tsr_endpoint_name(ws->ep));
        return;
    }
    tsr_args args;
    int rc = take_counts(ws, b, &args, why, sizeof why);
    if (!rc) rc = take_arrays(ws, &args, why, sizeof why);
    if (!rc) rc = served_check(ws->srv, &args, why, sizeof why);
    if (rc) {
        answer(b, rc, "malformed request from the host: %s", why);
        return;
    }
    if (ws->files) {
        if ((rc = files_read_inputs(ws, why, sizeof why)) != 0) {
            answer(b, rc, "cannot read the arrays of the request: %s", why);
            return;
        }
        files_text_nul(ws, &args);
    }
    if (atomic_load(&b->cancel)) {
        answer(b, TSR_E_CANCELLED, "cancelled before the plugin ran");
        return;
    }
    int ret;
    /* Read once: the host could change it while the plugin runs. */
    int32_t asked = b->unwritten;
    int unwritten = asked == UNWRITTEN_CHECK || asked == UNWRITTEN_KEEP ? asked
                                                                                : UNWRITTEN_ZERO;
    rc = served_invoke(ws->srv, &args, unwritten, alloc_from_host, ws, &b->cancel, &ret, why,
                       sizeof why);
    /* What the plugin printed reaches the host before the answer does. */
    if (__fpending(stdout) > 0) fflush(stdout);
    b->plugin_status = ret;
    if (rc) {
        answer(b, rc, "%s", why);
    } else if ((rc = write_results(ws, &args, why, sizeof why)) != 0) {
        answer(b, rc, "%s", why);
    } else if (ws->files && (rc = files_write_results(ws, &args, why, sizeof why)) != 0) {
        answer(b, rc, "cannot write the results: %s", why);
    } else {
        b->status = 0;
        b->message[0] = '\0';
    }
}
