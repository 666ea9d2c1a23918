/* SPDX-License-Identifier: MIT */
/* The UM-Bridge backend (umbridge.h): which paths it claims, opening a
 * model (its routes' URLs, the config object, one connection, the
 * schema), running a call (in this process: the backend's invoke; in a
 * worker serving the component: the descriptor's endpoints), closing.
 *
 * Claim rule (no network in claims): an http:// or https:// URL with a
 * fragment ("http://host:4242#model"; an empty fragment "http://host:4242#"
 * means the server's only model), or any such URL when the option
 * umbridge_model names the model. A bare URL stays with the remote
 * backend (a served Tesseract).
 * Options: "timeout_ms" for each request of a call (0: none);
 * "start_timeout_ms" for connecting and for the open's requests;
 * "max_payload_bytes" for an answer's size; the configuration
 * (tsr_options_set_config) as the config object of every request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/http/http_url.h"
#include "umbridge.h"

#define USER_AGENT "User-Agent: tessera/" TSR_VERSION_STRING

static int is_url(const char *path) {
    return strncasecmp(path, "http://", 7) == 0 || strncasecmp(path, "https://", 8) == 0;
}

static int umb_claims(const char *path, const struct tsr_options *opts) {
    return is_url(path) && (strchr(path, '#') || (opts && opts->umbridge_model));
}

static const char *const route_paths[UMB_ROUTES] = {
    "/Info", "/ModelInfo", "/InputSizes", "/OutputSizes",
    "/Evaluate", "/Gradient", "/ApplyJacobian", "/ApplyHessian",
};

/* The model's name: the fragment, the option, or NULL (the only one). */
static int model_name(umb_model *m, const char *path, const struct tsr_options *o, char *why,
                      size_t n) {
    char *frag = NULL;
    int rc = http_url_fragment(path, &frag, why, n);
    if (rc) return rc;
    if (o->umbridge_model && frag[0] && strcmp(frag, o->umbridge_model) != 0) {
        snprintf(why, n, "the URL names the model '%s', the option umbridge_model '%s'", frag,
                 o->umbridge_model);
        free(frag);
        return TSR_E_ARGUMENT;
    }
    if (o->umbridge_model) {
        free(frag);
        frag = strdup(o->umbridge_model);
        if (!frag) goto nomem;
    } else if (!frag[0]) {
        free(frag);
        frag = NULL;
    }
    m->name = frag;
    return 0;
nomem:
    snprintf(why, n, "out of memory");
    return TSR_E_NOMEM;
}

/* The configuration as UM-Bridge's config object: a value that reads as
 * JSON is that JSON ("3", "[1, 2]", "true"), any other a string. */
static int config_object(umb_model *m, const struct tsr_options *o, char *why, size_t n) {
    m->config = json_object();
    for (int32_t i = 0; m->config && i < o->n_config; i++) {
        json_t *v = json_loads(o->config[i].value, JSON_DECODE_ANY, NULL);
        if (!v) v = json_string(o->config[i].value);
        if (!v || json_object_set_new(m->config, o->config[i].key, v) != 0) {
            json_decref(m->config);
            m->config = NULL;
        }
    }
    if (m->config) return 0;
    snprintf(why, n, "out of memory for the config (or a key that is not UTF-8)");
    return TSR_E_NOMEM;
}

static int start(umb_model *m, const char *path, const struct tsr_options *o, char *why,
                 size_t n) {
    char *plain = NULL;
    int rc = http_url_join(path, "", &plain, &m->base_shown, why, n);
    free(plain);
    for (int r = 0; !rc && r < UMB_ROUTES; r++)
        rc = http_url_join(path, route_paths[r], &m->url[r], &m->shown[r], why, n);
    if (!rc) rc = model_name(m, path, o, why, n);
    if (!rc) rc = config_object(m, o, why, n);
    if (!rc) {
        const char *lines[] = {"Content-Type: application/json", "Accept: application/json",
                               "Expect:", USER_AGENT, NULL};
        m->headers = http_header_list(lines);
        if (!m->headers) {
            snprintf(why, n, "out of memory");
            rc = TSR_E_NOMEM;
        }
    }
    if (!rc && pthread_mutex_init(&m->lock, NULL) != 0) {
        snprintf(why, n, "cannot make a lock");
        rc = TSR_E_NOMEM;
    }
    if (!rc) m->lock_made = 1;
    if (!rc) rc = http_lane_init(&m->lane, why, n);
    if (!rc) m->lane_up = 1;
    return rc;
}

