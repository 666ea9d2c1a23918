/* SPDX-License-Identifier: MIT */
/* jvp and vjp of the #simulate form (fmu_sim.h) by CVODES' forward
 * sensitivities: for a sensitivity s = dx/dq along a seed (x0's part s(t0),
 * the parameters' part p),
 *
 *   s' = df/dx s + df/dp p        dy = dy/dx s + dy/dp p
 *
 * each one fmi3GetDirectionalDerivative with the states and the seeded
 * parameters as knowns. jvp integrates one sensitivity, along the tangent,
 * and writes it out; vjp integrates one per differentiated scalar (each x0
 * component, each Float64 parameter named) and contracts each with the
 * cotangent, point by point; jacobian integrates the same and writes each
 * out as a column. The sensitivities take the states' error control and
 * tolerances. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_sim.h"

/* The right-hand sides of every sensitivity at (t, y). */
static int sens_rhs(int ns, sunrealtype t, N_Vector y, N_Vector ydot, N_Vector *ys,
                    N_Vector *ysdot, void *user, N_Vector tmp1, N_Vector tmp2) {
    (void)ydot;
    (void)tmp1;
    (void)tmp2;
    fmu_run *r = user;
    fmu_model *m = r->m;
    size_t nx = (size_t)m->n_states, nk = nx + (size_t)r->n_wp;
    if (fmu_run_point(r, t, N_VGetArrayPointer(y), r->why, sizeof r->why)) goto failed;
    for (int i = 0; i < ns; i++) {
        memcpy(r->seed, N_VGetArrayPointer(ys[i]), nx * sizeof *r->seed);
        memcpy(r->seed + nx, r->pseed + (size_t)i * (size_t)r->n_wp,
               (size_t)r->n_wp * sizeof *r->seed);
        fmi3Status s = m->inst.api->get_directional_derivative(
            m->inst.handle, r->der_vr, nx, r->known, nk, r->seed, nk,
            N_VGetArrayPointer(ysdot[i]), nx);
        if (fmu_status(&m->inst, s, "fmi3GetDirectionalDerivative (the sensitivities)", r->why,
                       sizeof r->why))
            goto failed;
    }
    return 0;
failed:
    r->failed = 1;
    r->failed_at = t;
    return -1;
}

static size_t elements(const tsr_array *x) {
    size_t k = 1;
    for (int32_t d = 0; d < x->rank; d++) k *= (size_t)x->shape[d];
    return k;
}

