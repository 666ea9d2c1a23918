/* SPDX-License-Identifier: MIT */
/*
 * A plugin that holds the host to its side of the contract (plugin.h).
 * Every endpoint first checks what it was given: counts, field indices
 * (differentiable, each named once), dtypes, ranks, declared dims, symbolic
 * dims agreeing across inputs, seeds and results, data present, results
 * shaped as the endpoint requires. Then it reads every input byte and
 * writes every result byte, so that a buffer smaller than its shape faults.
 * A breach traps (SIGILL): a fuzzer, a test or a worker's death report then
 * shows a contract the host broke.
 *
 *   mesh.nodes  float64 (n, 2)  diff     moved.nodes  float64 (n, 2)  diff
 *   mesh.cells  int32 (m, 3)             cells        int32 (m, 3)
 *   flags       bool (*)                 flags        bool (*)        (allocated)
 *   scale       float32 ()      diff     total        float64 ()      diff
 *   z           complex128 (k,) diff     z            complex128 (k,) diff
 *                                        ragged       float64 (r,)    (allocated:
 *                                                     one entry per true flag)
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim nodes_dims[] = {TSR_SYM("n"), TSR_FIXED(2)};
static const tsr_dim cells_dims[] = {TSR_SYM("m"), TSR_FIXED(3)};
static const tsr_dim any_dims[] = {TSR_ANY};
static const tsr_dim z_dims[] = {TSR_SYM("k")};
static const tsr_dim ragged_dims[] = {TSR_SYM("r")};

#define DIFF TSR_FIELD_DIFFERENTIABLE
static const tsr_field inputs[] = {
    {.name = "mesh.nodes", .dtype = TSR_FLOAT64, .rank = 2, .dims = nodes_dims, .flags = DIFF},
    {.name = "mesh.cells", .dtype = TSR_INT32, .rank = 2, .dims = cells_dims},
    {.name = "flags", .dtype = TSR_BOOL, .rank = 1, .dims = any_dims},
    {.name = "scale", .dtype = TSR_FLOAT32, .rank = 0, .flags = DIFF},
    {.name = "z", .dtype = TSR_COMPLEX128, .rank = 1, .dims = z_dims, .flags = DIFF},
};
static const tsr_field outputs[] = {
    {.name = "moved.nodes", .dtype = TSR_FLOAT64, .rank = 2, .dims = nodes_dims, .flags = DIFF},
    {.name = "cells", .dtype = TSR_INT32, .rank = 2, .dims = cells_dims},
    {.name = "flags", .dtype = TSR_BOOL, .rank = 1, .dims = any_dims},
    {.name = "total", .dtype = TSR_FLOAT64, .rank = 0, .flags = DIFF},
    {.name = "z", .dtype = TSR_COMPLEX128, .rank = 1, .dims = z_dims, .flags = DIFF},
    {.name = "ragged", .dtype = TSR_FLOAT64, .rank = 1, .dims = ragged_dims},
};
enum { N_IN = 5, N_OUT = 6, IN_FLAGS = 2, OUT_FLAGS = 2, OUT_RAGGED = 5 };

static const size_t dtype_size[] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16};

/* The contract is broken: stop here, where a debugger or report shows it. */
#define REQUIRE(cond)                \
    do {                             \
        if (!(cond)) __builtin_trap(); \
    } while (0)

/* Symbols bound during one call: n, m, k, r. */
typedef struct symbols {
    const char *name[4];
    int64_t value[4];
    int count;
} symbols;

static void bind_symbol(symbols *s, const char *name, int64_t value) {
    for (int i = 0; i < s->count; i++)
        if (strcmp(s->name[i], name) == 0) {
            REQUIRE(s->value[i] == value);
            return;
        }
    REQUIRE(s->count < 4);
    s->name[s->count] = name;
    s->value[s->count++] = value;
}

/* Elements of an array; its bytes must be countable, too. */
static int64_t count_of(const tsr_array *a) {
    REQUIRE(a->rank >= 0 && a->rank <= TSR_MAX_RANK);
    int64_t n = 1, bytes;
    for (int32_t d = 0; d < a->rank; d++) {
        REQUIRE(a->shape[d] >= 0);
        REQUIRE(!__builtin_mul_overflow(n, a->shape[d], &n));
    }
    REQUIRE(!__builtin_mul_overflow(n, (int64_t)16, &bytes));
    return n;
}

