/* SPDX-License-Identifier: MIT */
/* An FMU's platform binary (fmu.h): found under binaries/x86_64-linux,
 * checked, loaded and its functions looked up by their standard names.
 *
 * An FMU that may be instantiated only once per process keeps global state
 * in its binary or in the libraries it uses. The first such load in this
 * process's namespace holds a process-wide claim on it (its model
 * identifier and token); a second load while the claim is held goes into
 * a link-map namespace of its own (dlmopen), where its globals are its
 * own, and says so in the log. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fmu.h"

#define PLATFORM "x86_64-linux"

/* The claims held on once-only FMUs in this process's own namespace. */
typedef struct once_claim {
    char *key;
    struct once_claim *next;
} once_claim;
static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
static once_claim *once_claims;

/* 1 when the claim was taken here, 0 when another holds it, -1 out of memory. */
static int once_take(const char *key) {
    pthread_mutex_lock(&once_lock);
    int rc = 1;
    for (once_claim *k = once_claims; k; k = k->next)
        if (strcmp(k->key, key) == 0) rc = 0;
    if (rc == 1) {
        once_claim *k = malloc(sizeof *k);
        char *copy = strdup(key);
        if (!k || !copy) {
            free(k);
            free(copy);
            rc = -1;
        } else {
            *k = (once_claim){copy, once_claims};
            once_claims = k;
        }
    }
    pthread_mutex_unlock(&once_lock);
    return rc;
}

static void once_give(const char *key) {
    pthread_mutex_lock(&once_lock);
    for (once_claim **at = &once_claims; *at; at = &(*at)->next)
        if (strcmp((*at)->key, key) == 0) {
            once_claim *k = *at;
            *at = k->next;
            free(k->key);
            free(k);
            break;
        }
    pthread_mutex_unlock(&once_lock);
}

/* "aarch64-linux, x86_64-windows" or "none" */
static void platforms_there(const char *dir, char *out, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/binaries", dir);
    snprintf(out, n, "none");
    DIR *dp = opendir(path);
    if (!dp) return;
    size_t used = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.') continue;
        int w = snprintf(out + used, n - used, "%s%s", used ? ", " : "", e->d_name);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
    }
    closedir(dp);
}

