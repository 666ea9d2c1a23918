/* SPDX-License-Identifier: MIT */
/* Serving a component to another process (serve.h): the checks of a
 * received call against the schema, and the run of its endpoint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/invalid_input.h"
#include "core/served.h"

struct served {
    tsr_component *c;
    int64_t *symval;                 /* symbolic dims bound during one check */
    const char **sym_from;
};

served *served_new(tsr_component *c) {
    served *s = calloc(1, sizeof *s);
    size_t n = c->n_sym > 0 ? (size_t)c->n_sym : 1;
    if (!s || !(s->symval = calloc(n, sizeof *s->symval)) ||
        !(s->sym_from = calloc(n, sizeof *s->sym_from))) {
        served_free(s);
        return NULL;
    }
    s->c = c;
    return s;
}

void served_free(served *s) {
    if (!s) return;
    free(s->symval);
    free(s->sym_from);
    free(s);
}

void served_traits_of(const served *s, served_traits *out) {
    const tsr_component *c = s->c;
    *out = (served_traits){.thread_safe = c->thread_safe != 0,
                           .fd_method = c->fd_method,
                           .fd_samples = c->fd_samples,
                           .fd_step = c->fd_step};
    for (int ep = 0; ep < TSR_EP_COUNT; ep++)
        if (c->ep[ep]) out->implemented |= 1u << ep;
}

/* ---- checks ------------------------------------------------------------- */

/* An array's name in messages: "input 'x'", "tangent_vector['x']" or
 * "result 2". Written only when a message needs it, never on the path of
 * a request that passes (formatting cost more than the checks). */
static const char *label_of(const char *section, const char *field, int32_t k, char *buf,
                            size_t n) {
    if (section) return array_label(section, field, buf, n);
    snprintf(buf, n, "result %d", (int)k);
    return buf;
}

/* The leading dims of `a` against field f, binding its symbols; section
 * and k name it (label_of). */
static int match(served *s, const field_info *f, const tsr_array *a, int32_t rank,
                 const char *section, int32_t k, char *why, size_t n) {
    char cause[300], label[SCHEMA_MAX_NAME + 32];
    if (shape_match(f, a->shape, rank, s->symval, s->sym_from, s->c->sym_names, cause,
                    sizeof cause) != 0) {
        snprintf(why, n, "%s: %s", label_of(section, f->field.name, k, label, sizeof label),
                 cause);
        return TSR_E_PAYLOAD;
    }
    return 0;
}

static int same_shape(const tsr_array *a, const int64_t *shape, int32_t rank) {
    return memcmp(a->shape, shape, (size_t)rank * sizeof(int64_t)) == 0;
}

static int check_seeds(served *s, const tsr_args *args, char *why, size_t n) {
    const tsr_component *c = s->c;
    tsr_endpoint ep = args->endpoint;
    for (int32_t k = 0; k < args->n_seeds; k++) {
        /* jvp: tangents; vjp: cotangents; hvp: cotangents, then tangents. */
        int tangent = ep == TSR_EP_JVP || (ep == TSR_EP_HVP && k >= args->n_wrt_out);
        int32_t j = ep == TSR_EP_HVP && tangent ? k - args->n_wrt_out : k;
        const char *section = tangent ? "tangent_vector" : "cotangent_vector";
        const field_info *f = tangent ? &c->in[args->wrt_in[j]] : &c->out[args->wrt_out[j]];
        const tsr_array *seed = &args->seeds[k];
        /* Inside a JSON field: any float array (request.c checked it). */
        if (f->field.kind == TSR_KIND_JSON) continue;
        int rc = match(s, f, seed, seed->rank, section, k, why, n);
        if (rc) return rc;
        const tsr_array *in = tangent ? &args->inputs[args->wrt_in[j]] : NULL;
        if (in && (seed->rank != in->rank || !same_shape(seed, in->shape, seed->rank))) {
            char label[SCHEMA_MAX_NAME + 32];
            snprintf(why, n, "%s: not shaped like its input",
                     label_of(section, f->field.name, k, label, sizeof label));
            return TSR_E_PAYLOAD;
        }
    }
    return 0;
}

/* A result the host sized: the output's dims, then the input's shape.
 * Results left to the plugin (data NULL) get their shape from it and are
 * checked by the host; but only those whose shape depends on values may
 * be left to it, as in-process (results_prepare): a plugin relies on the
 * host to size the others. */
