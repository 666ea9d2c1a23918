/* SPDX-License-Identifier: MIT */
/*
 * A plugin that takes what it is told to, for the worker's resource
 * limits and boundary. It checks what it gets, as a careful plugin does, and fails with
 * a message when the system refuses.
 *
 *   x float64 (n,)  ->  y float64 (n,), y = x
 *
 * Configuration:
 *   take   "memory": apply mallocs `bytes` (default 1 GiB) and frees it;
 *          "files": apply opens /dev/null `files` times (default 256) and
 *          closes them again; "scribble": apply overwrites its input x
 *          with 0xff bytes (which the contract forbids) before y = x;
 *          absent: nothing
 *   bytes, files  as above
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "minimal.h"

typedef struct hog_cfg {
    char take[16];
    unsigned long long bytes;
    int files;
} hog_cfg;

static hog_cfg cfg;

static int init(tsr_ctx *ctx, void **state) {
    const char *take = tsr_ctx_config(ctx, "take"), *bytes = tsr_ctx_config(ctx, "bytes");
    const char *files = tsr_ctx_config(ctx, "files");
    snprintf(cfg.take, sizeof cfg.take, "%s", take ? take : "");
    cfg.bytes = bytes ? strtoull(bytes, NULL, 10) : 1ull << 30;
    cfg.files = files ? atoi(files) : 256;
    *state = &cfg;
    return 0;
}

static int take_memory(tsr_ctx *ctx) {
    /* volatile: an allocation freed unused may be left out altogether (clang) */
    void *volatile p = malloc((size_t)cfg.bytes);
    if (!p) return tsr_ctx_errorf(ctx, "cannot allocate %llu bytes", cfg.bytes);
    free(p);
    return 0;
}

static int take_files(tsr_ctx *ctx) {
    int fds[4096], n = 0, rc = 0;
    while (n < cfg.files && n < 4096) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            rc = tsr_ctx_errorf(ctx, "cannot open file %d of %d: %s", n + 1, cfg.files,
                                strerror(errno));
            break;
        }
        fds[n++] = fd;
    }
    while (n > 0) close(fds[--n]);
    return rc;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    int rc = 0;
    if (strcmp(cfg.take, "memory") == 0) rc = take_memory(ctx);
    if (strcmp(cfg.take, "files") == 0) rc = take_files(ctx);
    if (strcmp(cfg.take, "scribble") == 0) {
        const tsr_array *x = &args->inputs[0];
        memset(x->data, 0xff, (size_t)tsr_array_count(x) * sizeof(double));
    }
    return rc ? rc : minimal_apply(ctx, args);
}

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "hog", .version = "1.0",
    .description = "Takes memory or files on request, for resource limits.",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .init = init, .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
