/* SPDX-License-Identifier: MIT */
/*
 * A long call that polls for cancellation (tsr_ctx_cancelled), for
 * tsr_call_cancel and for Ctrl-C from Python. apply runs for `ms`
 * milliseconds (an input, so that one component serves long and short
 * calls), then y = x. The configuration says how:
 *
 *   poll   "1" (default): asks tsr_ctx_cancelled about every millisecond
 *          and, when told, stops and fails with "cancelled after N ms";
 *          "0": never asks (a plugin written before cancellation existed)
 *   how    "sleep" (default): sleeps between polls; "spin": burns CPU
 * Its own abstract_eval (y shaped like x) runs where apply runs: in worker
 * mode it waits for the worker, as a plugin's abstract_eval may.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessera/plugin.h>

typedef struct long_cfg {
    int poll, spin;
} long_cfg;

static long_cfg cfg;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int init(tsr_ctx *ctx, void **state) {
    const char *poll = tsr_ctx_config(ctx, "poll");
    const char *how = tsr_ctx_config(ctx, "how");
    cfg.poll = !poll || strcmp(poll, "0") != 0;
    cfg.spin = how && strcmp(how, "spin") == 0;
    *state = &cfg;
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    double ms = *(const double *)args->inputs[0].data;
    double start = now_ms(), until = start + ms, next_poll = start;
    for (double t = start; t < until; t = now_ms()) {
        if (cfg.poll && t >= next_poll) {
            if (tsr_ctx_cancelled(ctx))
                return tsr_ctx_errorf(ctx, "cancelled after %.0f ms", t - start);
            next_poll = t + 1.0;
        }
        if (cfg.spin) continue;
        struct timespec nap = {0, 500 * 1000};
        nanosleep(&nap, NULL);
    }
    const tsr_array *x = &args->inputs[1];
    memcpy(args->results[0].data, x->data, (size_t)tsr_array_count(x) * sizeof(double));
    return 0;
}

static int abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    args->results[0].rank = 1;
    args->results[0].shape[0] = args->inputs[1].shape[0];
    return 0;
}

static const tsr_dim dims_n[] = {TSR_SYM("n")};
static const tsr_field inputs[] = {
    {.name = "ms", .dtype = TSR_FLOAT64, .rank = 0, .doc = "how long apply runs"},
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = dims_n},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = dims_n},
};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "long_call", .version = "1.0",
    .description = "Runs for `ms` milliseconds, polling for cancellation; then y = x.",
    .inputs = inputs, .n_inputs = 2, .outputs = outputs, .n_outputs = 1,
    .init = init, .apply = apply, .abstract_eval = abstract_eval,
};
TSR_PLUGIN_DEFINE(plugin)
