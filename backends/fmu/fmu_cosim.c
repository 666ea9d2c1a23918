/* SPDX-License-Identifier: MIT */
/* The Co-Simulation form (fmu.h): a trajectory component.
 *
 *   inputs   t (n,)   the communication grid, strictly increasing; its
 *                     default runs from DefaultExperiment's startTime to
 *                     stopTime in steps of stepSize (or 100 steps)
 *            each scalar parameter, its start value as its default
 *            each Float64 input variable, (n,): its value over
 *                     [t[k], t[k+1]), held; optional (left out: its start)
 *   outputs  each Float64 output variable, (n,): its value at t[k]
 *
 * One apply is one simulation: the instance is reset, the parameters and
 * inputs set, initialised at t[0] (stop time t[n-1]), then one fmi3DoStep
 * per interval, which is what FMPy's simulate_fmu does with the same
 * output interval. Derivatives come from the library's central
 * differences of apply (run over the pool's workers in parallel with
 * workers=N): an FMU's directional derivatives give the outputs'
 * sensitivity at one communication point, not the trajectory's to its
 * parameters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu.h"

static int fail(tsr_ctx *ctx, const char *why) {
    tsr_ctx_error(ctx, why);
    return -1;
}

/* The inputs' values at grid point k (those given). */
static int set_inputs(fmu_model *m, const tsr_args *a, int64_t k, char *why, size_t n) {
    int32_t count = 0;
    for (int32_t j = 0; j < m->n_inputs; j++) {
        const tsr_array *u = &a->inputs[m->input_field + j];
        if (tsr_input_absent(u)) continue;
        m->vr[count] = m->d.vars[m->inputs[j]].vr;
        m->values[count++] = ((const double *)u->data)[k];
    }
    if (!count) return 0;
    fmi3Status s = m->inst.api->set_float64(m->inst.handle, m->vr, (size_t)count, m->values,
                                            (size_t)count);
    return fmu_status(&m->inst, s, "fmi3SetFloat64 (inputs)", why, n);
}

static int get_outputs(fmu_model *m, const tsr_args *a, int64_t k, char *why, size_t n) {
    if (!m->n_outputs) return 0;
    for (int32_t j = 0; j < m->n_outputs; j++) m->vr[j] = m->d.vars[m->outputs[j]].vr;
    fmi3Status s = m->inst.api->get_float64(m->inst.handle, m->vr, (size_t)m->n_outputs,
                                            m->values, (size_t)m->n_outputs);
    if (fmu_status(&m->inst, s, "fmi3GetFloat64 (outputs)", why, n)) return -1;
    for (int32_t j = 0; j < m->n_outputs; j++) ((double *)a->results[j].data)[k] = m->values[j];
    return 0;
}

static int simulate(fmu_model *m, const tsr_args *a, char *why, size_t n) {
    const fmu_api *api = m->inst.api;
    fmi3Instance h = m->inst.handle;
    const tsr_array *t = &a->inputs[0];
    const double *g = t->data;
    int64_t len = t->shape[0];
    if (fmu_check_grid(t, !m->d.cs.can_handle_variable_communication_step_size, why, n))
        return -1;
    if (fmu_instance_usable(&m->inst, why, n)) return -1;
    m->inst.last[0] = '\0';
    if (m->used && fmu_status(&m->inst, api->reset(h), "fmi3Reset", why, n)) return -1;
    m->used = 1;
    if (fmu_set_parameters(&m->inst, &m->d, m->params, m->n_params, &a->inputs[m->param_field],
                           why, n) ||
        set_inputs(m, a, 0, why, n))
        return -1;
    fmi3Status s = api->enter_initialization_mode(h, m->d.has_tolerance, m->d.tolerance, g[0],
                                                  fmi3True, g[len - 1]);
    if (fmu_status(&m->inst, s, "fmi3EnterInitializationMode", why, n) ||
        fmu_status(&m->inst, api->exit_initialization_mode(h), "fmi3ExitInitializationMode",
                   why, n))
        return -1;
    for (int64_t k = 0; k < len; k++) {
        if ((k && set_inputs(m, a, k, why, n)) || get_outputs(m, a, k, why, n)) return -1;
        if (k + 1 == len) break;
        fmi3Boolean event = fmi3False, terminate = fmi3False, early = fmi3False;
        fmi3Float64 last = g[k];
        s = api->do_step(h, g[k], g[k + 1] - g[k], fmi3True, &event, &terminate, &early, &last);
        if (fmu_status(&m->inst, s, "fmi3DoStep", why, n)) {
            size_t used = strlen(why);
            snprintf(why + used, n - used, " (the step from t = %.17g)", g[k]);
            return -1;
        }
        if (terminate) {
            snprintf(why, n, "the FMU ended the simulation at t = %.17g (fmi3DoStep's "
                     "terminateSimulation), before the grid's end t = %.17g", last, g[len - 1]);
            return -1;
        }
    }
    return fmu_status(&m->inst, api->terminate(h), "fmi3Terminate", why, n);
}

static int cosim_endpoint(tsr_ctx *ctx, const tsr_args *a) {
    fmu_model *m = ctx->state;
    char why[TSR_ERRMSG_MAX - 128];
    if (a->endpoint != TSR_EP_APPLY) {
        snprintf(why, sizeof why, "the Co-Simulation form serves only apply");
        return fail(ctx, why);
    }
    return simulate(m, a, why, sizeof why) ? fail(ctx, why) : 0;
}

int fmu_cosim_build(fmu_model *m, char *why, size_t n) {
    const fmu_description *d = &m->d;
    static const char *const taken[] = {"t", NULL};
    if (fmu_model_scratch(m, why, n)) return TSR_E_NOMEM;
    fmu_schema *s = &m->schema;
    int rc = fmu_schema_add(s, 0, "t", "the communication grid: outputs at each point, inputs "
                            "held over each interval", TSR_FLOAT64, 1, "n", TSR_DIM_ANY, 0, -1,
                            why, n);
    if (!rc) rc = fmu_default_grid(m, why, n);
    m->param_field = s->n_in;
    if (!rc) rc = fmu_schema_add_parameters(s, d, m->c, taken, m->params, &m->n_params, why, n);
    m->input_field = s->n_in;
    if (!rc)
        rc = fmu_schema_add_signals(m, FMU_INPUT, TSR_FIELD_DIFFERENTIABLE | TSR_FIELD_OPTIONAL,
                                    taken, why, n);
    if (!rc) rc = fmu_schema_add_signals(m, FMU_OUTPUT, TSR_FIELD_DIFFERENTIABLE, taken, why, n);
    if (rc) return rc;
    if (!m->n_outputs) {
        snprintf(why, n, "its Co-Simulation interface has no Float64 output, so a trajectory "
                         "would be empty");
        return TSR_E_LOAD;
    }
    fmu_schema_describe(m, cosim_endpoint);
    m->desc.fd_method = TSR_FD_CENTRAL;
    return 0;
}
