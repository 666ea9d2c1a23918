/* SPDX-License-Identifier: MIT */
/* Results of a call: their expected shapes, their buffers (allocated by the
 * host before the call, or on the plugin's request when a shape depends on
 * values), and the check of what the plugin left in them. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

int32_t results_count(const tsr_call *call) {
    switch (call->ep) {
    case TSR_EP_JVP: return call->n_wrt_out;
    case TSR_EP_VJP:
    case TSR_EP_HVP: return call->n_wrt_in;
    case TSR_EP_JACOBIAN: return call->n_wrt_out * call->n_wrt_in;
    default: return call->comp->n_out;
    }
}

void result_layout_of(const tsr_component *c, tsr_endpoint ep, const int32_t *wrt_in,
                      int32_t n_wrt_in, const int32_t *wrt_out, int32_t k, result_layout *out) {
    int32_t o = -1, i = -1;
    switch (ep) {
    case TSR_EP_JVP: o = wrt_out[k]; break;
    case TSR_EP_VJP:
    case TSR_EP_HVP: i = wrt_in[k]; break;
    case TSR_EP_JACOBIAN:
        o = wrt_out[k / n_wrt_in];
        i = wrt_in[k % n_wrt_in];
        break;
    default: o = k; break;
    }
    out->out = o;
    out->in = i;
    /* A derivative at an entry on a JSON field: the endpoint decides. */
    out->free_form = ep != TSR_EP_APPLY && ep != TSR_EP_ABSTRACT_EVAL &&
                     ((o >= 0 && c->out[o].field.kind == TSR_KIND_JSON) ||
                      (i >= 0 && c->in[i].field.kind == TSR_KIND_JSON));
    if (out->free_form) {
        out->dtype = TSR_FLOAT64;
        out->rank = TSR_RANK_ANY;
        return;
    }
    out->dtype = o >= 0 ? c->out[o].field.dtype : c->in[i].field.dtype;
    int32_t ro = o >= 0 ? c->out[o].field.rank : 0, ri = i >= 0 ? c->in[i].field.rank : 0;
    out->rank = ro == TSR_RANK_ANY || ri == TSR_RANK_ANY ? TSR_RANK_ANY : ro + ri;
}

const char *result_layout_name(const tsr_component *c, const result_layout *l, char *buf,
                               size_t n) {
    /* (Entries on a JSON field are named by their field: the layout has
     * no paths; tsr_call_errloc and the caller's list give the path.) */
    if (l->out < 0) snprintf(buf, n, "result for input '%s'", c->in[l->in].field.name);
    else if (l->in >= 0)
        snprintf(buf, n, "jacobian block '%s'/'%s'", c->out[l->out].field.name,
                 c->in[l->in].field.name);
    else snprintf(buf, n, "output '%s'", c->out[l->out].field.name);
    return buf;
}

static void layout(const tsr_call *call, int32_t k, result_layout *l) {
    result_layout_of(call->comp, call->ep, call->wrt_in, call->n_wrt_in, call->wrt_out, k, l);
}

/* The output field a result is shaped by (all but vjp), or NULL. */
static const field_info *result_out_field(const tsr_call *call, int32_t k) {
    result_layout l;
    layout(call, k, &l);
    return l.out >= 0 ? &call->comp->out[l.out] : NULL;
}

/* The input whose actual shape a result carries (vjp: all of it;
 * jacobian: its trailing dims), or NULL. */
static const tsr_array *result_in_array(const tsr_call *call, int32_t k) {
    result_layout l;
    layout(call, k, &l);
    return l.in >= 0 ? &call->inputs[l.in] : NULL;
}

const char *call_result_name(const tsr_call *call, int32_t k, char *buf, size_t n) {
    result_layout l;
    layout(call, k, &l);
    if (!l.free_form) return result_layout_name(call->comp, &l, buf, n);
    /* Inside a JSON field: named by the paths, as the caller gave them. */
    int32_t i = call->ep == TSR_EP_VJP || call->ep == TSR_EP_HVP ? k : call->ep == TSR_EP_JACOBIAN ? k % call->n_wrt_in : -1;
    int32_t o = call->ep == TSR_EP_JVP ? k : call->ep == TSR_EP_JACOBIAN ? k / call->n_wrt_in : -1;
    if (o < 0) snprintf(buf, n, "result for input '%s'", call->wrt_in_paths[i]);
    else if (i >= 0)
        snprintf(buf, n, "jacobian block '%s'/'%s'", call->wrt_out_paths[o], call->wrt_in_paths[i]);
    else snprintf(buf, n, "output '%s'", call->wrt_out_paths[o]);
    return buf;
}

