/* SPDX-License-Identifier: MIT */
/* The Model Exchange trajectory form (fmu.h, fmu_sim.h): the FMU
 * integrated here with CVODES over a grid.
 *
 *   inputs   t (n,)       the output grid, strictly increasing; its default
 *                         runs from DefaultExperiment's startTime to
 *                         stopTime in steps of stepSize (or 100 steps)
 *            x0 (nx,)     the continuous states at t[0], in ModelStructure's
 *                         order of ContinuousStateDerivative; default their
 *                         start values
 *            each scalar parameter, its start value as its default
 *            each Float64 input variable, (n,): its value over
 *                         [t[k], t[k+1]), held; optional (left out: its start)
 *   outputs  x (n, nx)    the states at each t[k]
 *            each Float64 output variable, (n,): its value at t[k]
 *
 * One call is one simulation: the instance is reset, the parameters set,
 * initialised at t[0], put in Continuous-Time Mode with x(t[0]) = x0, then
 * integrated by CVODES (BDF, Newton with a dense direct solver, the
 * Jacobian from fmi3GetDirectionalDerivative when the FMU has it) with the
 * grid's points as stop times. Tolerances: rtol = DefaultExperiment's
 * tolerance (else 1e-6; the config key "rtol" overrides it), atol = rtol *
 * 1e-3; at most 100000 steps an interval (config "max_steps"). An input
 * that changes at a grid point restarts the integrator there. jvp, vjp and
 * jacobian come from CVODES' forward sensitivities (fmu_sensitivity.c)
 * over x0 and the Float64 parameters when the FMU has directional
 * derivatives (the input variables' trajectories are then not
 * differentiable), else from the library's central differences of apply
 * (parallel over workers=N). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "fmu_sim.h"

#define DEFAULT_RTOL 1e-6
#define ATOL_SCALE 1e-3
#define DEFAULT_MAX_STEPS 100000L
/* Right-hand side evaluations between two looks at cancellation. */
#define CANCEL_EVERY 256

static int fail(tsr_ctx *ctx, const char *why) {
    tsr_ctx_error(ctx, why);
    return -1;
}

/* CVODES' right-hand side: the FMU's state derivatives at (t, y). */
static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *user) {
    fmu_run *r = user;
    fmu_model *m = r->m;
    if (++r->calls % CANCEL_EVERY == 0 && tsr_ctx_cancelled(r->ctx)) {
        r->cancelled = 1;
        return -1;
    }
    if (fmu_run_point(r, t, N_VGetArrayPointer(y), r->why, sizeof r->why) ||
        fmu_status(&m->inst,
                   m->inst.api->get_continuous_state_derivatives(
                       m->inst.handle, N_VGetArrayPointer(ydot), (size_t)m->n_states),
                   "fmi3GetContinuousStateDerivatives", r->why, sizeof r->why)) {
        r->failed = 1;
        r->failed_at = t;
        return -1;
    }
    return 0;
}

/* The Newton iteration's Jacobian, column by column along unit seeds. */
static int jacobian(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix jac, void *user,
                    N_Vector tmp1, N_Vector tmp2, N_Vector tmp3) {
    (void)fy;
    (void)tmp1;
    (void)tmp2;
    (void)tmp3;
    fmu_run *r = user;
    fmu_model *m = r->m;
    size_t nx = (size_t)m->n_states;
    fmi3ValueReference *known = m->vr, *unknown = m->vr + nx;
    double *unit = m->values;
    for (size_t i = 0; i < nx; i++) {
        known[i] = m->d.vars[m->states[i]].vr;
        unknown[i] = m->d.vars[m->derivatives[i]].vr;
        unit[i] = 0.0;
    }
    if (fmu_run_point(r, t, N_VGetArrayPointer(y), r->why, sizeof r->why)) goto failed;
    for (size_t j = 0; j < nx; j++) {
        unit[j] = 1.0;
        double *column = SUNDenseMatrix_Column(jac, (sunindextype)j);
        fmi3Status s = m->inst.api->get_directional_derivative(m->inst.handle, unknown, nx, known,
                                                               nx, unit, nx, column, nx);
        unit[j] = 0.0;
        if (fmu_status(&m->inst, s, "fmi3GetDirectionalDerivative (the Jacobian)", r->why,
                       sizeof r->why))
            goto failed;
    }
    return 0;
failed:
    r->failed = 1;
    r->failed_at = t;
    return -1;
}

