/* SPDX-License-Identifier: MIT */
/* The Model Exchange right-hand side form (fmu.h), for an ODE solver the
 * caller runs (a JAX one, say):
 *
 *   inputs   t ()      time; default DefaultExperiment's startTime (or 0)
 *            x (nx,)   the continuous states, in ModelStructure's order of
 *                      ContinuousStateDerivative; default their start values
 *            u (nu,)   the Float64 input variables (only when there are)
 *            each scalar parameter, its start value as its default
 *   outputs  dx (nx,)  the state derivatives
 *            y (ny,)   the Float64 output variables (only when there are)
 *
 * The instance stays in Continuous-Time Mode between calls: a call sets
 * t, x and u and reads dx and y. Parameters are set again only when they
 * changed: tunable ones in Event Mode, a fixed one by a reset and a new
 * initialisation. jvp is fmi3GetDirectionalDerivative and vjp
 * fmi3GetAdjointDerivative (or directional derivatives along unit seeds
 * when the FMU has only those), with x, u and the Float64 parameters as
 * knowns and dx, y as unknowns; an FMU with neither gets the library's
 * central differences. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu.h"

enum { T_FIELD, X_FIELD };        /* inputs; u follows when there are inputs */
enum { DX_FIELD, Y_FIELD };       /* outputs */

static int fail(tsr_ctx *ctx, const char *why) {
    tsr_ctx_error(ctx, why);
    return -1;
}

static double param_value(const fmu_model *m, const tsr_array *p, int32_t k) {
    fmu_type type = m->d.vars[m->params[k]].type;
    if (type == FMU_FLOAT64) return *(const double *)p->data;
    if (type == FMU_INT32) return *(const int32_t *)p->data;
    return *(const uint8_t *)p->data != 0;
}

/* Reset (after the first time), parameters, initialisation at t, events,
 * Continuous-Time Mode. */
static int initialise(fmu_model *m, const tsr_args *a, double t, char *why, size_t n) {
    const fmu_api *api = m->inst.api;
    fmi3Instance h = m->inst.handle;
    m->ready = 0;
    if (m->used && fmu_status(&m->inst, api->reset(h), "fmi3Reset", why, n)) return -1;
    m->used = 1;
    if (fmu_set_parameters(&m->inst, &m->d, m->params, m->n_params, &a->inputs[m->param_field],
                           why, n))
        return -1;
    fmi3Status s = api->enter_initialization_mode(h, m->d.has_tolerance, m->d.tolerance, t,
                                                  fmi3False, 0.0);
    if (fmu_status(&m->inst, s, "fmi3EnterInitializationMode", why, n) ||
        fmu_status(&m->inst, api->exit_initialization_mode(h), "fmi3ExitInitializationMode",
                   why, n) ||
        fmu_event_iteration(&m->inst, why, n))
        return -1;
    m->ready = 1;
    return 0;
}

/* The parameters: set again where they changed since the last call. */
static int update_parameters(fmu_model *m, const tsr_args *a, double t, char *why, size_t n) {
    const tsr_array *p = &a->inputs[m->param_field];
    int changed = 0, fixed_changed = 0;
    for (int32_t k = 0; k < m->n_params; k++) {
        double v = param_value(m, &p[k], k);
        if (m->ready && v == m->param_now[k]) continue;
        changed = 1;
        if (m->d.vars[m->params[k]].variability == FMU_FIXED) fixed_changed = 1;
    }
    if (!m->ready || fixed_changed) {
        if (initialise(m, a, t, why, n)) return -1;
    } else if (changed) {
        m->ready = 0;
        if (fmu_status(&m->inst, m->inst.api->enter_event_mode(m->inst.handle),
                       "fmi3EnterEventMode", why, n) ||
            fmu_set_parameters(&m->inst, &m->d, m->params, m->n_params, p, why, n) ||
            fmu_event_iteration(&m->inst, why, n))
            return -1;
        m->ready = 1;
    }
    for (int32_t k = 0; k < m->n_params; k++) m->param_now[k] = param_value(m, &p[k], k);
    return 0;
}

/* Put the instance at (t, x, u, parameters). */
static int set_point(fmu_model *m, const tsr_args *a, char *why, size_t n) {
    const fmu_api *api = m->inst.api;
    fmi3Instance h = m->inst.handle;
    double t = *(const double *)a->inputs[T_FIELD].data;
    if (fmu_instance_usable(&m->inst, why, n)) return -1;
    m->inst.last[0] = '\0';
    if (!isfinite(t)) {
        snprintf(why, n, "input 't' is not finite");
        return -1;
    }
    if (update_parameters(m, a, t, why, n)) return -1;
    if (fmu_status(&m->inst, api->set_time(h, t), "fmi3SetTime", why, n)) goto broken;
    const double *x = a->inputs[X_FIELD].data;
    if (fmu_status(&m->inst, api->set_continuous_states(h, x, (size_t)m->n_states),
                   "fmi3SetContinuousStates", why, n))
        goto broken;
    if (m->n_inputs) {
        for (int32_t j = 0; j < m->n_inputs; j++) m->vr[j] = m->d.vars[m->inputs[j]].vr;
        if (fmu_status(&m->inst,
                       api->set_float64(h, m->vr, (size_t)m->n_inputs,
                                        a->inputs[m->input_field].data, (size_t)m->n_inputs),
                       "fmi3SetFloat64 (inputs u)", why, n))
            goto broken;
    }
    return 0;
broken:
    m->ready = 0; /* the next call starts again from a reset */
    return -1;
}