/* Whether result k is free-form (result_layout.free_form). */
static int result_free_form(const tsr_call *call, int32_t k) {
    result_layout l;
    layout(call, k, &l);
    return l.free_form;
}

/* Whether result k is a TEXT or JSON output's (apply). */
static int result_is_text(const tsr_call *call, int32_t k) {
    const field_info *of = result_out_field(call, k);
    return of && of->field.kind != TSR_KIND_ARRAY && call->ep == TSR_EP_APPLY;
}

/* Check a shape the plugin chose for result k, binding output symbols that
 * no input fixed. Returns 0, or -1 with a cause in why. */
static int result_shape_check(tsr_call *call, int32_t k, const tsr_array *r, char *why,
                              size_t n) {
    const field_info *of = result_out_field(call, k);
    const tsr_array *in = result_in_array(call, k);
    int32_t in_rank = in ? in->rank : 0;
    int32_t out_rank = of ? of->field.rank : 0;
    /* Any rank: the endpoint's choice, what the trailing dims leave. */
    if (out_rank == TSR_RANK_ANY) {
        out_rank = r->rank - in_rank;
        if (out_rank < 0 || out_rank > TSR_MAX_FIELD_RANK) {
            snprintf(why, n, "rank %d set, %d to %d expected", (int)r->rank, (int)in_rank,
                     (int)(in_rank + TSR_MAX_FIELD_RANK));
            return -1;
        }
    }
    if (r->rank != out_rank + in_rank) {
        snprintf(why, n, "rank %d set, rank %d expected", (int)r->rank,
                 (int)(out_rank + in_rank));
        return -1;
    }
    if (of && shape_match(of, r->shape, out_rank, call->symval, call->sym_from,
                          call->comp->sym_names, why, n) != 0)
        return -1;
    for (int32_t d = 0; in && d < in_rank; d++)
        if (r->shape[out_rank + d] != in->shape[d]) {
            char a[96], b[96];
            snprintf(why, n, "shape %s set, trailing dims %s expected (the input's shape)",
                     shape_str(r->shape, r->rank, a, sizeof a),
                     shape_str(in->shape, in->rank, b, sizeof b));
            return -1;
        }
    if (shape_count(r->shape, r->rank) < 0) {
        snprintf(why, n, "the element count overflows");
        return -1;
    }
    return 0;
}

int results_prepare(tsr_call *call) {
    const tsr_component *c = call->comp;
    /* A batch item writes into its slice of the batch's results
     * (batch_point_results), so it allocates nothing of its own. */
    int alloc = call->ep != TSR_EP_ABSTRACT_EVAL && !call->parent;
    call->n_results = results_count(call);
    int free_form = call->ep != TSR_EP_APPLY && call->ep != TSR_EP_ABSTRACT_EVAL &&
                    call_has_free_entries(call);
    for (int32_t k = 0; k < call->n_results; k++) {
        tsr_array *r = &call->results[k];
        if (free_form && result_free_form(call, k)) {
            /* The endpoint sets dtype, rank and shape, then allocates. */
            *r = (tsr_array){.data = NULL, .dtype = TSR_FLOAT64, .rank = 0};
            call->result_bytes[k] = 0;
            call->expect[k] = *r;
            continue;
        }
        const field_info *of = result_out_field(call, k);
        const tsr_array *in = result_in_array(call, k);
        int32_t out_rank = of ? of->field.rank : 0;
        /* An output of any rank stands as one unknown dim until the
         * endpoint sets its shape. */
        if (out_rank == TSR_RANK_ANY) out_rank = 1;
        r->data = NULL;
        r->dtype = of ? of->field.dtype : c->in[call->wrt_in[k]].field.dtype;
        r->rank = out_rank + (in ? in->rank : 0);
        int known = 1;
        if (of && of->field.rank == TSR_RANK_ANY) {
            known = 0;
            r->shape[0] = -1;
        } else if (of) {
            known = shape_from_symbols(of, call->symval, r->shape) == 0;
            /* Unknown dims are -1 until the plugin sets them. */
            for (int32_t d = 0; !known && d < out_rank; d++)
                r->shape[d] = of->kind[d] == DIM_FIXED ? of->dims[d].size : -1;
        }
        if (in) memcpy(r->shape + out_rank, in->shape, (size_t)in->rank * sizeof(int64_t));
        size_t bytes = 0;
        int sized = known && shape_bytes(r, &bytes) == 0;
        call->result_bytes[k] = sized ? bytes : 0;
        if (known && alloc) {
            char name[160];
            call_result_name(call, k, name, sizeof name);
            int rc = limit_take(call, limit_array_bytes(r), name, NULL);
            if (rc) return rc;
            if (!sized)
                return call_fail(call, TSR_E_SHAPE, "%s would hold more elements than memory can",
                                 name);
            char why[400];
            int code;
            r->data = result_place(call, k, bytes, name, &code, why, sizeof why);
            if (!r->data) return call_fail(call, code, "%s", why);
        }
        call->expect[k] = *r;
    }
    return 0;
}

