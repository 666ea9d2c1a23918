/* SPDX-License-Identifier: MIT */
/*
 * A plugin that leaks on purpose, for the leak probe (leak_probe.c): init
 * allocates 4242 bytes that fini forgets when config "leak" is "1", so that
 * the worker process that ran it ends with a leak. apply: y = x.
 */
#include <stdlib.h>
#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim vec_n[] = {TSR_SYM("n")};
static const tsr_field inputs[] = {{.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec_n}};
static const tsr_field outputs[] = {{.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec_n}};

typedef struct state {
    int leak;
    char *block;
} state;

static int init(tsr_ctx *ctx, void **out) {
    state *s = calloc(1, sizeof *s);
    if (!s || !(s->block = malloc(4242))) {
        free(s);
        return tsr_ctx_errorf(ctx, "out of memory");
    }
    memset(s->block, 1, 4242);
    const char *leak = tsr_ctx_config(ctx, "leak");
    s->leak = leak && strcmp(leak, "1") == 0;
    *out = s;
    return 0;
}

static void fini(void *p) {
    state *s = p;
    if (!s->leak) free(s->block);
    s->block = NULL;
    free(s);
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    memcpy(args->results[0].data, args->inputs[0].data,
           (size_t)tsr_array_count(&args->inputs[0]) * sizeof(double));
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "leaky",
    .version = "1.0.0",
    .description = "y = x; forgets 4242 bytes at fini when config leak=1",
    .inputs = inputs,
    .n_inputs = 1,
    .outputs = outputs,
    .n_outputs = 1,
    .init = init,
    .fini = fini,
    .apply = apply,
};

TSR_PLUGIN_DEFINE(plugin)
