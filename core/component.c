/* SPDX-License-Identifier: MIT */
/* Opening and closing a component, and schema queries. Opening picks the
 * backend that serves the path (backends.c) and lets it load; everything
 * else here knows no backend. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

static int fd_options_apply(tsr_component *c, tsr_error *err);

static void component_free(tsr_component *c) {
    if (!c) return;
    descriptor_free(c);
    /* After the descriptor: the backend may own it, and unloading a
     * plugin may run its destructors. */
    if (c->backend) c->backend->close(c);
    pthread_mutex_destroy(&c->lock);
    options_clear(&c->opts);
    free(c->path);
    free(c);
}

TSR_API int tsr_open(const char *path, const tsr_options *opts, tsr_component **out,
                     tsr_error *err) {
    if (err) {
        err->code = 0;
        err->message[0] = '\0';
        err->loc[0] = '\0';
    }
    if (!out) {
        error_set(err, TSR_E_ARGUMENT, "tsr_open: out must not be NULL");
        return TSR_E_ARGUMENT;
    }
    *out = NULL;
    if (!path || !*path) {
        error_set(err, TSR_E_ARGUMENT, "tsr_open: no plugin path given");
        return TSR_E_ARGUMENT;
    }
    tsr_component *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path)) || options_copy(&c->opts, opts) != 0) {
        if (c) {
            free(c->path);
            free(c);
        }
        error_set(err, TSR_E_NOMEM, "cannot load '%s': out of memory", path);
        return TSR_E_NOMEM;
    }
    c->mode = c->opts.mode;
    c->lanes = 1;
    pthread_mutex_init(&c->lock, NULL);
    char confined[512];
    c->backend = backend_for(c->path, &c->opts, confined, sizeof confined);
    if (confined[0]) {
        c->mode = c->opts.mode = TSR_MODE_WORKER;
        comp_log(c, TSR_LOG_INFO,
                 "runs in worker mode: its routines may end the process that runs them (%s); "
                 "set the mode to run it elsewhere",
                 confined);
    }
    int rc = c->backend->open(c, err);
    if (!rc) rc = fd_options_apply(c, err);
    if (rc) {
        component_free(c);
        return rc;
    }
    comp_log(c, TSR_LOG_DEBUG, "loaded from %s", c->path);
    *out = c;
    return 0;
}

/* Options fd_method, fd_step, fd_endpoints over what the component
 * declares: the host's finite differences then serve its derivatives. */
static int fd_options_apply(tsr_component *c, tsr_error *err) {
    const struct tsr_options *o = &c->opts;
    if (o->fd_method) c->fd_method = (tsr_fd_method)o->fd_method;
    if (o->fd_method && !c->fd_samples) c->fd_samples = FD_DEFAULT_SAMPLES;
    if (o->fd_step > 0) c->fd_step = o->fd_step;
    if (!o->fd_all) return 0;
    if (c->fd_method == TSR_FD_NONE) {
        error_set(err, TSR_E_ARGUMENT,
                  "cannot load '%s': fd_endpoints=all needs finite differences, and the "
                  "component declares no fd_method: set fd_method=central or forward",
                  c->path);
        return TSR_E_ARGUMENT;
    }
    c->ep[TSR_EP_JVP] = c->ep[TSR_EP_VJP] = c->ep[TSR_EP_JACOBIAN] = NULL;
    return 0;
}

TSR_API void tsr_close(tsr_component *c) { component_free(c); }

TSR_API int tsr_component_restart(tsr_component *c) {
    if (!c) return TSR_E_ARGUMENT;
    return c->backend->restart ? c->backend->restart(c) : 0;
}

/* ---- the component as backends see it (backend.h) ---------------------- */

const struct tsr_options *backend_options(const tsr_component *c) { return &c->opts; }

int backend_set_worker_env(tsr_component *c, const char *name, const char *value) {
    return tsr_options_set_env(&c->opts, name, value) != 0 ? TSR_E_NOMEM : 0;
}

component_schema backend_schema(const tsr_component *c) {
    return (component_schema){.n_in = c->n_in, .n_out = c->n_out, .in = c->in, .out = c->out,
                              .n_sym = c->n_sym, .sym_names = c->sym_names};
}

