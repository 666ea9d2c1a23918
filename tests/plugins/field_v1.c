/* SPDX-License-Identifier: MIT */
/*
 * A plugin built with the first layout of tsr_field (before
 * default_value was appended): it declares that struct itself and says
 * its size in field_size, as a plugin compiled against the older header
 * does. y = 2 x, for x: float64 (n,).
 */
#include <string.h>

#include <tessera/plugin.h>

typedef struct field_v1 {
    const char *name;
    tsr_dtype dtype;
    int32_t rank;
    const tsr_dim *dims;
    uint32_t flags;
    const char *doc;
} field_v1;

static const tsr_dim n_dims[] = {TSR_SYM("n")};
static const field_v1 inputs[] = {
    {"x", TSR_FLOAT64, 1, n_dims, TSR_FIELD_DIFFERENTIABLE, "input"},
};
static const field_v1 outputs[] = {
    {"y", TSR_FLOAT64, 1, n_dims, TSR_FIELD_DIFFERENTIABLE, "twice x"},
};

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const double *x = args->inputs[0].data;
    double *y = args->results[0].data;
    for (int64_t i = 0; i < args->inputs[0].shape[0]; i++) y[i] = 2 * x[i];
    return 0;
}

static const tsr_plugin plugin = {
    .abi_version = TSR_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(tsr_plugin),
    .field_size = sizeof(field_v1),
    .name = "field_v1",
    .version = "1.0",
    .inputs = (const tsr_field *)(const void *)inputs,
    .n_inputs = 1,
    .outputs = (const tsr_field *)(const void *)outputs,
    .n_outputs = 1,
    .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
