/* SPDX-License-Identifier: MIT */
/* The plugin backend: a Tessera plugin (.so) loaded in the host with
 * dlopen (mode inproc) or dlmopen into a new link-map namespace (mode
 * isolated); its endpoints are called directly. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/backend.h"

typedef struct plugin_backend {
    void *dl;                        /* the dlopen handle */
    const tsr_plugin *desc;
    void *state;                     /* what init made */
    int initialized;                 /* init ran and succeeded: fini is due */
} plugin_backend;

/* "undefined symbol: exp": the plugin was linked without a library it
 * uses, and found it in the host only while it shared the host's
 * namespace. Name the library where this process has the symbol. */
static int undefined_symbol_hint(const char *why, char *hint, size_t n) {
    const char *at = strstr(why, "undefined symbol: ");
    if (!at) return 0;
    char name[256];
    at += strlen("undefined symbol: ");
    size_t len = strcspn(at, " ,()\t\n");
    if (len == 0 || len >= sizeof name) return 0;
    memcpy(name, at, len);
    name[len] = '\0';
    Dl_info info;
    void *sym = dlsym(RTLD_DEFAULT, name);
    const char *lib = sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : NULL;
    if (lib && strrchr(lib, '/')) lib = strrchr(lib, '/') + 1;
    snprintf(hint, n,
             " (the plugin uses '%s' but was not linked with the library that defines it%s%s%s; "
             "link it, and link plugins with -Wl,-z,defs, as the tessera::plugin CMake target "
             "and `pkg-config --libs tessera-plugin` do, so that this fails when the plugin is "
             "built)",
             name, lib ? ": " : "", lib ? lib : "", lib ? " in this process" : "");
    return 1;
}

/* A readable message when the file itself is the problem; dlerror's own
 * text is kept for everything else. */
static int load_library(const char *path, tsr_mode mode, void **dl, tsr_error *err) {
    if (strchr(path, '/')) {
        struct stat st;
        if (stat(path, &st) != 0) {
            error_set(err, TSR_E_LOAD, "cannot load '%s': %s", path, strerror(errno));
            return TSR_E_LOAD;
        }
        if (S_ISDIR(st.st_mode)) {
            error_set(err, TSR_E_LOAD, "cannot load '%s': it is a directory", path);
            return TSR_E_LOAD;
        }
        /* A truncated file would make the loader fault inside dlopen. */
        char why[256];
        if (backend_check_elf(path, why, sizeof why) != 0) {
            error_set(err, TSR_E_LOAD, "cannot load '%s': %s", path, why);
            return TSR_E_LOAD;
        }
    }
    dlerror();
    if (mode == TSR_MODE_ISOLATED)
        *dl = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
    else
        *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*dl) {
        /* A copy: the hints below call into libdl, which reuses dlerror's text. */
        char reason[512];
        const char *error = dlerror();
        snprintf(reason, sizeof reason, "%s", error ? error : "dlopen failed");
        const char *why = reason;
        /* glibc has 16 link-map namespaces (DL_NNS), one of them the
         * program's own, and a small static TLS reserve that each new
         * namespace's libc takes a share of: usually the first to run out. */
        const char *hint = "";
        if (mode == TSR_MODE_ISOLATED && strstr(why, "static TLS"))
            hint = " (isolated mode: each namespace's libc takes static TLS, of which glibc "
                   "reserves room for about 11; raise it with GLIBC_TUNABLES="
                   "glibc.rtld.optional_static_tls=65536, or use worker mode)";
        else if (mode == TSR_MODE_ISOLATED && strstr(why, "namespace"))
            hint = " (isolated mode: glibc allows at most 15 isolated namespaces per process; "
                   "use worker mode beyond that)";
        char missing[1024];
        if (undefined_symbol_hint(why, missing, sizeof missing)) hint = missing;
        error_set(err, TSR_E_LOAD, "cannot load '%s': %s%s", path, why, hint);
        return TSR_E_LOAD;
    }
    return 0;
}

static int read_descriptor(tsr_component *c, const char *path, void *dl,
                           const tsr_plugin **out, tsr_error *err) {
    dlerror();
    void *sym = dlsym(dl, TSR_PLUGIN_ENTRY_SYMBOL);
    if (!sym) {
        error_set(err, TSR_E_LOAD,
                  "cannot load '%s': it exports no '%s' symbol, so it is not a Tessera plugin "
                  "(define one with TSR_PLUGIN_DEFINE)",
                  path, TSR_PLUGIN_ENTRY_SYMBOL);
        return TSR_E_LOAD;
    }
    tsr_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object pointer to function pointer */
    const tsr_plugin *d = entry(TSR_PLUGIN_ABI_VERSION);
    if (!d) {
        error_set(err, TSR_E_ABI,
                  "cannot load '%s': its entry function returned no descriptor for host ABI "
                  "version %u (the plugin refuses this host)",
                  path, TSR_PLUGIN_ABI_VERSION);
        return TSR_E_ABI;
    }
    *out = d;
    return backend_set_descriptor(c, d, err);
}

static int plugin_open(tsr_component *c, tsr_error *err) {
    plugin_backend *p = calloc(1, sizeof *p);
    const char *path = tsr_component_path(c);
    if (!p) {
        error_set(err, TSR_E_NOMEM, "cannot load '%s': out of memory", path);
        return TSR_E_NOMEM;
    }
    backend_set_state(c, p);
    int rc = load_library(path, backend_options(c)->mode, &p->dl, err);
    if (!rc) rc = read_descriptor(c, path, p->dl, &p->desc, err);
    if (!rc && p->desc->init) rc = backend_run_init(c, p->desc->init, &p->state, err);
    if (rc) return rc;
    p->initialized = 1;
    backend_set_endpoint_state(c, p->state);
    return 0;
}

static void plugin_close(tsr_component *c) {
    plugin_backend *p = backend_state(c);
    if (!p) return;
    if (p->initialized && p->desc->fini) p->desc->fini(p->state);
    backend_flush_namespace_stdio(p->dl);   /* isolated: what it printed */
    /* Unloading may run the plugin's destructors; nothing may point into
     * its descriptor after this. */
    if (p->dl) dlclose(p->dl);
    free(p);
}

/* Whatever no other backend claims. */
static int plugin_claims(const char *path, const struct tsr_options *opts) {
    (void)path;
    (void)opts;
    return 1;
}

const backend_ops plugin_backend_ops = {
    .name = "plugin",
    .claims = plugin_claims,
    .open = plugin_open,
    .invoke = invoke_in_process,
    .close = plugin_close,
};
