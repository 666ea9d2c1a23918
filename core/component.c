/* Opening and closing a component, and schema queries. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "core/manifest/manifest.h"
#include "transport/worker/pool.h"

static void component_free(tsr_component *c) {
    if (!c) return;
    descriptor_free(c);
    pool_stop(c);
    arena_destroy(c->arena);
    spool_destroy(c->spool); /* after the workers: nothing writes there any more */
    schema_import_free(c->schema);
    manifest_free(c->manifest);
    /* Unloading may run the plugin's destructors; the descriptor is gone
     * after this, so nothing may point into it any more. */
    if (c->dl) dlclose(c->dl);
    pthread_mutex_destroy(&c->lock);
    options_clear(&c->opts);
    free(c->path);
    free(c);
}

/* A readable message when the file itself is the problem; dlerror's own
 * text is kept for everything else. */
static int load_library(tsr_component *c, tsr_error *err) {
    if (strchr(c->path, '/')) {
        struct stat st;
        if (stat(c->path, &st) != 0) {
            error_set(err, TSR_E_LOAD, "cannot load '%s': %s", c->path, strerror(errno));
            return TSR_E_LOAD;
        }
        if (S_ISDIR(st.st_mode)) {
            error_set(err, TSR_E_LOAD, "cannot load '%s': it is a directory", c->path);
            return TSR_E_LOAD;
        }
    }
    dlerror();
    if (c->mode == TSR_MODE_ISOLATED)
        c->dl = dlmopen(LM_ID_NEWLM, c->path, RTLD_NOW | RTLD_LOCAL);
    else
        c->dl = dlopen(c->path, RTLD_NOW | RTLD_LOCAL);
    if (!c->dl) {
        const char *why = dlerror();
        /* glibc has 16 link-map namespaces (DL_NNS), one of them the
         * program's own, and a small static TLS reserve that each new
         * namespace's libc takes a share of: usually the first to run out. */
        const char *hint = "";
        if (c->mode == TSR_MODE_ISOLATED && why && strstr(why, "static TLS"))
            hint = " (isolated mode: each namespace's libc takes static TLS, of which glibc "
                   "reserves room for about 11; raise it with GLIBC_TUNABLES="
                   "glibc.rtld.optional_static_tls=65536, or use worker mode)";
        else if (c->mode == TSR_MODE_ISOLATED && why && strstr(why, "namespace"))
            hint = " (isolated mode: glibc allows at most 15 isolated namespaces per process; "
                   "use worker mode beyond that)";
        error_set(err, TSR_E_LOAD, "cannot load '%s': %s%s", c->path, why ? why : "dlopen failed",
                  hint);
        return TSR_E_LOAD;
    }
    return 0;
}

static int read_descriptor(tsr_component *c, tsr_error *err) {
    dlerror();
    void *sym = dlsym(c->dl, TSR_PLUGIN_ENTRY_SYMBOL);
    if (!sym) {
        error_set(err, TSR_E_LOAD,
                  "cannot load '%s': it exports no '%s' symbol, so it is not a Tessera plugin "
                  "(define one with TSR_PLUGIN_DEFINE)",
                  c->path, TSR_PLUGIN_ENTRY_SYMBOL);
        return TSR_E_LOAD;
    }
    tsr_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object pointer to function pointer */
    const tsr_plugin *d = entry(TSR_PLUGIN_ABI_VERSION);
    if (!d) {
        error_set(err, TSR_E_ABI,
                  "cannot load '%s': its entry function returned no descriptor for host ABI "
                  "version %u (the plugin refuses this host)",
                  c->path, TSR_PLUGIN_ABI_VERSION);
        return TSR_E_ABI;
    }
    return descriptor_load(c, d, err);
}

static int run_init(tsr_component *c, tsr_error *err) {
    const tsr_plugin *d = c->desc;
    if (!d->init) return 0;
    host_ctx hc;
    host_ctx_init(&hc, c, NULL);
    void *state = NULL;
    int st = d->init(&hc.pub, &state);
    if (st != 0) {
        error_set(err, TSR_E_INIT, "component '%s': init failed: %s", d->name,
                  hc.plugin_msg_set ? hc.plugin_msg : "(the plugin gave no message)");
        return TSR_E_INIT;
    }
    c->state = state;
    return 0;
}

/* The shared-memory transport: the arena, then the workers. */
static int start_shm(tsr_component *c, char **schema, tsr_error *err) {
    char why[TSR_ERRMSG_MAX - 64];
    int removed = arena_remove_orphans();
    if (removed > 0)
        comp_log(c, TSR_LOG_INFO, "removed %d shared-memory segments left by dead processes",
                 removed);
    int rc = arena_create(&c->arena, 0, why, sizeof why);
    if (rc) {
        error_set(err, rc, "cannot load '%s' in a worker: %s", c->path, why);
        return rc;
    }
    arena_set_limit(c->arena, c->opts.max_arena_bytes);
    return pool_start(c, schema, err);
}

/* The cause in "cannot load '<path>' in a worker: <cause>". */
static const char *worker_cause(const char *message) {
    const char *at = strstr(message, " in a worker: ");
    return at ? at + strlen(" in a worker: ") : message;
}

/* Worker mode: start the workers over shared memory or files (transport
 * "auto" falls back to files when /dev/shm is missing, full or refuses
 * us), and take the schema the first one sends. */