/* dims [from, from + f->rank) of a must be f's declared dims. */
static void match_field(symbols *s, const tsr_field *f, const tsr_array *a, int32_t from) {
    for (int32_t d = 0; d < f->rank; d++) {
        int64_t got = a->shape[from + d];
        REQUIRE(got >= 0);
        if (f->dims[d].symbol) bind_symbol(s, f->dims[d].symbol, got);
        else if (f->dims[d].size != TSR_DIM_ANY) REQUIRE(got == f->dims[d].size);
    }
}

/* An array whose header is the field's (plus `extra` trailing dims); its
 * data is read through when `data` says it must be there. */
static void check_array(symbols *s, const tsr_field *f, const tsr_array *a, int32_t extra,
                        bool data) {
    REQUIRE(a->dtype == f->dtype);
    REQUIRE(a->rank == f->rank + extra);
    match_field(s, f, a, 0);
    if (!data) return;
    int64_t bytes = count_of(a) * (int64_t)dtype_size[a->dtype];
    REQUIRE(a->data != NULL || bytes == 0);
    volatile unsigned char sink = 0;
    for (int64_t i = 0; i < bytes; i++) sink ^= ((const unsigned char *)a->data)[i];
    (void)sink;
}

static void check_indices(const int32_t *idx, int32_t n, const tsr_field *fs, int32_t n_fs) {
    REQUIRE(n >= 0 && n <= n_fs && (n == 0 || idx != NULL));
    for (int32_t k = 0; k < n; k++) {
        REQUIRE(idx[k] >= 0 && idx[k] < n_fs);
        REQUIRE(fs[idx[k]].flags & DIFF);
        for (int32_t j = 0; j < k; j++) REQUIRE(idx[j] != idx[k]);
    }
}

/* Everything but the results. */
static void check_call(symbols *s, const tsr_args *a, tsr_endpoint ep) {
    REQUIRE(a->struct_size >= sizeof(tsr_args) && a->endpoint == ep);
    REQUIRE(a->n_inputs == N_IN && a->inputs != NULL);
    bool abstract = ep == TSR_EP_ABSTRACT_EVAL;
    for (int32_t i = 0; i < N_IN; i++) check_array(s, &inputs[i], &a->inputs[i], 0, !abstract);
    bool grad = ep == TSR_EP_JVP || ep == TSR_EP_VJP || ep == TSR_EP_JACOBIAN || ep == TSR_EP_HVP;
    if (!grad) REQUIRE(a->n_wrt_in == 0 && a->n_wrt_out == 0 && a->n_seeds == 0);
    check_indices(a->wrt_in, a->n_wrt_in, inputs, N_IN);
    check_indices(a->wrt_out, a->n_wrt_out, outputs, N_OUT);
    /* hvp: the cotangents of the outputs, then the tangents of the inputs */
    int32_t seeds = ep == TSR_EP_JVP   ? a->n_wrt_in
                    : ep == TSR_EP_VJP ? a->n_wrt_out
                    : ep == TSR_EP_HVP ? a->n_wrt_out + a->n_wrt_in
                                       : 0;
    REQUIRE(a->n_seeds == seeds && (seeds == 0 || a->seeds != NULL));
    for (int32_t k = 0; k < seeds; k++) {
        const tsr_array *seed = &a->seeds[k];
        bool tangent = ep == TSR_EP_JVP || (ep == TSR_EP_HVP && k >= a->n_wrt_out);
        int32_t j = ep == TSR_EP_HVP && tangent ? k - a->n_wrt_out : k;
        if (tangent) {
            const tsr_array *in = &a->inputs[a->wrt_in[j]];
            REQUIRE(seed->rank == in->rank);
            for (int32_t d = 0; d < in->rank; d++) REQUIRE(seed->shape[d] == in->shape[d]);
            check_array(s, &inputs[a->wrt_in[j]], seed, 0, true);
        } else {
            check_array(s, &outputs[a->wrt_out[j]], seed, 0, true);
        }
    }
    int32_t results = ep == TSR_EP_JVP                          ? a->n_wrt_out
                      : ep == TSR_EP_VJP || ep == TSR_EP_HVP    ? a->n_wrt_in
                      : ep == TSR_EP_JACOBIAN                   ? a->n_wrt_out * a->n_wrt_in
                                                                : N_OUT;
    REQUIRE(a->n_results == results && (results == 0 || a->results != NULL));
}

/* Result k as the endpoint defines it: the output it is shaped by (NULL
 * for vjp) and the input whose shape trails (vjp, jacobian). */
static void result_fields(const tsr_args *a, int32_t k, const tsr_field **of, int32_t *in) {
    *of = NULL;
    *in = -1;
    switch (a->endpoint) {
    case TSR_EP_JVP: *of = &outputs[a->wrt_out[k]]; break;
    case TSR_EP_VJP:
    case TSR_EP_HVP: *in = a->wrt_in[k]; break;
    case TSR_EP_JACOBIAN:
        *of = &outputs[a->wrt_out[k / a->n_wrt_in]];
        *in = a->wrt_in[k % a->n_wrt_in];
        break;
    default: *of = &outputs[k]; break;
    }
}

