/* SPDX-License-Identifier: MIT */
/* The endpoint functions of a manifest component: they build the routine's
 * argument list from the call's arrays, call it through the prepared
 * libffi interface and turn its status into an error. The plan (struct
 * manifest) is the component's state, so these are ordinary endpoints to
 * the rest of the library: validation, worker mode, batches, finite
 * differences and gradient checks are all shared with compiled plugins.
 *
 * Arguments that need memory of their own (a private copy, a column-major
 * copy, a zero tangent, a result nobody asked for, a workspace) are
 * "staged" in one scratch buffer: in the host, one that the call object
 * keeps and reuses; elsewhere (a worker's context) one for this call.
 * A routine with queried workspaces (LAPACK's LWORK = -1) is first asked
 * for their sizes, once per shape (manifest_query.c). */
#include <stdio.h>
#include <string.h>

#include "manifest_internal.h"

typedef struct live {
    const tsr_array *host;   /* the host's array this argument reads or fills, or NULL */
    const tsr_array *init;   /* what is copied in first (out with init), or NULL */
    int64_t count;           /* elements (a workspace's length) */
    size_t bytes;
    size_t offset;           /* in the scratch buffer, when staged */
    int staged;
    int alias;               /* an earlier step's argument prepared this buffer */
    int init_zeros;          /* init from a seed the caller did not give: zeros */
} live;

#define ALIGN_UP(x) (((x) + TSR_ALIGNMENT - 1) / TSR_ALIGNMENT * TSR_ALIGNMENT)

static const char *arg_label(const mf_endpoint *e, int32_t i, char *buf, size_t n) {
    snprintf(buf, n, "%s args[%d] (%s)", e->symbol, (int)i, mf_kind_names[e->args[i].kind]);
    return buf;
}

static const char *eval_failure(int rc) {
    return rc == -2 ? "the size expression divides by zero"
                    : "the size expression overflows 64-bit integers";
}

/* An integer argument's value (query: this is a workspace query), checked
 * against its type, and against the workspace it is the length of. */
static int int_value(tsr_ctx *ctx, const struct manifest *m, const mf_endpoint *e, int32_t i,
                     const tsr_array *inputs, const live *lives, int query, mf_scalar *out) {
    const mf_arg *a = &e->args[i];
    char label[128];
    int64_t v = 0;
    int rc = 0;
    if (a->kind == MF_DIM)
        rc = mf_dim_value(m, &a->dim, inputs, &v);
    else if (a->kind == MF_LENGTH)
        v = query && e->args[a->partner].query ? -1 : lives[a->partner].count;
    else if (a->kind == MF_CONST)
        v = a->dtype == TSR_INT64 ? a->value.i64 : a->value.i32;
    else
        rc = mf_expr_eval(a->expr, m, inputs, &v);
    if (rc)
        return tsr_ctx_errorf(ctx, "%s: %s", arg_label(e, i, label, sizeof label),
                              eval_failure(rc));
    if ((a->kind == MF_INT || a->kind == MF_CONST) && a->partner >= 0 && lives &&
        v > lives[a->partner].count)
        return tsr_ctx_errorf(ctx,
                              "%s: %lld follows a workspace of %lld elements (args[%d]), where "
                              "a routine takes the workspace's length, and is larger: the "
                              "routine would write past it, so it was not called (name the "
                              "workspace and pass {\"length\": NAME})",
                              arg_label(e, i, label, sizeof label), (long long)v,
                              (long long)lives[a->partner].count, (int)a->partner);
    if (a->kind == MF_CONST) return 0;
    if (a->dtype == TSR_INT64) {
        out->i64 = v;
        return 0;
    }
    if (v < INT32_MIN || v > INT32_MAX) {
        return tsr_ctx_errorf(ctx, "%s: %lld does not fit the routine's int32",
                              arg_label(e, i, label, sizeof label), (long long)v);
    }
    out->i32 = (int32_t)v;
    return 0;
}

