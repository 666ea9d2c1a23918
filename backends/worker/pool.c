/* SPDX-License-Identifier: MIT */
/* The workers of a component: started at open, lent to one call at a time,
 * restarted after a death when asked to, stopped at close. */
#include <errno.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pool.h"

/* Whether path is a tessera-worker to run; adds it to the list of places
 * looked at otherwise. */
static int worker_at(const char *path, char *looked, size_t n) {
    if (access(path, X_OK) == 0) return 1;
    /* A list too long for the message is cut short, not an error. */
    size_t used = strlen(looked);
    const char *sep = used ? ", " : "";
    size_t add = strlen(sep) + strlen(path);
    if (used + add < n) {
        memcpy(looked + used, sep, strlen(sep));
        memcpy(looked + used + strlen(sep), path, strlen(path) + 1);
    }
    return 0;
}

/* Where tessera-worker is, in order: the option worker_exe, $TESSERA_WORKER,
 * then relative to backend_own_dir: the install's libexec seen from libdir (the
 * shared library) or from bindir (a static host), bin/ of the build tree,
 * beside it (a Python extension, a build tree's programs); last the
 * libexec of the prefix configured at build time. 0 with the path in *exe
 * (malloc'd); TSR_E_WORKER with what was looked at, and how to say where
 * it is, in why; TSR_E_NOMEM. */
static int find_worker_exe(const tsr_component *c, char **exe, char *why, size_t n) {
    const struct tsr_options *o = backend_options(c);
    const char *given = o->worker_exe ? o->worker_exe : getenv("TESSERA_WORKER");
    *exe = NULL;
    if (given && *given) {
        if (!(*exe = strdup(given))) goto nomem;
        if (o->use_fork || access(given, X_OK) == 0) return 0;
        int e = errno;
        snprintf(why, n, "the worker executable '%s' (%s) cannot be run: %s", given,
                 o->worker_exe ? "option worker_exe" : "$TESSERA_WORKER", strerror(e));
        return TSR_E_WORKER;
    }
    char dir[4096], looked[1024] = "";
    backend_own_dir(dir, sizeof dir);
    const char *rel[] = {TSR_WORKER_RELPATH, TSR_WORKER_RELPATH_FROM_BIN, "../bin/tessera-worker",
                         "tessera-worker"};
    for (size_t i = 0; dir[0] && i < sizeof rel / sizeof rel[0]; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++) seen |= strcmp(rel[j], rel[i]) == 0;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, rel[i]);
        if (!seen && worker_at(path, looked, sizeof looked)) {
            if (!(*exe = strdup(path))) goto nomem;
            return 0;
        }
    }
    /* "" in a relocatable build (TESSERA_RELOCATABLE): no such last resort */
    if (TSR_WORKER_INSTALLED[0] && worker_at(TSR_WORKER_INSTALLED, looked, sizeof looked)) {
        if (!(*exe = strdup(TSR_WORKER_INSTALLED))) goto nomem;
        return 0;
    }
    /* fork mode does not run it */
    if (o->use_fork) return (*exe = strdup(TSR_WORKER_INSTALLED)) ? 0 : TSR_E_NOMEM;
    snprintf(why, n,
             "cannot find tessera-worker (looked at %s); set the environment variable "
             "TESSERA_WORKER or the option worker_exe to its path",
             looked);
    return TSR_E_WORKER;
nomem:
    snprintf(why, n, "out of memory");
    return TSR_E_NOMEM;
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

/* Lines a plugin prints in its worker, and the worker's log messages. The
 * default destination, the host's stderr, never blocks (stderr_line): what
 * it drops is counted and reported by pool_report_output. A user's output
 * function is called as it is. */
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
    else if (stderr_line(comp_label(c), line))
        atomic_fetch_add_explicit(&worker_backend_of(c)->pool->dropped, 1, memory_order_relaxed);
}

