/* SPDX-License-Identifier: MIT */
/* What the #simulate form's integration and its sensitivities share
 * (fmu_sim.h): the instance put at a point of the trajectory, and
 * CVODES' failures in words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_sim.h"

int fmu_run_point(fmu_run *r, double t, const double *x, char *why, size_t n) {
    fmu_model *m = r->m;
    const fmu_api *api = m->inst.api;
    if (fmu_status(&m->inst, api->set_time(m->inst.handle, t), "fmi3SetTime", why, n)) return -1;
    return fmu_status(&m->inst,
                      api->set_continuous_states(m->inst.handle, x, (size_t)m->n_states),
                      "fmi3SetContinuousStates", why, n);
}

void fmu_cvode_message(int code, const char *module, const char *function, char *msg,
                       void *user) {
    (void)code;
    (void)module;
    fmu_run *r = user;
    snprintf(r->cvode_said, sizeof r->cvode_said, "%s: %s", function ? function : "CVODES",
             msg ? msg : "");
}

void fmu_cvode_failed(fmu_run *r, int flag, const char *fn, char *why, size_t n) {
    char *name = CVodeGetReturnFlagName(flag); /* malloc'd */
    snprintf(why, n, "%s failed with %s%s%s", fn, name ? name : "an unknown flag",
             r->cvode_said[0] ? " (" : "", r->cvode_said[0] ? r->cvode_said : "");
    size_t used = strlen(why);
    if (r->cvode_said[0] && used + 1 < n) snprintf(why + used, n - used, ")");
    free(name);
}