/* tsr_ctx_alloc: the plugin has set the shape of a result the host could
 * not size. */
void *call_result_alloc(tsr_call *call, int32_t k, int *code, char *why, size_t n) {
    if (call->ep == TSR_EP_ABSTRACT_EVAL) {
        *code = TSR_E_PLUGIN_RESULT;
        snprintf(why, n, "tsr_ctx_alloc called from abstract_eval, which returns shapes only");
        return NULL;
    }
    if (k < 0 || k >= call->n_results) {
        *code = TSR_E_PLUGIN_RESULT;
        snprintf(why, n, "tsr_ctx_alloc: result index %d out of range (%d results)", (int)k,
                 (int)call->n_results);
        return NULL;
    }
    tsr_array *r = &call->results[k];
    tsr_array *e = &call->expect[k];
    char name[160];
    call_result_name(call, k, name, sizeof name);
    if (e->data) {
        /* Already sized by the host: harmless if the plugin did not touch it. */
        if (r->data == e->data && r->rank == e->rank &&
            memcmp(r->shape, e->shape, (size_t)r->rank * sizeof(int64_t)) == 0)
            return r->data;
        *code = TSR_E_PLUGIN_RESULT;
        snprintf(why, n, "%s: allocated by the host already, and its shape was changed", name);
        return NULL;
    }
    char cause[400];
    int free_form = result_free_form(call, k);
    if (free_form && !wrt_free_dtype(r->dtype)) {
        const char *dn = tsr_dtype_name(r->dtype);
        *code = TSR_E_PLUGIN_RESULT;
        snprintf(why, n, "%s: dtype %s set; a derivative inside a JSON field is float16, "
                         "float32 or float64",
                 name, dn ? dn : "(invalid)");
        return NULL;
    }
    if (free_form && (r->rank < 0 || r->rank > TSR_MAX_RANK || shape_count(r->shape, r->rank) < 0)) {
        *code = TSR_E_PLUGIN_RESULT;
        snprintf(why, n, "%s: rank %d or its shape is invalid", name, (int)r->rank);
        return NULL;
    }
    if (free_form) {
        for (int32_t d = 0; d < r->rank; d++)
            if (r->shape[d] < 0) {
                *code = TSR_E_PLUGIN_RESULT;
                snprintf(why, n, "%s: dimension %d is %lld", name, (int)d,
                         (long long)r->shape[d]);
                return NULL;
            }
    } else if (r->rank < 0 || r->rank > TSR_MAX_RANK ||
        result_shape_check(call, k, r, cause, sizeof cause) != 0) {
        *code = TSR_E_PLUGIN_RESULT;
        if (r->rank < 0 || r->rank > TSR_MAX_RANK)
            snprintf(why, n, "%s: rank %d set, rank %d expected", name, (int)r->rank, (int)e->rank);
        else
            snprintf(why, n, "%s: %s", name, cause);
        return NULL;
    }
    if (!free_form) r->dtype = e->dtype;
    size_t bytes;
    int rc = limit_check(call, limit_array_bytes(r), name, NULL, why, n);
    if (rc) {
        *code = rc;
        return NULL;
    }
    if (shape_bytes(r, &bytes) != 0) {
        *code = TSR_E_PLUGIN_RESULT;
        snprintf(why, n, "%s: its size overflows", name);
        return NULL;
    }
    /* Text is followed by a NUL (plugin.h): one byte more. */
    int text = result_is_text(call, k);
    if (!(r->data = result_place(call, k, bytes + (size_t)text, name, code, why, n))) return NULL;
    if (text) ((char *)r->data)[bytes] = '\0';
    result_fill(call->comp->opts.unwritten, r);
    *e = *r;
    return r->data;
}