/* The inputs' values at grid point k (those given); *changed: one differs
 * from its value at k - 1. */
static int set_inputs(fmu_run *r, int64_t k, int *changed, char *why, size_t n) {
    fmu_model *m = r->m;
    int32_t count = 0;
    *changed = 0;
    for (int32_t j = 0; j < m->n_inputs; j++) {
        const tsr_array *u = &r->a->inputs[m->input_field + j];
        if (tsr_input_absent(u)) continue;
        const double *v = u->data;
        if (!isfinite(v[k])) {
            snprintf(why, n, "input '%s': element %lld is not finite",
                     m->schema.in[m->input_field + j].name, (long long)k);
            return -1;
        }
        if (k && v[k] != v[k - 1]) *changed = 1;
        m->vr[count] = m->d.vars[m->inputs[j]].vr;
        m->values[count++] = v[k];
    }
    if (!count || (k && !*changed)) return 0;
    fmi3Status s = m->inst.api->set_float64(m->inst.handle, m->vr, (size_t)count, m->values,
                                            (size_t)count);
    return fmu_status(&m->inst, s, "fmi3SetFloat64 (inputs)", why, n);
}

/* x[k] and the outputs at grid point k (the instance there). */
static int record(fmu_run *r, int64_t k, const double *x, char *why, size_t n) {
    fmu_model *m = r->m;
    const tsr_args *a = r->a;
    size_t nx = (size_t)m->n_states;
    if (a->endpoint != TSR_EP_APPLY) return fmu_sens_point(r, k, why, n);
    memcpy((double *)a->results[SIM_X].data + (size_t)k * nx, x, nx * sizeof *x);
    if (!m->n_outputs) return 0;
    for (int32_t j = 0; j < m->n_outputs; j++) m->vr[j] = m->d.vars[m->outputs[j]].vr;
    fmi3Status s = m->inst.api->get_float64(m->inst.handle, m->vr, (size_t)m->n_outputs,
                                            m->values, (size_t)m->n_outputs);
    if (fmu_status(&m->inst, s, "fmi3GetFloat64 (outputs)", why, n)) return -1;
    for (int32_t j = 0; j < m->n_outputs; j++)
        ((double *)a->results[SIM_X + 1 + j].data)[k] = m->values[j];
    return 0;
}

/* Reset, parameters, the inputs at t[0], initialisation, Continuous-Time
 * Mode at (t[0], x0). */
static int initialise(fmu_run *r, const double *g, int64_t len, char *why, size_t n) {
    fmu_model *m = r->m;
    const fmu_api *api = m->inst.api;
    fmi3Instance h = m->inst.handle;
    const double *x0 = r->a->inputs[SIM_X0].data;
    int changed;
    for (int32_t i = 0; i < m->n_states; i++)
        if (!isfinite(x0[i])) {
            snprintf(why, n, "input 'x0': x0[%d] (state '%s') is not finite", (int)i,
                     m->d.vars[m->states[i]].name);
            return -1;
        }
    if (fmu_instance_usable(&m->inst, why, n)) return -1;
    m->inst.last[0] = '\0';
    if (m->used && fmu_status(&m->inst, api->reset(h), "fmi3Reset", why, n)) return -1;
    m->used = 1;
    if (fmu_set_parameters(&m->inst, &m->d, m->params, m->n_params,
                           &r->a->inputs[m->param_field], why, n) ||
        set_inputs(r, 0, &changed, why, n))
        return -1;
    fmi3Status s = api->enter_initialization_mode(h, fmi3True, r->sim->rtol, g[0], fmi3True,
                                                  g[len - 1]);
    if (fmu_status(&m->inst, s, "fmi3EnterInitializationMode", why, n) ||
        fmu_status(&m->inst, api->exit_initialization_mode(h), "fmi3ExitInitializationMode",
                   why, n) ||
        fmu_event_iteration(&m->inst, why, n))
        return -1;
    return fmu_run_point(r, g[0], x0, why, n);
}