static int check_result(served *s, const tsr_args *args, int32_t k, char *why, size_t n) {
    const tsr_component *c = s->c;
    const tsr_array *r = &args->results[k];
    result_layout l;
    result_layout_of(c, args->endpoint, args->wrt_in, args->n_wrt_in, args->wrt_out, k, &l);
    /* Inside a JSON field: always the endpoint's to shape and allocate. */
    if (l.free_form) {
        if (!r->data) return 0;
        snprintf(why, n, "result %d: sent with a buffer, but it is a derivative inside a JSON "
                         "field, which the endpoint allocates",
                 (int)k);
        return TSR_E_PAYLOAD;
    }
    if (!r->data) {
        if (l.out >= 0 && !c->out[l.out].shape_static) return 0;
        snprintf(why, n, "result %d: sent without a buffer, but its shape follows from the "
                         "inputs and the host sizes it",
                 (int)k);
        return TSR_E_PAYLOAD;
    }
    /* The trailing dims are the input's actual shape (of any rank). */
    int32_t in_rank = l.in >= 0 ? args->inputs[l.in].rank : 0;
    int32_t at = l.out >= 0 ? r->rank - in_rank : 0;
    if (at < 0 || (l.out < 0 && r->rank != in_rank)) {
        snprintf(why, n, "result %d: rank %d", (int)k, (int)r->rank);
        return TSR_E_PAYLOAD;
    }
    int rc = l.out >= 0 ? match(s, &c->out[l.out], r, at, NULL, k, why, n) : 0;
    if (!rc && l.in >= 0 &&
        memcmp(r->shape + at, args->inputs[l.in].shape, (size_t)in_rank * sizeof(int64_t)) != 0) {
        snprintf(why, n, "result %d: its trailing dims are not the shape of input '%s'", (int)k,
                 c->in[l.in].field.name);
        rc = TSR_E_PAYLOAD;
    }
    return rc;
}

int served_check(served *s, const tsr_args *args, char *why, size_t n) {
    const tsr_component *c = s->c;
    for (int32_t i = 0; i < c->n_sym; i++) {
        s->symval[i] = -1;
        s->sym_from[i] = NULL;
    }
    for (int32_t i = 0; i < args->n_inputs; i++) {
        if (tsr_input_absent(&args->inputs[i])) {
            /* Only an optional input may be absent, and then not differentiated. */
            int wrt = 0;
            for (int32_t k = 0; k < args->n_wrt_in; k++) wrt |= args->wrt_in[k] == i;
            if ((c->in[i].field.flags & TSR_FIELD_OPTIONAL) && !wrt) continue;
            snprintf(why, n, "input '%s': absent, but it is %s", c->in[i].field.name,
                     wrt ? "differentiated" : "not optional");
            return TSR_E_PAYLOAD;
        }
        int rc = match(s, &c->in[i], &args->inputs[i], args->inputs[i].rank, "input", i, why, n);
        if (rc) return rc;
    }
    int rc = check_seeds(s, args, why, n);
    if (rc || args->endpoint == TSR_EP_ABSTRACT_EVAL) return rc;
    for (int32_t k = 0; k < args->n_results; k++)
        if ((rc = check_result(s, args, k, why, n)) != 0) return rc;
    return 0;
}

/* ---- running the endpoint ------------------------------------------------ */

int served_invoke(served *s, const tsr_args *args, int unwritten, served_alloc_fn alloc,
                  void *user, const _Atomic uint32_t *cancel, int *plugin_status, char *why,
                  size_t n) {
    tsr_component *c = s->c;
    tsr_endpoint_fn fn = c->ep[args->endpoint];
    *plugin_status = 0;
    if (!fn) {
        snprintf(why, n, "the plugin does not implement %s", tsr_endpoint_name(args->endpoint));
        return TSR_E_UNSUPPORTED;
    }
    host_ctx hc;
    host_ctx_init(&hc, c, NULL);
    hc.alloc_hook = alloc;
    hc.alloc_user = user;
    hc.served_cancel = cancel;
    hc.served_args = args;
    hc.served_unwritten = unwritten;
    /* Buffers are reused from call to call: no result may carry another
     * call's bytes (result_fill.c). */
    int shapes_only = args->endpoint == TSR_EP_ABSTRACT_EVAL;
    if (!shapes_only) results_fill(unwritten, args->results, args->n_results);
    int status = fn(&hc.pub, args);
    *plugin_status = status;
    if (hc.alloc_code) {
        snprintf(why, n, "%s", hc.alloc_msg);
        return hc.alloc_code;
    }
    if (status == 0) {
        if (!shapes_only && results_unwritten_why(c, unwritten, args, why, n))
            return TSR_E_PLUGIN_RESULT;
        return 0;
    }
    if (status == TSR_E_CANCELLED) {   /* interrupted (plugin.h), as call.c says it */
        snprintf(why, n, "cancelled: %s",
                 hc.plugin_msg_set ? hc.plugin_msg : "the plugin was interrupted");
        return TSR_E_CANCELLED;
    }
    /* A refused input keeps its "invalid:" line whole: the host reads it. */
    if (hc.plugin_msg_set)
        return invalid_message_fit(why, n, "the plugin failed: ", hc.plugin_msg, TSR_E_PLUGIN);
    snprintf(why, n, "the plugin failed (status %d) without a message", status);
    return TSR_E_PLUGIN;
}
