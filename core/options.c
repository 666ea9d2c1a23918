/* Options for tsr_open: mode, logging and the plugin's configuration. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void options_defaults(struct tsr_options *o) {
    memset(o, 0, sizeof *o);
    o->mode = TSR_MODE_INPROC;
    o->log_level = TSR_LOG_WARN;
}

TSR_API tsr_options *tsr_options_new(void) {
    tsr_options *o = malloc(sizeof *o);
    if (o) options_defaults(o);
    return o;
}

void options_clear(struct tsr_options *o) {
    for (int32_t i = 0; i < o->n_config; i++) {
        free(o->config[i].key);
        free(o->config[i].value);
    }
    free(o->config);
    o->config = NULL;
    o->n_config = 0;
}

TSR_API void tsr_options_free(tsr_options *opts) {
    if (!opts) return;
    options_clear(opts);
    free(opts);
}

static const char *const mode_names[] = {"inproc", "isolated", "worker"};
static const char *const level_names[] = {"debug", "info", "warn", "error"};

TSR_API int tsr_options_set(tsr_options *opts, const char *key, const char *value,
                            tsr_error *err) {
    if (!opts || !key || !value) {
        error_set(err, TSR_E_ARGUMENT, "tsr_options_set: options, key and value must not be NULL");
        return TSR_E_ARGUMENT;
    }
    if (strcmp(key, "mode") == 0) {
        for (int m = 0; m < 3; m++)
            if (strcmp(value, mode_names[m]) == 0) {
                opts->mode = (tsr_mode)m;
                return 0;
            }
        error_set(err, TSR_E_ARGUMENT,
                  "option 'mode': unknown value '%s' (expected inproc, isolated or worker)", value);
        return TSR_E_ARGUMENT;
    }
    if (strcmp(key, "log_level") == 0) {
        if (strcmp(value, "off") == 0) {
            opts->log_off = 1;
            return 0;
        }
        for (int l = 0; l < 4; l++)
            if (strcmp(value, level_names[l]) == 0) {
                opts->log_level = (tsr_log_level)l;
                opts->log_off = 0;
                return 0;
            }
        error_set(err, TSR_E_ARGUMENT,
                  "option 'log_level': unknown value '%s' (expected debug, info, warn, error or off)",
                  value);
        return TSR_E_ARGUMENT;
    }
    error_set(err, TSR_E_ARGUMENT, "unknown option '%s' (known: mode, log_level)", key);
    return TSR_E_ARGUMENT;
}

static int config_put(struct tsr_options *o, const char *key, const char *value) {
    for (int32_t i = 0; i < o->n_config; i++)
        if (strcmp(o->config[i].key, key) == 0) {
            char *v = strdup(value);
            if (!v) return TSR_E_NOMEM;
            free(o->config[i].value);
            o->config[i].value = v;
            return 0;
        }
    config_entry *grown = realloc(o->config, (size_t)(o->n_config + 1) * sizeof *grown);
    if (!grown) return TSR_E_NOMEM;
    o->config = grown;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return TSR_E_NOMEM;
    }
    o->config[o->n_config++] = (config_entry){k, v};
    return 0;
}

TSR_API int tsr_options_set_config(tsr_options *opts, const char *key, const char *value) {
    if (!opts || !key || !value) return TSR_E_ARGUMENT;
    return config_put(opts, key, value);
}

TSR_API void tsr_options_set_log(tsr_options *opts, tsr_log_fn fn, void *user) {
    if (!opts) return;
    opts->log_fn = fn;
    opts->log_user = user;
}

/* A component keeps its own copy so that the caller may free its options
 * right after tsr_open. */
int options_copy(struct tsr_options *dst, const struct tsr_options *src) {
    options_defaults(dst);
    if (!src) return 0;
    dst->mode = src->mode;
    dst->log_level = src->log_level;
    dst->log_off = src->log_off;
    dst->log_fn = src->log_fn;
    dst->log_user = src->log_user;
    for (int32_t i = 0; i < src->n_config; i++)
        if (config_put(dst, src->config[i].key, src->config[i].value) != 0) {
            options_clear(dst);
            return TSR_E_NOMEM;
        }
    return 0;
}
