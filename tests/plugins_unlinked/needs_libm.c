/* SPDX-License-Identifier: MIT */
/* A plugin that calls exp but is built without -lm and without -z defs,
 * as a plugin author who skips the tessera::plugin target might: in-process
 * it borrows the host's libm; isolated it cannot load. */
#include <math.h>

#include <tessera/plugin.h>

static const tsr_field inputs[] = {{.name = "x", .dtype = TSR_FLOAT64, .rank = 0}};
static const tsr_field outputs[] = {{.name = "y", .dtype = TSR_FLOAT64, .rank = 0}};

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    *(double *)args->results[0].data = exp(*(const double *)args->inputs[0].data);
    return 0;
}

static const tsr_plugin plugin = {
    .abi_version = TSR_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(tsr_plugin),
    .field_size = sizeof(tsr_field),
    .name = "needs_libm",
    .inputs = inputs,
    .n_inputs = 1,
    .outputs = outputs,
    .n_outputs = 1,
    .apply = apply,
};

TSR_PLUGIN_DEFINE(plugin)
