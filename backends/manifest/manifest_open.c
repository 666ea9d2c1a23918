/* SPDX-License-Identifier: MIT */
/* Opening a manifest component: recognise the file, read its JSON, check
 * it against its own schema, load the library it names and find the
 * routines. The result is a descriptor built by the host (as
 * schema_import.c builds one for workers) whose endpoints are the
 * functions of manifest_call.c, so that core validates it and every later
 * path is the one compiled plugins take. This is the manifest backend. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest.h"
#include "manifest_internal.h"

#define MANIFEST_FORMAT_VERSION 1
#define SNIFF_BYTES 512

static const char *const top_keys[] = {"tessera_manifest", "name", "version", "description",
                                       "library", "convention", "thread_safe", "fd", "inputs",
                                       "outputs", "endpoints", "may_exit", "setup", "doc", NULL};
static const char *const fd_keys[] = {"method", "step", "samples", NULL};

/* A manifest rather than a plugin: the path ends in ".json", or names a
 * file whose first non-blank byte is '{' (a shared object starts with
 * "\177ELF"). */
static int manifest_detect(const char *path) {
    size_t len = strlen(path);
    if (len >= 5 && strcmp(path + len - 5, ".json") == 0) return 1;
    if (!strchr(path, '/')) return 0;   /* a bare name is for the loader's search */
    /* open and read rather than stdio: opening a plugin allocates nothing here */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char head[SNIFF_BYTES];
    ssize_t got;
    do got = read(fd, head, sizeof head);
    while (got < 0 && errno == EINTR);
    close(fd);
    for (ssize_t i = 0; i < got; i++)
        if (!isspace((unsigned char)head[i])) return head[i] == '{';
    return 0;
}

void mf_routine_free(mf_endpoint *e) {
    for (int32_t i = 0; i < e->n_args; i++) {
        free(e->args[i].expr);
        free(e->args[i].text);
    }
    free(e->args);
    free(e->result);
    free(e->messages);
    mf_cif_free(e);
    mf_query_cache_free(e);
}

static void manifest_free(struct manifest *m) {
    if (!m) return;
    for (int ep = 0; ep < TSR_EP_COUNT; ep++) {
        for (int32_t k = 0; k < m->ep[ep].n; k++) mf_routine_free(&m->ep[ep].r[k]);
        free(m->ep[ep].r);
    }
    for (int32_t k = 0; k < m->n_setup; k++) mf_routine_free(&m->setup[k]);
    free(m->setup);
    pthread_mutex_destroy(&m->lock);
    free(m->sym_src);
    free(m->out_dims);
    free(m->out_text);
    free(m->out_exprs);
    free(m->fields);
    free(m->dims);
    free(m->dir);
    free(m->library);
    json_decref(m->root);
    /* Last: the schema's strings and the routines live until here. */
    backend_flush_namespace_stdio(m->dl);   /* isolated: what it printed */
    if (m->dl) dlclose(m->dl);
    free(m);
}

static int read_json(mf_parse *p) {
    const char *path = tsr_component_path(p->c);
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(p->err, TSR_E_LOAD, "cannot load '%s': %s", path, strerror(errno));
        return TSR_E_LOAD;
    }
    json_error_t jerr;
    p->m->root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
    fclose(f);
    if (!p->m->root)
        return mf_fail(p, TSR_E_DESCRIPTOR, "",
                       "line %d, column %d: %s (the manifest is not valid JSON)", jerr.line,
                       jerr.column, jerr.text);
    if (!json_is_object(p->m->root))
        return mf_fail(p, TSR_E_DESCRIPTOR, "", "the manifest must be a JSON object");
    json_t *version = json_object_get(p->m->root, "tessera_manifest");
    if (!version)
        return mf_fail(p, TSR_E_DESCRIPTOR, "",
                       "not a Tessera manifest: the top-level object has no \"tessera_manifest\": "
                       "%d",
                       MANIFEST_FORMAT_VERSION);
    if (!json_is_integer(version))
        return mf_fail(p, TSR_E_DESCRIPTOR, "tessera_manifest",
                       "expected the format version, an integer (%d)", MANIFEST_FORMAT_VERSION);
    if (json_integer_value(version) != MANIFEST_FORMAT_VERSION)
        return mf_fail(p, TSR_E_DESCRIPTOR, "tessera_manifest",
                       "format version %lld is not supported (this library reads version %d)",
                       (long long)json_integer_value(version), MANIFEST_FORMAT_VERSION);
    return mf_check_keys(p, p->m->root, "", top_keys);
}