int fmu_sens_setup(fmu_run *r, char *why, size_t n) {
    fmu_model *m = r->m;
    const tsr_args *a = r->a;
    int jvp = a->endpoint == TSR_EP_JVP;
    size_t nx = (size_t)m->n_states, np = (size_t)m->n_params + 1;
    r->x0_arg = -1;
    r->wp = calloc(np, sizeof *r->wp);
    double *tangent = calloc(np, sizeof *tangent);
    int32_t *param_arg = calloc(np, sizeof *param_arg);
    if (!r->wp || !tangent || !param_arg) goto nomem;
    for (int32_t k = 0; k < a->n_wrt_in; k++) {
        int32_t f = a->wrt_in[k];
        int32_t p = f - m->param_field;
        if (f == SIM_X0) {
            r->x0_arg = k;
        } else if (p >= 0 && p < m->n_params && m->d.vars[m->params[p]].type == FMU_FLOAT64) {
            if (jvp) tangent[r->n_wp] = *(const double *)a->seeds[k].data;
            param_arg[r->n_wp] = k;
            r->wp[r->n_wp++] = p;
        } else {
            snprintf(why, n, "input '%s' is not differentiated by the sensitivities (they "
                     "are over x0 and the Float64 parameters)", m->schema.in[f].name);
            free(tangent);
            free(param_arg);
            return -1;
        }
    }
    r->n_x0 = jvp || r->x0_arg < 0 ? 0 : (int32_t)nx;
    r->ns = jvp ? 1 : r->n_x0 + r->n_wp;
    size_t ns = (size_t)r->ns + 1, nwp = (size_t)r->n_wp + 1;
    size_t ny = (size_t)m->n_outputs;
    r->pseed = calloc(ns * nwp, sizeof *r->pseed);
    r->target = calloc(ns, sizeof *r->target);
    r->arg = calloc(ns, sizeof *r->arg);
    r->comp = calloc(ns, sizeof *r->comp);
    r->known = calloc(2 * nx + nwp + ny, sizeof *r->known);
    r->seed = calloc(nx + nwp, sizeof *r->seed);
    r->dy = calloc(ny + 1, sizeof *r->dy);
    if (!r->pseed || !r->target || !r->arg || !r->comp || !r->known || !r->seed || !r->dy)
        goto nomem;
    r->der_vr = r->known + nx + (size_t)r->n_wp;
    r->out_vr = r->der_vr + nx;
    for (size_t i = 0; i < nx; i++) {
        r->known[i] = m->d.vars[m->states[i]].vr;
        r->der_vr[i] = m->d.vars[m->derivatives[i]].vr;
    }
    for (int32_t j = 0; j < r->n_wp; j++)
        r->known[nx + (size_t)j] = m->d.vars[m->params[r->wp[j]]].vr;
    for (size_t j = 0; j < ny; j++) r->out_vr[j] = m->d.vars[m->outputs[j]].vr;
    if (jvp) {
        memcpy(r->pseed, tangent, (size_t)r->n_wp * sizeof *r->pseed);
    } else {
        /* vjp adds up into its results; every element of a jacobian's is
         * written, zeroed all the same */
        for (int32_t k = 0; k < a->n_results; k++)
            memset(a->results[k].data, 0, elements(&a->results[k]) * sizeof(double));
        for (int32_t i = 0; i < r->n_x0; i++) {
            r->arg[i] = r->x0_arg;
            r->comp[i] = i;
        }
        for (int32_t j = 0; j < r->n_wp; j++) {
            int32_t i = r->n_x0 + j;
            r->pseed[(size_t)i * (size_t)r->n_wp + (size_t)j] = 1.0;
            r->arg[i] = param_arg[j];
        }
        for (int32_t i = 0; i < r->ns && a->endpoint == TSR_EP_VJP; i++)
            r->target[i] = (double *)a->results[r->arg[i]].data + r->comp[i];
    }
    free(tangent);
    free(param_arg);
    return 0;
nomem:
    free(tangent);
    free(param_arg);
    snprintf(why, n, "out of memory (the sensitivities)");
    return -1;
}

int fmu_sens_start(fmu_run *r, char *why, size_t n) {
    fmu_model *m = r->m;
    size_t nx = (size_t)m->n_states;
    if (!r->ns) return 0;
    r->ys = N_VCloneVectorArray(r->ns, r->y);
    if (!r->ys) {
        snprintf(why, n, "out of memory (the sensitivities)");
        return -1;
    }
    for (int i = 0; i < r->ns; i++) N_VConst(0.0, r->ys[i]);
    if (r->a->endpoint == TSR_EP_JVP) {
        if (r->x0_arg >= 0)
            memcpy(N_VGetArrayPointer(r->ys[0]), r->a->seeds[r->x0_arg].data, nx * sizeof(double));
    } else {
        for (int32_t i = 0; i < r->n_x0; i++) N_VGetArrayPointer(r->ys[i])[i] = 1.0;
    }
    int flag = CVodeSensInit(r->cvode, r->ns, CV_SIMULTANEOUS, sens_rhs, r->ys);
    const char *fn = "CVodeSensInit";
    if (flag == CV_SUCCESS) flag = CVodeSensEEtolerances(r->cvode), fn = "CVodeSensEEtolerances";
    if (flag == CV_SUCCESS) flag = CVodeSetSensErrCon(r->cvode, SUNTRUE), fn = "CVodeSetSensErrCon";
    if (flag != CV_SUCCESS) {
        fmu_cvode_failed(r, flag, fn, why, n);
        return -1;
    }
    return 0;
}

