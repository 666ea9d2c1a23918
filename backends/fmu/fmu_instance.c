/* SPDX-License-Identifier: MIT */
/* An FMU instance (fmu.h): made with the component's log as the FMU's
 * logger, every status an FMU function returns read in one place, and
 * Model Exchange's event iteration.
 * What the FMU logs at Warning or worse is kept as well, so that a
 * failing call can say what the FMU said. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu.h"

static const char *status_name(fmi3Status s) {
    switch (s) {
    case fmi3OK: return "OK";
    case fmi3Warning: return "Warning";
    case fmi3Discard: return "Discard";
    case fmi3Error: return "Error";
    case fmi3Fatal: return "Fatal";
    }
    return "an unknown status";
}

static void log_message(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                        fmi3String message) {
    fmu_instance *fi = env;
    if (!fi) return;
    /* What comes with Error or Fatal reaches the caller in the call's or
     * the open's error (fi->last), so the log has it only at info. */
    tsr_log_level level = status == fmi3OK                                  ? TSR_LOG_DEBUG
                          : status == fmi3Warning || status == fmi3Discard ? TSR_LOG_WARN
                                                                            : TSR_LOG_INFO;
    const char *text = message ? message : "";
    comp_log(fi->c, level, "FMU [%s] %s: %s", category ? category : "", status_name(status),
             text);
    if (status != fmi3OK) snprintf(fi->last, sizeof fi->last, "%s", text);
}

/* FMI 3.0's resourcePath: the resources folder's absolute path ending in
 * '/', or NULL when the FMU has none. */
static int resource_path(fmu_instance *fi, const char *dir, char *why, size_t n) {
    size_t len = strlen(dir) + sizeof "/resources/";
    char *p = malloc(len);
    if (!p) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    snprintf(p, len, "%s/resources/", dir);
    fi->resource_path = p;
    return 0;
}

int fmu_instance_make(fmu_instance *fi, const fmu_library *lib, const fmu_description *d,
                      fmu_kind kind, const char *dir, tsr_component *c, char *why, size_t n) {
    *fi = (fmu_instance){.api = &lib->api, .c = c};
    int rc = resource_path(fi, dir, why, n);
    if (rc) return rc;
    /* The FMU's own debug output only when someone reads it. */
    const struct tsr_options *o = backend_options(c);
    fmi3Boolean logging = !o->log_off && o->log_level <= TSR_LOG_INFO;
    const char *name = tsr_component_path(c);
    if (kind == FMU_MODEL_EXCHANGE)
        fi->handle = lib->api.instantiate_model_exchange(name, d->instantiation_token,
                                                         fi->resource_path, fmi3False, logging,
                                                         fi, log_message);
    else
        fi->handle = lib->api.instantiate_co_simulation(
            name, d->instantiation_token, fi->resource_path, fmi3False, logging,
            fmi3False /* eventModeUsed */, fmi3False /* earlyReturnAllowed */, NULL, 0, fi,
            log_message, NULL);
    if (fi->handle) return 0;
    snprintf(why, n, "%s returned no instance%s%s",
             kind == FMU_MODEL_EXCHANGE ? "fmi3InstantiateModelExchange"
                                        : "fmi3InstantiateCoSimulation",
             fi->last[0] ? ": " : " (the FMU logged no reason)", fi->last);
    return TSR_E_LOAD;
}

void fmu_instance_free(fmu_instance *fi) {
    /* After Fatal no function may be called, fmi3FreeInstance included. */
    if (fi->handle && !fi->fatal) fi->api->free_instance(fi->handle);
    free(fi->resource_path);
    memset(fi, 0, sizeof *fi);
}

int fmu_status(fmu_instance *fi, fmi3Status s, const char *fn, char *why, size_t n) {
    if (s == fmi3OK || s == fmi3Warning) return 0;
    if (s == fmi3Fatal) fi->fatal = 1;
    snprintf(why, n, "%s returned %s%s%s", fn, status_name(s), fi->last[0] ? ": " : "",
             fi->last);
    if (s == fmi3Fatal)
        snprintf(why + strlen(why), n - strlen(why),
                 " (the FMU cannot be called again: close and open it)");
    fi->last[0] = '\0';
    return -1;
}

int fmu_instance_usable(const fmu_instance *fi, char *why, size_t n) {
    if (!fi->fatal) return 0;
    snprintf(why, n, "the FMU returned Fatal before and cannot be called again: close and open it");
    return -1;
}

int fmu_event_iteration(fmu_instance *fi, char *why, size_t n) {
    const fmu_api *api = fi->api;
    fmi3Boolean again = fmi3True, terminate, nominals, values, next_defined;
    fmi3Float64 next_time;
    for (int i = 0; again; i++) {
        if (i == FMU_MAX_EVENT_ITERATIONS) {
            snprintf(why, n, "fmi3UpdateDiscreteStates still needs another update after %d",
                     FMU_MAX_EVENT_ITERATIONS);
            return -1;
        }
        fmi3Status s = api->update_discrete_states(fi->handle, &again, &terminate, &nominals,
                                                   &values, &next_defined, &next_time);
        if (fmu_status(fi, s, "fmi3UpdateDiscreteStates", why, n)) return -1;
        if (terminate) {
            snprintf(why, n, "the FMU asked to terminate (fmi3UpdateDiscreteStates)");
            return -1;
        }
    }
    return fmu_status(fi, api->enter_continuous_time_mode(fi->handle),
                      "fmi3EnterContinuousTimeMode", why, n);
}
