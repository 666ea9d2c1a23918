/* SPDX-License-Identifier: MIT */
/* apply only, y[i] = sqrt(x[i]), defined for x >= 0: a finite-difference
 * step that leaves the domain makes apply fail, naming the element, so
 * that tests see how one failing evaluation ends the fallback's others. */
#include <math.h>

#include <tessera/plugin.h>

static const tsr_dim dim_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = dim_n, .flags = TSR_FIELD_DIFFERENTIABLE},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = dim_n, .flags = TSR_FIELD_DIFFERENTIABLE},
};

static int domain_apply(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[0].data;
    double *y = args->results[0].data;
    for (int64_t i = 0; i < args->inputs[0].shape[0]; i++) {
        if (x[i] < 0) return tsr_ctx_errorf(ctx, "x[%lld] = %g is outside the domain x >= 0", (long long)i, x[i]);
        y[i] = sqrt(x[i]);
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "fd_domain",
    .version = "1",
    .inputs = inputs,
    .n_inputs = 1,
    .outputs = outputs,
    .n_outputs = 1,
    .apply = domain_apply,
    .fd_method = TSR_FD_CENTRAL,
};

TSR_PLUGIN_DEFINE(plugin)
