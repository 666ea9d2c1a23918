/* SPDX-License-Identifier: MIT */
/*
 * A plugin that kills its own process with SIGKILL (which nothing can
 * catch, as when an operator or the OOM killer ends a worker) at a chosen
 * step, for the worker-death tests. Its output's length is its own choice
 * (a symbol no input binds), so every apply asks the host for the buffer
 * with tsr_ctx_alloc: a CHAN_ALLOC round trip in worker mode.
 *
 *   x float64 (n,)  ->  y float64 (m,), y = x (m = n)
 *
 * Configuration:
 *   at    "init": during init (before the worker is ready);
 *         "before_alloc": in apply, before tsr_ctx_alloc;
 *         "after_alloc": in apply, once the host has answered tsr_ctx_alloc;
 *         "after_write": in apply, with y written, before returning;
 *         absent or "none": never
 *   call  "K": only the K-th apply dies (1-based; default every one)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim n_dims[] = {TSR_SYM("n")};
static const tsr_dim m_dims[] = {TSR_SYM("m")};
static const tsr_field inputs[] = {{.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims}};
static const tsr_field outputs[] = {{.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = m_dims}};

typedef struct die_cfg {
    char at[32];
    long on_call, calls;
} die_cfg;

static die_cfg cfg;

static void die_if(const char *step) {
    if (strcmp(cfg.at, step) != 0) return;
    if (cfg.on_call && cfg.calls != cfg.on_call) return;
    raise(SIGKILL);
}

static int init(tsr_ctx *ctx, void **state) {
    const char *at = tsr_ctx_config(ctx, "at"), *call = tsr_ctx_config(ctx, "call");
    snprintf(cfg.at, sizeof cfg.at, "%s", at ? at : "none");
    cfg.on_call = call ? atol(call) : 0;
    cfg.calls = 0;
    *state = &cfg;
    die_if("init");
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    cfg.calls++;
    const tsr_array *x = &args->inputs[0];
    tsr_array *y = &args->results[0];
    die_if("before_alloc");
    y->rank = 1;
    y->shape[0] = x->shape[0];
    double *out = tsr_ctx_alloc(ctx, 0);
    if (!out) return -1;
    die_if("after_alloc");
    memcpy(out, x->data, (size_t)x->shape[0] * sizeof(double));
    die_if("after_write");
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "die", .version = "1.0",
    .description = "Kills its process at a chosen step, for worker deaths.",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .init = init, .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
