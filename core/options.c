/* SPDX-License-Identifier: MIT */
/* Options for tsr_open: mode, logging, the plugin's configuration and how
 * workers are started. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tessera/option_table.h"
#include "tessera/payload.h"

void options_defaults(struct tsr_options *o) {
    memset(o, 0, sizeof *o);
    o->mode = TSR_MODE_INPROC;
    o->log_level = TSR_LOG_WARN;
    o->workers = 1;
    o->start_timeout_ms = 30000;
    o->cancel_grace_ms = TSR_CANCEL_GRACE_MS;
    o->spin_ns = -1;
    o->max_array_bytes = DEFAULT_MAX_ARRAY_BYTES;
    o->max_call_bytes = DEFAULT_MAX_CALL_BYTES;
    o->max_arena_bytes = DEFAULT_MAX_ARENA_BYTES;
    o->max_payload_bytes = DEFAULT_MAX_PAYLOAD_BYTES;
    o->max_payload_values = DEFAULT_MAX_PAYLOAD_VALUES;
    log_env_default(o);   /* TESSERA_LOG, below an explicit log_level */
}

TSR_API tsr_options *tsr_options_new(void) {
    tsr_options *o = malloc(sizeof *o);
    if (o) options_defaults(o);
    return o;
}

static void entries_clear(config_entry **list, int32_t *n) {
    for (int32_t i = 0; i < *n; i++) {
        free((*list)[i].key);
        free((*list)[i].value);
    }
    free(*list);
    *list = NULL;
    *n = 0;
}

void options_clear(struct tsr_options *o) {
    entries_clear(&o->config, &o->n_config);
    entries_clear(&o->env, &o->n_env);
    free(o->worker_exe);
    free(o->cwd);
    free(o->spool_dir);
    free(o->python);
    free(o->umbridge_model);
    o->worker_exe = o->cwd = o->spool_dir = o->python = o->umbridge_model = NULL;
}

TSR_API void tsr_options_free(tsr_options *opts) {
    if (!opts) return;
    options_clear(opts);
    free(opts);
}

/* Key-value list with replace-on-repeat. */
static int entry_put(config_entry **list, int32_t *n, const char *key, const char *value) {
    for (int32_t i = 0; i < *n; i++)
        if (strcmp((*list)[i].key, key) == 0) {
            char *v = strdup(value);
            if (!v) return TSR_E_NOMEM;
            free((*list)[i].value);
            (*list)[i].value = v;
            return 0;
        }
    config_entry *grown = realloc(*list, (size_t)(*n + 1) * sizeof *grown);
    if (!grown) return TSR_E_NOMEM;
    *list = grown;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return TSR_E_NOMEM;
    }
    (*list)[(*n)++] = (config_entry){k, v};
    return 0;
}

