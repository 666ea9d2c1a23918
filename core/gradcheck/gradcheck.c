/* SPDX-License-Identifier: MIT */
/* Gradient checks: tsr_gradcheck_run. Resolves the options, runs apply at
 * the caller's point, and hands over to the finite-difference or Taylor
 * strategy. Everything goes through the public call API, so the check
 * works in every mode. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck_internal.h"
#include "core/internal.h"

static int bad_number(gc_session *s, const char *name, double v) {
    if (isfinite(v) && v >= 0) return 0;
    return gc_fail(s, TSR_E_ARGUMENT, "%s must be a finite number >= 0 (0: the default), got %g",
                   name, v);
}

/* Copy what the caller's struct knows; the rest stays zero (default). */
static int read_options(gc_session *s, const tsr_gradcheck_options *given,
                        tsr_gradcheck_options *o) {
    memset(o, 0, sizeof *o);
    if (!given) return 0;
    if (given->struct_size < offsetof(tsr_gradcheck_options, endpoints) + sizeof given->endpoints)
        return gc_fail(s, TSR_E_ARGUMENT, "options.struct_size is %u; set it to sizeof the struct",
                       given->struct_size);
    size_t n = given->struct_size < sizeof *o ? given->struct_size : sizeof *o;
    memcpy(o, given, n);
    return 0;
}

static int check_options(gc_session *s, const tsr_gradcheck_options *o) {
    if (o->endpoints & ~TSR_CHECK_ALL)
        return gc_fail(s, TSR_E_ARGUMENT, "endpoints 0x%x has bits other than TSR_CHECK_*",
                       o->endpoints);
    if (o->n_input_paths < 0 || (o->n_input_paths > 0 && !o->input_paths) ||
        o->n_output_paths < 0 || (o->n_output_paths > 0 && !o->output_paths))
        return gc_fail(s, TSR_E_ARGUMENT, "input_paths or output_paths: bad count or NULL list");
    if (o->max_evals < 0) return gc_fail(s, TSR_E_ARGUMENT, "max_evals must be >= 0");
    if (o->max_failures < 0) return gc_fail(s, TSR_E_ARGUMENT, "max_failures must be >= 0");
    if (o->taylor_steps != 0 &&
        (o->taylor_steps < 3 || o->taylor_steps > TSR_GRADCHECK_MAX_TAYLOR_STEPS))
        return gc_fail(s, TSR_E_ARGUMENT, "taylor_steps must be 0 (default) or 3 to %d, got %d",
                       TSR_GRADCHECK_MAX_TAYLOR_STEPS, (int)o->taylor_steps);
    int rc = bad_number(s, "rtol", o->rtol);
    if (!rc) rc = bad_number(s, "atol", o->atol);
    if (!rc) rc = bad_number(s, "eps", o->eps);
    if (!rc) rc = bad_number(s, "taylor_h0", o->taylor_h0);
    if (!rc) rc = bad_number(s, "taylor_min_order", o->taylor_min_order);
    return rc;
}

static void apply_options(gc_session *s, const tsr_gradcheck_options *o) {
    s->max_evals = o->max_evals > 0 ? o->max_evals : TSR_GRADCHECK_DEFAULT_MAX_EVALS;
    s->seed = o->seed;
    s->rtol = o->rtol;
    s->atol = o->atol;
    s->eps = o->eps;
    s->h0 = o->taylor_h0;
    s->absolute_step = o->absolute_step != 0;
    s->taylor_steps = o->taylor_steps ? o->taylor_steps : TSR_GRADCHECK_DEFAULT_TAYLOR_STEPS;
    s->min_order = o->taylor_min_order > 0 ? o->taylor_min_order : TSR_GRADCHECK_DEFAULT_MIN_ORDER;
    s->progress = o->progress;
    s->progress_user = o->progress_user;
}

static int new_calls(gc_session *s) {
    s->apply = tsr_call_new(s->c, TSR_EP_APPLY);
    if (s->endpoints & TSR_CHECK_JVP) s->jvp = tsr_call_new(s->c, TSR_EP_JVP);
    if (s->endpoints & TSR_CHECK_VJP) s->vjp = tsr_call_new(s->c, TSR_EP_VJP);
    if (s->endpoints & TSR_CHECK_JACOBIAN) s->jac = tsr_call_new(s->c, TSR_EP_JACOBIAN);
    if (!s->apply || ((s->endpoints & TSR_CHECK_JVP) && !s->jvp) ||
        ((s->endpoints & TSR_CHECK_VJP) && !s->vjp) ||
        ((s->endpoints & TSR_CHECK_JACOBIAN) && !s->jac))
        return gc_fail(s, TSR_E_NOMEM, "out of memory");
    tsr_call *calls[] = {s->apply, s->jvp, s->vjp, s->jac};
    for (size_t k = 0; k < 4; k++) {
        int rc = calls[k] ? gc_bind_point(s, calls[k]) : 0;
        if (rc) return rc;
    }
    return 0;
}