static int binary_path(fmu_library *lib, const char *dir, const char *id, char *why, size_t n) {
    if (strchr(id, '/') || strcmp(id, "..") == 0 || strcmp(id, ".") == 0) {
        snprintf(why, n, "its modelIdentifier '%s' is not a file name", id);
        return TSR_E_LOAD;
    }
    size_t len = strlen(dir) + strlen(id) + sizeof "/binaries/" PLATFORM "/.so";
    lib->so_path = malloc(len);
    if (!lib->so_path) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    snprintf(lib->so_path, len, "%s/binaries/" PLATFORM "/%s.so", dir, id);
    struct stat st;
    if (stat(lib->so_path, &st) == 0 && S_ISREG(st.st_mode)) return 0;
    char there[512], sources[4096];
    platforms_there(dir, there, sizeof there);
    snprintf(sources, sizeof sources, "%s/sources", dir);
    int has_sources = stat(sources, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(why, n,
             "it has no binary for this platform (binaries/" PLATFORM "/%s.so; platforms in "
             "the FMU: %s)%s",
             id, there,
             has_sources ? "; it ships sources, which Tessera does not build: build the binary "
                           "with the exporting tool"
                         : "");
    return TSR_E_LOAD;
}

static void *find(fmu_library *lib, const char *name) { return dlsym(lib->dl, name); }

#define NEED(field, name)                                                                   \
    do {                                                                                    \
        void *sym_ = find(lib, name);                                                       \
        if (!sym_) {                                                                        \
            snprintf(why, n, "its binary does not export %s, which the %s interface needs", \
                     name, what);                                                           \
            return TSR_E_LOAD;                                                              \
        }                                                                                   \
        memcpy(&lib->api.field, &sym_, sizeof sym_);                                        \
    } while (0)
#define WANT(field, name, wanted, claim)                                                      \
    do {                                                                                      \
        if (!(wanted)) break;                                                                 \
        void *sym_ = find(lib, name);                                                         \
        if (!sym_) {                                                                          \
            snprintf(why, n, "its description says %s=\"true\" but its binary does not export %s", \
                     claim, name);                                                            \
            return TSR_E_LOAD;                                                                \
        }                                                                                     \
        memcpy(&lib->api.field, &sym_, sizeof sym_);                                          \
    } while (0)

static int find_functions(fmu_library *lib, const fmu_interface *i, fmu_kind kind, char *why,
                          size_t n) {
    const char *what = kind == FMU_MODEL_EXCHANGE ? "Model Exchange" : "Co-Simulation";
    NEED(get_version, "fmi3GetVersion");
    NEED(free_instance, "fmi3FreeInstance");
    NEED(enter_initialization_mode, "fmi3EnterInitializationMode");
    NEED(exit_initialization_mode, "fmi3ExitInitializationMode");
    NEED(terminate, "fmi3Terminate");
    NEED(reset, "fmi3Reset");
    NEED(get_float64, "fmi3GetFloat64");
    NEED(set_float64, "fmi3SetFloat64");
    NEED(get_int32, "fmi3GetInt32");
    NEED(set_int32, "fmi3SetInt32");
    NEED(get_boolean, "fmi3GetBoolean");
    NEED(set_boolean, "fmi3SetBoolean");
    WANT(get_directional_derivative, "fmi3GetDirectionalDerivative",
         i->provides_directional_derivatives, "providesDirectionalDerivatives");
    WANT(get_adjoint_derivative, "fmi3GetAdjointDerivative", i->provides_adjoint_derivatives,
         "providesAdjointDerivatives");
    WANT(get_fmu_state, "fmi3GetFMUState", i->can_get_and_set_fmu_state, "canGetAndSetFMUState");
    WANT(set_fmu_state, "fmi3SetFMUState", i->can_get_and_set_fmu_state, "canGetAndSetFMUState");
    WANT(free_fmu_state, "fmi3FreeFMUState", i->can_get_and_set_fmu_state,
         "canGetAndSetFMUState");
    if (kind == FMU_MODEL_EXCHANGE) {
        NEED(instantiate_model_exchange, "fmi3InstantiateModelExchange");
        NEED(enter_event_mode, "fmi3EnterEventMode");
        NEED(update_discrete_states, "fmi3UpdateDiscreteStates");
        NEED(enter_continuous_time_mode, "fmi3EnterContinuousTimeMode");
        NEED(completed_integrator_step, "fmi3CompletedIntegratorStep");
        NEED(set_time, "fmi3SetTime");
        NEED(set_continuous_states, "fmi3SetContinuousStates");
        NEED(get_continuous_states, "fmi3GetContinuousStates");
        NEED(get_continuous_state_derivatives, "fmi3GetContinuousStateDerivatives");
        NEED(get_number_of_continuous_states, "fmi3GetNumberOfContinuousStates");
        NEED(get_number_of_event_indicators, "fmi3GetNumberOfEventIndicators");
    } else {
        NEED(instantiate_co_simulation, "fmi3InstantiateCoSimulation");
        NEED(do_step, "fmi3DoStep");
    }
    const char *version = lib->api.get_version();
    if (!version || strncmp(version, "3.", 2) != 0) {
        snprintf(why, n, "its binary's fmi3GetVersion says '%.32s', not FMI 3.x",
                 version ? version : "(null)");
        return TSR_E_LOAD;
    }
    return 0;
}

int fmu_library_open(fmu_library *lib, const char *dir, const fmu_description *d, fmu_kind kind,
                     tsr_mode mode, tsr_component *c, char *why, size_t n) {
    const fmu_interface *i = kind == FMU_MODEL_EXCHANGE ? &d->me : &d->cs;
    int rc = binary_path(lib, dir, i->model_identifier, why, n);
    if (rc) return rc;
    char elf[256];
    if (backend_check_elf(lib->so_path, elf, sizeof elf) != 0) {
        snprintf(why, n, "its binary binaries/" PLATFORM "/%s.so: %s", i->model_identifier, elf);
        return TSR_E_LOAD;
    }
    int isolated = mode == TSR_MODE_ISOLATED;
    if (!isolated && i->can_be_instantiated_only_once_per_process) {
        size_t len = strlen(i->model_identifier) + strlen(d->instantiation_token) + 2;
        lib->once_key = malloc(len);
        if (!lib->once_key) {
            snprintf(why, n, "out of memory");
            return TSR_E_NOMEM;
        }
        snprintf(lib->once_key, len, "%s\n%s", i->model_identifier, d->instantiation_token);
        int took = once_take(lib->once_key);
        if (took < 0) {
            snprintf(why, n, "out of memory");
            return TSR_E_NOMEM;
        }
        lib->once_held = took;
        if (!took) {
            isolated = 1;
            comp_log(c, TSR_LOG_INFO,
                     "FMU '%s' may be instantiated only once per process and one is open: this "
                     "one is loaded into a link-map namespace of its own",
                     i->model_identifier);
        }
    }
    dlerror();
    lib->dl = isolated ? dlmopen(LM_ID_NEWLM, lib->so_path, RTLD_NOW | RTLD_LOCAL)
                       : dlopen(lib->so_path, RTLD_NOW | RTLD_LOCAL);
    lib->isolated = isolated;
    if (!lib->dl) {
        char e[512];
        const char *text = dlerror();
        snprintf(e, sizeof e, "%s", text ? text : "dlopen failed");
        /* pythonfmu3's binaries take CPython's symbols from the process
         * that loads them instead of linking libpython. */
        int wants_python = strstr(e, "undefined symbol: Py") || strstr(e, "undefined symbol: _Py");
        snprintf(why, n, "cannot load its binary: %s%s", e,
                 wants_python
                     ? " (the binary uses CPython from the process that loads it, as FMUs built "
                       "with pythonfmu3 do: open it in worker mode with LD_PRELOAD naming "
                       "libpython in the worker's environment, option env, or in-process in a "
                       "Python host, whose interpreter it then shares)"
                 : isolated && mode != TSR_MODE_ISOLATED
                     ? " (a second instance of a once-per-process FMU needs a namespace of its "
                       "own; open it in worker mode instead)"
                     : "");
        return TSR_E_LOAD;
    }
    return find_functions(lib, i, kind, why, n);
}

void fmu_library_close(fmu_library *lib) {
    /* An instance that returned Fatal may not be freed (fmi3FreeInstance
     * included): its memory stays, and so must the code it belongs to. */
    if (lib->dl && !lib->keep_loaded) {
        if (lib->isolated) backend_flush_namespace_stdio(lib->dl);
        dlclose(lib->dl);
    }
    if (lib->once_held) once_give(lib->once_key);
    free(lib->once_key);
    free(lib->so_path);
    memset(lib, 0, sizeof *lib);
}