/* The message for a nonzero status: an exact match first, then the sign. */
static const char *status_text(const mf_endpoint *e, int64_t v) {
    for (int32_t k = 0; k < e->n_messages; k++)
        if (e->messages[k].match == MF_MATCH_VALUE && e->messages[k].value == v)
            return e->messages[k].text;
    for (int32_t k = 0; k < e->n_messages; k++)
        if ((e->messages[k].match == MF_MATCH_NEGATIVE && v < 0) ||
            (e->messages[k].match == MF_MATCH_POSITIVE && v > 0))
            return e->messages[k].text;
    return NULL;
}

static int status_failed(tsr_ctx *ctx, const mf_endpoint *e, int query, const char *how,
                         int64_t v) {
    const char *text = status_text(e, v);
    return tsr_ctx_errorf(ctx, "%s%s%s%s %s %lld%s%s", e->where, *e->where ? ": " : "", e->symbol,
                          query ? " (asked for its workspace sizes, length -1)" : "", how,
                          (long long)v, text ? ": " : "", text ? text : "");
}

/* A scalar (dim, int, const, info) by value or through its address. */
static inline void pass_scalar(const mf_arg *a, mf_scalar *val, void **ref, void **avalue) {
    if (a->by_value) {
        *avalue = val;
    } else {
        *ref = val;
        *avalue = ref;
    }
}

static inline int32_t position(const int32_t *list, int32_t n, int32_t v) {
    for (int32_t k = 0; k < n; k++)
        if (list[k] == v) return k;
    return -1;
}

/* Where the tangents start among the seeds: after hvp's cotangents. */
static int32_t hvp_tangents_at(const mf_endpoint *e, const tsr_args *args) {
    return e->ep == TSR_EP_HVP ? args->n_wrt_out : 0;
}

/* Which host array an array argument reads or fills at this call, and how
 * many bytes it spans. Returns 0, or -1 after setting the error. */