void pool_report_output(tsr_component *c, int wait_ms) {
    worker_pool *p = worker_backend_of(c)->pool;
    if (p && atomic_load_explicit(&p->dropped, memory_order_relaxed)) {
        uint64_t n = atomic_exchange(&p->dropped, 0);
        comp_log(c, TSR_LOG_WARN,
                 "%llu lines the plugin printed were dropped: the host's stderr did not take "
                 "them (read it, or set an output function: tsr_options_set_output)",
                 (unsigned long long)n);
    }
    stderr_flush(wait_ms);
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
        .arena = wb->arena,
        .spool_dir = wb->spool ? spool_path(wb->spool) : NULL,
        .spool_tag = tag,
        .file_io = o->file_io,
        .config_json = p->config,
        .env_set = (const char *const *)p->env,
        .clear_env = o->clear_env,
        .cwd = o->cwd,
        .spin_ns = (uint64_t)(o->spin_ns >= 0 ? o->spin_ns : DEFAULT_SPIN_NS),
        /* The default adapts; a spin the host chose is kept as it is. */
        .spin_adaptive = o->spin_ns < 0,
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
        pthread_mutex_lock(&p->lock);
        s->dead = 0;
        s->respawn = 0;
        pthread_mutex_unlock(&p->lock);
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
    char why[TSR_ERRMSG_MAX - 64];
    int rc = find_worker_exe(c, &p->exe, why, sizeof why);
    if (rc == TSR_E_WORKER) {
        error_set(err, rc, "cannot load '%s' in a worker: %s", tsr_component_path(c), why);
        p->n = 0;
        pool_stop(c);
        return rc;
    }
    p->config = config_json(c);
    p->env = env_list(c);
    if (!p->slots || !p->exe || !p->config || !p->env) {
        error_set(err, TSR_E_NOMEM, "cannot load '%s': out of memory", tsr_component_path(c));
        p->n = 0; /* no worker started, and slots may be NULL */
        pool_stop(c);
        return TSR_E_NOMEM;
    }
    for (int i = 0; i < p->n; i++) {
        rc = slot_start(c, &p->slots[i], i == 0 ? schema : NULL, why, sizeof why);
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
    /* What the workers said last, while the host's stderr takes it. */
    pool_report_output(c, POOL_CLOSE_FLUSH_MS);
    pool_free(p);
    wb->pool = NULL;
}

static uint64_t coarse_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Look at every idle worker for a death nobody has seen (one poll each):
 * a worker no call uses now is noticed, counted and reported too. With
 * the lock held, released while a dead one is reaped (its slot lent to us
 * meanwhile). */
static void sweep_locked(tsr_component *c, worker_pool *p) {
    p->swept_ms = coarse_ms();
    for (int i = 0; i < p->n; i++) {
        pool_slot *s = &p->slots[i];
        if (s->busy || s->dead || !worker_exited(&s->proc)) continue;
        s->busy = 1;
        pthread_mutex_unlock(&p->lock);
        char why[sizeof s->death];
        if (worker_check(&s->proc, why, sizeof why) != 0) pool_mark_dead(c, s, why);
        pthread_mutex_lock(&p->lock);
        s->busy = 0;
        pthread_cond_broadcast(&p->freed);
    }
}

pool_slot *pool_acquire(tsr_component *c, int prefer, int *code, char *why, size_t n) {
    worker_pool *p = worker_backend_of(c)->pool;
    int restart = backend_options(c)->auto_restart;
    pthread_mutex_lock(&p->lock);
    if (coarse_ms() - p->swept_ms >= POOL_SWEEP_MS) sweep_locked(c, p);
    pool_slot *s = NULL;
    for (;;) {
        /* The preferred slot if it is free (and alive, or to be restarted),
         * else any free live one, else a free dead one to be restarted
         * (restart=auto, or one a cancel stopped). */
        if (prefer >= 0 && prefer < p->n && !p->slots[prefer].busy &&
            (restart || !p->slots[prefer].dead || p->slots[prefer].respawn))
            s = &p->slots[prefer];
        int live = 0;
        pool_slot *dead_free = NULL;
        for (int i = 0; i < p->n; i++) {
            pool_slot *t = &p->slots[i];
            live += !t->dead || t->respawn;
            if (!s && !t->busy && !t->dead) s = t;
            if (!dead_free && !t->busy && t->dead && (restart || t->respawn)) dead_free = t;
        }
        if (!s) s = dead_free;
        if (s) break;
        if (live == 0 && !restart) {
            /* restart=never and no worker left: say why and what to do */
            *code = TSR_E_WORKER;
            if (p->n == 1)
                snprintf(why, n, "its worker died earlier (%s); call tsr_component_restart, or "
                                 "open with restart=auto", p->slots[0].death);
            else
                snprintf(why, n, "all %d workers died earlier (the last: %s); call "
                                 "tsr_component_restart, or open with restart=auto",
                         p->n, p->slots[p->last_death].death);
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        pthread_cond_wait(&p->freed, &p->lock);
    }
    s->busy = 1;
    int dead = s->dead;
    pthread_mutex_unlock(&p->lock);
    if (!dead) return s;
    /* restart=auto */
    char death[sizeof s->death];
    snprintf(death, sizeof death, "%s", s->death);
    if ((*code = slot_start(c, s, NULL, why, n)) == 0) {
        comp_log(c, TSR_LOG_INFO, "worker %d restarted after: %s", pool_slot_index(c, s) + 1,
                 death);
        return s;
    }
    pool_release(c, s);
    return NULL;
}

void pool_release(tsr_component *c, pool_slot *s) {
    worker_pool *p = worker_backend_of(c)->pool;
    pthread_mutex_lock(&p->lock);
    s->busy = 0;
    /* broadcast: a waiter may be waiting for a live worker that is no more */
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

static void mark_dead(tsr_component *c, pool_slot *s, const char *why, int stopped) {
    worker_pool *p = worker_backend_of(c)->pool;
    int restart = backend_options(c)->auto_restart;
    int index = pool_slot_index(c, s);
    /* worker_roundtrip or worker_check has reaped it; this releases the
     * channel too. */
    worker_stop(&s->proc);
    pthread_mutex_lock(&p->lock);
    snprintf(s->death, sizeof s->death, "%s", why);
    s->dead = 1;
    s->respawn = stopped;
    p->last_death = index;
    int live = 0;
    for (int i = 0; i < p->n; i++) live += !p->slots[i].dead;
    pthread_mutex_unlock(&p->lock);
    backend_count(c, BACKEND_STAT_DEATHS, 1);
    /* Reported once, here, whether a call or a sweep found it. */
    char which[48] = "";
    if (p->n > 1) snprintf(which, sizeof which, "worker %d of %d: ", index + 1, p->n);
    if (stopped)
        comp_log(c, TSR_LOG_INFO, "%sa cancelled call: the worker %s; another starts at the "
                                  "next call that needs it",
                 which, why);
    else if (restart)
        comp_log(c, TSR_LOG_WARN, "%s%s; restart=auto starts another when a call needs it",
                 which, why);
    else if (live > 0)
        comp_log(c, TSR_LOG_WARN, "%s%s; %d still serve%s calls until tsr_component_restart",
                 which, why, live, live == 1 ? "s" : "");
    else
        comp_log(c, TSR_LOG_WARN, "%s%s; no worker is left: calls fail until "
                                  "tsr_component_restart (or open with restart=auto)",
                 which, why);
}

void pool_mark_dead(tsr_component *c, pool_slot *s, const char *why) {
    mark_dead(c, s, why, 0);
}

void pool_mark_stopped(tsr_component *c, pool_slot *s, const char *why) {
    mark_dead(c, s, why, 1);
}

int pool_slot_index(const tsr_component *c, const pool_slot *s) {
    return (int)(s - worker_backend_of(c)->pool->slots);
}

int pool_restart(tsr_component *c) {
    worker_pool *p = worker_backend_of(c)->pool;
    pthread_mutex_lock(&p->lock);
    sweep_locked(c, p); /* idle workers that died unseen are restarted too */
    pthread_mutex_unlock(&p->lock);
    int rc = 0;
    for (int i = 0; i < p->n && rc == 0; i++) {
        pool_slot *s = &p->slots[i];
        pthread_mutex_lock(&p->lock);
        int take = s->dead && !s->busy;
        if (take) s->busy = 1;
        pthread_mutex_unlock(&p->lock);
        if (!take) continue;
        char why[TSR_ERRMSG_MAX];
        rc = slot_start(c, s, NULL, why, sizeof why);
        if (rc) comp_log(c, TSR_LOG_ERROR, "restart failed: %s", why);
        pool_release(c, s);
    }
    pool_report_output(c, 0);
    return rc;
}
