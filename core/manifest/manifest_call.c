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
 * keeps and reuses; elsewhere (a worker's context) one for this call. */
#include <stdio.h>
#include <string.h>

#include "manifest_internal.h"

typedef struct live {
    const tsr_array *host;   /* the host's array this argument reads or fills, or NULL */
    const tsr_array *init;   /* what is copied in first (out with init), or NULL */
    size_t bytes;
    size_t offset;           /* in the scratch buffer, when staged */
    int staged;
} live;

#define ALIGN_UP(x) (((x) + TSR_ALIGNMENT - 1) / TSR_ALIGNMENT * TSR_ALIGNMENT)

static const char *arg_label(const mf_endpoint *e, int32_t i, char *buf, size_t n) {
    snprintf(buf, n, "%s args[%d] (%s)", e->symbol, (int)i, mf_kind_names[e->args[i].kind]);
    return buf;
}

/* An integer argument's value, checked against its type. */
static int int_value(tsr_ctx *ctx, const struct manifest *m, const mf_endpoint *e, int32_t i,
                     const tsr_array *inputs, mf_scalar *out) {
    const mf_arg *a = &e->args[i];
    int64_t v;
    if (a->kind == MF_DIM) {
        v = a->dim.field < 0 ? a->dim.fixed : inputs[a->dim.field].shape[a->dim.axis];
    } else if (mf_expr_eval(a->expr, m, inputs, &v) != 0) {
        char label[128];
        return tsr_ctx_errorf(ctx, "%s: the size expression overflows 64-bit integers",
                              arg_label(e, i, label, sizeof label));
    }
    if (a->dtype == TSR_INT64) {
        out->i64 = v;
        return 0;
    }
    if (v < INT32_MIN || v > INT32_MAX) {
        char label[128];
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

static int status_failed(tsr_ctx *ctx, const mf_endpoint *e, const char *how, int64_t v) {
    const char *text = status_text(e, v);
    return tsr_ctx_errorf(ctx, "%s %s %lld%s%s", e->symbol, how, (long long)v, text ? ": " : "",
                          text ? text : "");
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

static int64_t output_count(const struct manifest *m, const tsr_args *args, int32_t o,
                            int32_t rank) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        const mf_dim_src *s = &m->out_dims[o * TSR_MAX_FIELD_RANK + d];
        n *= s->field < 0 ? s->fixed : args->inputs[s->field].shape[s->axis];
    }
    return n;
}

/* Which host array an array argument reads or fills at this call, and how
 * many bytes it spans. Returns 0, or -1 after setting the error. */
static int locate(tsr_ctx *ctx, const struct manifest *m, const mf_endpoint *e, int32_t i,
                  const tsr_args *args, live *l) {
    const tsr_field *outs = m->desc.outputs;
    const mf_arg *a = &e->args[i];
    size_t esize = tsr_dtype_size(a->dtype);
    int64_t count = 0;
    memset(l, 0, sizeof *l);
    switch (a->kind) {
    case MF_IN: l->host = &args->inputs[a->field]; break;
    case MF_TANGENT: {
        int32_t k = position(args->wrt_in, args->n_wrt_in, a->field);
        l->host = k >= 0 ? &args->seeds[k] : NULL;
        count = tsr_array_count(&args->inputs[a->field]);
        break;
    }
    case MF_COTANGENT: {
        int32_t k = position(args->wrt_out, args->n_wrt_out, a->field);
        l->host = k >= 0 ? &args->seeds[k] : NULL;
        count = output_count(m, args, a->field, outs[a->field].rank);
        break;
    }
    case MF_OUT:
        if (e->ep == TSR_EP_APPLY) l->host = &args->results[a->field];
        l->init = a->field2 >= 0 ? &args->inputs[a->field2] : NULL;
        count = output_count(m, args, a->field, outs[a->field].rank);
        break;
    case MF_RESULT:
        if (e->ep == TSR_EP_JVP) {
            int32_t k = position(args->wrt_out, args->n_wrt_out, a->field);
            l->host = k >= 0 ? &args->results[k] : NULL;
            count = output_count(m, args, a->field, outs[a->field].rank);
        } else {
            int32_t k = position(args->wrt_in, args->n_wrt_in, a->field);
            l->host = k >= 0 ? &args->results[k] : NULL;
            count = tsr_array_count(&args->inputs[a->field]);
        }
        break;
    case MF_JACOBIAN: {
        int32_t ko = position(args->wrt_out, args->n_wrt_out, a->field);
        int32_t ki = position(args->wrt_in, args->n_wrt_in, a->field2);
        l->host = ko >= 0 && ki >= 0 ? &args->results[ko * args->n_wrt_in + ki] : NULL;
        if (__builtin_mul_overflow(output_count(m, args, a->field, outs[a->field].rank),
                                   tsr_array_count(&args->inputs[a->field2]), &count)) {
            char label[128];
            return tsr_ctx_errorf(ctx, "%s: the block's size overflows",
                                  arg_label(e, i, label, sizeof label));
        }
        break;
    }
    default: /* MF_WORKSPACE */
        if (mf_expr_eval(a->expr, m, args->inputs, &count) != 0 || count < 0) {
            char label[128];
            return tsr_ctx_errorf(ctx, "%s: its size is %s", arg_label(e, i, label, sizeof label),
                                  count < 0 ? "negative" : "beyond 64-bit integers");
        }
        break;
    }
    if (l->host) count = tsr_array_count(l->host);
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

/* Fill what the routine reads before the call. */
static void prepare(const mf_arg *a, const live *l, void *buf) {
    size_t esize = tsr_dtype_size(a->dtype);
    const tsr_array *src = l->init ? l->init : (a->kind == MF_OUT || a->kind == MF_RESULT ||
                                                a->kind == MF_JACOBIAN ? NULL : l->host);
    if (a->zero || (!src && (a->kind == MF_TANGENT || a->kind == MF_COTANGENT))) {
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

/* Lay out the staged arguments and fill what the routine reads. */
static int stage(tsr_ctx *ctx, const struct manifest *m, const mf_endpoint *e,
                 const tsr_args *args, live *lives, char **scratch, void **owned) {
    size_t total = 0;
    for (int32_t i = 0; i < e->n_args; i++) {
        if (!mf_is_array_kind(e->args[i].kind)) continue;
        if (locate(ctx, m, e, i, args, &lives[i]) != 0) return -1;
        if (!lives[i].staged) continue;
        lives[i].offset = total;
        if (lives[i].bytes > SIZE_MAX / 2 - total)
            return tsr_ctx_errorf(ctx, "%s: scratch memory beyond the address space", e->symbol);
        total += ALIGN_UP(lives[i].bytes);
    }
    char why[256];
    *scratch = scratch_get(ctx, total, owned, why, sizeof why);
    if (!*scratch)
        return tsr_ctx_errorf(ctx, "%s: cannot allocate %zu bytes of scratch memory: %s",
                              e->symbol, total, why);
    for (int32_t i = 0; i < e->n_args; i++)
        if (mf_is_array_kind(e->args[i].kind)) {
            live *l = &lives[i];
            void *data = l->staged ? *scratch + l->offset : l->host->data;
            prepare(&e->args[i], l, data);
        }
    return 0;
}

/* Build the argument list, call, and check the status. */
static int call_routine(tsr_ctx *ctx, const struct manifest *m, const mf_endpoint *e,
                        const tsr_args *args, const live *lives, char *scratch) {
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
            if (int_value(ctx, m, e, i, args->inputs, &vals[i]) != 0) return -1;
            pass_scalar(a, &vals[i], &refs[i], av);
            break;
        case MF_CONST:
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
        return status_failed(ctx, e, "returned", (int32_t)status);
    if (e->returns == TSR_INT64 && status64 != 0)
        return status_failed(ctx, e, "returned", status64);
    if (info_at >= 0) {
        int64_t info = e->args[info_at].dtype == TSR_INT64 ? vals[info_at].i64 : vals[info_at].i32;
        if (info != 0) return status_failed(ctx, e, "reported info =", info);
    }
    return 0;
}

static int invoke(tsr_ctx *ctx, const tsr_args *args, tsr_endpoint ep) {
    const struct manifest *m = ctx->state;
    const mf_endpoint *e = &m->ep[ep];
    if (!e->stages) return call_routine(ctx, m, e, args, NULL, NULL);
    live lives[MF_MAX_ARGS];
    char *scratch = NULL;
    void *owned = NULL;
    int rc = stage(ctx, m, e, args, lives, &scratch, &owned);
    if (!rc) rc = call_routine(ctx, m, e, args, lives, scratch);
    for (int32_t i = 0; !rc && i < e->n_args; i++)
        if (mf_is_array_kind(e->args[i].kind))
            finish(&e->args[i], &lives[i], scratch + lives[i].offset);
    free(owned);
    return rc;
}

int mf_call_apply(tsr_ctx *ctx, const tsr_args *args) { return invoke(ctx, args, TSR_EP_APPLY); }
int mf_call_jvp(tsr_ctx *ctx, const tsr_args *args) { return invoke(ctx, args, TSR_EP_JVP); }
int mf_call_vjp(tsr_ctx *ctx, const tsr_args *args) { return invoke(ctx, args, TSR_EP_VJP); }
int mf_call_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    return invoke(ctx, args, TSR_EP_JACOBIAN);
}
