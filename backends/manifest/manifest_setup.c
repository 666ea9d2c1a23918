/* SPDX-License-Identifier: MIT */
/* "setup": routines called once when the component opens, after its
 * library is loaded and before any call, e.g. GSL's
 * gsl_set_error_handler_off (without which a GSL error aborts the process
 * instead of returning its code) or a library's own initialisation. They
 * run wherever the component is opened: in the host in-process (where such
 * a setting is the process's), in the dlmopen namespace in isolated mode,
 * and in each worker in worker mode. Their arguments are constants: no
 * call's arrays exist yet. */
#include <stdio.h>
#include <stdlib.h>

#include "manifest_internal.h"

/* Kinds a setup routine may take: nothing that needs a call's arrays. */
static int constant_kind(mf_kind k) { return k == MF_CONST || k == MF_CHAR || k == MF_INFO; }

static int parse_one(mf_parse *p, mf_endpoint *e, json_t *obj) {
    e->present = 1;
    e->ep = TSR_EP_APPLY;   /* for the parser's rules; a setup routine is no endpoint */
    if (json_is_object(obj) && json_is_object(json_object_get(obj, "returns")))
        return mf_fail(p, TSR_E_DESCRIPTOR, e->where,
                       "a setup routine's value goes nowhere: \"returns\" is \"void\" (a "
                       "pointer or value it returns is ignored) or \"int32\" / \"int64\" (a "
                       "status)");
    int rc = mf_routine_parse(p, e, obj, e->where);
    for (int32_t i = 0; !rc && i < e->n_args; i++)
        if (!constant_kind(e->args[i].kind))
            rc = mf_fail(p, TSR_E_DESCRIPTOR, e->where,
                         "args[%d]: a '%s' argument needs a call's arrays, which do not exist "
                         "when the component opens; a setup routine takes const, char and info "
                         "arguments",
                         (int)i, mf_kind_names[e->args[i].kind]);
    return rc;
}

int mf_setup_parse(mf_parse *p) {
    struct manifest *m = p->m;
    json_t *v = json_object_get(m->root, "setup");
    if (!v) return 0;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_array(v) && !json_is_object(v))
        return mf_fail(p, TSR_E_DESCRIPTOR, "setup",
                       "expected a routine ({\"symbol\": ..., \"args\": [...]}) or a list of them");
    if (n > 16) return mf_fail(p, TSR_E_DESCRIPTOR, "setup", "%zu routines, at most 16", n);
    m->setup = calloc(n + 1, sizeof *m->setup);
    if (!m->setup) return mf_fail(p, TSR_E_NOMEM, "setup", "out of memory");
    for (size_t k = 0; k < n; k++) {
        mf_endpoint *e = &m->setup[k];
        m->n_setup = (int32_t)k + 1;   /* so that manifest_free sees what this one holds */
        snprintf(e->where, sizeof e->where, json_is_array(v) ? "setup[%zu]" : "setup", k);
        int rc = parse_one(p, e, json_is_array(v) ? json_array_get(v, k) : v);
        if (rc) return rc;
    }
    return 0;
}

static int run_all(tsr_ctx *ctx, void **state) {
    const struct manifest *m = ctx->state;
    *state = NULL;
    for (int32_t k = 0; k < m->n_setup; k++)
        if (mf_call_constant(ctx, m, &m->setup[k]) != 0) return -1;
    return 0;
}

int mf_setup_run(tsr_component *c, struct manifest *m, tsr_error *err) {
    if (!m->n_setup) return 0;
    void *unused;
    return backend_run_init(c, run_all, &unused, err);
}