/* apply at the caller's point: validates the inputs and gives f(x). */
static int run_base(gc_session *s) {
    int rc = tsr_call_run(s->apply);
    gc_count_apply(s->rep);
    gc_progress(s, 1, 1);
    if (rc) return gc_call_failed(s, s->apply, "apply at the given inputs");
    rc = gc_prepare(s);
    for (int32_t k = 0; !rc && k < s->n_in; k++) {
        gc_in *in = &s->in[k];
        tsr_array a = s->point[in->field];
        a.data = in->work;
        if (tsr_call_set_input_at(s->apply, in->field, &a) != 0)
            rc = gc_call_failed(s, s->apply, "binding a perturbed input");
    }
    return rc;
}

static void mark_checked(gc_session *s, int taylor) {
    static const tsr_endpoint eps[] = {TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN};
    for (size_t k = 0; k < 3; k++) {
        if (!(s->endpoints & (1u << eps[k]))) continue;
        tsr_gradcheck_summary *sum = gc_summary(s->rep, eps[k]);
        sum->checked = 1;
        sum->reference = taylor ? TSR_GRADCHECK_VS_TAYLOR : TSR_GRADCHECK_VS_FD;
    }
}

static void release(gc_session *s) {
    tsr_call_free(s->apply);
    tsr_call_free(s->jvp);
    tsr_call_free(s->vjp);
    tsr_call_free(s->jac);
    for (int32_t k = 0; s->in && k < s->n_in; k++) {
        tsr_component_free_buffer(s->c, s->in[k].work);
        tsr_component_free_buffer(s->c, s->in[k].seed);
        free(s->in[k].sample);
    }
    for (int32_t o = 0; s->out && o < s->n_out; o++) {
        tsr_component_free_buffer(s->c, s->out[o].seed);
        free(s->out[o].sample);
    }
    free(s->in);
    free(s->out);
    free(s->in_names);
    free(s->out_names);
    free(s->base);
}

TSR_API int tsr_gradcheck_run(tsr_component *c, const tsr_array *inputs,
                              const tsr_gradcheck_options *opts, tsr_gradcheck_report **out,
                              tsr_error *err) {
    if (out) *out = NULL;
    if (!c || !out || (!inputs && tsr_component_n_inputs(c) > 0)) {
        error_set(err, TSR_E_ARGUMENT, "tsr_gradcheck_run: %s is NULL",
                  !c ? "the component" : !out ? "out" : "inputs");
        return TSR_E_ARGUMENT;
    }
    gc_session s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.err = err;
    s.point = inputs;
    tsr_gradcheck_options o;
    int rc = read_options(&s, opts, &o);
    if (!rc) rc = check_options(&s, &o);
    if (rc) return rc;
    apply_options(&s, &o);
    s.rep = gc_report_new(o.taylor != 0,
                          o.max_failures > 0 ? o.max_failures : TSR_GRADCHECK_DEFAULT_MAX_FAILURES);
    if (!s.rep) return gc_fail(&s, TSR_E_NOMEM, "out of memory");
    rc = gc_select(&s, &o);
    if (!rc) rc = new_calls(&s);
    if (!rc) rc = run_base(&s);
    if (!rc) {
        mark_checked(&s, o.taylor != 0);
        if (s.endpoints && s.n_in > 0 && s.n_out > 0)
            rc = o.taylor ? gc_run_taylor(&s) : gc_run_fd(&s);
        if (!rc && s.endpoints && s.n_in > 0 && s.n_out > 0) rc = gc_check_repeatable(&s);
        if (!rc && (s.endpoints & TSR_CHECK_HVP) && s.n_in > 0 && s.n_out > 0)
            rc = gc_check_hvp(&s);
    }
    release(&s);
    if (rc) {
        tsr_gradcheck_report_free(s.rep);
        return rc;
    }
    *out = s.rep;
    if (err) {
        err->code = 0;
        err->message[0] = '\0';
        err->loc[0] = '\0';
    }
    return 0;
}