static int parse_int(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* A count with an optional K, M, G or T suffix (powers of 1024). */
static int parse_size(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9') return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    static const char units[] = "KMGT";
    const char *u = *end ? strchr(units, *end == 'k' ? 'K' : *end) : NULL;
    if (*end && (!u || end[1])) return -1;
    int shift = u ? 10 * (int)(u - units + 1) : 0;
    if (shift && v > (UINT64_MAX >> shift)) return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static int set_string(char **slot, const char *value) {
    char *v = strdup(value);
    if (!v) return TSR_E_NOMEM;
    free(*slot);
    *slot = v;
    return 0;
}

static int bad_value(tsr_error *err, const char *key, const char *value, const char *expected) {
    error_set(err, TSR_E_ARGUMENT, "option '%s': invalid value '%s' (expected %s)", key, value,
              expected);
    return TSR_E_ARGUMENT;
}

static const char *const mode_names[] = {"inproc", "isolated", "worker"};
static const char *const transport_names[] = {"auto", "shm", "files"};

/* Integer options: key, bounds, and where the value goes. */
static int set_int_option(struct tsr_options *o, const char *key, const char *value,
                          tsr_error *err, int *handled) {
    static const struct {
        const char *key;
        long long lo, hi;
        size_t offset;
        int is64;
    } ints[] = {
        {"workers", 1, 256, offsetof(struct tsr_options, workers), 0},
        {"timeout_ms", 0, 86400000, offsetof(struct tsr_options, timeout_ms), 0},
        {"start_timeout_ms", 1, 86400000, offsetof(struct tsr_options, start_timeout_ms), 0},
        {"cancel_grace_ms", 1, 86400000, offsetof(struct tsr_options, cancel_grace_ms), 0},
        {"spin_ns", 0, 1000000000, offsetof(struct tsr_options, spin_ns), 1},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if (strcmp(key, ints[i].key) != 0) continue;
        *handled = 1;
        long long v;
        if (parse_int(value, ints[i].lo, ints[i].hi, &v) != 0) {
            char expected[96];
            snprintf(expected, sizeof expected, "an integer from %lld to %lld", ints[i].lo,
                     ints[i].hi);
            return bad_value(err, key, value, expected);
        }
        char *slot = (char *)o + ints[i].offset;
        if (ints[i].is64) *(int64_t *)slot = v;
        else *(int32_t *)slot = (int32_t)v;
        return 0;
    }
    *handled = 0;
    return 0;
}

/* Limits and resource limits: unsigned sizes, 0 for none. */
static int set_size_option(struct tsr_options *o, const char *key, const char *value,
                           tsr_error *err, int *handled) {
    static const struct {
        const char *key;
        size_t offset;
    } sizes[] = {
        {"max_array_bytes", offsetof(struct tsr_options, max_array_bytes)},
        {"max_call_bytes", offsetof(struct tsr_options, max_call_bytes)},
        {"max_arena_bytes", offsetof(struct tsr_options, max_arena_bytes)},
        {"max_payload_bytes", offsetof(struct tsr_options, max_payload_bytes)},
        {"max_payload_values", offsetof(struct tsr_options, max_payload_values)},
        {"rlimit_as", offsetof(struct tsr_options, rlimit_as)},
        {"rlimit_cpu", offsetof(struct tsr_options, rlimit_cpu)},
        {"rlimit_nofile", offsetof(struct tsr_options, rlimit_nofile)},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (strcmp(key, sizes[i].key) != 0) continue;
        *handled = 1;
        uint64_t v;
        if (parse_size(value, &v) != 0)
            return bad_value(err, key, value,
                             "a non-negative integer, optionally with a K, M, G or T suffix; "
                             "0 for no limit");
        *(uint64_t *)((char *)o + sizes[i].offset) = v;
        return 0;
    }
    *handled = 0;
    return 0;
}

/* Only the keys of the one table (option_table.c) are options. */
static int option_known(const char *key) {
    for (size_t i = 0; tsr_option_info_at(i); i++)
        if (strcmp(tsr_option_info_at(i)->key, key) == 0) return 1;
    return 0;
}

/* The message lists the known keys, from the table. */
static int unknown_key(tsr_error *err, const char *key) {
    char known[TSR_ERRMSG_MAX];
    size_t len = 0;
    known[0] = '\0';
    for (size_t i = 0; tsr_option_info_at(i) && len < sizeof known; i++) {
        int n = snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                         tsr_option_info_at(i)->key);
        if (n < 0) break;
        len += (size_t)n;
    }
    error_set(err, TSR_E_ARGUMENT, "unknown option '%s' (known: %s)", key, known);
    return TSR_E_ARGUMENT;
}

TSR_API int tsr_options_set(tsr_options *opts, const char *key, const char *value,
                            tsr_error *err) {
    if (!opts || !key || !value) {
        error_set(err, TSR_E_ARGUMENT, "tsr_options_set: options, key and value must not be NULL");
        return TSR_E_ARGUMENT;
    }
    if (!option_known(key)) return unknown_key(err, key);
    if (strcmp(key, "mode") == 0) {
        for (int m = 0; m < 3; m++)
            if (strcmp(value, mode_names[m]) == 0) {
                opts->mode = (tsr_mode)m;
                opts->mode_set = 1;
                return 0;
            }
        return bad_value(err, key, value, "inproc, isolated or worker");
    }
    if (strcmp(key, "log_level") == 0) {
        if (log_level_parse(value, &opts->log_level, &opts->log_off) == 0) return 0;
        return bad_value(err, key, value, "debug, info, warn, error or off");
    }
    int handled;
    int rc = set_int_option(opts, key, value, err, &handled);
    if (handled) return rc;
    rc = set_size_option(opts, key, value, err, &handled);
    if (handled) return rc;
    if (strcmp(key, "spawn") == 0) {
        if (strcmp(value, "exec") && strcmp(value, "fork")) return bad_value(err, key, value, "exec or fork");
        opts->use_fork = strcmp(value, "fork") == 0;
        return 0;
    }
    if (strcmp(key, "restart") == 0) {
        if (strcmp(value, "auto") && strcmp(value, "never")) return bad_value(err, key, value, "auto or never");
        opts->auto_restart = strcmp(value, "auto") == 0;
        return 0;
    }
    if (strcmp(key, "clear_env") == 0) {
        if (strcmp(value, "0") && strcmp(value, "1")) return bad_value(err, key, value, "0 or 1");
        opts->clear_env = value[0] == '1';
        return 0;
    }
    char **path_slot = strcmp(key, "worker_exe") == 0 ? &opts->worker_exe
                       : strcmp(key, "cwd") == 0        ? &opts->cwd
                       : strcmp(key, "spool_dir") == 0  ? &opts->spool_dir
                       : strcmp(key, "python") == 0     ? &opts->python
                                                        : NULL;
    if (path_slot) {
        if (!*value) return bad_value(err, key, value, "a path");
        rc = set_string(path_slot, value);
        if (rc) error_set(err, rc, "option '%s': out of memory", key);
        return rc;
    }
    if (strcmp(key, "umbridge_model") == 0) {
        if (!*value) return bad_value(err, key, value, "a model's name");
        rc = set_string(&opts->umbridge_model, value);
        if (rc) error_set(err, rc, "option '%s': out of memory", key);
        return rc;
    }
    if (strcmp(key, "python_env") == 0) {
        if (strcmp(value, "auto") && strcmp(value, "none"))
            return bad_value(err, key, value, "auto or none");
        opts->python_env_off = strcmp(value, "none") == 0;
        return 0;
    }
    if (strcmp(key, "transport") == 0) {
        for (int t = 0; t < 3; t++)
            if (strcmp(value, transport_names[t]) == 0) {
                opts->transport = t;
                return 0;
            }
        return bad_value(err, key, value, "auto, shm or files");
    }
    if (strcmp(key, "casting") == 0) {
        if (strcmp(value, "exact") && strcmp(value, "same_kind"))
            return bad_value(err, key, value, "exact or same_kind");
        opts->casting = strcmp(value, "same_kind") == 0 ? CASTING_SAME_KIND : CASTING_EXACT;
        return 0;
    }
    if (strcmp(key, "unwritten") == 0) {
        static const char *const names[] = {"zero", "check", "keep"};
        for (int m = 0; m < 3; m++)
            if (strcmp(value, names[m]) == 0) {
                opts->unwritten = m;
                return 0;
            }
        return bad_value(err, key, value, "zero, check or keep");
    }
    if (strcmp(key, "call_timing") == 0) {
        if (strcmp(value, "on") && strcmp(value, "off")) return bad_value(err, key, value, "on or off");
        opts->timing_off = strcmp(value, "off") == 0;
        return 0;
    }
    if (strcmp(key, "hvp_fallback") == 0) {
        if (strcmp(value, "auto") && strcmp(value, "off"))
            return bad_value(err, key, value, "auto or off");
        opts->hvp_fallback_off = strcmp(value, "off") == 0;
        return 0;
    }
    if (strcmp(key, "fd_method") == 0) {
        if (strcmp(value, "declared") == 0) opts->fd_method = 0;
        else if (strcmp(value, "central") == 0) opts->fd_method = TSR_FD_CENTRAL;
        else if (strcmp(value, "forward") == 0) opts->fd_method = TSR_FD_FORWARD;
        else return bad_value(err, key, value, "declared, central or forward");
        return 0;
    }
    if (strcmp(key, "fd_step") == 0) {
        char *end;
        errno = 0;
        double h = strtod(value, &end);
        if (errno || end == value || *end || !(h >= 0 && h < 1))
            return bad_value(err, key, value, "a number in [0, 1)");
        opts->fd_step = h;
        return 0;
    }
    if (strcmp(key, "fd_step_rule") == 0) {
        if (strcmp(value, "relative") && strcmp(value, "absolute"))
            return bad_value(err, key, value, "relative or absolute");
        opts->fd_absolute = strcmp(value, "absolute") == 0;
        return 0;
    }
    if (strcmp(key, "fd_endpoints") == 0) {
        if (strcmp(value, "missing") && strcmp(value, "all"))
            return bad_value(err, key, value, "missing or all");
        opts->fd_all = strcmp(value, "all") == 0;
        return 0;
    }
    if (strcmp(key, "file_io") == 0) {
        int io = tsr_file_io_from_name(value);
        if (io < 0) return bad_value(err, key, value, "auto, io_uring or posix");
        opts->file_io = io;
        return 0;
    }
    /* A key of the table that no branch above takes: the table and the
     * parser disagree (tests/test_option_table.c keeps them together). */
    error_set(err, TSR_E_ARGUMENT, "option '%s': known but not handled", key);
    return TSR_E_ARGUMENT;
}

TSR_API int tsr_options_set_config(tsr_options *opts, const char *key, const char *value) {
    if (!opts || !key || !value) return TSR_E_ARGUMENT;
    return entry_put(&opts->config, &opts->n_config, key, value);
}

TSR_API int tsr_options_set_env(tsr_options *opts, const char *name, const char *value) {
    if (!opts || !name || !value || !*name || strchr(name, '=')) return TSR_E_ARGUMENT;
    return entry_put(&opts->env, &opts->n_env, name, value);
}

TSR_API void tsr_options_set_log(tsr_options *opts, tsr_log_fn fn, void *user) {
    if (!opts) return;
    opts->log_fn = fn;
    opts->log_user = user;
}

TSR_API void tsr_options_set_output(tsr_options *opts, tsr_output_fn fn, void *user) {
    if (!opts) return;
    opts->output_fn = fn;
    opts->output_user = user;
}

/* A component keeps its own copy so that the caller may free its options
 * right after tsr_open. */
int options_copy(struct tsr_options *dst, const struct tsr_options *src) {
    options_defaults(dst);
    if (!src) return 0;
    *dst = *src;
    dst->config = dst->env = NULL;
    dst->n_config = dst->n_env = 0;
    dst->worker_exe = dst->cwd = dst->spool_dir = dst->python = dst->umbridge_model = NULL;
    int rc = 0;
    for (int32_t i = 0; !rc && i < src->n_config; i++)
        rc = entry_put(&dst->config, &dst->n_config, src->config[i].key, src->config[i].value);
    for (int32_t i = 0; !rc && i < src->n_env; i++)
        rc = entry_put(&dst->env, &dst->n_env, src->env[i].key, src->env[i].value);
    if (!rc && src->worker_exe) rc = set_string(&dst->worker_exe, src->worker_exe);
    if (!rc && src->cwd) rc = set_string(&dst->cwd, src->cwd);
    if (!rc && src->spool_dir) rc = set_string(&dst->spool_dir, src->spool_dir);
    if (!rc && src->python) rc = set_string(&dst->python, src->python);
    if (!rc && src->umbridge_model) rc = set_string(&dst->umbridge_model, src->umbridge_model);
    if (rc) options_clear(dst);
    return rc;
}
