/* SPDX-License-Identifier: MIT */
/*
 * A plugin that takes its process down, for worker deaths. The
 * configuration selects how and where:
 *
 *   fault    "segv": raise(SIGSEGV); "null": writes through a NULL
 *            pointer; "abort": abort(); "exit": exit(3); "exit:N": exit(N);
 *            absent or "none": no fault, y = x
 *   when     "apply" (default), "init", or "call:K": apply faults on its
 *            K-th call (1-based) and works before that
 *
 * Before the fault it writes "crash: about to FAULT" to stderr, so that a
 * test can check that output written just before a death is forwarded.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minimal.h"

typedef struct crash_cfg {
    char fault[32];
    int in_init;
    long at_call;   /* 0: every call */
    long calls;
} crash_cfg;

static crash_cfg cfg;

static void fault(void) {
    if (cfg.fault[0] == '\0' || strcmp(cfg.fault, "none") == 0) return;
    fprintf(stderr, "crash: about to %s\n", cfg.fault);
    fflush(stderr);
    if (strcmp(cfg.fault, "segv") == 0) raise(SIGSEGV);
    if (strcmp(cfg.fault, "null") == 0) *(volatile int *)(volatile void *)0 = 1;
    if (strcmp(cfg.fault, "abort") == 0) abort();
    if (strcmp(cfg.fault, "exit") == 0) exit(3);
    if (strncmp(cfg.fault, "exit:", 5) == 0) exit(atoi(cfg.fault + 5));
}

static int init(tsr_ctx *ctx, void **state) {
    const char *f = tsr_ctx_config(ctx, "fault");
    const char *when = tsr_ctx_config(ctx, "when");
    snprintf(cfg.fault, sizeof cfg.fault, "%s", f ? f : "");
    cfg.in_init = when && strcmp(when, "init") == 0;
    cfg.at_call = when && strncmp(when, "call:", 5) == 0 ? atol(when + 5) : 0;
    cfg.calls = 0;
    *state = &cfg;
    if (cfg.in_init) fault();
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    cfg.calls++;
    if (!cfg.in_init && (cfg.at_call == 0 || cfg.calls == cfg.at_call)) fault();
    return minimal_apply(ctx, args);
}

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "crash", .version = "1.0",
    .description = "Crashes its process on request, for worker deaths.",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .init = init, .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