static int same_array(const tsr_array *a, const tsr_array *b) {
    return a->data == b->data && a->dtype == b->dtype && a->rank == b->rank &&
           memcmp(a->shape, b->shape, (size_t)a->rank * sizeof(int64_t)) == 0;
}

int results_check(tsr_call *call) {
    char name[160], cause[400];
    for (int32_t k = 0; k < call->n_results; k++) {
        tsr_array *r = &call->results[k];
        const tsr_array *e = &call->expect[k];
        if (call->ep == TSR_EP_ABSTRACT_EVAL) {
            if (r->dtype != e->dtype || r->rank < 0 || r->rank > TSR_MAX_RANK ||
                result_shape_check(call, k, r, cause, sizeof cause) != 0) {
                if (r->dtype != e->dtype)
                    snprintf(cause, sizeof cause, "dtype changed to %d", (int)r->dtype);
                else if (r->rank < 0 || r->rank > TSR_MAX_RANK)
                    snprintf(cause, sizeof cause, "rank %d set", (int)r->rank);
                return call_fail(call, TSR_E_PLUGIN_RESULT, "%s: %s",
                                 call_result_name(call, k, name, sizeof name), cause);
            }
            r->data = NULL;
            continue;
        }
        if (!e->data)
            return call_fail(call, TSR_E_PLUGIN_RESULT,
                             "%s was not produced: its shape depends on values and the plugin "
                             "did not allocate it with tsr_ctx_alloc",
                             call_result_name(call, k, name, sizeof name));
        if (!same_array(r, e))
            return call_fail(call, TSR_E_PLUGIN_RESULT,
                             "%s: the plugin changed its data pointer, dtype or shape after "
                             "allocation",
                             call_result_name(call, k, name, sizeof name));
        /* The NUL after text again: a worker, or the plugin, could have
         * written over it. Its buffer has the byte (call_result_alloc). */
        if (result_is_text(call, k)) ((char *)r->data)[r->shape[0]] = '\0';
    }
    return 0;
}

int results_unwritten_why(const tsr_component *c, int mode, const tsr_args *args, char *why,
                          size_t n) {
    if (mode != UNWRITTEN_CHECK) return 0;
    for (int32_t k = 0; k < args->n_results; k++) {
        const tsr_array *r = &args->results[k];
        int64_t left = result_unwritten_count(r);
        if (left == 0) continue;
        result_layout l;
        result_layout_of(c, args->endpoint, args->wrt_in, args->n_wrt_in, args->wrt_out, k, &l);
        char name[160];
        snprintf(why, n,
                 "%s: %lld of %lld elements left unwritten by the plugin (option "
                 "unwritten=check)",
                 result_layout_name(c, &l, name, sizeof name), (long long)left,
                 (long long)shape_count(r->shape, r->rank));
        return 1;
    }
    return 0;
}

int results_unwritten_fail(tsr_call *call) {
    char why[400];
    if (!results_unwritten_why(call->comp, call->comp->opts.unwritten, &call->args, why,
                               sizeof why))
        return 0;
    return call_fail(call, TSR_E_PLUGIN_RESULT, "%s", why);
}

/* The bytes of one item of a batched array. */
static size_t item_bytes(const tsr_array *a) {
    size_t bytes = 0;
    tsr_array item = *a;
    item.rank = a->rank - 1;
    memmove(item.shape, a->shape + 1, (size_t)item.rank * sizeof(int64_t));
    shape_bytes(&item, &bytes);
    return bytes;
}

void batch_point_results(tsr_call *sub) {
    tsr_call *p = sub->parent;
    for (int32_t k = 0; k < sub->n_results; k++) {
        size_t bytes = item_bytes(&p->results[k]);
        void *at = (char *)p->results[k].data + (size_t)sub->item * bytes;
        sub->results[k].data = at;
        sub->expect[k].data = at;
        sub->result_bytes[k] = bytes;
    }
}