static int make_integrator(fmu_run *r, double t0, char *why, size_t n) {
    fmu_model *m = r->m;
    SUNContext sun = r->sim->sun;
    sunindextype nx = m->n_states;
    r->y = N_VNew_Serial(nx, sun);
    r->cvode = CVodeCreate(CV_BDF, sun);
    r->jac = SUNDenseMatrix(nx, nx, sun);
    r->ls = r->y && r->jac ? SUNLinSol_Dense(r->y, r->jac, sun) : NULL;
    if (!r->y || !r->cvode || !r->jac || !r->ls) {
        snprintf(why, n, "out of memory (the integrator)");
        return -1;
    }
    memcpy(N_VGetArrayPointer(r->y), r->a->inputs[SIM_X0].data, (size_t)nx * sizeof(double));
    int flag = CVodeSetErrHandlerFn(r->cvode, fmu_cvode_message, r);
    const char *fn = "CVodeSetErrHandlerFn";
    if (flag == CV_SUCCESS) flag = CVodeInit(r->cvode, rhs, t0, r->y), fn = "CVodeInit";
    if (flag == CV_SUCCESS) flag = CVodeSetUserData(r->cvode, r), fn = "CVodeSetUserData";
    if (flag == CV_SUCCESS)
        flag = CVodeSStolerances(r->cvode, r->sim->rtol, r->sim->atol), fn = "CVodeSStolerances";
    if (flag == CV_SUCCESS)
        flag = CVodeSetLinearSolver(r->cvode, r->ls, r->jac), fn = "CVodeSetLinearSolver";
    if (flag == CV_SUCCESS && m->inst.api->get_directional_derivative)
        flag = CVodeSetJacFn(r->cvode, jacobian), fn = "CVodeSetJacFn";
    if (flag == CV_SUCCESS)
        flag = CVodeSetMaxNumSteps(r->cvode, r->sim->max_steps), fn = "CVodeSetMaxNumSteps";
    if (flag != CV_SUCCESS) {
        fmu_cvode_failed(r, flag, fn, why, n);
        return -1;
    }
    return r->ns ? fmu_sens_start(r, why, n) : 0;
}

static void free_integrator(fmu_run *r) {
    fmu_sens_free(r);
    if (r->cvode) CVodeFree(&r->cvode);
    if (r->ls) SUNLinSolFree(r->ls);
    if (r->jac) SUNMatDestroy(r->jac);
    if (r->y) N_VDestroy(r->y);
}

/* After grid point k: the FMU's fmi3CompletedIntegratorStep where it needs
 * it, and the event it may ask for (its states read back: they may jump);
 * *restart: the integrator must start again from here. */
static int completed_step(fmu_run *r, double t, int *restart, char *why, size_t n) {
    fmu_model *m = r->m;
    const fmu_api *api = m->inst.api;
    if (!m->d.me.needs_completed_integrator_step || !api->completed_integrator_step) return 0;
    fmi3Boolean event = fmi3False, terminate = fmi3False;
    fmi3Status s = api->completed_integrator_step(m->inst.handle, fmi3True, &event, &terminate);
    if (fmu_status(&m->inst, s, "fmi3CompletedIntegratorStep", why, n)) return -1;
    if (terminate) {
        snprintf(why, n, "the FMU ended the simulation at t = %.17g "
                 "(fmi3CompletedIntegratorStep's terminateSimulation)", t);
        return -1;
    }
    if (!event) return 0;
    *restart = 1;
    double *y = N_VGetArrayPointer(r->y);
    return fmu_status(&m->inst, api->enter_event_mode(m->inst.handle), "fmi3EnterEventMode",
                      why, n) ||
                   fmu_event_iteration(&m->inst, why, n) ||
                   fmu_status(&m->inst,
                              api->get_continuous_states(m->inst.handle, y, (size_t)m->n_states),
                              "fmi3GetContinuousStates", why, n)
               ? -1
               : 0;
}

