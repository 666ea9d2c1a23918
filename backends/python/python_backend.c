/* SPDX-License-Identifier: MIT */
/* The Python backend: a Tesseract's tesseract_api.py (its folder, or the
 * file) as a component. In-process it runs in the host's interpreter when
 * the host is a Python program, else in an interpreter started in this
 * process; in worker mode the worker backend runs it in tessera-worker
 * processes, where this backend opens it in-process, under the
 * interpreter that prepare (run by the host) resolved: the component's own
 * environment. The embedding is in the bridge (bridge/), a shared object
 * loaded with the interpreter's libpython only when a Python component is
 * opened, so that libtessera itself never depends on Python. */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/python/pybridge.h"
#include "python_env.h"

#define API_FILE "tesseract_api.py"
#define BRIDGE_FILE "libtessera-python.so"
#define GLUE_FILE "tessera_pycomponent.py"

typedef struct python_backend {
    pybridge_close_fn close;
    void *state;
} python_backend;

/* The component's tesseract_api.py and its folder, as absolute paths
 * (environments are built from inside the folder). */
static int api_paths(const char *path, char *api, size_t an, char *dir, size_t dn) {
    struct stat st;
    char real[PATH_MAX];
    if (stat(path, &st) != 0 || !realpath(path, real)) return -1;
    if (S_ISDIR(st.st_mode)) {
        if (path_fmt(api, an, "%s/" API_FILE, real) || path_fmt(dir, dn, "%s", real)) return -1;
        return access(api, R_OK);
    }
    size_t len = strlen(path);
    if (!S_ISREG(st.st_mode) || len < 3 || strcmp(path + len - 3, ".py") != 0) return -1;
    if (path_fmt(api, an, "%s", real)) return -1;
    return path_fmt(dir, dn, "%s", dirname(real));
}

static int python_claims(const char *path, const struct tsr_options *opts) {
    (void)opts;
    char api[4200], dir[4096];
    return api_paths(path, api, sizeof api, dir, sizeof dir) == 0;
}

/* The folder of the bridge and the glue: $TESSERA_PYTHON_BRIDGE, beside
 * the library (libdir/tessera/python, or python/ in the Python package),
 * seen from an installed tessera-worker (libexec/tessera),
 * in the build tree, or installed (the last two are "" in a relocatable
 * build). */
static int find_bridge(char *dir, size_t n) {
    const char *given = getenv("TESSERA_PYTHON_BRIDGE");
    char own[4096], path[4300];
    backend_own_dir(own, sizeof own);
    const char *rel[] = {"tessera/python", "../lib/tessera/python", "python",
                         TSR_PYBRIDGE_RELPATH_FROM_WORKER};
    if (given && *given) return path_fmt(dir, n, "%s", given);
    for (size_t i = 0; own[0] && i < sizeof rel / sizeof rel[0]; i++)
        if (!path_fmt(path, sizeof path, "%s/%s/" BRIDGE_FILE, own, rel[i]) &&
            access(path, R_OK) == 0)
            return path_fmt(dir, n, "%s/%s", own, rel[i]);
    const char *fixed[] = {TSR_PYBRIDGE_BUILD_DIR, TSR_PYBRIDGE_INSTALL_DIR};
    for (size_t i = 0; i < 2; i++)
        if (fixed[i][0] && !path_fmt(path, sizeof path, "%s/" BRIDGE_FILE, fixed[i]) &&
            access(path, R_OK) == 0)
            return path_fmt(dir, n, "%s", fixed[i]);
    return -1;
}

/* Whether this process runs a Python interpreter already (a Python host). */
static int host_runs_python(void) {
    void *sym = dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    int (*initialized)(void);
    if (!sym) return 0;
    memcpy(&initialized, &sym, sizeof initialized);
    return initialized();
}

/* The host's Python version, "3.11", when it runs one. */
static void host_version(char *out, size_t n) {
    void *sym = dlsym(RTLD_DEFAULT, "Py_GetVersion");
    const char *(*version)(void);
    out[0] = '\0';
    if (!sym) return;
    memcpy(&version, &sym, sizeof version);
    const char *v = version();
    snprintf(out, n, "%.*s", (int)strcspn(v, ". "), v);
    const char *minor = v + strcspn(v, ".");
    if (*minor) snprintf(out + strlen(out), n - strlen(out), ".%.*s", (int)strcspn(minor + 1, ". "),
                         minor + 1);
}

/* Load libpython (globally: extension modules find its symbols there). */
static int load_interpreter(const char *path, python_target *t, tsr_error *err) {
    if (strcmp(t->version, TSR_PYBRIDGE_PYVERSION) != 0) {
        error_set(err, TSR_E_LOAD,
                  "cannot load '%s': its interpreter '%s' is Python %s; this Tessera embeds "
                  "Python %s (give option python= an interpreter of that version, or rebuild "
                  "Tessera with -DPython3_EXECUTABLE=...)",
                  path, t->python, t->version, TSR_PYBRIDGE_PYVERSION);
        return TSR_E_LOAD;
    }
    if (!dlopen(t->libpython, RTLD_NOW | RTLD_GLOBAL)) {
        const char *e = dlerror();
        error_set(err, TSR_E_LOAD, "cannot load '%s': cannot load the Python library %s: %s",
                  path, t->libpython, e ? e : "dlopen failed");
        return TSR_E_LOAD;
    }
    return 0;
}

