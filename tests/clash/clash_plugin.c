/* SPDX-License-Identifier: MIT */
/*
 * clash_vN: value = x * clash_value(), where clash_value() comes from the
 * libclash.so this plugin was linked against (found through its own rpath
 * only). Built twice; the descriptor's version says which build it is, so
 * that a test can tell a wrong library from a wrong plugin.
 */
#include <tessera/plugin.h>

#ifndef CLASH_PLUGIN_VERSION
#error "build with -DCLASH_PLUGIN_VERSION=\"N\""
#endif

double clash_value(void); /* from libclash.so */

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 0, .doc = "any number"},
};

static const tsr_field outputs[] = {
    {.name = "value", .dtype = TSR_FLOAT64, .rank = 0,
     .doc = "x times the version of the libclash.so that was bound"},
};

static int clash_apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    const double *x = args->inputs[0].data;
    double *value = args->results[0].data;
    *value = *x * clash_value();
    return 0;
}

static const tsr_plugin clash_plugin = {
    TSR_PLUGIN_HEADER,
    .name = "clash",
    .version = CLASH_PLUGIN_VERSION,
    .description = "value = x * clash_value() from its own libclash.so (isolation tests)",
    .inputs = inputs,
    .n_inputs = 1,
    .outputs = outputs,
    .n_outputs = 1,
    .apply = clash_apply,
};

TSR_PLUGIN_DEFINE(clash_plugin)
