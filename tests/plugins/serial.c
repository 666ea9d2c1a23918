/* SPDX-License-Identifier: MIT */
/*
 * A plugin that does not declare TSR_PLUGIN_THREAD_SAFE and checks that
 * the host honours it: apply counts the threads inside it with an atomic
 * counter, stays inside for a moment to widen the window, and fails with
 * "concurrent entry" if it ever sees a second thread. y = x + 1.
 */
#include <stdatomic.h>
#include <time.h>

#include <tessera/plugin.h>

static atomic_int inside;

static const tsr_dim vec[] = {TSR_SYM("n")};
static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec, .flags = TSR_FIELD_DIFFERENTIABLE},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec, .flags = TSR_FIELD_DIFFERENTIABLE},
};

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    int before = atomic_fetch_add(&inside, 1);
    struct timespec pause = {0, 200000}; /* 0.2 ms */
    nanosleep(&pause, NULL);
    const double *x = args->inputs[0].data;
    double *y = args->results[0].data;
    for (int64_t i = 0; i < tsr_array_count(&args->inputs[0]); i++) y[i] = x[i] + 1;
    int after = atomic_fetch_sub(&inside, 1);
    if (before != 0 || after != 1)
        return tsr_ctx_errorf(ctx, "concurrent entry: %d other thread(s) inside apply",
                              before > after - 1 ? before : after - 1);
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "serial", .version = "1.0",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
