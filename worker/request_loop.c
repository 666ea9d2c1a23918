/* SPDX-License-Identifier: MIT */
/* The worker's serving loop, for tessera-worker and for fork mode: load
 * the plugin in this process with the library's own loader, send its
 * schema, then answer requests until told to exit or until the host is
 * gone (its pidfd becomes readable), so that no worker outlives its host. */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/options.h"
#include "core/schema_json.h"
#include "worker_args.h"
#include "worker.h"

/* Exit statuses of the worker process. */
enum { EXIT_SERVED = 0, EXIT_NOT_LOADED = 1, EXIT_NO_CHANNEL = 3 };

/* Diagnostics travel on stderr with a marker (WORKER_LOG_MARKER) that the
 * host recognises: it routes them to its log function and applies its own
 * log_level, instead of forwarding them as plugin output. */
void worker_log(tsr_log_level level, const char *message) {
    int l = level >= TSR_LOG_DEBUG && level <= TSR_LOG_ERROR ? (int)level : TSR_LOG_ERROR;
    fprintf(stderr, WORKER_LOG_MARKER "%d %s\n", l, message);
}

static void log_from_core(void *user, tsr_log_level level, const char *component,
                          const char *message) {
    (void)user;
    (void)component;
    worker_log(level, message);
}

__attribute__((format(printf, 3, 4))) static void ready_fail(worker_state *ws, int code,
                                                             const char *fmt, ...) {
    chan_block *b = ws->end.blk;
    char msg[TSR_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(b->message, msg, sizeof msg);
    b->status = code;
    chan_post(&ws->end, CHAN_READY);
}

/* The host's configuration, {"KEY": "VALUE", ...}, as options for tsr_open. */
static int read_config(worker_state *ws, tsr_options *opts, char *why, size_t n) {
    const char *text = chan_data(ws->end.blk);
    size_t len = strnlen(text, chan_data_capacity(ws->end.blk));
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (!json_is_object(root)) {
        snprintf(why, n, "the configuration from the host is not a JSON object: %s",
                 root ? "another JSON value" : jerr.text);
        json_decref(root);
        return TSR_E_ARGUMENT;
    }
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        if (!json_is_string(value)) {
            snprintf(why, n, "configuration key '%s': the value is not a string", key);
            json_decref(root);
            return TSR_E_ARGUMENT;
        }
        if (tsr_options_set_config(opts, key, json_string_value(value)) != 0) {
            snprintf(why, n, "out of memory");
            json_decref(root);
            return TSR_E_NOMEM;
        }
    }
    json_decref(root);
    return 0;
}

static int load_plugin(worker_state *ws, const worker_args *a) {
    char why[TSR_ERRMSG_MAX];
    /* The host read TESSERA_LOG and said what it thinks of it. */
    log_env_quiet();
    tsr_options *opts = tsr_options_new();
    if (!opts) {
        ready_fail(ws, TSR_E_NOMEM, "the worker is out of memory");
        return TSR_E_NOMEM;
    }
    tsr_options_set_log(opts, log_from_core, NULL);
    /* Every message goes to the host, which applies its own log_level. */
    tsr_options_set(opts, "log_level", "debug", NULL);
    /* Explicitly: a component that would be sent to a worker by default
     * (a manifest's may_exit) runs here. */
    tsr_options_set(opts, "mode", "inproc", NULL);
    int rc = read_config(ws, opts, why, sizeof why);
    if (rc) {
        tsr_options_free(opts);
        ready_fail(ws, rc, "%s", why);
        return rc;
    }
    tsr_error err = TSR_ERROR_INIT;
    rc = tsr_open(a->plugin_path, opts, &ws->comp, &err);
    tsr_options_free(opts);
    if (rc) {
        ready_fail(ws, rc, "%s", err.message);
        return rc;
    }
    if (!(ws->srv = served_new(ws->comp))) {
        ready_fail(ws, TSR_E_NOMEM, "the worker is out of memory");
        return TSR_E_NOMEM;
    }
    return 0;
}

static int send_schema(worker_state *ws) {
    served_traits t;
    served_traits_of(ws->srv, &t);
    schema_worker_extra extra = {.implemented = t.implemented,
                                 .thread_safe = t.thread_safe != 0,
                                 .fd_method = t.fd_method,
                                 .fd_samples = t.fd_samples,
                                 .fd_step = t.fd_step};
    char *text = schema_json_for_worker(ws->comp, &extra);
    if (!text) {
        ready_fail(ws, TSR_E_NOMEM, "the worker is out of memory (writing the schema)");
        return TSR_E_NOMEM;
    }
    char why[300];
    size_t len = strlen(text);
    int rc = chan_reserve(&ws->end, len + 1, why, sizeof why);
    if (rc) {
        free(text);
        ready_fail(ws, rc, "cannot send the schema: %s", why);
        return rc;
    }
    memcpy(chan_data(ws->end.blk), text, len + 1);
    free(text);
    ws->end.blk->status = 0;
    ws->end.blk->message[0] = '\0';
    chan_post(&ws->end, CHAN_READY);
    return 0;
}

