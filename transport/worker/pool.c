/* SPDX-License-Identifier: MIT */
/* The workers of a component: started at open, lent to one call at a time,
 * restarted after a death when asked to, stopped at close. */
#include <dlfcn.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool.h"

/* Where tessera-worker is, in order: the option, $TESSERA_WORKER, beside
 * this library as installed, beside it in the build tree. */
static char *find_worker_exe(const tsr_component *c) {
    const struct tsr_options *o = backend_options(c);
    if (o->worker_exe) return strdup(o->worker_exe);
    const char *env = getenv("TESSERA_WORKER");
    if (env && *env) return strdup(env);
    Dl_info info;
    if (dladdr((void *)tsr_open, &info) && info.dli_fname) {
        char *copy = strdup(info.dli_fname);
        if (!copy) return NULL;
        const char *dir = dirname(copy);
        const char *rel[] = {TSR_WORKER_RELPATH, "../bin/tessera-worker", "tessera-worker"};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, rel[i]);
            if (access(path, X_OK) == 0) {
                free(copy);
                return strdup(path);
            }
        }
        free(copy);
    }
    return strdup(TSR_WORKER_INSTALLED);
}

static char *config_json(const tsr_component *c) {
    const struct tsr_options *o = backend_options(c);
    json_t *obj = json_object();
    if (!obj) return NULL;
    for (int32_t i = 0; i < o->n_config; i++)
        if (json_object_set_new(obj, o->config[i].key,
                                json_string(o->config[i].value)) != 0) {
            json_decref(obj);
            return NULL;
        }
    char *text = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    return text;
}

static char **env_list(const tsr_component *c) {
    const struct tsr_options *o = backend_options(c);
    char **env = calloc((size_t)o->n_env + 1, sizeof *env);
    for (int32_t i = 0; env && i < o->n_env; i++) {
        size_t len = strlen(o->env[i].key) + strlen(o->env[i].value) + 2;
        if (!(env[i] = malloc(len))) {
            for (int32_t j = 0; j < i; j++) free(env[j]);
            free(env);
            return NULL;
        }
        snprintf(env[i], len, "%s=%s", o->env[i].key, o->env[i].value);
    }
    return env;
}

/* Lines a plugin prints in its worker, and the worker's log messages. */
static void forward_output(void *user, const char *line) {
    tsr_component *c = user;
    const struct tsr_options *o = backend_options(c);
    size_t marker = strlen(WORKER_LOG_MARKER);
    if (strncmp(line, WORKER_LOG_MARKER, marker) == 0 && line[marker] >= '0' &&
        line[marker] <= '3' && line[marker + 1] == ' ') {
        comp_log(c, (tsr_log_level)(line[marker] - '0'), "%s", line + marker + 2);
        return;
    }
    if (o->output_fn) o->output_fn(o->output_user, comp_label(c), line);
    else fprintf(stderr, "%s: %s\n", comp_label(c), line);
}

static void pool_free(worker_pool *p) {
    if (!p) return;
    if (p->env) {
        for (char **e = p->env; *e; e++) free(*e);
        free(p->env);
    }
    free(p->config);
    free(p->exe);
    free(p->slots);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->freed);
    free(p);
}

static int slot_start(tsr_component *c, pool_slot *s, char **schema, char *why, size_t n) {
    const struct tsr_options *o = backend_options(c);
    worker_backend *wb = worker_backend_of(c);
    worker_pool *p = wb->pool;
    char tag[SPOOL_TAG_MAX];
    spool_tag(tag, (int)(s - p->slots));
    /* With files, what a dead predecessor of this slot left goes first. */
    if (wb->spool) spool_clean(wb->spool, tag);
    worker_spawn_opts so = {
        .worker_exe = p->exe,
        .use_fork = o->use_fork,
        .plugin_path = tsr_component_path(c),
        .arena_prefix = wb->arena ? arena_prefix(wb->arena) : NULL,
        .spool_dir = wb->spool ? spool_path(wb->spool) : NULL,
        .spool_tag = tag,
        .file_io = o->file_io,
        .config_json = p->config,
        .env_set = (const char *const *)p->env,
        .clear_env = o->clear_env,
        .cwd = o->cwd,
        .spin_ns = (uint64_t)(o->spin_ns >= 0 ? o->spin_ns : TSR_DEFAULT_SPIN_NS),
        .limits = {.as_bytes = o->rlimit_as,
                   .cpu_seconds = o->rlimit_cpu,
                   .nofile = o->rlimit_nofile},
        .start_timeout_ms = o->start_timeout_ms,
        .output = forward_output,
        .output_user = c,
    };
    char *ignored = NULL;
    int rc = worker_start(&s->proc, &so, schema ? schema : &ignored, why, n);
    free(ignored);
    if (rc == 0) {
        s->dead = 0;
        backend_count(c, BACKEND_STAT_STARTS, 1);
    }
    return rc;
}