static int locate(tsr_ctx *ctx, const struct manifest *m, const mf_endpoint *e, int32_t i,
                  const tsr_args *args, const int64_t *qsizes, live *l) {
    const mf_arg *a = &e->args[i];
    size_t esize = tsr_dtype_size(a->dtype);
    int64_t count = 0;
    memset(l, 0, sizeof *l);
    switch (a->kind) {
    case MF_IN: l->host = &args->inputs[a->field]; break;
    case MF_TANGENT: {
        /* hvp's tangents follow its cotangents among the seeds */
        int32_t k = position(args->wrt_in, args->n_wrt_in, a->field);
        l->host = k >= 0 ? &args->seeds[hvp_tangents_at(e, args) + k] : NULL;
        count = tsr_array_count(&args->inputs[a->field]);
        break;
    }
    case MF_COTANGENT: {
        int32_t k = position(args->wrt_out, args->n_wrt_out, a->field);
        l->host = k >= 0 ? &args->seeds[k] : NULL;
        if (!l->host && mf_output_count(ctx, m, args, a->field, &count) != 0) return -1;
        break;
    }
    case MF_OUT:
        if (e->ep == TSR_EP_APPLY) l->host = &args->results[a->field];
        l->init = a->field2 >= 0 ? &args->inputs[a->field2] : NULL;
        if (!l->host && mf_output_count(ctx, m, args, a->field, &count) != 0) return -1;
        break;
    case MF_RESULT: {
        int jvp = e->ep == TSR_EP_JVP;
        int32_t k = jvp ? position(args->wrt_out, args->n_wrt_out, a->field)
                        : position(args->wrt_in, args->n_wrt_in, a->field);
        l->host = k >= 0 ? &args->results[k] : NULL;
        if (jvp && !l->host && mf_output_count(ctx, m, args, a->field, &count) != 0) return -1;
        if (!jvp) count = tsr_array_count(&args->inputs[a->field]);
        if (a->field2 >= 0) {   /* init from a seed: jvp and hvp an input's tangent, vjp an
                                   output's cotangent */
            int from_in = e->ep != TSR_EP_VJP;
            int32_t ks = from_in ? position(args->wrt_in, args->n_wrt_in, a->field2)
                                 : position(args->wrt_out, args->n_wrt_out, a->field2);
            l->init = ks >= 0 ? &args->seeds[(from_in ? hvp_tangents_at(e, args) : 0) + ks]
                              : NULL;
            l->init_zeros = ks < 0;
        }
        break;
    }
    case MF_JACOBIAN: {
        int32_t ko = position(args->wrt_out, args->n_wrt_out, a->field);
        int32_t ki = position(args->wrt_in, args->n_wrt_in, a->field2);
        l->host = ko >= 0 && ki >= 0 ? &args->results[ko * args->n_wrt_in + ki] : NULL;
        int64_t out_count = 0;
        if (!l->host && mf_output_count(ctx, m, args, a->field, &out_count) != 0) return -1;
        if (__builtin_mul_overflow(out_count, tsr_array_count(&args->inputs[a->field2]),
                                   &count)) {
            char label[128];
            return tsr_ctx_errorf(ctx, "%s: the block's size overflows",
                                  arg_label(e, i, label, sizeof label));
        }
        break;
    }
    default: { /* MF_WORKSPACE */
        char label[128];
        int rc = mf_expr_eval(a->expr, m, args->inputs, &count);
        if (rc)
            return tsr_ctx_errorf(ctx, "%s: %s", arg_label(e, i, label, sizeof label),
                                  eval_failure(rc));
        if (count < 0)
            return tsr_ctx_errorf(ctx, "%s: its size is negative (%lld)",
                                  arg_label(e, i, label, sizeof label), (long long)count);
        if (a->query && qsizes[i] > count) count = qsizes[i];
        break;
    }
    }
    if (l->host) count = tsr_array_count(l->host);
    l->count = count;
    if (a->query && count == 0) count = 1;   /* room for the query's answer */
    if (count > 0 && (uint64_t)count > SIZE_MAX / esize) {
        char label[128];
        return tsr_ctx_errorf(ctx, "%s: %lld elements do not fit in memory",
                              arg_label(e, i, label, sizeof label), (long long)count);
    }
    l->bytes = (size_t)count * esize;
    int permuted = a->order_f && (l->host ? l->host->rank : 2) >= 2;
    l->staged = !l->host || a->copy || permuted;
    return 0;
}

/* Fill what the routine reads before the call. Scratch is reused from
 * call to call: a buffer nothing initialises (a staged result, a
 * workspace, a missing seed) is cleared, so that no routine can hand one
 * call's bytes to the next (an adjoint that adds to its result needs no
 * "zero" for it). */
static void prepare(const mf_arg *a, const live *l, void *buf) {
    size_t esize = tsr_dtype_size(a->dtype);
    const tsr_array *src = l->init ? l->init : (a->kind == MF_OUT || a->kind == MF_RESULT ||
                                                a->kind == MF_JACOBIAN ? NULL : l->host);
    /* A result given to the routine in place was cleared by the host. */
    int uninitialised = !src && (l->staged || a->kind == MF_TANGENT || a->kind == MF_COTANGENT);
    if (a->zero || l->init_zeros || uninitialised) {
        memset(buf, 0, l->bytes);
    } else if (src && buf != src->data) {
        if (a->order_f) mf_to_fortran(buf, src->data, src->shape, src->rank, esize);
        else memcpy(buf, src->data, l->bytes);
    }
}

/* Hand back what the routine wrote into a staged result. */
static void finish(const mf_arg *a, const live *l, const void *buf) {
    if (!l->staged || !l->host) return;
    if (a->kind != MF_OUT && a->kind != MF_RESULT && a->kind != MF_JACOBIAN) return;
    const tsr_array *h = l->host;
    if (a->order_f) mf_from_fortran(h->data, buf, h->shape, h->rank, tsr_dtype_size(a->dtype));
    else memcpy(h->data, buf, l->bytes);
}

