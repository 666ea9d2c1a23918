/* SPDX-License-Identifier: MIT */
/* Batches: one endpoint run per item of a leading axis. Items run through
 * sub-calls ("lanes") whose inputs are slices of the batch's inputs and
 * whose results are slices of the batch's results, so nothing is copied.
 * In worker mode each lane drives its own worker, concurrently. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct lane {
    tsr_call *sub;
    int64_t first, end;     /* items [first, end) */
    int64_t failed_item;    /* -1, or the item that failed */
    pthread_t thread;
} lane;

/* A view of item i of a batched array. */
static tsr_array slice(const tsr_array *a, int64_t i) {
    tsr_array s = *a;
    s.rank = a->rank - 1;
    memmove(s.shape, a->shape + 1, (size_t)s.rank * sizeof(int64_t));
    size_t bytes = 0;
    shape_bytes(&s, &bytes);
    s.data = a->data ? (char *)a->data + (size_t)i * bytes : NULL;
    return s;
}

/* Tangents (jvp), cotangents (vjp), or both (hvp) the call takes. */
static int32_t seed_count(const tsr_call *call) {
    return ep_seed_count(call->ep, call->n_wrt_in, call->n_wrt_out);
}

/* Bind item i of the batch's inputs and seeds to a lane's sub-call. */
static int bind_item(tsr_call *call, tsr_call *sub, int64_t i) {
    sub->item = i;
    for (int32_t f = 0; f < call->comp->n_in; f++) {
        /* Left out: each item takes the default (or stays absent) itself. */
        if (!call->input_bound[f]) {
            int rc = tsr_call_set_input_at(sub, f, NULL);
            if (rc) return rc;
            continue;
        }
        /* TEXT and JSON inputs are not batched: each item gets the value. */
        int text = call->comp->in[f].field.kind != TSR_KIND_ARRAY;
        tsr_array s = text ? call->inputs[f] : slice(&call->inputs[f], i);
        int rc = tsr_call_set_input_at(sub, f, &s);
        if (rc) return rc;
        /* Bound as a C string (tsr_call_set_text): its NUL is there. */
        if (text && sub->text && !(call->text && call->text[f].copy)) sub->text[f].copy = 0;
    }
    for (int32_t k = 0; k < seed_count(call); k++) {
        if (!call->seed_set[k]) {
            /* unset since an earlier batch: the item must not keep it */
            if (sub->seed_set[k]) sub->validated = 0;
            sub->seed_set[k] = 0;
            continue;
        }
        tsr_array s = slice(&call->seeds[k], i);
        if (!sub->seed_set[k] || memcmp(&sub->seeds[k].shape, &s.shape, sizeof s.shape) != 0 ||
            sub->seeds[k].rank != s.rank || sub->seeds[k].dtype != s.dtype)
            sub->validated = 0;
        sub->seeds[k] = s;
        sub->seed_set[k] = 1;
    }
    return 0;
}

static int ensure_lanes(tsr_call *call, int32_t n) {
    if (call->n_subs >= n) return 0;
    tsr_call **grown = realloc(call->subs, (size_t)n * sizeof *grown);
    if (!grown) return TSR_E_NOMEM;
    call->subs = grown;
    while (call->n_subs < n) {
        tsr_call *sub = tsr_call_new(call->comp, call->ep);
        if (!sub) return TSR_E_NOMEM;
        sub->parent = call;
        sub->cancel_root = call->cancel_root;   /* a cancel of the batch stops its items */
        sub->lane = call->n_subs;   /* each lane its own worker, in worker mode */
        call->subs[call->n_subs++] = sub;
    }
    return 0;
}

