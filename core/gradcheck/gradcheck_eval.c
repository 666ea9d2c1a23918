/* SPDX-License-Identifier: MIT */
/* Gradient checks: running apply and the derivative endpoints through the
 * public call API, counting calls, reporting progress and failures. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck_internal.h"

int gc_fail(gc_session *s, int code, const char *fmt, ...) {
    if (s->err) {
        s->err->code = code;
        s->err->loc[0] = '\0';
        int n = snprintf(s->err->message, sizeof s->err->message,
                         "component '%s': gradient check: ", tsr_component_name(s->c));
        if (n >= 0 && (size_t)n < sizeof s->err->message) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(s->err->message + n, sizeof s->err->message - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return code;
}

/* The call's own message already names the component and endpoint. */
int gc_call_failed(gc_session *s, tsr_call *call, const char *what) {
    int code = tsr_call_errcode(call);
    if (code == 0) code = TSR_E_PLUGIN;
    if (s->err) {
        s->err->code = code;
        snprintf(s->err->message, sizeof s->err->message, "gradient check, %s: %s", what,
                 tsr_call_errmsg(call));
        snprintf(s->err->loc, sizeof s->err->loc, "%s", tsr_call_errloc(call));
    }
    return code;
}

void gc_progress(gc_session *s, int64_t more_total, int64_t done) {
    s->total += more_total;
    s->done += done;
    if (s->progress) s->progress(s->progress_user, s->done, s->total);
}

int gc_bind_point(gc_session *s, tsr_call *call) {
    int32_t n = tsr_component_n_inputs(s->c);
    for (int32_t k = 0; k < n; k++) {
        if (tsr_call_set_input_at(call, k, &s->point[k]) != 0)
            return gc_call_failed(s, call, "binding the inputs");
    }
    return 0;
}

static tsr_array field_array(void *data, tsr_dtype dt, int32_t rank, const int64_t *shape) {
    tsr_array a;
    memset(&a, 0, sizeof a);
    a.data = data;
    a.dtype = dt;
    a.rank = rank;
    for (int32_t d = 0; d < rank; d++) a.shape[d] = shape[d];
    return a;
}

/* An output that changes shape or dtype under a perturbation has no
 * finite difference. */
static int same_layout(const gc_out *o, const tsr_array *a) {
    if (a->dtype != o->dtype || a->rank != o->rank) return 0;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->shape[d] != o->shape[d]) return 0;
    return 1;
}

int gc_apply(gc_session *s, const tsr_array **out) {
    int rc = tsr_call_run(s->apply);
    gc_count_apply(s->rep);
    gc_progress(s, 0, 1);
    if (rc != 0) return gc_call_failed(s, s->apply, "apply at a perturbed point");
    for (int32_t o = 0; o < s->n_out; o++) {
        out[o] = tsr_call_output(s->apply, s->out[o].name);
        if (!out[o] || !same_layout(&s->out[o], out[o]))
            return gc_fail(s, TSR_E_PLUGIN_RESULT,
                           "output '%s' changed shape or dtype when an input was perturbed",
                           s->out[o].name);
    }
    return 0;
}

static int run_counted(gc_session *s, tsr_call *call, tsr_endpoint ep, const char *what) {
    int rc = tsr_call_run(call);
    if (!s->uncounted) {
        gc_summary(s->rep, ep)->calls++;
        gc_progress(s, 0, 1);
    }
    return rc != 0 ? gc_call_failed(s, call, what) : 0;
}

int gc_run_jvp(gc_session *s, int32_t k) {
    const char *const *ins = k < 0 ? s->in_names : &s->in_names[k];
    int32_t n_ins = k < 0 ? s->n_in : 1;
    if (tsr_call_set_wrt(s->jvp, ins, n_ins, s->out_names, s->n_out) != 0)
        return gc_call_failed(s, s->jvp, "setting jvp_inputs");
    for (int32_t t = 0; t < n_ins; t++) {
        const gc_in *in = &s->in[k < 0 ? t : k];
        tsr_array a = field_array(in->seed, in->dtype, in->rank, in->shape);
        if (tsr_call_set_seed(s->jvp, in->name, &a) != 0)
            return gc_call_failed(s, s->jvp, "setting a tangent");
    }
    return run_counted(s, s->jvp, TSR_EP_JVP, "jvp");
}

int gc_run_vjp(gc_session *s, int32_t o) {
    const char *const *outs = o < 0 ? s->out_names : &s->out_names[o];
    int32_t n_outs = o < 0 ? s->n_out : 1;
    if (tsr_call_set_wrt(s->vjp, s->in_names, s->n_in, outs, n_outs) != 0)
        return gc_call_failed(s, s->vjp, "setting vjp_outputs");
    for (int32_t t = 0; t < n_outs; t++) {
        const gc_out *out = &s->out[o < 0 ? t : o];
        tsr_array a = field_array(out->seed, out->dtype, out->rank, out->shape);
        if (tsr_call_set_seed(s->vjp, out->name, &a) != 0)
            return gc_call_failed(s, s->vjp, "setting a cotangent");
    }
    return run_counted(s, s->vjp, TSR_EP_VJP, "vjp");
}

int gc_run_jacobian(gc_session *s) {
    if (tsr_call_set_wrt(s->jac, s->in_names, s->n_in, s->out_names, s->n_out) != 0)
        return gc_call_failed(s, s->jac, "setting jac_inputs");
    int rc = run_counted(s, s->jac, TSR_EP_JACOBIAN, "jacobian");
    for (int32_t o = 0; !rc && o < s->n_out; o++)
        for (int32_t k = 0; !rc && k < s->n_in; k++)
            if (!gc_jac_block(s, o, k))
                rc = gc_fail(s, TSR_E_PLUGIN_RESULT, "jacobian gave no block d %s / d %s",
                             s->out[o].name, s->in[k].name);
    return rc;
}

const tsr_array *gc_jvp_result(gc_session *s, int32_t o) {
    return tsr_call_output(s->jvp, s->out[o].name);
}

const tsr_array *gc_vjp_result(gc_session *s, int32_t k) {
    return tsr_call_output(s->vjp, s->in[k].name);
}

const tsr_array *gc_jac_block(gc_session *s, int32_t o, int32_t k) {
    return tsr_call_jacobian(s->jac, s->out[o].name, s->in[k].name);
}
