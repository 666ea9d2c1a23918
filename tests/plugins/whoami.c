/* SPDX-License-Identifier: MIT */
/*
 * A plugin that says which process runs it, for worker pools and batches:
 *
 *   x: float64 (n,)  ->  y: float64 (n,) = x,  pid: int64 scalar = getpid()
 *
 * apply refuses an x whose first entry is negative, with the message
 * "x[0] = VALUE is negative", so that one item of a batch can fail.
 * Configuration: "sleep_ms" = N makes apply sleep N milliseconds first, so
 * that concurrent calls overlap in time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "minimal.h"

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {
    MINIMAL_OUTPUT,
    {.name = "pid", .dtype = TSR_INT64, .rank = 0, .dims = NULL, .flags = 0,
     .doc = "the id of the process that ran apply"},
};

static long sleep_ms;

static int init(tsr_ctx *ctx, void **state) {
    const char *ms = tsr_ctx_config(ctx, "sleep_ms");
    sleep_ms = ms ? atol(ms) : 0;
    *state = &sleep_ms;
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *x = &args->inputs[0];
    if (x->shape[0] > 0 && ((const double *)x->data)[0] < 0)
        return tsr_ctx_errorf(ctx, "x[0] = %g is negative", ((const double *)x->data)[0]);
    if (sleep_ms > 0) {
        struct timespec nap = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
        while (nanosleep(&nap, &nap) != 0 && errno == EINTR) {
        }
    }
    *(int64_t *)args->results[1].data = (int64_t)getpid();
    return minimal_apply(ctx, args);
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "whoami", .version = "1.0",
    .description = "Reports the id of the process that runs it.",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 2,
    .init = init, .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
