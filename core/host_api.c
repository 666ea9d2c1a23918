/* SPDX-License-Identifier: MIT */
/* Services offered to plugins through tsr_ctx: error messages, result
 * buffers, logging (log.c) and configuration. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static host_ctx *host_of(tsr_ctx *ctx) { return (host_ctx *)ctx; }

static void api_set_error(tsr_ctx *ctx, const char *message) {
    host_ctx *hc = host_of(ctx);
    snprintf(hc->plugin_msg, sizeof hc->plugin_msg, "%s", message ? message : "(no message)");
    hc->plugin_msg_set = 1;
}

static void *api_alloc_result(tsr_ctx *ctx, int32_t index) {
    host_ctx *hc = host_of(ctx);
    char why[TSR_ERRMSG_MAX];
    int code = TSR_E_PLUGIN_RESULT;
    void *p;
    if (hc->call) {
        p = call_result_alloc(hc->call, index, &code, why, sizeof why);
    } else if (hc->alloc_hook) {
        p = hc->alloc_hook(hc->alloc_user, index, &code, why, sizeof why);
        if (p && hc->served_args)
            result_fill(hc->served_unwritten, &hc->served_args->results[index]);
    } else {
        snprintf(why, sizeof why, "tsr_ctx_alloc called outside an endpoint call");
        p = NULL;
    }
    if (!p) {
        /* Kept apart from the plugin's own message: the host's diagnosis
         * wins when the plugin then fails. */
        snprintf(hc->alloc_msg, sizeof hc->alloc_msg, "%s", why);
        hc->alloc_code = code;
    }
    return p;
}

static void api_log(tsr_ctx *ctx, tsr_log_level level, const char *message) {
    host_ctx *hc = host_of(ctx);
    log_line(&hc->comp->opts, level, comp_label(hc->comp), message ? message : "");
}

static const char *api_config(tsr_ctx *ctx, const char *key) {
    const struct tsr_options *o = &host_of(ctx)->comp->opts;
    if (!key) return NULL;
    for (int32_t i = 0; i < o->n_config; i++)
        if (strcmp(o->config[i].key, key) == 0) return o->config[i].value;
    return NULL;
}

/* In-process: the request on the call the host runs, and now and then the
 * host's check. Served in a worker: the host's request in the channel. */
static int api_cancelled(tsr_ctx *ctx) {
    host_ctx *hc = host_of(ctx);
    if (hc->call) {
        if (cancel_pending(hc->call)) return 1;
        return hc->call->cancel_root->check_fn ? cancel_poll_check(hc->call) : 0;
    }
    return hc->served_cancel && atomic_load_explicit(hc->served_cancel, memory_order_relaxed);
}

const tsr_host_api host_api_v1 = {
    .struct_size = sizeof(tsr_host_api),
    .set_error = api_set_error,
    .alloc_result = api_alloc_result,
    .log = api_log,
    .config = api_config,
    .cancelled = api_cancelled,
};

void host_ctx_init(host_ctx *hc, tsr_component *c, tsr_call *call) {
    /* Not the two message buffers (2 KiB), read only once set: a worker
     * makes a context per request, and clearing them cost more than the
     * rest of serving a small one. */
    memset(hc, 0, offsetof(host_ctx, plugin_msg));
    hc->plugin_msg[0] = hc->alloc_msg[0] = '\0';
    hc->pub.struct_size = sizeof hc->pub;
    hc->pub.host = &host_api_v1;
    hc->pub.state = c->endpoint_state;
    hc->comp = c;
    hc->call = call;
}

int backend_run_init(tsr_component *c, tsr_init_fn init, void **state, tsr_error *err) {
    host_ctx hc;
    host_ctx_init(&hc, c, NULL);
    *state = NULL;
    if (init(&hc.pub, state) == 0) return 0;
    error_set(err, TSR_E_INIT, "component '%s': init failed: %s", c->desc->name,
              hc.plugin_msg_set ? hc.plugin_msg : "(the plugin gave no message)");
    return TSR_E_INIT;
}

int ctx_scratch(tsr_ctx *ctx, size_t bytes, void **out, char *why, size_t n) {
    host_ctx *hc = host_of(ctx);
    if (ctx->host != &host_api_v1 || !hc->call) return -1;
    *out = result_reserve(hc->comp, &hc->call->scratch, bytes, why, n);
    return 0;
}

/* Counted like the call's arrays: in-process toward the call's total (its
 * inputs and results are counted already); in a served call toward a
 * total of the context's own. A refusal is kept like a refused
 * tsr_ctx_alloc, so the call fails with TSR_E_LIMIT and this message
 * rather than the endpoint's own. */
int ctx_limit_take(tsr_ctx *ctx, uint64_t bytes, const char *what, char *why, size_t n) {
    host_ctx *hc = host_of(ctx);
    if (ctx->host != &host_api_v1) return 0;
    int rc = hc->call ? limit_check(hc->call, bytes, what, NULL, why, n)
                      : limit_check_total(hc->comp, &hc->limit_used, bytes, what, why, n);
    if (rc) {
        snprintf(hc->alloc_msg, sizeof hc->alloc_msg, "%s", why);
        hc->alloc_code = rc;
    }
    return rc;
}

void ctx_limit_give(tsr_ctx *ctx, uint64_t bytes) {
    host_ctx *hc = host_of(ctx);
    if (ctx->host != &host_api_v1) return;
    uint64_t *used = hc->call ? &hc->call->limit_used : &hc->limit_used;
    *used = bytes < *used ? *used - bytes : 0;
}
