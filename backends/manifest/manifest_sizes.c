/* SPDX-License-Identifier: MIT */
/* Outputs whose size is an expression ("n+1", "min(m, n)", "nmax - nmin +
 * 1"). Core cannot size them from the schema (it sees a dimension of any
 * size), so before a routine runs the manifest works their shapes out,
 * refuses a negative one, and asks the host for the buffers
 * (tsr_ctx_alloc: in a worker, over the channel); a cotangent of such an
 * output, which core could not check, is checked here, so that the routine
 * never reads past a buffer. */
#include <stdio.h>

#include "manifest_internal.h"

int mf_dim_value(const struct manifest *m, const mf_dim_src *s, const tsr_array *inputs,
                 int64_t *out) {
    if (s->field == MF_DIM_EXPR) return mf_expr_eval(s->expr, m, inputs, out);
    *out = s->field < 0 ? s->fixed : inputs[s->field].shape[s->axis];
    return 0;
}

/* Output o's shape at this call; -1 with the error set on ctx. */
static int output_shape(tsr_ctx *ctx, const struct manifest *m, const tsr_array *inputs,
                        int32_t o, int64_t *shape) {
    const tsr_field *f = &m->desc.outputs[o];
    for (int32_t d = 0; d < f->rank; d++) {
        const mf_dim_src *s = &m->out_dims[o * TSR_MAX_FIELD_RANK + d];
        int rc = mf_dim_value(m, s, inputs, &shape[d]);
        const char *text = m->out_text[o * TSR_MAX_FIELD_RANK + d];
        if (rc)
            return tsr_ctx_errorf(ctx, "output '%s', dimension %d ('%s'): %s", f->name, (int)d,
                                  text ? text : "?",
                                  rc == -2 ? "the size expression divides by zero"
                                           : "the size expression overflows 64-bit integers");
        if (shape[d] < 0)
            return tsr_ctx_errorf(ctx,
                                  "output '%s', dimension %d ('%s') is %lld at this call: a size "
                                  "cannot be negative, so the routine was not called",
                                  f->name, (int)d, text ? text : "?", (long long)shape[d]);
    }
    return 0;
}

int mf_output_count(tsr_ctx *ctx, const struct manifest *m, const tsr_args *args, int32_t o,
                    int64_t *count) {
    int64_t shape[TSR_MAX_RANK];
    if (output_shape(ctx, m, args->inputs, o, shape) != 0) return -1;
    int64_t n = 1;
    for (int32_t d = 0; d < m->desc.outputs[o].rank; d++)
        if (__builtin_mul_overflow(n, shape[d], &n))
            return tsr_ctx_errorf(ctx, "output '%s': its size overflows",
                                  m->desc.outputs[o].name);
    *count = n;
    return 0;
}

/* Result k: shaped like output o, then (jacobian) like input i (i < 0: none). */
static int give_buffer(tsr_ctx *ctx, const struct manifest *m, const tsr_args *args, int32_t k,
                       int32_t o, int32_t i) {
    tsr_array *r = &args->results[k];
    if (r->data) return 0;
    const tsr_field *f = &m->desc.outputs[o];
    int64_t shape[TSR_MAX_RANK];
    if (output_shape(ctx, m, args->inputs, o, shape) != 0) return -1;
    r->rank = f->rank;
    for (int32_t d = 0; d < f->rank; d++) r->shape[d] = shape[d];
    if (i >= 0) {
        const tsr_array *in = &args->inputs[i];
        for (int32_t d = 0; d < in->rank; d++) r->shape[r->rank + d] = in->shape[d];
        r->rank += in->rank;
    }
    if (!tsr_ctx_alloc(ctx, k))   /* the host's own diagnosis is the call's error */
        return tsr_ctx_errorf(ctx, "output '%s': no buffer of the size its expression gives",
                              f->name);
    return 0;
}

/* A cotangent of output o must have the shape the manifest works out. */
static int check_seed(tsr_ctx *ctx, const struct manifest *m, const tsr_args *args, int32_t k,
                      int32_t o) {
    const tsr_field *f = &m->desc.outputs[o];
    int64_t shape[TSR_MAX_RANK];
    if (output_shape(ctx, m, args->inputs, o, shape) != 0) return -1;
    for (int32_t d = 0; d < f->rank; d++)
        if (args->seeds[k].shape[d] != shape[d])
            return tsr_ctx_errorf(ctx,
                                  "the cotangent of output '%s' has %lld elements on axis %d, "
                                  "where the output has %lld ('%s' at this call)",
                                  f->name, (long long)args->seeds[k].shape[d], (int)d,
                                  (long long)shape[d],
                                  m->out_text[o * TSR_MAX_FIELD_RANK + d]
                                      ? m->out_text[o * TSR_MAX_FIELD_RANK + d]
                                      : "its declared size");
    return 0;
}

int mf_sizes_prepare(tsr_ctx *ctx, const struct manifest *m, const tsr_args *args) {
    int rc = 0;
    switch (args->endpoint) {
    case TSR_EP_APPLY:
        for (int32_t o = 0; o < args->n_results && !rc; o++) rc = give_buffer(ctx, m, args, o, o, -1);
        break;
    case TSR_EP_JVP:
        for (int32_t k = 0; k < args->n_wrt_out && !rc; k++)
            rc = give_buffer(ctx, m, args, k, args->wrt_out[k], -1);
        break;
    case TSR_EP_VJP:
    case TSR_EP_HVP:   /* its cotangents come first among its seeds */
        for (int32_t k = 0; k < args->n_wrt_out && !rc; k++)
            rc = check_seed(ctx, m, args, k, args->wrt_out[k]);
        break;
    case TSR_EP_JACOBIAN:
        for (int32_t o = 0; o < args->n_wrt_out && !rc; o++)
            for (int32_t i = 0; i < args->n_wrt_in && !rc; i++)
                rc = give_buffer(ctx, m, args, o * args->n_wrt_in + i, args->wrt_out[o],
                                 args->wrt_in[i]);
        break;
    default: break;
    }
    return rc;
}
