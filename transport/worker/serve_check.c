/* The shapes of a request, checked in the worker as the host checked them
 * before sending: a plugin relies on its schema's promises (an output
 * shaped (n, 2) is as long as the input that bound n), so a request that
 * breaks them, corrupted or hostile, must stop here and not become an
 * overrun in the plugin. worker_request.c has already checked counts,
 * indices, dtypes, ranks and that every binref holds its shape's bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static int grow_symbols(worker_state *ws, int32_t n_sym) {
    size_t want = n_sym > 0 ? (size_t)n_sym : 1;
    if (want <= ws->cap_sym) return 0;
    int64_t *v = realloc(ws->symval, want * sizeof *v);
    if (!v) return -1;
    ws->symval = v;
    const char **f = realloc(ws->sym_from, want * sizeof *f);
    if (!f) return -1;
    ws->sym_from = f;
    ws->cap_sym = want;
    return 0;
}

/* The leading dims of `a` against field f, binding its symbols. */
static int match(worker_state *ws, const field_info *f, const tsr_array *a, const char *label,
                 char *why, size_t n) {
    const tsr_component *c = ws->comp;
    char cause[300];
    if (shape_match(f, a->shape, f->field.rank, ws->symval, ws->sym_from, c->sym_names, cause,
                    sizeof cause) != 0) {
        snprintf(why, n, "%s: %s", label, cause);
        return TSR_E_PAYLOAD;
    }
    return 0;
}

static int same_shape(const tsr_array *a, const int64_t *shape, int32_t rank) {
    return memcmp(a->shape, shape, (size_t)rank * sizeof(int64_t)) == 0;
}

static int check_seeds(worker_state *ws, const tsr_args *args, char *why, size_t n) {
    const tsr_component *c = ws->comp;
    int jvp = ws->ep == TSR_EP_JVP;
    char label[TSR_MAX_NAME + 32];
    for (int32_t k = 0; k < args->n_seeds; k++) {
        const field_info *f = jvp ? &c->in[args->wrt_in[k]] : &c->out[args->wrt_out[k]];
        const tsr_array *s = &args->seeds[k];
        snprintf(label, sizeof label, "%s['%s']", jvp ? "tangent_vector" : "cotangent_vector",
                 f->field.name);
        int rc = match(ws, f, s, label, why, n);
        if (rc) return rc;
        if (jvp && !same_shape(s, args->inputs[args->wrt_in[k]].shape, f->field.rank)) {
            snprintf(why, n, "%s: not shaped like its input", label);
            return TSR_E_PAYLOAD;
        }
    }
    return 0;
}

/* A result the host sized: the output's dims (jvp, apply, jacobian), then
 * the input's shape (vjp, jacobian). Results left to the plugin (data
 * NULL) get their shape from it and are checked by the host. */
static int check_result(worker_state *ws, const tsr_args *args, int32_t k, char *why,
                        size_t n) {
    const tsr_component *c = ws->comp;
    const tsr_array *r = &args->results[k];
    if (!r->data) return 0;
    const field_info *of = NULL;
    int32_t in = -1;
    switch (ws->ep) {
    case TSR_EP_JVP: of = &c->out[args->wrt_out[k]]; break;
    case TSR_EP_VJP: in = args->wrt_in[k]; break;
    case TSR_EP_JACOBIAN:
        of = &c->out[args->wrt_out[k / args->n_wrt_in]];
        in = args->wrt_in[k % args->n_wrt_in];
        break;
    default: of = &c->out[k]; break;
    }
    char label[TSR_MAX_NAME + 32];
    snprintf(label, sizeof label, "result %d", (int)k);
    int rc = of ? match(ws, of, r, label, why, n) : 0;
    int32_t at = of ? of->field.rank : 0;
    if (!rc && in >= 0 && memcmp(r->shape + at, args->inputs[in].shape,
                                 (size_t)c->in[in].field.rank * sizeof(int64_t)) != 0) {
        snprintf(why, n, "%s: its trailing dims are not the shape of input '%s'", label,
                 c->in[in].field.name);
        rc = TSR_E_PAYLOAD;
    }
    return rc;
}

int serve_check_shapes(worker_state *ws, const tsr_args *args, char *why, size_t n) {
    const tsr_component *c = ws->comp;
    if (grow_symbols(ws, c->n_sym) != 0) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    for (int32_t s = 0; s < c->n_sym; s++) {
        ws->symval[s] = -1;
        ws->sym_from[s] = NULL;
    }
    char label[TSR_MAX_NAME + 16];
    for (int32_t i = 0; i < args->n_inputs; i++) {
        snprintf(label, sizeof label, "input '%s'", c->in[i].field.name);
        int rc = match(ws, &c->in[i], &args->inputs[i], label, why, n);
        if (rc) return rc;
    }
    int rc = check_seeds(ws, args, why, n);
    if (rc || ws->ep == TSR_EP_ABSTRACT_EVAL) return rc;
    for (int32_t k = 0; k < args->n_results; k++)
        if ((rc = check_result(ws, args, k, why, n)) != 0) return rc;
    return 0;
}