static int open_worker(tsr_component *c, tsr_error *err) {
    char why[TSR_ERRMSG_MAX - 64];
    char *schema = NULL;
    int rc = TSR_E_SHM;
    tsr_error shm_err = {0, ""};
    if (c->opts.transport != TSR_TRANSPORT_FILES) {
        rc = start_shm(c, &schema, &shm_err);
        if (rc && (rc != TSR_E_SHM || c->opts.transport == TSR_TRANSPORT_SHM)) {
            error_set(err, rc, "%s", shm_err.message);
            return rc;
        }
    }
    if (rc) {
        pool_stop(c);
        arena_destroy(c->arena);
        c->arena = NULL;
        rc = files_start(c,
                         c->opts.transport == TSR_TRANSPORT_FILES ? NULL
                                                                  : worker_cause(shm_err.message),
                         err);
        if (!rc) rc = pool_start(c, &schema, err);
        if (rc) return rc;
    }
    rc = schema_import(schema, &c->schema, why, sizeof why);
    free(schema);
    if (rc) {
        error_set(err, rc, "cannot load '%s' in a worker: %s", c->path, why);
        return rc;
    }
    return descriptor_load(c, schema_import_descriptor(c->schema), err);
}

TSR_API int tsr_open(const char *path, const tsr_options *opts, tsr_component **out,
                     tsr_error *err) {
    if (err) {
        err->code = 0;
        err->message[0] = '\0';
    }
    if (!out) {
        error_set(err, TSR_E_ARGUMENT, "tsr_open: out must not be NULL");
        return TSR_E_ARGUMENT;
    }
    *out = NULL;
    if (!path || !*path) {
        error_set(err, TSR_E_ARGUMENT, "tsr_open: no plugin path given");
        return TSR_E_ARGUMENT;
    }
    tsr_component *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path)) || options_copy(&c->opts, opts) != 0) {
        if (c) {
            free(c->path);
            free(c);
        }
        error_set(err, TSR_E_NOMEM, "cannot load '%s': out of memory", path);
        return TSR_E_NOMEM;
    }
    c->mode = c->opts.mode;
    pthread_mutex_init(&c->lock, NULL);
    int rc;
    if (c->mode == TSR_MODE_WORKER) {
        rc = open_worker(c, err);
    } else if (manifest_detect(c->path)) {
        rc = manifest_open(c, err);   /* a legacy routine: its descriptor is built here */
    } else {
        rc = load_library(c, err);
        if (!rc) rc = read_descriptor(c, err);
        if (!rc) rc = run_init(c, err);
    }
    if (rc) {
        component_free(c);
        return rc;
    }
    comp_log(c, TSR_LOG_DEBUG, "loaded from %s", c->path);
    *out = c;
    return 0;
}

TSR_API void tsr_close(tsr_component *c) {
    if (!c) return;
    /* Worker mode has no fini here: the worker runs it when told to exit. */
    if (c->fini) c->fini(c->state);
    component_free(c);
}

TSR_API const char *tsr_component_name(const tsr_component *c) { return c ? c->desc->name : NULL; }
TSR_API const char *tsr_component_version(const tsr_component *c) {
    return c ? (c->desc->version ? c->desc->version : "") : NULL;
}
TSR_API const char *tsr_component_description(const tsr_component *c) {
    return c ? (c->desc->description ? c->desc->description : "") : NULL;
}
TSR_API const char *tsr_component_path(const tsr_component *c) { return c ? c->path : NULL; }
TSR_API tsr_mode tsr_component_mode(const tsr_component *c) { return c ? c->mode : TSR_MODE_INPROC; }
TSR_API int32_t tsr_n_inputs(const tsr_component *c) { return c ? c->n_in : 0; }
TSR_API int32_t tsr_n_outputs(const tsr_component *c) { return c ? c->n_out : 0; }

TSR_API const tsr_field *tsr_input_field(const tsr_component *c, int32_t index) {
    return (c && index >= 0 && index < c->n_in) ? &c->in[index].field : NULL;
}

TSR_API const tsr_field *tsr_output_field(const tsr_component *c, int32_t index) {
    return (c && index >= 0 && index < c->n_out) ? &c->out[index].field : NULL;
}

int32_t find_field(const field_info *fs, int32_t n, const char *name) {
    if (!name) return -1;
    for (int32_t i = 0; i < n; i++)
        if (strcmp(fs[i].field.name, name) == 0) return i;
    return -1;
}

TSR_API int32_t tsr_find_input(const tsr_component *c, const char *name) {
    return c ? find_field(c->in, c->n_in, name) : -1;
}

TSR_API int32_t tsr_find_output(const tsr_component *c, const char *name) {
    return c ? find_field(c->out, c->n_out, name) : -1;
}

/* abstract_eval is served from the schema when every output's shape follows
 * from the inputs' symbolic dims. */
int schema_gives_shapes(const tsr_component *c) {
    for (int32_t o = 0; o < c->n_out; o++)
        if (!c->out[o].shape_static) return 0;
    return 1;
}

TSR_API int tsr_has_endpoint(const tsr_component *c, tsr_endpoint ep) {
    if (!c || (int)ep < 0 || (int)ep >= TSR_EP_COUNT) return 0;
    if (c->ep[ep]) return 1;
    if (ep == TSR_EP_ABSTRACT_EVAL) return schema_gives_shapes(c);
    return ep != TSR_EP_APPLY && c->fd_method != TSR_FD_NONE;
}

TSR_API int tsr_has_native_endpoint(const tsr_component *c, tsr_endpoint ep) {
    if (!c || (int)ep < 0 || (int)ep >= TSR_EP_COUNT) return 0;
    return c->ep[ep] != NULL;
}

TSR_API tsr_fd_method tsr_component_fd_method(const tsr_component *c) {
    return c ? c->fd_method : TSR_FD_NONE;
}