void *backend_state(const tsr_component *c) { return c->backend_state; }
void backend_set_state(tsr_component *c, void *state) { c->backend_state = state; }
void backend_set_lanes(tsr_component *c, int32_t lanes) { c->lanes = lanes > 0 ? lanes : 1; }

void backend_count(tsr_component *c, backend_stat which, uint64_t n) {
    atomic_fetch_add_explicit(&c->stats[which], n, memory_order_relaxed);
}

uint64_t backend_now_ns(void) {
    struct timespec ts;
    /* CLOCK_MONOTONIC cannot fail on Linux; a zero reading costs a count
     * its time, never the call. */
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- schema queries -------------------------------------------------- */

TSR_API const char *tsr_component_name(const tsr_component *c) { return c ? c->desc->name : NULL; }
TSR_API const char *tsr_component_version(const tsr_component *c) {
    return c ? (c->desc->version ? c->desc->version : "") : NULL;
}
TSR_API const char *tsr_component_description(const tsr_component *c) {
    return c ? (c->desc->description ? c->desc->description : "") : NULL;
}
TSR_API const char *tsr_component_path(const tsr_component *c) { return c ? c->path : NULL; }
TSR_API tsr_mode tsr_component_mode(const tsr_component *c) { return c ? c->mode : TSR_MODE_INPROC; }
TSR_API int32_t tsr_component_n_inputs(const tsr_component *c) { return c ? c->n_in : 0; }
TSR_API int32_t tsr_component_n_outputs(const tsr_component *c) { return c ? c->n_out : 0; }

TSR_API const tsr_field *tsr_component_input(const tsr_component *c, int32_t index) {
    return (c && index >= 0 && index < c->n_in) ? &c->in[index].field : NULL;
}

TSR_API const tsr_field *tsr_component_output(const tsr_component *c, int32_t index) {
    return (c && index >= 0 && index < c->n_out) ? &c->out[index].field : NULL;
}

int32_t find_field(const field_info *fs, int32_t n, const char *name) {
    if (!name) return -1;
    for (int32_t i = 0; i < n; i++)
        if (strcmp(fs[i].field.name, name) == 0) return i;
    return -1;
}

TSR_API int32_t tsr_component_find_input(const tsr_component *c, const char *name) {
    return c ? find_field(c->in, c->n_in, name) : -1;
}

TSR_API int32_t tsr_component_find_output(const tsr_component *c, const char *name) {
    return c ? find_field(c->out, c->n_out, name) : -1;
}

/* abstract_eval is served from the schema when every output's shape follows
 * from the inputs' symbolic dims. */
int schema_gives_shapes(const tsr_component *c) {
    for (int32_t o = 0; o < c->n_out; o++)
        if (!c->out[o].shape_static) return 0;
    return 1;
}

TSR_API tsr_hvp_source tsr_component_hvp_source(const tsr_component *c) {
    if (!c) return TSR_HVP_NONE;
    if (c->ep[TSR_EP_HVP]) return TSR_HVP_NATIVE;
    if (c->opts.hvp_fallback_off) return TSR_HVP_NONE;
    /* An exact vjp, or one the fallback serves from the exact jacobian. */
    if (c->ep[TSR_EP_VJP] || c->ep[TSR_EP_JACOBIAN]) return TSR_HVP_FD_VJP;
    return c->fd_method != TSR_FD_NONE ? TSR_HVP_FD_APPLY : TSR_HVP_NONE;
}

TSR_API int tsr_component_has_endpoint(const tsr_component *c, tsr_endpoint ep) {
    if (!c || (int)ep < 0 || (int)ep >= TSR_EP_COUNT) return 0;
    if (c->ep[ep]) return 1;
    if (ep == TSR_EP_HVP) return tsr_component_hvp_source(c) != TSR_HVP_NONE;
    if (ep == TSR_EP_ABSTRACT_EVAL) return schema_gives_shapes(c);
    return ep != TSR_EP_APPLY && c->fd_method != TSR_FD_NONE;
}

TSR_API int tsr_component_has_native_endpoint(const tsr_component *c, tsr_endpoint ep) {
    if (!c || (int)ep < 0 || (int)ep >= TSR_EP_COUNT) return 0;
    return c->ep[ep] != NULL;
}

TSR_API tsr_fd_method tsr_component_fd_method(const tsr_component *c) {
    return c ? c->fd_method : TSR_FD_NONE;
}