static int umb_endpoint(tsr_ctx *ctx, const tsr_args *args);

static int umb_open(tsr_component *c, tsr_error *err) {
    const char *path = tsr_component_path(c);
    const struct tsr_options *o = backend_options(c);
    char why[TSR_ERRMSG_MAX - 128];
    umb_model *m = calloc(1, sizeof *m);
    int rc = m ? http_global_up(why, sizeof why) : TSR_E_NOMEM;
    if (!m) snprintf(why, sizeof why, "out of memory");
    else backend_set_state(c, m);
    if (!rc) {
        m->curl_up = 1;
        m->timeout_ms = o->timeout_ms;
        m->connect_ms = o->start_timeout_ms;
        m->max_body = o->max_payload_bytes;
        rc = start(m, path, o, why, sizeof why);
    }
    if (!rc) rc = umb_discover(m, umb_endpoint, why, sizeof why);
    if (rc) {
        const char *shown = m && m->base_shown ? m->base_shown
                            : strchr(path, '@')  ? "(a URL with credentials)"
                                                 : path;
        error_set(err, rc, "cannot load the UM-Bridge model at '%s': %s", shown, why);
        return rc; /* close releases what was made */
    }
    backend_set_endpoint_state(c, m);
    return backend_set_descriptor(c, &m->desc, err);
}

static int check_call(void *call) { return call_cancel_check(call); }

static int umb_invoke(tsr_call *call) {
    tsr_component *c = call_component(call);
    umb_model *m = backend_state(c);
    http_cancel cx = {.flag = call_cancel_flag(call), .fd = call_cancel_fd(call),
                      .check_ms = call_cancel_check_ms(call), .check = check_call, .user = call};
    char why[TSR_ERRMSG_MAX - 128];
    int rc = umb_run(m, call_args(call), &cx, why, sizeof why);
    backend_count(c, BACKEND_STAT_CALLS, 1);
    return rc ? call_fail(call, rc, "%s", why) : 0;
}

/* How often a call served to another process looks at tsr_ctx_cancelled. */
#define SERVED_CHECK_MS 20

static int check_ctx(void *ctx) { return tsr_ctx_cancelled(ctx); }

/* A worker serves the component through the descriptor's functions; the
 * failure's message crosses to the host. */
static int umb_endpoint(tsr_ctx *ctx, const tsr_args *args) {
    http_cancel cx = {.fd = -1, .check_ms = SERVED_CHECK_MS, .check = check_ctx, .user = ctx};
    char why[TSR_ERRMSG_MAX - 128];
    if (!umb_run(ctx->state, args, &cx, why, sizeof why)) return 0;
    tsr_ctx_error(ctx, why);
    return -1;
}

/* A worker opens the URL with its own options: the model must be named
 * where it crosses, in the URL. */
static int umb_prepare(tsr_component *c, tsr_error *err) {
    const struct tsr_options *o = backend_options(c);
    if (!o->umbridge_model) return 0;
    error_set(err, TSR_E_ARGUMENT,
              "cannot load the UM-Bridge model '%s' in a worker: the option umbridge_model does "
              "not reach worker processes; name the model in the URL's fragment "
              "(http://host:port#%s)",
              o->umbridge_model, o->umbridge_model);
    return TSR_E_ARGUMENT;
}

static void umb_close(tsr_component *c) {
    umb_model *m = backend_state(c);
    if (!m) return;
    if (m->lane_up) http_lane_free(&m->lane);
    if (m->lock_made) pthread_mutex_destroy(&m->lock);
    http_header_list_free(m->headers);
    for (int r = 0; r < UMB_ROUTES; r++) {
        free(m->url[r]);
        free(m->shown[r]);
    }
    free(m->base_shown);
    free(m->name);
    json_decref(m->config);
    free(m->sizes);
    free(m->fields);
    free(m->dims);
    free(m->names);
    if (m->curl_up) http_global_down(); /* last: the handles above are gone */
    free(m);
}

const backend_ops umbridge_backend_ops = {
    .name = "umbridge",
    .claims = umb_claims,
    .open = umb_open,
    .invoke = umb_invoke,
    .close = umb_close,
    .prepare = umb_prepare,
};