static int rhs_apply(fmu_model *m, const tsr_args *a, char *why, size_t n) {
    const fmu_api *api = m->inst.api;
    if (set_point(m, a, why, n)) return -1;
    if (fmu_status(&m->inst,
                   api->get_continuous_state_derivatives(m->inst.handle, a->results[DX_FIELD].data,
                                                         (size_t)m->n_states),
                   "fmi3GetContinuousStateDerivatives", why, n))
        return -1;
    if (!m->n_outputs) return 0;
    for (int32_t j = 0; j < m->n_outputs; j++) m->vr[j] = m->d.vars[m->outputs[j]].vr;
    return fmu_status(&m->inst,
                      api->get_float64(m->inst.handle, m->vr, (size_t)m->n_outputs,
                                       a->results[Y_FIELD].data, (size_t)m->n_outputs),
                      "fmi3GetFloat64 (outputs y)", why, n);
}

/* The value references of input field f (x, u or a parameter) appended at
 * vr; how many. */
static int32_t known_refs(const fmu_model *m, int32_t f, fmi3ValueReference *vr) {
    if (f == X_FIELD) {
        for (int32_t i = 0; i < m->n_states; i++) vr[i] = m->d.vars[m->states[i]].vr;
        return m->n_states;
    }
    if (m->n_inputs && f == m->input_field) {
        for (int32_t i = 0; i < m->n_inputs; i++) vr[i] = m->d.vars[m->inputs[i]].vr;
        return m->n_inputs;
    }
    vr[0] = m->d.vars[m->params[f - m->param_field]].vr;
    return 1;
}

static int32_t unknown_refs(const fmu_model *m, int32_t f, fmi3ValueReference *vr) {
    const int32_t *vars = f == DX_FIELD ? m->derivatives : m->outputs;
    int32_t count = f == DX_FIELD ? m->n_states : m->n_outputs;
    for (int32_t i = 0; i < count; i++) vr[i] = m->d.vars[vars[i]].vr;
    return count;
}

static size_t elements(const tsr_array *x) {
    size_t k = 1;
    for (int32_t d = 0; d < x->rank; d++) k *= (size_t)x->shape[d];
    return k;
}

/* jvp and vjp: knowns and unknowns' references, seeds gathered, one
 * derivative call (or one per known, along unit seeds), results scattered. */
static int rhs_derivative(fmu_model *m, const tsr_args *a, char *why, size_t n) {
    const fmu_api *api = m->inst.api;
    fmi3Instance h = m->inst.handle;
    int jvp = a->endpoint == TSR_EP_JVP;
    if (set_point(m, a, why, n)) return -1;
    fmi3ValueReference *known = m->vr, *unknown;
    size_t nk = 0, nu = 0;
    for (int32_t k = 0; k < a->n_wrt_in; k++) nk += (size_t)known_refs(m, a->wrt_in[k], known + nk);
    unknown = known + nk;
    for (int32_t k = 0; k < a->n_wrt_out; k++)
        nu += (size_t)unknown_refs(m, a->wrt_out[k], unknown + nu);
    /* seeds: the tangents (over knowns) or the cotangents (over unknowns) */
    double *seed = m->values, *sens = m->values2;
    size_t at = 0;
    for (int32_t k = 0; k < a->n_seeds; k++) {
        size_t len = elements(&a->seeds[k]);
        memcpy(seed + at, a->seeds[k].data, len * sizeof *seed);
        at += len;
    }
    fmi3Status s;
    const char *fn;
    if (jvp) {
        s = api->get_directional_derivative(h, unknown, nu, known, nk, seed, nk, sens, nu);
        fn = "fmi3GetDirectionalDerivative";
    } else if (api->get_adjoint_derivative) {
        s = api->get_adjoint_derivative(h, unknown, nu, known, nk, seed, nu, sens, nk);
        fn = "fmi3GetAdjointDerivative";
    } else {
        /* w . J e_j for each known j: the column along a unit seed */
        double *unit = seed + nu, *column = sens + nk;
        memset(unit, 0, nk * sizeof *unit);
        s = fmi3OK;
        fn = "fmi3GetDirectionalDerivative";
        for (size_t j = 0; j < nk && (s == fmi3OK || s == fmi3Warning); j++) {
            unit[j] = 1.0;
            s = api->get_directional_derivative(h, unknown, nu, known, nk, unit, nk, column, nu);
            unit[j] = 0.0;
            double dot = 0.0;
            for (size_t i = 0; i < nu; i++) dot += seed[i] * column[i];
            sens[j] = dot;
        }
    }
    if (fmu_status(&m->inst, s, fn, why, n)) return -1;
    at = 0;
    for (int32_t k = 0; k < a->n_results; k++) {
        size_t len = elements(&a->results[k]);
        memcpy(a->results[k].data, sens + at, len * sizeof *sens);
        at += len;
    }
    return 0;
}