int fmu_sens_restart(fmu_run *r, double t, char *why, size_t n) {
    (void)t;
    int flag = CVodeSensReInit(r->cvode, CV_SIMULTANEOUS, r->ys);
    if (flag == CV_SUCCESS) return 0;
    fmu_cvode_failed(r, flag, "CVodeSensReInit", why, n);
    return -1;
}

/* Sensitivity i at grid point k into the jacobian's blocks: d out / d in
 * has shape (*out_shape, *in_shape), so element comp of the input is the
 * last index. */
static void jacobian_columns(fmu_run *r, int i, int64_t k, const double *s) {
    const tsr_args *a = r->a;
    size_t nx = (size_t)r->m->n_states;
    size_t in_size = r->arg[i] == r->x0_arg ? nx : 1, c = (size_t)r->comp[i];
    for (int32_t o = 0; o < a->n_wrt_out; o++) {
        int32_t f = a->wrt_out[o];
        double *block = a->results[o * a->n_wrt_in + r->arg[i]].data;
        if (f == SIM_X)
            for (size_t row = 0; row < nx; row++)
                block[((size_t)k * nx + row) * in_size + c] = s[row];
        else
            block[(size_t)k * in_size + c] = r->dy[f - SIM_X - 1];
    }
}

int fmu_sens_point(fmu_run *r, int64_t k, char *why, size_t n) {
    fmu_model *m = r->m;
    const tsr_args *a = r->a;
    size_t nx = (size_t)m->n_states, nk = nx + (size_t)r->n_wp, ny = (size_t)m->n_outputs;
    int jvp = a->endpoint == TSR_EP_JVP;
    if (k > 0 && r->ns) {
        sunrealtype reached;
        int flag = CVodeGetSens(r->cvode, &reached, r->ys);
        if (flag != CV_SUCCESS) {
            fmu_cvode_failed(r, flag, "CVodeGetSens", why, n);
            return -1;
        }
    }
    int outputs = 0;
    for (int32_t o = 0; o < a->n_wrt_out; o++) outputs |= a->wrt_out[o] != SIM_X;
    for (int i = 0; i < r->ns; i++) {
        const double *s = N_VGetArrayPointer(r->ys[i]);
        if (outputs && ny) {
            memcpy(r->seed, s, nx * sizeof *r->seed);
            memcpy(r->seed + nx, r->pseed + (size_t)i * (size_t)r->n_wp,
                   (size_t)r->n_wp * sizeof *r->seed);
            fmi3Status st = m->inst.api->get_directional_derivative(
                m->inst.handle, r->out_vr, ny, r->known, nk, r->seed, nk, r->dy, ny);
            if (fmu_status(&m->inst, st, "fmi3GetDirectionalDerivative (the outputs)", why, n))
                return -1;
        }
        if (a->endpoint == TSR_EP_JACOBIAN) {
            jacobian_columns(r, i, k, s);
            continue;
        }
        double sum = 0.0;
        for (int32_t o = 0; o < a->n_wrt_out; o++) {
            int32_t f = a->wrt_out[o];
            if (jvp && f == SIM_X)
                memcpy((double *)a->results[o].data + (size_t)k * nx, s, nx * sizeof *s);
            else if (jvp)
                ((double *)a->results[o].data)[k] = r->dy[f - SIM_X - 1];
            else if (f == SIM_X) {
                const double *w = (const double *)a->seeds[o].data + (size_t)k * nx;
                for (size_t j = 0; j < nx; j++) sum += w[j] * s[j];
            } else
                sum += ((const double *)a->seeds[o].data)[k] * r->dy[f - SIM_X - 1];
        }
        if (!jvp) *r->target[i] += sum;
    }
    return 0;
}

void fmu_sens_free(fmu_run *r) {
    if (r->ys) N_VDestroyVectorArray(r->ys, r->ns);
    r->ys = NULL;
    free(r->wp);
    free(r->pseed);
    free(r->target);
    free(r->arg);
    free(r->comp);
    free(r->known);
    free(r->seed);
    free(r->dy);
    r->wp = NULL;
    r->pseed = NULL;
    r->target = NULL;
    r->arg = r->comp = NULL;
    r->known = NULL;
    r->seed = r->dy = NULL;
}