/* A host-sized result: its header as the endpoint requires, then every
 * byte written. */
static void fill_result(symbols *s, const tsr_args *a, int32_t k) {
    const tsr_field *of;
    int32_t in;
    result_fields(a, k, &of, &in);
    tsr_array *r = &a->results[k];
    int32_t out_rank = of ? of->rank : 0;
    const tsr_array *src = in >= 0 ? &a->inputs[in] : NULL;
    REQUIRE(r->dtype == (of ? of->dtype : inputs[in].dtype));
    REQUIRE(r->rank == out_rank + (src ? src->rank : 0));
    if (of) match_field(s, of, r, 0);
    for (int32_t d = 0; src && d < src->rank; d++) REQUIRE(r->shape[out_rank + d] == src->shape[d]);
    int64_t bytes = count_of(r) * (int64_t)dtype_size[r->dtype];
    REQUIRE(r->data != NULL);
    memset(r->data, 0, (size_t)bytes);
}

static int64_t true_flags(const tsr_array *flags) {
    int64_t n = 0;
    for (int64_t i = 0; i < count_of(flags); i++) n += ((const bool *)flags->data)[i] ? 1 : 0;
    return n;
}

/* A result whose shape depends on values: state it, then ask for it. */
static int allocate(tsr_ctx *ctx, const tsr_args *a, int32_t k, int64_t n) {
    tsr_array *r = &a->results[k];
    r->rank = 1;
    r->shape[0] = n;
    void *p = tsr_ctx_alloc(ctx, k);
    if (!p) return -1;
    memset(p, 0, (size_t)n * (k == OUT_FLAGS ? sizeof(bool) : sizeof(double)));
    return 0;
}

static int run(tsr_ctx *ctx, const tsr_args *a, tsr_endpoint ep) {
    symbols s = {.count = 0};
    check_call(&s, a, ep);
    for (int32_t k = 0; k < a->n_results; k++) {
        if (ep == TSR_EP_APPLY && a->results[k].data == NULL &&
            (k == OUT_FLAGS || k == OUT_RAGGED)) {
            int64_t n = k == OUT_FLAGS ? count_of(&a->inputs[IN_FLAGS])
                                       : true_flags(&a->inputs[IN_FLAGS]);
            if (allocate(ctx, a, k, n) != 0) return -1;
            if (k == OUT_RAGGED) bind_symbol(&s, "r", n);
            continue;
        }
        fill_result(&s, a, k);
    }
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *a) { return run(ctx, a, TSR_EP_APPLY); }
static int jvp(tsr_ctx *ctx, const tsr_args *a) { return run(ctx, a, TSR_EP_JVP); }
static int vjp(tsr_ctx *ctx, const tsr_args *a) { return run(ctx, a, TSR_EP_VJP); }
static int jacobian(tsr_ctx *ctx, const tsr_args *a) { return run(ctx, a, TSR_EP_JACOBIAN); }
static int hvp(tsr_ctx *ctx, const tsr_args *a) { return run(ctx, a, TSR_EP_HVP); }

/* Shapes only; ragged gets its largest possible size. */
static int abstract_eval(tsr_ctx *ctx, const tsr_args *a) {
    (void)ctx;
    symbols s = {.count = 0};
    check_call(&s, a, TSR_EP_ABSTRACT_EVAL);
    for (int32_t k = 0; k < N_OUT; k++) {
        tsr_array *r = &a->results[k];
        REQUIRE(r->data == NULL && r->dtype == outputs[k].dtype);
        const tsr_array *like = k == OUT_FLAGS || k == OUT_RAGGED ? &a->inputs[IN_FLAGS]
                                : k == 1                          ? &a->inputs[1]
                                : k == 3                          ? &a->inputs[3]
                                                                  : &a->inputs[k == 4 ? 4 : 0];
        r->rank = like->rank;
        memcpy(r->shape, like->shape, sizeof r->shape);
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "contract",
    .version = "1.0",
    .description = "checks the host's side of the plugin contract in every endpoint",
    .inputs = inputs, .n_inputs = N_IN,
    .outputs = outputs, .n_outputs = N_OUT,
    .apply = apply,
    .jvp = jvp,
    .vjp = vjp,
    .jacobian = jacobian,
    .abstract_eval = abstract_eval,
    .hvp = hvp,
};
TSR_PLUGIN_DEFINE(plugin)
