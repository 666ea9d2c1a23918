/* SPDX-License-Identifier: MIT */
/* A plugin with apply only, whose derivatives the host serves by finite
 * differences (FD_METHOD, FD_SAMPLES set by the including file):
 *   y[i] = a * sin(x[i]),  s = sum_i x[i]^2 * a
 * It counts its apply calls, so that tests can check the documented cost. */
#include <math.h>
#include <stdatomic.h>

#include <tessera/plugin.h>

TSR_PLUGIN_EXPORT atomic_long fd_apply_count;

static const tsr_dim dim_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = dim_n, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "a", .dtype = TSR_FLOAT64, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = dim_n, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "s", .dtype = TSR_FLOAT64, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE},
};

static int fd_apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    atomic_fetch_add(&fd_apply_count, 1);
    const double *x = args->inputs[0].data;
    double a = *(const double *)args->inputs[1].data, sum = 0;
    double *y = args->results[0].data;
    for (int64_t i = 0; i < args->inputs[0].shape[0]; i++) {
        y[i] = a * sin(x[i]);
        sum += x[i] * x[i];
    }
    *(double *)args->results[1].data = sum * a;
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = FD_NAME,
    .version = "1",
    .inputs = inputs,
    .n_inputs = 2,
    .outputs = outputs,
    .n_outputs = 2,
    .apply = fd_apply,
    .fd_method = FD_METHOD,
    .fd_samples = FD_SAMPLES,
};

TSR_PLUGIN_DEFINE(plugin)