/* Scratch memory for the staged arguments. A call object keeps the buffer
 * between runs; without one (a worker serving a request) the memory is
 * for this call only, in *owned. */
static char *scratch_get(tsr_ctx *ctx, size_t bytes, void **owned, char *why, size_t n) {
    void *kept;
    if (ctx_scratch(ctx, bytes, &kept, why, n) == 0) return kept;
    *owned = aligned_alloc(TSR_ALIGNMENT, bytes ? ALIGN_UP(bytes) : TSR_ALIGNMENT);
    if (!*owned) snprintf(why, n, "out of memory");
    return *owned;
}

/* The arguments of every step of an endpoint, at one call. */
typedef struct plan {
    live lives[MF_MAX_STEPS][MF_MAX_ARGS];
    int64_t qsizes[MF_MAX_STEPS][MF_MAX_ARGS];   /* queried workspaces' sizes */
    uint64_t counted;   /* bytes counted against the call's limits (ctx_limit_take) */
} plan;

/* A staged argument counts against max_array_bytes and max_call_bytes like
 * the call's arrays: a workspace "n*n" of a large n is refused before any
 * scratch memory is allocated. Its name in the refusal (after the call's
 * "component ..., endpoint ...: "): the workspace, or what is staged, and
 * where it is in the routine's list. */
static int count_staged(tsr_ctx *ctx, const mf_endpoint *e, int32_t i, const live *l, plan *pl) {
    const mf_arg *a = &e->args[i];
    char what[MF_MAX_TEXT + 160], why[TSR_ERRMSG_MAX - 256];
    if (a->kind == MF_WORKSPACE)
        snprintf(what, sizeof what, "workspace%s%s%s (%s args[%d])", a->name ? " '" : "",
                 a->name ? a->name : "", a->name ? "'" : "", e->symbol, (int)i);
    else
        snprintf(what, sizeof what, "the staged copy of %s args[%d] (%s)", e->symbol, (int)i,
                 mf_kind_names[a->kind]);
    if (ctx_limit_take(ctx, l->bytes, what, why, sizeof why) != 0) return -1;
    pl->counted += l->bytes;
    return 0;
}

/* Lay out the staged arguments of every step (a buffer the steps share
 * once) and fill what the routines read. */
static int stage(tsr_ctx *ctx, const struct manifest *m, const mf_steps *st,
                 const tsr_args *args, plan *pl, char **scratch, void **owned) {
    size_t total = 0;
    for (int32_t s = 0; s < st->n; s++) {
        const mf_endpoint *e = &st->r[s];
        for (int32_t i = 0; i < e->n_args; i++) {
            if (!mf_is_array_kind(e->args[i].kind)) continue;
            live *l = &pl->lives[s][i];
            if (locate(ctx, m, e, i, args, pl->qsizes[s], l) != 0) return -1;
            int32_t s0, i0;
            if (s > 0 && mf_steps_alias(st, s, i, &s0, &i0) == 0) {
                l->alias = 1;
                l->offset = pl->lives[s0][i0].offset;
                continue;
            }
            if (!l->staged) continue;
            l->offset = total;
            if (l->bytes > SIZE_MAX / 2 - total)
                return tsr_ctx_errorf(ctx, "%s: scratch memory beyond the address space",
                                      e->symbol);
            if (count_staged(ctx, e, i, l, pl) != 0) return -1;
            total += ALIGN_UP(l->bytes);
        }
    }
    char why[256];
    *scratch = scratch_get(ctx, total, owned, why, sizeof why);
    if (!*scratch)
        return tsr_ctx_errorf(ctx, "%s: cannot allocate %zu bytes of scratch memory: %s",
                              st->r[0].symbol, total, why);
    for (int32_t s = 0; s < st->n; s++)
        for (int32_t i = 0; i < st->r[s].n_args; i++) {
            const live *l = &pl->lives[s][i];
            if (!mf_is_array_kind(st->r[s].args[i].kind) || l->alias) continue;
            prepare(&st->r[s].args[i], l, l->staged ? *scratch + l->offset : l->host->data);
        }
    return 0;
}