/* A pidfd of the host, or -1 when the host is already gone: the parent
 * check after pidfd_open proves the pid was not reused meanwhile. */
static int watch_host(pid_t host, char *why, size_t n) {
    int fd = (int)syscall(SYS_pidfd_open, host, 0);
    if (fd < 0) {
        if (errno != ESRCH) snprintf(why, n, "pidfd_open of the host: %s", strerror(errno));
        return -1;
    }
    if (getppid() != host) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The serving loop notices a dead host only between requests; a plugin
 * that runs (or hangs) when its host dies is stopped by this thread,
 * after giving a loop that is about to finish a moment to run fini. */
static void *watch_host_during_calls(void *arg) {
    worker_state *ws = arg;
    struct pollfd host = {.fd = ws->host_pidfd, .events = POLLIN};
    while (poll(&host, 1, -1) < 0 && errno == EINTR) {
    }
    for (int waited_ms = 0; waited_ms < 200; waited_ms += 10) {
        if (atomic_load(&ws->finished)) return NULL;
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
    }
    worker_end_kin();
    _exit(0);
}

static void request_loop(worker_state *ws) {
    struct pollfd host = {.fd = ws->host_pidfd, .events = POLLIN};
    while (!ws->host_gone) {
        int s = chan_wait(&ws->end, CHAN_BIT(CHAN_REQUEST) | CHAN_BIT(CHAN_EXIT), &host, 1, -1,
                          NULL);
        if (s != CHAN_REQUEST) return; /* CHAN_EXIT, the host gone, or a broken doorbell */
        worker_run_request(ws);
        if (ws->host_gone) return;
        chan_post(&ws->end, CHAN_DONE);
    }
}

int worker_serve(const worker_args *a) {
    /* Lines printed by the plugin reach the host as they are printed. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    worker_state ws;
    memset(&ws, 0, sizeof ws);
    char why[TSR_ERRMSG_MAX - 64];
    if (chan_attach(&ws.end, a->chan_fd, a->my_bell, a->peer_bell, why, sizeof why) != 0) {
        fprintf(stderr, "tessera-worker: %s\n", why);
        return EXIT_NO_CHANNEL;
    }
    ws.end.spin_ns = a->spin_ns;
    ws.end.spin_adaptive = a->spin_adaptive;
    why[0] = '\0';
    ws.host_pidfd = watch_host(a->host_pid, why, sizeof why);
    int status = EXIT_SERVED, rc;
    if (ws.host_pidfd < 0) {
        if (why[0]) ready_fail(&ws, TSR_E_WORKER, "%s", why);
        status = why[0] ? EXIT_NOT_LOADED : EXIT_SERVED;
    } else if ((rc = worker_contain_kin(why, sizeof why)) != 0) {
        ready_fail(&ws, rc, "%s", why);
        status = EXIT_NOT_LOADED;
    } else if (worker_apply_rlimits(&a->limits, why, sizeof why) != 0) {
        ready_fail(&ws, TSR_E_WORKER, "%s", why);
        status = EXIT_NOT_LOADED;
    } else if (a->spool_dir &&
               (rc = files_open(&ws, a->spool_dir, a->spool_tag, a->file_io, why, sizeof why))) {
        ready_fail(&ws, rc, "%s", why);
        status = EXIT_NOT_LOADED;
    } else if (!a->spool_dir && arena_view_open(&ws.view, a->arena_fd, why, sizeof why) != 0) {
        ready_fail(&ws, TSR_E_SHM, "%s", why);
        status = EXIT_NOT_LOADED;
    } else if (load_plugin(&ws, a) != 0 || send_schema(&ws) != 0) {
        status = EXIT_NOT_LOADED;
    } else {
        pthread_t watchdog;
        /* Without the thread a host death mid-call is still noticed after
         * the call; only a hanging plugin would then outlive its host. */
        if (pthread_create(&watchdog, NULL, watch_host_during_calls, &ws) == 0)
            pthread_detach(watchdog);
        request_loop(&ws);
    }
    /* fini runs on a clean exit and when the host is gone alike. */
    served_free(ws.srv);
    tsr_close(ws.comp);
    worker_release_request(&ws);
    arena_view_close(ws.view);
    files_close(&ws);
    atomic_store(&ws.finished, 1);
    /* What the plugin started ends with it, fini having had its chance to
     * stop it. */
    worker_end_kin();
    chan_close(&ws.end);
    /* The watchdog may still poll the pidfd: it is closed by the exit. */
    return status;
}