int pool_start(tsr_component *c, char **schema, tsr_error *err) {
    const struct tsr_options *o = backend_options(c);
    worker_pool *p = calloc(1, sizeof *p);
    if (!p) {
        error_set(err, TSR_E_NOMEM, "cannot load '%s': out of memory", tsr_component_path(c));
        return TSR_E_NOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->freed, NULL);
    worker_backend_of(c)->pool = p;
    p->n = o->workers;
    p->slots = calloc((size_t)p->n, sizeof *p->slots);
    p->exe = find_worker_exe(c);
    p->config = config_json(c);
    p->env = env_list(c);
    if (!p->slots || !p->exe || !p->config || !p->env) {
        error_set(err, TSR_E_NOMEM, "cannot load '%s': out of memory", tsr_component_path(c));
        p->n = 0; /* no worker started, and slots may be NULL */
        pool_stop(c);
        return TSR_E_NOMEM;
    }
    for (int i = 0; i < p->n; i++) {
        char why[TSR_ERRMSG_MAX - 64];
        int rc = slot_start(c, &p->slots[i], i == 0 ? schema : NULL, why, sizeof why);
        if (rc) {
            error_set(err, rc, "cannot load '%s' in a worker: %s", tsr_component_path(c), why);
            p->n = i; /* only the started ones are stopped */
            pool_stop(c);
            return rc;
        }
    }
    return 0;
}

void pool_stop(tsr_component *c) {
    worker_backend *wb = worker_backend_of(c);
    worker_pool *p = wb->pool;
    if (!p) return;
    for (int i = 0; i < p->n; i++)
        if (!p->slots[i].dead) worker_stop(&p->slots[i].proc);
    pool_free(p);
    wb->pool = NULL;
}

pool_slot *pool_acquire(tsr_component *c, int prefer, int *code, char *why, size_t n) {
    worker_pool *p = worker_backend_of(c)->pool;
    pthread_mutex_lock(&p->lock);
    pool_slot *s = NULL;
    for (;;) {
        if (prefer >= 0 && prefer < p->n && !p->slots[prefer].busy) s = &p->slots[prefer];
        for (int i = 0; !s && i < p->n; i++)
            if (!p->slots[i].busy) s = &p->slots[i];
        if (s) break;
        pthread_cond_wait(&p->freed, &p->lock);
    }
    s->busy = 1;
    pthread_mutex_unlock(&p->lock);
    if (!s->dead) return s;
    if (!backend_options(c)->auto_restart) {
        *code = TSR_E_WORKER;
        snprintf(why, n,
                 "its worker died earlier (%s); call tsr_component_restart, or open with restart=auto",
                 s->death);
    } else if ((*code = slot_start(c, s, NULL, why, n)) == 0) {
        comp_log(c, TSR_LOG_INFO, "worker restarted after: %s", s->death);
        return s;
    }
    pool_release(c, s);
    return NULL;
}

void pool_release(tsr_component *c, pool_slot *s) {
    worker_pool *p = worker_backend_of(c)->pool;
    pthread_mutex_lock(&p->lock);
    s->busy = 0;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

void pool_mark_dead(tsr_component *c, pool_slot *s, const char *why) {
    snprintf(s->death, sizeof s->death, "%s", why);
    s->dead = 1;
    backend_count(c, BACKEND_STAT_DEATHS, 1);
    /* worker_roundtrip has reaped it; this releases the channel too. */
    worker_stop(&s->proc);
}

int pool_slot_index(const tsr_component *c, const pool_slot *s) {
    return (int)(s - worker_backend_of(c)->pool->slots);
}

int pool_restart(tsr_component *c) {
    worker_pool *p = worker_backend_of(c)->pool;
    for (int i = 0; i < p->n; i++) {
        pool_slot *s = &p->slots[i];
        if (!s->dead) continue;
        char why[TSR_ERRMSG_MAX];
        int rc = slot_start(c, s, NULL, why, sizeof why);
        if (rc) {
            comp_log(c, TSR_LOG_ERROR, "restart failed: %s", why);
            return rc;
        }
    }
    return 0;
}