/* Build the argument list, call, and check the status. query: every
 * queried workspace's length is -1 (the routine only reports sizes). */
static int call_routine(tsr_ctx *ctx, const struct manifest *m, const mf_endpoint *e,
                        const tsr_args *args, const live *lives, char *scratch, int query) {
    mf_scalar vals[MF_MAX_ARGS];
    void *refs[MF_MAX_ARGS];
    size_t text_lens[MF_MAX_ARGS];   /* the hidden lengths of MF_CHAR arguments */
    void *avalues[2 * MF_MAX_ARGS];
    int32_t info_at = -1, hidden = e->n_args;
    for (int32_t i = 0; i < e->n_args; i++) {
        const mf_arg *a = &e->args[i];
        void **av = &avalues[i];
        switch (a->kind) {
        case MF_DIM:
        case MF_INT:
        case MF_LENGTH:
            if (int_value(ctx, m, e, i, args->inputs, lives, query, &vals[i]) != 0) return -1;
            pass_scalar(a, &vals[i], &refs[i], av);
            break;
        case MF_CONST:
            if (a->partner >= 0 && int_value(ctx, m, e, i, args->inputs, lives, query, &vals[i]))
                return -1;
            vals[i] = a->value;   /* a copy: a routine may write through a reference */
            pass_scalar(a, &vals[i], &refs[i], av);
            break;
        case MF_INFO:
            vals[i].i64 = 0;
            pass_scalar(a, &vals[i], &refs[i], av);
            info_at = i;
            break;
        case MF_CHAR:
            vals[i].ptr = a->text;
            *av = &vals[i].ptr;
            if (a->hidden_len) {
                text_lens[i] = a->text_len;
                avalues[hidden++] = &text_lens[i];
            }
            break;
        default: {
            void *data;
            if (!scratch)   /* apply with plain arrays: the host's buffers as they are */
                data = a->kind == MF_IN ? args->inputs[a->field].data
                                        : args->results[a->field].data;
            else
                data = lives[i].staged ? scratch + lives[i].offset : lives[i].host->data;
            if (a->by_value) {
                *av = data;   /* the scalar itself, read in place */
            } else {
                vals[i].ptr = data;
                *av = &vals[i].ptr;
            }
            break;
        }
        }
    }
    ffi_arg status = 0;
    int64_t status64 = 0;
    mf_scalar value;   /* a function's result: at least an ffi_arg, as libffi wants */
    void *rvalue = e->result ? (void *)&value : e->returns == TSR_INT64 ? (void *)&status64
                                                                        : (void *)&status;
    /* ffi_call takes a non-const cif that it only reads; a copy keeps the
     * endpoint, shared by every call, const. */
    ffi_cif cif = e->cif;
    ffi_call(&cif, e->fn, rvalue, avalues);
    if (e->result) {
        void *dst = mf_result_target(e, args);
        if (dst) mf_result_store(e->result, dst, &value);
    }
    if (e->returns == TSR_INT32 && (int32_t)status != 0)
        return status_failed(ctx, e, query, "returned", (int32_t)status);
    if (e->returns == TSR_INT64 && status64 != 0)
        return status_failed(ctx, e, query, "returned", status64);
    if (info_at >= 0) {
        int64_t info = e->args[info_at].dtype == TSR_INT64 ? vals[info_at].i64 : vals[info_at].i32;
        if (info != 0) return status_failed(ctx, e, query, "reported info =", info);
    }
    return 0;
}

/* Ask the routine for its workspaces' sizes (the arrays are staged, each
 * queried workspace has room for the answer), keep them for this shape. */
