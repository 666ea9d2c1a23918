/* SPDX-License-Identifier: MIT */
/* Binding a parsed request into a call. */
#include <stdio.h>

#include "payload_internal.h"

/* The call's own message is already complete (component, endpoint, field). */
static int from_call(const tsr_call *call, int rc, tsr_error *err) {
    if (err != NULL) {
        err->code = rc;
        snprintf(err->message, sizeof err->message, "%s", tsr_call_errmsg(call));
        snprintf(err->loc, sizeof err->loc, "%s", tsr_call_errloc(call));
    }
    return rc;
}

TSR_API int tsr_payload_bind(const tsr_payload *p, tsr_call *call, tsr_error *err) {
    payload_ctx ctx = {.err = err};
    if (p == NULL || call == NULL)
        return payload_fail(&ctx, TSR_E_ARGUMENT, NULL, "tsr_payload_bind: payload and call are required");
    for (int32_t i = 0; i < p->n_inputs; i++) {
        int rc;
        if (p->given[i] && p->kinds[i].text != NULL)
            rc = tsr_call_set_text(call, tsr_component_input(p->component, i)->name,
                                   p->kinds[i].text);
        else
            rc = tsr_call_set_input_at(call, i, p->given[i] ? &p->inputs[i].array : NULL);
        if (rc != 0) return from_call(call, rc, err);
    }
    if (p->wrt_in != NULL || p->wrt_out != NULL) {
        int rc = tsr_call_set_wrt(call, (const char *const *)p->wrt_in, p->n_wrt_in,
                                  (const char *const *)p->wrt_out, p->n_wrt_out);
        if (rc != 0) return from_call(call, rc, err);
    }
    char **seed_names = p->endpoint == TSR_EP_JVP ? p->wrt_in : p->wrt_out;
    for (int32_t k = 0; k < p->n_seeds; k++) {
        int rc = tsr_call_set_seed(call, seed_names[k], &p->seeds[k].array);
        if (rc != 0) return from_call(call, rc, err);
    }
    for (int32_t k = 0; k < p->n_tangents; k++) {
        int rc = tsr_call_set_tangent(call, p->wrt_in[k], &p->tangents[k].array);
        if (rc != 0) return from_call(call, rc, err);
    }
    payload_ok(&ctx);
    return 0;
}
