/* SPDX-License-Identifier: MIT */
/*
 * A plugin that does not answer, for timeouts. The configuration selects
 * where and how it hangs:
 *
 *   when     "apply" (default): apply never returns; "init": init never
 *            returns (the worker never becomes ready)
 *   how      "sleep" (default): sleeps; "spin": burns CPU
 *   hang_ms  stop hanging after this many milliseconds and go on as the
 *            minimal plugin does (y = x); default: forever
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "minimal.h"

typedef struct hang_cfg {
    int in_init, spin;
    long long ms;   /* < 0: forever */
} hang_cfg;

static hang_cfg cfg;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void hang(void) {
    double until = now_ms() + (double)cfg.ms;
    while (cfg.ms < 0 || now_ms() < until) {
        if (cfg.spin) continue;
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

static int init(tsr_ctx *ctx, void **state) {
    const char *when = tsr_ctx_config(ctx, "when");
    const char *how = tsr_ctx_config(ctx, "how");
    const char *ms = tsr_ctx_config(ctx, "hang_ms");
    cfg.in_init = when && strcmp(when, "init") == 0;
    cfg.spin = how && strcmp(how, "spin") == 0;
    cfg.ms = ms ? atoll(ms) : -1;
    *state = &cfg;
    if (cfg.in_init) hang();
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    if (!cfg.in_init) hang();
    return minimal_apply(ctx, args);
}

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "hang", .version = "1.0",
    .description = "Never answers (or answers late), for timeouts.",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .init = init, .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