/* The sub-calls share the batch's differentiation targets. */
static void copy_wrt(tsr_call *call, tsr_call *sub) {
    if (sub->n_wrt_in != call->n_wrt_in || sub->n_wrt_out != call->n_wrt_out ||
        memcmp(sub->wrt_in, call->wrt_in, (size_t)call->n_wrt_in * sizeof(int32_t)) ||
        memcmp(sub->wrt_out, call->wrt_out, (size_t)call->n_wrt_out * sizeof(int32_t)))
        sub->validated = 0;
    memcpy(sub->wrt_in, call->wrt_in, (size_t)call->n_wrt_in * sizeof(int32_t));
    memcpy(sub->wrt_out, call->wrt_out, (size_t)call->n_wrt_out * sizeof(int32_t));
    /* Whole fields only (a batch refuses paths): the fields' names. */
    memcpy(sub->wrt_in_paths, call->wrt_in_paths, (size_t)call->n_wrt_in * sizeof(char *));
    memcpy(sub->wrt_out_paths, call->wrt_out_paths, (size_t)call->n_wrt_out * sizeof(char *));
    sub->n_wrt_in = call->n_wrt_in;
    sub->n_wrt_out = call->n_wrt_out;
    sub->wrt_set = call->wrt_set;
}

static void *run_lane(void *arg) {
    lane *l = arg;
    for (int64_t i = l->first; i < l->end; i++) {
        if (bind_item(l->sub->parent, l->sub, i) != 0 || tsr_call_run(l->sub) != 0) {
            l->failed_item = i;
            break;
        }
    }
    return NULL;
}

/* Every bound input and seed carries the leading batch axis. */
static int check_batched(tsr_call *call, int64_t batch) {
    tsr_component *c = call->comp;
    call->limit_used = 0;
    for (int32_t f = 0; f < c->n_in; f++) {
        if (!call->input_bound[f]) {
            const tsr_field *field = &c->in[f].field;
            if (!tsr_field_required(field)) continue;
            return call_fail_at(call, TSR_E_MISSING, "inputs", field->name,
                                "input '%s' is missing", field->name);
        }
        const tsr_array *a = &call->inputs[f];
        if (c->in[f].field.kind != TSR_KIND_ARRAY) {
            /* Not batched: the same text for every item, checked by each. */
            int rc = limit_take(call, limit_array_bytes(a), "input", c->in[f].field.name);
            if (rc) return rc;
            continue;
        }
        if (a->rank < 1 || a->shape[0] != batch)
            return call_fail_at(call, TSR_E_SHAPE, "inputs", c->in[f].field.name,
                             "batch of %lld: input '%s' needs a leading dimension of %lld",
                             (long long)batch, c->in[f].field.name, (long long)batch);
        int rc = limit_take(call, limit_array_bytes(a), "input", c->in[f].field.name);
        if (rc) return rc;
    }
    for (int32_t k = 0; k < seed_count(call); k++) {
        if (!call->seed_set[k]) continue;
        if (call->seeds[k].rank < 1 || call->seeds[k].shape[0] != batch)
            return call_fail(call, TSR_E_SHAPE,
                             "batch of %lld: every tangent or cotangent needs a leading "
                             "dimension of %lld",
                             (long long)batch, (long long)batch);
        int rc = limit_take(call, limit_array_bytes(&call->seeds[k]), "a batched seed", NULL);
        if (rc) return rc;
    }
    return 0;
}

/* Size the batch's results from item 0's, with the batch axis in front. */
static int size_results(tsr_call *call, tsr_call *sub, int64_t batch) {
    call->n_results = sub->n_results;
    for (int32_t k = 0; k < sub->n_results; k++) {
        const tsr_array *e = &sub->expect[k];
        tsr_array *r = &call->results[k];
        for (int32_t d = 0; d < e->rank; d++)
            if (e->shape[d] < 0) {
                char name[160];
                if (call->ep == TSR_EP_APPLY && call->comp->out[k].field.kind != TSR_KIND_ARRAY)
                    return call_fail(call, TSR_E_UNSUPPORTED,
                                     "%s is text, whose length depends on values: a batch "
                                     "cannot hold it; run each item as its own call",
                                     call_result_name(sub, k, name, sizeof name));
                return call_fail(call, TSR_E_UNSUPPORTED,
                                 "%s has a shape that depends on values, which batches cannot "
                                 "hold",
                                 call_result_name(sub, k, name, sizeof name));
            }
        if (e->rank + 1 > TSR_MAX_RANK)
            return call_fail(call, TSR_E_SHAPE, "a batched result would exceed rank %d",
                             TSR_MAX_RANK);
        r->dtype = e->dtype;
        r->rank = e->rank + 1;
        r->shape[0] = batch;
        memcpy(r->shape + 1, e->shape, (size_t)e->rank * sizeof(int64_t));
        size_t bytes;
        char why[400], name[160];
        int rc = limit_take(call, limit_array_bytes(r), call_result_name(sub, k, name, sizeof name),
                            NULL);
        if (rc) return rc;
        if (shape_bytes(r, &bytes) != 0)
            return call_fail(call, TSR_E_SHAPE, "the batched results are too large");
        int code;
        r->data = result_place(call, k, bytes, name, &code, why, sizeof why);
        if (!r->data) return call_fail(call, code, "batched results: %s", why);
    }
    return 0;
}