static int parse_fd(mf_parse *p, json_t *fd) {
    tsr_plugin *d = &p->m->desc;
    if (!json_is_object(fd))
        return mf_fail(p, TSR_E_DESCRIPTOR, "fd",
                       "expected an object such as {\"method\": \"central\"}");
    int rc = mf_check_keys(p, fd, "fd", fd_keys);
    const char *method = NULL;
    if (!rc) rc = mf_get_string(p, fd, "method", "fd", 1, &method);
    if (rc) return rc;
    static const char *const methods[] = {"none", "forward", "central", "spsa"};
    int found = -1;
    for (int k = 0; k < 4; k++)
        if (strcmp(method, methods[k]) == 0) found = k;
    if (found < 0)
        return mf_fail(p, TSR_E_DESCRIPTOR, "fd.method",
                       "unknown method '%s' (expected none, forward, central or spsa)", method);
    d->fd_method = (tsr_fd_method)found;
    json_t *step = json_object_get(fd, "step"), *samples = json_object_get(fd, "samples");
    if (step && (!json_is_number(step) || !(json_number_value(step) >= 0) ||
                 !(json_number_value(step) < 1)))
        return mf_fail(p, TSR_E_DESCRIPTOR, "fd.step",
                       "expected a relative step in [0, 1) (0: the method's default)");
    if (samples && (!json_is_integer(samples) || json_integer_value(samples) < 0 ||
                    json_integer_value(samples) > 1000000))
        return mf_fail(p, TSR_E_DESCRIPTOR, "fd.samples", "expected an integer from 0 to 1000000");
    d->fd_step = step ? json_number_value(step) : 0;
    d->fd_samples = samples ? (uint32_t)json_integer_value(samples) : 0;
    return 0;
}

static int parse_top(mf_parse *p) {
    struct manifest *m = p->m;
    tsr_plugin *d = &m->desc;
    json_t *root = m->root;
    d->abi_version = TSR_PLUGIN_ABI_VERSION;
    d->struct_size = sizeof *d;
    d->field_size = sizeof(tsr_field);
    const char *convention = NULL, *library = NULL;
    int thread_safe = 0;
    int rc = mf_get_string(p, root, "name", "", 1, &d->name);
    if (!rc) rc = mf_get_string(p, root, "version", "", 0, &d->version);
    if (!rc) rc = mf_get_string(p, root, "description", "", 0, &d->description);
    if (!rc) rc = mf_get_string(p, root, "library", "", 1, &library);
    if (!rc) rc = mf_get_string(p, root, "convention", "", 1, &convention);
    if (!rc) rc = mf_get_bool(p, root, "thread_safe", "", &thread_safe);
    if (rc) return rc;
    if (!*library) return mf_fail(p, TSR_E_DESCRIPTOR, "library", "the library name is empty");
    if (strcmp(convention, "fortran") == 0) m->fortran = 1;
    else if (strcmp(convention, "c") != 0)
        return mf_fail(p, TSR_E_DESCRIPTOR, "convention",
                       "unknown convention '%s' (expected \"fortran\": scalars by reference and "
                       "hidden character lengths, or \"c\": scalars by value)",
                       convention);
    d->flags = thread_safe ? TSR_PLUGIN_THREAD_SAFE : 0;
    rc = mf_may_exit(p->m->root, &m->may_exit);
    if (rc)
        return mf_fail(p, TSR_E_DESCRIPTOR, "may_exit",
                       "expected true, false or a string saying when the routines end the "
                       "process (e.g. \"XERBLA stops on an illegal argument\")");
    json_t *fd = json_object_get(root, "fd");
    return fd ? parse_fd(p, fd) : 0;
}