static int ask_sizes(tsr_ctx *ctx, struct manifest *m, mf_endpoint *e, const tsr_args *args,
                     const live *lives, char *scratch, int64_t *qsizes) {
    int rc = call_routine(ctx, m, e, args, lives, scratch, 1);
    if (rc) return rc;
    for (int32_t i = 0; i < e->n_args; i++) {
        const mf_arg *a = &e->args[i];
        if (a->kind != MF_WORKSPACE || !a->query) continue;
        qsizes[i] = mf_query_reported(a, scratch + lives[i].offset);
        if (qsizes[i] < 0) {
            char label[128];
            return tsr_ctx_errorf(ctx,
                                  "%s: asked for its size (length -1), the routine wrote no "
                                  "usable size into its first element",
                                  arg_label(e, i, label, sizeof label));
        }
    }
    mf_query_store(m, e, args->inputs, qsizes);
    return 0;
}

static int invoke(tsr_ctx *ctx, const tsr_args *args, tsr_endpoint ep) {
    struct manifest *m = ctx->state;
    const mf_steps *st = &m->ep[ep];
    if (m->sized_outputs && mf_sizes_prepare(ctx, m, args) != 0) return -1;
    if (!st->stages) return call_routine(ctx, m, &st->r[0], args, NULL, NULL, 0);
    plan pl;
    pl.counted = 0;
    char *scratch = NULL;
    void *owned = NULL;
    int known = 1;
    for (int32_t s = 0; s < st->n; s++) {
        memset(pl.qsizes[s], 0, (size_t)st->r[s].n_args * sizeof pl.qsizes[s][0]);
        known &= mf_query_lookup(m, &st->r[s], args->inputs, pl.qsizes[s]);
    }
    int rc = stage(ctx, m, st, args, &pl, &scratch, &owned);
    if (!rc && !known) {   /* ask, then lay out again with the sizes */
        for (int32_t s = 0; s < st->n && !rc; s++)
            if (st->r[s].queries.n_query)
                rc = ask_sizes(ctx, m, &st->r[s], args, pl.lives[s], scratch, pl.qsizes[s]);
        free(owned);
        owned = NULL;
        ctx_limit_give(ctx, pl.counted);   /* laid out again, counted again */
        pl.counted = 0;
        if (!rc) rc = stage(ctx, m, st, args, &pl, &scratch, &owned);
    }
    for (int32_t s = 0; s < st->n && !rc; s++)
        rc = call_routine(ctx, m, &st->r[s], args, pl.lives[s], scratch, 0);
    for (int32_t s = 0; s < st->n && !rc; s++)
        for (int32_t i = 0; i < st->r[s].n_args; i++)
            if (mf_is_array_kind(st->r[s].args[i].kind) && !pl.lives[s][i].alias)
                finish(&st->r[s].args[i], &pl.lives[s][i], scratch + pl.lives[s][i].offset);
    free(owned);
    /* The call's next run (a fast path that does not count its arrays
     * again) starts from its arrays alone. */
    ctx_limit_give(ctx, pl.counted);
    return rc;
}

int mf_call_constant(tsr_ctx *ctx, const struct manifest *m, const mf_endpoint *e) {
    tsr_args none;
    memset(&none, 0, sizeof none);
    none.struct_size = sizeof none;
    return call_routine(ctx, m, e, &none, NULL, NULL, 0);
}

int mf_call_apply(tsr_ctx *ctx, const tsr_args *args) { return invoke(ctx, args, TSR_EP_APPLY); }
int mf_call_jvp(tsr_ctx *ctx, const tsr_args *args) { return invoke(ctx, args, TSR_EP_JVP); }
int mf_call_vjp(tsr_ctx *ctx, const tsr_args *args) { return invoke(ctx, args, TSR_EP_VJP); }
int mf_call_hvp(tsr_ctx *ctx, const tsr_args *args) { return invoke(ctx, args, TSR_EP_HVP); }
int mf_call_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    return invoke(ctx, args, TSR_EP_JACOBIAN);
}