static int rhs_endpoint(tsr_ctx *ctx, const tsr_args *a) {
    fmu_model *m = ctx->state;
    char why[TSR_ERRMSG_MAX - 128];
    int rc;
    if (a->endpoint == TSR_EP_APPLY)
        rc = rhs_apply(m, a, why, sizeof why);
    else if (a->endpoint == TSR_EP_JVP || a->endpoint == TSR_EP_VJP)
        rc = rhs_derivative(m, a, why, sizeof why);
    else {
        snprintf(why, sizeof why, "the right-hand side form does not serve %s",
                 tsr_endpoint_name(a->endpoint));
        rc = -1;
    }
    return rc ? fail(ctx, why) : 0;
}

static int add_vectors(fmu_model *m, char *why, size_t n) {
    fmu_schema *s = &m->schema;
    const fmu_description *d = &m->d;
    int rc = fmu_schema_add_states(m, "x", "the continuous states:", why, n);
    double *start = m->values;
    for (int32_t i = 0; i < d->n_vars; i++) {
        const fmu_variable *v = &d->vars[i];
        if (v->causality == FMU_INPUT && v->type == FMU_FLOAT64 && !v->is_array) {
            start[m->n_inputs] = v->has_start ? v->start : 0.0;
            m->inputs[m->n_inputs++] = i;
        } else if (v->causality == FMU_OUTPUT && v->type == FMU_FLOAT64 && !v->is_array)
            m->outputs[m->n_outputs++] = i;
        else if (v->causality == FMU_INPUT || v->causality == FMU_OUTPUT)
            comp_log(m->c, TSR_LOG_INFO,
                     "FMU %s '%s' (%s%s) is left out of u and y: they hold scalar Float64 "
                     "variables",
                     fmu_causality_name(v->causality), v->name, fmu_type_name(v->type),
                     v->is_array ? " array" : "");
    }
    if (!rc && m->n_inputs) {
        m->input_field = s->n_in;
        rc = fmu_schema_add(s, 0, "u", "the Float64 input variables, in the description's order",
                            TSR_FLOAT64, 1, NULL, m->n_inputs, TSR_FIELD_DIFFERENTIABLE, -1,
                            why, n);
        if (!rc) rc = fmu_schema_default(s, start, m->n_inputs, why, n);
    }
    if (!rc)
        rc = fmu_schema_add(s, 1, "dx", "the state derivatives, in x's order", TSR_FLOAT64, 1,
                            NULL, m->n_states, TSR_FIELD_DIFFERENTIABLE, -1, why, n);
    if (!rc && m->n_outputs)
        rc = fmu_schema_add(s, 1, "y", "the Float64 output variables, in the description's order",
                            TSR_FLOAT64, 1, NULL, m->n_outputs, TSR_FIELD_DIFFERENTIABLE, -1,
                            why, n);
    return rc;
}

int fmu_rhs_build(fmu_model *m, char *why, size_t n) {
    const fmu_description *d = &m->d;
    static const char *const taken[] = {"t", "x", "u", "dx", "y", NULL};
    if (fmu_model_scratch(m, why, n)) return TSR_E_NOMEM;
    fmu_schema *s = &m->schema;
    int rc = fmu_find_states(m, why, n);
    if (!rc)
        rc = fmu_schema_add(s, 0, "t", "time", TSR_FLOAT64, 0, NULL, 0, 0, -1, why, n);
    double t0 = d->has_start_time ? d->start_time : 0.0;
    if (!rc) rc = fmu_schema_default(s, &t0, 1, why, n);
    if (!rc) rc = add_vectors(m, why, n);
    m->param_field = s->n_in;
    if (!rc) rc = fmu_schema_add_parameters(s, d, m->c, taken, m->params, &m->n_params, why, n);
    if (rc) return rc;
    const fmu_api *api = m->inst.api;
    fmu_schema_describe(m, rhs_endpoint);
    if (api->get_directional_derivative) m->desc.jvp = m->desc.vjp = rhs_endpoint;
    if (api->get_adjoint_derivative) m->desc.vjp = rhs_endpoint;
    if (!m->desc.jvp) m->desc.fd_method = TSR_FD_CENTRAL;
    return 0;
}