/* The descriptor check's own message, prefixed with the manifest's path. */
static int load_descriptor(mf_parse *p) {
    int rc = backend_set_descriptor(p->c, &p->m->desc, p->err);
    if (rc && p->err) {
        char msg[TSR_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", p->err->message);
        error_set(p->err, rc, "%s: the schema: %s", tsr_component_path(p->c), msg);
    }
    return rc;
}

static char *join_path(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *s = malloc(a + b + 2);
    if (s) {
        memcpy(s, dir, a);
        s[a] = '/';
        memcpy(s + a + 1, name, b + 1);
    }
    return s;
}

/* A library path with a '/' is relative to the manifest's folder; a bare
 * name is looked for there first, then by the loader's search (which is
 * how "liblapack.so.3" finds the system's). */
static int resolve_library(mf_parse *p, const char *lib) {
    struct manifest *m = p->m;
    const char *path = tsr_component_path(p->c), *slash = strrchr(path, '/');
    m->dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
    if (!m->dir) return mf_fail(p, TSR_E_NOMEM, "library", "out of memory");
    if (lib[0] == '/') {
        m->library = strdup(lib);
    } else {
        m->library = join_path(m->dir, lib);
        if (m->library && !strchr(lib, '/') && access(m->library, F_OK) != 0) {
            free(m->library);
            m->library = strdup(lib);
        }
    }
    if (!m->library) return mf_fail(p, TSR_E_NOMEM, "library", "out of memory");
    return 0;
}

static int load_library(mf_parse *p) {
    struct manifest *m = p->m;
    const char *lib = json_string_value(json_object_get(p->m->root, "library"));
    int rc = resolve_library(p, lib);
    if (rc) return rc;
    /* A truncated library would make the loader fault inside dlopen. */
    char why_not[256];
    if (strchr(m->library, '/') && access(m->library, F_OK) == 0 &&
        backend_check_elf(m->library, why_not, sizeof why_not) != 0)
        return mf_fail(p, TSR_E_LOAD, "library", "cannot load '%s': %s", m->library, why_not);
    dlerror();
    if (backend_options(p->c)->mode == TSR_MODE_ISOLATED)
        m->dl = dlmopen(LM_ID_NEWLM, m->library, RTLD_NOW | RTLD_LOCAL);
    else
        m->dl = dlopen(m->library, RTLD_NOW | RTLD_LOCAL);
    if (!m->dl) {
        const char *why = dlerror();
        return mf_fail(p, TSR_E_LOAD, "library", "cannot load '%s' (%s): %s", lib,
                       lib[0] == '/'        ? "an absolute path, used as is"
                       : strchr(lib, '/')   ? "relative to the manifest's folder"
                                            : "looked for beside the manifest, then by the "
                                              "loader's search path",
                       why ? why : "dlopen failed");
    }
    return 0;
}

/* gfortran names SUBROUTINE STEP "step_": suggest that when it exists. */
static void fortran_hint(void *dl, const char *symbol, char *hint, size_t n) {
    char guess[SCHEMA_MAX_NAME + 2];
    size_t len = strlen(symbol);
    hint[0] = '\0';
    if (len == 0 || len > SCHEMA_MAX_NAME) return;
    for (size_t i = 0; i < len; i++) guess[i] = (char)tolower((unsigned char)symbol[i]);
    guess[len] = '\0';
    if (symbol[len - 1] != '_') {
        guess[len] = '_';
        guess[len + 1] = '\0';
    }
    if (strcmp(guess, symbol) != 0 && dlsym(dl, guess))
        snprintf(hint, n, " (did you mean '%s'? gfortran lowercases names and appends '_')",
                 guess);
}

int mf_routine_resolve(mf_parse *p, mf_endpoint *e, const char *entry) {
    void *dl = p->m->dl;
    dlerror();
    void *sym = dlsym(dl, e->symbol);
    if (!sym) {
        char at[96], hint[SCHEMA_MAX_NAME + 96];
        snprintf(at, sizeof at, "%s.symbol", entry);
        fortran_hint(dl, e->symbol, hint, sizeof hint);
        return mf_fail(p, TSR_E_LOAD, at, "'%s' is not exported by '%s'%s", e->symbol,
                       p->m->library, hint);
    }
    memcpy(&e->fn, &sym, sizeof e->fn); /* object pointer to function pointer */
    return 0;
}

static int resolve_symbols(mf_parse *p) {
    for (int ep = 0; ep < TSR_EP_COUNT; ep++) {
        const mf_steps *st = &p->m->ep[ep];
        for (int32_t k = 0; k < st->n; k++) {
            char entry[64];
            if (st->n > 1) snprintf(entry, sizeof entry, "endpoints.%s[%d]",
                                    tsr_endpoint_name((tsr_endpoint)ep), (int)k);
            else snprintf(entry, sizeof entry, "endpoints.%s", tsr_endpoint_name((tsr_endpoint)ep));
            int rc = mf_routine_resolve(p, &st->r[k], entry);
            if (rc) return rc;
        }
    }
    for (int32_t k = 0; k < p->m->n_setup; k++) {
        int rc = mf_routine_resolve(p, &p->m->setup[k], p->m->setup[k].where);
        if (rc) return rc;
    }
    return 0;
}

/* Read and check the manifest, load the library it names (per the mode),
 * prepare each endpoint's call and give the component a descriptor like
 * any plugin's. On failure err names the manifest's entry and the cause. */
static int manifest_open(tsr_component *c, tsr_error *err) {
    struct manifest *m = calloc(1, sizeof *m);
    if (!m) {
        error_set(err, TSR_E_NOMEM, "cannot load '%s': out of memory", tsr_component_path(c));
        return TSR_E_NOMEM;
    }
    pthread_mutex_init(&m->lock, NULL);
    backend_set_state(c, m);
    mf_parse p = {.c = c, .m = m, .err = err};
    int rc = read_json(&p);
    if (!rc) rc = parse_top(&p);
    if (!rc) rc = mf_schema_parse(&p);
    if (!rc) rc = mf_endpoints_declare(&p);
    if (!rc) rc = load_descriptor(&p);
    if (!rc) rc = mf_schema_sources(&p);
    if (!rc) rc = mf_endpoints_parse(&p);
    if (!rc) rc = mf_setup_parse(&p);
    if (!rc) rc = load_library(&p);
    if (!rc) rc = resolve_symbols(&p);
    if (!rc) backend_set_endpoint_state(c, m);   /* the endpoints read their plan there */
    if (!rc) rc = mf_setup_run(c, m, err);
    if (!rc && m->may_exit)
        comp_log(c, TSR_LOG_INFO,
                 "the manifest says its routines may end the process that runs them (%s): "
                 "in-process that is the host; worker mode confines it to a worker",
                 m->may_exit);
    return rc;
}

static void manifest_close(tsr_component *c) { manifest_free(backend_state(c)); }

/* In-process modes only: in worker mode the worker opens the manifest. */
static int manifest_claims(const char *path, const struct tsr_options *opts) {
    return opts->mode != TSR_MODE_WORKER && manifest_detect(path);
}

const backend_ops manifest_backend_ops = {
    .name = "manifest",
    .claims = manifest_claims,
    .open = manifest_open,
    .invoke = invoke_in_process,
    .close = manifest_close,
    .may_end_process = manifest_may_exit,
};