/* The bridge's two functions. */
static int load_bridge(const char *path, const char *dir, pybridge_open_fn *open_fn,
                       pybridge_close_fn *close_fn, tsr_error *err) {
    char so[4300];
    path_fmt(so, sizeof so, "%s/" BRIDGE_FILE, dir); /* dir was found with this name */
    void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    void *o = dl ? dlsym(dl, PYBRIDGE_OPEN_SYMBOL) : NULL;
    void *c = dl ? dlsym(dl, PYBRIDGE_CLOSE_SYMBOL) : NULL;
    if (!o || !c) {
        const char *e = dlerror();
        error_set(err, TSR_E_LOAD, "cannot load '%s': cannot load the Python bridge %s: %s", path,
                  so, e ? e : "not a bridge");
        return TSR_E_LOAD;
    }
    memcpy(open_fn, &o, sizeof o);
    memcpy(close_fn, &c, sizeof c);
    return 0; /* never unloaded: the interpreter keeps pointers into it */
}

/* In a Python host: the host's interpreter and packages, as Tesseract's
 * from_tesseract_api does. Which interpreter and why, in hint. */
static int join_host(tsr_component *c, const char *path, const char *dir, char *hint, size_t n,
                     tsr_error *err) {
    char version[16];
    host_version(version, sizeof version);
    if (backend_options(c)->python) {
        error_set(err, TSR_E_LOAD,
                  "cannot load '%s' in-process with option python: this program runs its own "
                  "Python, in which in-process components run; use worker mode to run it under "
                  "another interpreter",
                  path);
        return TSR_E_LOAD;
    }
    if (strcmp(version, TSR_PYBRIDGE_PYVERSION) != 0) {
        error_set(err, TSR_E_LOAD,
                  "cannot load '%s' in-process: this program runs Python %s; this Tessera embeds "
                  "Python %s (use worker mode)",
                  path, version, TSR_PYBRIDGE_PYVERSION);
        return TSR_E_LOAD;
    }
    char req[4200];
    if (!path_fmt(req, sizeof req, "%s/tesseract_requirements.txt", dir) && access(req, R_OK) == 0)
        snprintf(hint, n,
                 "\nIn-process, the component runs in this program's Python and packages, not "
                 "in an environment built from its tesseract_requirements.txt: open it in worker "
                 "mode to run it in its own environment.");
    return 0;
}

static int python_open(tsr_component *c, tsr_error *err) {
    const char *path = tsr_component_path(c);
    char api[4200], dir[4096], bridge[4096], hint[512] = "";
    if (backend_options(c)->mode == TSR_MODE_ISOLATED) {
        error_set(err, TSR_E_UNSUPPORTED,
                  "cannot load '%s' in isolated mode: a Python interpreter cannot be loaded into "
                  "a second namespace of one process; use worker mode",
                  path);
        return TSR_E_UNSUPPORTED;
    }
    if (api_paths(path, api, sizeof api, dir, sizeof dir) != 0 ||
        find_bridge(bridge, sizeof bridge) != 0) {
        error_set(err, TSR_E_LOAD,
                  "cannot load '%s': this Tessera was built without its Python bridge (" BRIDGE_FILE
                  " not found; set TESSERA_PYTHON_BRIDGE to its folder)",
                  path);
        return TSR_E_LOAD;
    }
    python_target t = {0};
    int rc = host_runs_python() ? join_host(c, path, dir, hint, sizeof hint, err)
                                : python_resolve(c, dir, &t, err);
    if (!rc && t.python[0]) rc = load_interpreter(path, &t, err);
    pybridge_open_fn open_fn;
    python_backend *pb = calloc(1, sizeof *pb);
    if (!rc && !pb) error_set(err, rc = TSR_E_NOMEM, "cannot load '%s': out of memory", path);
    if (!rc) rc = load_bridge(path, bridge, &open_fn, &pb->close, err);
    if (rc) {
        free(pb);
        return rc;
    }
    backend_set_state(c, pb);
    char glue[4300], why[TSR_ERRMSG_MAX - 64];
    path_fmt(glue, sizeof glue, "%s/" GLUE_FILE, bridge);
    pybridge_request req = {.struct_size = sizeof req, .api_path = api, .glue_path = glue,
                            .python = t.python[0] ? t.python : NULL,
                            .import_hint = hint[0] ? hint : NULL};
    const tsr_plugin *desc = NULL;
    rc = open_fn(&req, &desc, &pb->state, why, sizeof why);
    if (rc) {
        error_set(err, rc, "cannot load '%s': %s", path, why);
        return rc;
    }
    backend_set_endpoint_state(c, pb->state);
    return backend_set_descriptor(c, desc, err);
}

static void python_close(tsr_component *c) {
    python_backend *pb = backend_state(c);
    if (!pb) return;
    if (pb->state) pb->close(pb->state);
    free(pb);
}

/* In the host, before worker mode starts its workers: resolve (and build)
 * the component's interpreter once, and hand it to the workers. */
static int python_prepare(tsr_component *c, tsr_error *err) {
    char api[4200], dir[4096];
    if (api_paths(tsr_component_path(c), api, sizeof api, dir, sizeof dir) != 0) return 0;
    python_target t;
    int rc = python_resolve(c, dir, &t, err);
    if (!rc && backend_set_worker_env(c, "TESSERA_PYTHON", t.python) != 0)
        error_set(err, rc = TSR_E_NOMEM, "cannot load '%s': out of memory",
                  tsr_component_path(c));
    return rc;
}

const backend_ops python_backend_ops = {
    .name = "python",
    .claims = python_claims,
    .prepare = python_prepare,
    .open = python_open,
    .invoke = invoke_in_process,
    .close = python_close,
};
