/* SPDX-License-Identifier: MIT */
/*
 * An init that always fails: with the message "cannot open mesh
 * 'missing.msh'", or with no message at all when configured quiet=1.
 */
#include <string.h>

#include "minimal.h"

static int init(tsr_ctx *ctx, void **state) {
    (void)state;
    const char *quiet = tsr_ctx_config(ctx, "quiet");
    if (quiet && strcmp(quiet, "1") == 0) return 5;
    return tsr_ctx_errorf(ctx, "cannot open mesh '%s'", "missing.msh");
}

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "init_fails", .version = "1.0",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .init = init, .apply = minimal_apply,
};
TSR_PLUGIN_DEFINE(plugin)
