/* SPDX-License-Identifier: MIT */
/*
 * A careless plugin: it returns success without writing its results when
 * told so by its input. x: float64 (n,) -> y: float64 (n,) = 2x and
 * ids: int32 (n,) = 0, 1, ...; tail: float64 (m,), allocated with
 * tsr_ctx_alloc, m = n.
 *
 *   x[0] >= 0     every result written
 *   -5 < x[0] < 0 y left unwritten (ids and tail written)
 *   x[0] == -5    only y[0] written
 *   x[0] == -6    tail allocated and left unwritten (y and ids written)
 *   x[0] <= -10   nothing written at all (tail allocated)
 *
 * jvp (y with respect to x) leaves its result unwritten when x[0] < 0.
 */
#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim vec[] = {TSR_SYM("n")};
static const tsr_dim any[] = {TSR_ANY};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec, .flags = TSR_FIELD_DIFFERENTIABLE},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "ids", .dtype = TSR_INT32, .rank = 1, .dims = vec},
    {.name = "tail", .dtype = TSR_FLOAT64, .rank = 1, .dims = any},
};

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *x = &args->inputs[0];
    const double *xs = x->data;
    int64_t n = tsr_array_count(x);
    double first = n > 0 ? xs[0] : 0;
    tsr_array *r = args->results;
    r[2].rank = 1;
    r[2].shape[0] = n;
    double *tail = tsr_ctx_alloc(ctx, 2);
    if (!tail) return -1;
    if (first <= -10) return 0;
    double *y = r[0].data;
    if (first >= 0 || first == -6)
        for (int64_t i = 0; i < n; i++) y[i] = 2 * xs[i];
    else if (first == -5)
        y[0] = 2 * xs[0];
    int32_t *ids = r[1].data;
    for (int64_t i = 0; i < n; i++) ids[i] = (int32_t)i;
    if (first != -6)
        for (int64_t i = 0; i < n; i++) tail[i] = xs[i];
    return 0;
}

static int jvp(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const tsr_array *x = &args->inputs[0];
    if (((const double *)x->data)[0] < 0) return 0;
    const double *t = args->seeds[0].data;
    double *out = args->results[0].data;
    for (int64_t i = 0; i < tsr_array_count(x); i++) out[i] = 2 * t[i];
    return 0;
}

static const tsr_plugin plugin = {
    .abi_version = TSR_PLUGIN_ABI_VERSION, .struct_size = sizeof(tsr_plugin),
    .field_size = sizeof(tsr_field),
    .name = "lazy", .version = "1.0",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 3,
    .apply = apply, .jvp = jvp,
};
TSR_PLUGIN_DEFINE(plugin)