static int run_batch(tsr_call *call, int64_t batch) {
    tsr_component *c = call->comp;
    call->results_valid = 0;
    if (call->ep == TSR_EP_ABSTRACT_EVAL)
        return call_fail(call, TSR_E_UNSUPPORTED, "abstract_eval cannot be batched");
    if (batch < 1)
        return call_fail(call, TSR_E_ARGUMENT, "batch size %lld (must be >= 1)", (long long)batch);
    if (!tsr_component_has_endpoint(c, call->ep))
        return call_fail(call, TSR_E_UNSUPPORTED, "the component does not implement this endpoint");
    if (call_has_free_entries(call))
        return call_fail(call, TSR_E_UNSUPPORTED,
                         "a batch cannot differentiate inside JSON fields (paths in %s or %s): run "
                         "each item as its own call",
                         ep_wrt_in_label(call->ep), ep_wrt_out_label(call->ep));
    int rc = check_batched(call, batch);
    if (rc) return rc;
    int32_t lanes = c->lanes;
    if (lanes > batch) lanes = (int32_t)batch;
    if (ensure_lanes(call, lanes) != 0) return call_fail(call, TSR_E_NOMEM, "out of memory");
    /* Item 0 fixes the shapes of every item's results. */
    tsr_call *first = call->subs[0];
    copy_wrt(call, first);
    if ((rc = bind_item(call, first, 0)) != 0 || (rc = call_validate(first)) != 0)
        return call_fail(call, rc, "batch item 0: %s", call_cause(first));
    if ((rc = size_results(call, first, batch)) != 0) return rc;
    lane ls[256];
    int64_t per = batch / lanes, extra = batch % lanes, next = 0;
    for (int32_t t = 0; t < lanes; t++) {
        copy_wrt(call, call->subs[t]);
        ls[t] = (lane){call->subs[t], next, next + per + (t < extra), -1, 0};
        next = ls[t].end;
    }
    int32_t started = 1;
    for (int32_t t = 1; t < lanes; t++, started++)
        if (pthread_create(&ls[t].thread, NULL, run_lane, &ls[t]) != 0) break;
    run_lane(&ls[0]);
    /* Lanes that could not get a thread run here, one after the other. */
    for (int32_t t = started; t < lanes; t++) run_lane(&ls[t]);
    for (int32_t t = 1; t < started; t++) lane_join(call, ls[t].thread);
    for (int32_t t = 0; t < lanes; t++)
        if (ls[t].failed_item >= 0) {
            int failed = call_fail(call, tsr_call_errcode(ls[t].sub), "batch item %lld: %s",
                                   (long long)ls[t].failed_item, call_cause(ls[t].sub));
            snprintf(call->errloc, sizeof call->errloc, "%s", tsr_call_errloc(ls[t].sub));
            snprintf(call->errtype, sizeof call->errtype, "%s", ls[t].sub->errtype);
            return failed;
        }
    results_deliver(call);
    call->results_valid = 1;
    call->errcode = 0;
    call->errmsg[0] = '\0';
    return 0;
}

TSR_API int tsr_call_run_batch(tsr_call *call, int64_t batch) {
    if (!call) return TSR_E_ARGUMENT;
    int rc = (call->check_fn || cancel_pending(call)) ? cancel_begin(call) : 0;
    if (!rc) rc = run_batch(call, batch);
    if (call->cancel_root == call && cancel_pending(call)) rc = cancel_end(call, rc);
    return rc;
}