/* Integrate from t[k] to t[k + 1]. */
static int advance(fmu_run *r, const double *g, int64_t k, char *why, size_t n) {
    sunrealtype reached = g[k];
    r->cvode_said[0] = '\0';
    int flag = CVodeSetStopTime(r->cvode, g[k + 1]);
    if (flag == CV_SUCCESS) flag = CVode(r->cvode, g[k + 1], r->y, &reached, CV_NORMAL);
    if (flag >= 0) return 0;
    if (r->cancelled) return -1;
    if (r->failed) {
        size_t used = strlen(r->why);
        snprintf(r->why + used, sizeof r->why - used, " (at t = %.17g)", r->failed_at);
        snprintf(why, n, "%s", r->why);
        return -1;
    }
    fmu_cvode_failed(r, flag, "CVode", why, n);
    size_t used = strlen(why);
    snprintf(why + used, n - used, " at t = %.17g, integrating from t[%lld] = %.17g to t[%lld] "
             "= %.17g", reached, (long long)k, g[k], (long long)k + 1, g[k + 1]);
    used = strlen(why);
    if (flag == CV_TOO_MUCH_WORK)
        snprintf(why + used, n - used, ": more than %ld steps in one interval (the problem "
                 "may be very stiff or blow up; config 'max_steps' raises the bound)",
                 r->sim->max_steps);
    return -1;
}

static int simulate(fmu_run *r, char *why, size_t n) {
    fmu_model *m = r->m;
    const tsr_array *t = &r->a->inputs[SIM_T];
    const double *g = t->data;
    int64_t len = t->shape[0];
    if (fmu_check_grid(t, 0, why, n)) return -1;
    if (r->a->endpoint != TSR_EP_APPLY && fmu_sens_setup(r, why, n)) return -1;
    if (initialise(r, g, len, why, n) || make_integrator(r, g[0], why, n)) return -1;
    if (record(r, 0, N_VGetArrayPointer(r->y), why, n)) return -1;
    for (int64_t k = 0; k + 1 < len; k++) {
        if (tsr_ctx_cancelled(r->ctx)) {
            r->cancelled = 1;
            return -1;
        }
        if (advance(r, g, k, why, n)) return -1;
        int restart = 0, changed = 0;
        double *y = N_VGetArrayPointer(r->y);
        if (fmu_run_point(r, g[k + 1], y, why, n) ||
            completed_step(r, g[k + 1], &restart, why, n) ||
            set_inputs(r, k + 1, &changed, why, n) || record(r, k + 1, y, why, n))
            return -1;
        if (k + 2 == len || !(restart || changed)) continue;
        int flag = CVodeReInit(r->cvode, g[k + 1], r->y);
        if (flag != CV_SUCCESS) {
            fmu_cvode_failed(r, flag, "CVodeReInit", why, n);
            return -1;
        }
        if (r->ns && fmu_sens_restart(r, g[k + 1], why, n)) return -1;
    }
    return fmu_status(&m->inst, m->inst.api->terminate(m->inst.handle), "fmi3Terminate", why, n);
}

static int simulate_endpoint(tsr_ctx *ctx, const tsr_args *a) {
    fmu_model *m = ctx->state;
    fmu_run r = {.m = m, .sim = m->sim, .ctx = ctx, .a = a};
    char why[TSR_ERRMSG_MAX - 128];
    int rc;
    if (a->endpoint == TSR_EP_APPLY || a->endpoint == TSR_EP_JVP || a->endpoint == TSR_EP_VJP ||
        a->endpoint == TSR_EP_JACOBIAN)
        rc = simulate(&r, why, sizeof why);
    else {
        snprintf(why, sizeof why, "the simulate form does not serve %s",
                 tsr_endpoint_name(a->endpoint));
        rc = -1;
    }
    free_integrator(&r);
    if (r.cancelled) return fail(ctx, "cancelled");
    return rc ? fail(ctx, why) : 0;
}

/* ---- the schema -------------------------------------------------------- */

static int config_number(fmu_model *m, const char *key, double *out, char *why, size_t n) {
    const struct tsr_options *o = backend_options(m->c);
    for (int32_t i = 0; i < o->n_config; i++) {
        if (strcmp(o->config[i].key, key) != 0) continue;
        const char *text = o->config[i].value;
        char *end;
        errno = 0;
        double v = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(v) || !(v > 0)) {
            snprintf(why, n, "config '%s': '%s' is not a positive number", key, text);
            return TSR_E_ARGUMENT;
        }
        *out = v;
        return 0;
    }
    return 0;
}

