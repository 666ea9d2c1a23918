/* SPDX-License-Identifier: MIT */
/*
 * A plugin with persistent state, observable from outside:
 *   config "scale"   a number (default 1); apply computes y = scale * x
 *   config "marker"  a file; init appends "init\n", fini appends
 *                    "fini calls=N\n" where N counts the apply calls
 * apply logs one debug and one warning message. The entry function only
 * accepts a host of exactly this ABI version.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minimal.h"

typedef struct state {
    double scale;
    char marker[1024];
    long calls;
} state;

static void append(const char *path, const char *text) {
    if (!path[0]) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static int init(tsr_ctx *ctx, void **out) {
    const char *scale = tsr_ctx_config(ctx, "scale");
    const char *marker = tsr_ctx_config(ctx, "marker");
    double value = 1.0;
    if (scale) {
        char *end;
        value = strtod(scale, &end);
        if (end == scale || *end != '\0')
            return tsr_ctx_errorf(ctx, "scale is not a number: '%s'", scale);
    }
    state *s = calloc(1, sizeof *s);
    if (!s) return tsr_ctx_errorf(ctx, "out of memory");
    s->scale = value;
    if (marker) snprintf(s->marker, sizeof s->marker, "%s", marker);
    append(s->marker, "init\n");
    *out = s;
    return 0;
}

static void fini(void *p) {
    state *s = p;
    char line[64];
    snprintf(line, sizeof line, "fini calls=%ld\n", s->calls);
    append(s->marker, line);
    free(s);
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    state *s = ctx->state;
    if (!s) return tsr_ctx_errorf(ctx, "state from init not passed to apply");
    const tsr_array *x = &args->inputs[0];
    double *y = args->results[0].data;
    const double *xs = x->data;
    for (int64_t i = 0; i < tsr_array_count(x); i++) y[i] = s->scale * xs[i];
    s->calls++;
    tsr_ctx_log(ctx, TSR_LOG_DEBUG, "stateful debug note");
    tsr_ctx_log(ctx, TSR_LOG_WARN, "stateful warning note");
    return 0;
}

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "stateful", .version = "2.5", .description = "scales x by a configured factor",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .init = init, .fini = fini, .apply = apply,
};

TSR_PLUGIN_EXPORT const tsr_plugin *tsr_plugin_entry(uint32_t host_abi_version);
TSR_PLUGIN_EXPORT const tsr_plugin *tsr_plugin_entry(uint32_t host_abi_version) {
    return host_abi_version == TSR_PLUGIN_ABI_VERSION ? &plugin : NULL;
}
