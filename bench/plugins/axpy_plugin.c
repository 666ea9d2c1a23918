/* SPDX-License-Identifier: MIT */
/*
 * The compiled-plugin baseline of the manifest benchmark: apply calls the
 * same routine of libbench_axpy.so that the manifests name, as a
 * hand-written wrapper would. Built twice: axpy_plugin.so wraps
 * bench_axpy, axpy_ref_plugin.so (-DBENCH_AXPY_BY_REFERENCE) wraps
 * bench_axpy_ref_ and checks its INFO.
 */
#include <stdint.h>

#include <tessera/plugin.h>

void bench_axpy(int32_t n, double a, const double *x, const double *y, double *z);
void bench_axpy_ref_(const int32_t *n, const double *a, const double *x, const double *y,
                     double *z, int32_t *info);

enum { IN_X, IN_Y, IN_A };

static const tsr_dim vector_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n},
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n},
    {.name = "a", .dtype = TSR_FLOAT64, .rank = 0},
};

static const tsr_field outputs[] = {
    {.name = "z", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n, .doc = "a x + y"},
};

static int axpy_apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *x = &args->inputs[IN_X];
    int64_t n = x->shape[0];
    if (n > INT32_MAX) return tsr_ctx_errorf(ctx, "n = %lld does not fit int32", (long long)n);
    int32_t n32 = (int32_t)n;
    const double *a = args->inputs[IN_A].data;
#ifdef BENCH_AXPY_BY_REFERENCE
    int32_t info;
    bench_axpy_ref_(&n32, a, x->data, args->inputs[IN_Y].data, args->results[0].data, &info);
    if (info != 0) return tsr_ctx_errorf(ctx, "bench_axpy_ref_ reported info = %d", (int)info);
#else
    bench_axpy(n32, *a, x->data, args->inputs[IN_Y].data, args->results[0].data);
#endif
    return 0;
}

static const tsr_plugin axpy_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
#ifdef BENCH_AXPY_BY_REFERENCE
    .name = "axpy_ref_plugin",
#else
    .name = "axpy_plugin",
#endif
    .version = "1.0.0",
    .description = "z = a x + y through a compiled wrapper of libbench_axpy.so",
    .inputs = inputs,
    .n_inputs = 3,
    .outputs = outputs,
    .n_outputs = 1,
    .apply = axpy_apply,
};

TSR_PLUGIN_DEFINE(axpy_plugin)