static int make_sim(fmu_model *m, char *why, size_t n) {
    fmu_sim *sim = calloc(1, sizeof *sim);
    if (!sim) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    m->sim = sim;
    if (SUNContext_Create(NULL, &sim->sun) != 0) {
        sim->sun = NULL;
        snprintf(why, n, "SUNContext_Create failed (out of memory)");
        return TSR_E_NOMEM;
    }
    const fmu_description *d = &m->d;
    double rtol = d->has_tolerance && d->tolerance > 0 && d->tolerance < 1 ? d->tolerance
                                                                           : DEFAULT_RTOL;
    double steps = (double)DEFAULT_MAX_STEPS;
    int rc = config_number(m, "rtol", &rtol, why, n);
    if (!rc) rc = config_number(m, "max_steps", &steps, why, n);
    if (rc) return rc;
    if (!(rtol < 1) || steps < 1 || steps > 1e12 || steps != floor(steps)) {
        snprintf(why, n, "config: rtol %.17g must be below 1 and max_steps %.17g a whole "
                 "number from 1 to 1e12", rtol, steps);
        return TSR_E_ARGUMENT;
    }
    sim->rtol = rtol;
    sim->atol = rtol * ATOL_SCALE;
    sim->max_steps = (long)steps;
    return 0;
}

void fmu_simulate_free(void *state) {
    fmu_sim *sim = state;
    if (!sim) return;
    if (sim->sun) SUNContext_Free(&sim->sun);
    free(sim);
}

static int add_fields(fmu_model *m, const char *const *taken, char *why, size_t n) {
    fmu_schema *s = &m->schema;
    const fmu_description *d = &m->d;
    int sens = m->inst.api->get_directional_derivative != NULL;
    char doc[1024];
    int rc = fmu_schema_add_states(m, "x0", "the continuous states at t[0], default their start "
                                   "values:", why, n);
    m->param_field = s->n_in;
    if (!rc) rc = fmu_schema_add_parameters(s, d, m->c, taken, m->params, &m->n_params, why, n);
    m->input_field = s->n_in;
    /* With sensitivities, the derivatives are over x0 and the parameters;
     * an input's trajectory is differentiable by finite differences only. */
    uint32_t input_flags = TSR_FIELD_OPTIONAL | (sens ? 0u : TSR_FIELD_DIFFERENTIABLE);
    if (!rc) rc = fmu_schema_add_signals(m, FMU_INPUT, input_flags, taken, why, n);
    int used = snprintf(doc, sizeof doc, "the states at each t[k], a row each:");
    for (int32_t k = 0; k < m->n_states && used > 0 && (size_t)used < sizeof doc; k++)
        used += snprintf(doc + used, sizeof doc - (size_t)used, " %s", d->vars[m->states[k]].name);
    const tsr_dim x_dims[2] = {{"n", TSR_DIM_ANY}, {NULL, m->n_states}};
    if (!rc)
        rc = fmu_schema_add_dims(s, 1, "x", doc, TSR_FLOAT64, 2, x_dims,
                                 TSR_FIELD_DIFFERENTIABLE, -1, why, n);
    if (!rc) rc = fmu_schema_add_signals(m, FMU_OUTPUT, TSR_FIELD_DIFFERENTIABLE, taken, why, n);
    return rc;
}

int fmu_simulate_build(fmu_model *m, char *why, size_t n) {
    static const char *const taken[] = {"t", "x0", "x", NULL};
    if (fmu_model_scratch(m, why, n)) return TSR_E_NOMEM;
    fmu_schema *s = &m->schema;
    int rc = make_sim(m, why, n);
    if (!rc) rc = fmu_find_states(m, why, n);
    if (!rc)
        rc = fmu_schema_add(s, 0, "t", "the output grid: x and the outputs at each point, "
                            "inputs held over each interval; integrated by CVODES (BDF) with "
                            "rtol = DefaultExperiment's tolerance or 1e-6 (config 'rtol'), "
                            "atol = rtol * 1e-3",
                            TSR_FLOAT64, 1, "n", TSR_DIM_ANY, 0, -1, why, n);
    if (!rc) rc = fmu_default_grid(m, why, n);
    if (!rc) rc = add_fields(m, taken, why, n);
    if (rc) return rc;
    fmu_schema_describe(m, simulate_endpoint);
    if (m->inst.api->get_directional_derivative)
        m->desc.jvp = m->desc.vjp = m->desc.jacobian = simulate_endpoint;
    else
        m->desc.fd_method = TSR_FD_CENTRAL;
    return 0;
}
