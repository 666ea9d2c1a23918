/* SPDX-License-Identifier: MIT */
/* Derivative lists that name paths inside differentiable JSON fields
 * (plugin.h, "Derivatives inside JSON values"): the syntax of a path, the
 * field it starts with, and the room a call needs when such paths make its
 * lists longer than the schema has fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int is_ident_start(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}
static int is_ident(char ch) { return is_ident_start(ch) || (ch >= '0' && ch <= '9'); }

int wrt_path_syntax(const char *rest, char *why, size_t n) {
    const char *p = rest;
    while (*p) {
        size_t at = (size_t)(p - rest);
        if (*p != '.') {
            snprintf(why, n, "'%c' at offset %zu of the path, where '.' was expected", *p, at);
            return -1;
        }
        p++;
        if (*p == '{') {
            const char *close = strchr(p + 1, '}');
            if (!close) {
                snprintf(why, n, "the '{' at offset %zu is not closed by '}'", at + 1);
                return -1;
            }
            p = close + 1;
        } else if (*p == '[') {
            const char *d = p + 1;
            while (*d >= '0' && *d <= '9') d++;
            if (d == p + 1 || *d != ']' || d - (p + 1) > 18) {
                snprintf(why, n, "the '[' at offset %zu does not hold a list index ([N], N "
                                 "digits)",
                         at + 1);
                return -1;
            }
            p = d + 1;
        } else if (is_ident_start(*p)) {
            while (is_ident(*p)) p++;
        } else {
            snprintf(why, n, "%s at offset %zu: a path part is .{key}, .[N] or .name",
                     *p ? "an unexpected character" : "nothing after the '.'", at + 1);
            return -1;
        }
    }
    return 0;
}

int wrt_path_check(const char *field, const char *path, char *why, size_t n) {
    size_t len = strlen(field);
    if (strncmp(path, field, len) != 0 || (path[len] != '\0' && path[len] != '.')) {
        snprintf(why, n, "'%s' is not a path inside field '%s'", path, field);
        return -1;
    }
    if (strlen(path) > SCHEMA_MAX_PATH) {
        snprintf(why, n, "a path of %zu bytes (at most %d)", strlen(path), SCHEMA_MAX_PATH);
        return -1;
    }
    return wrt_path_syntax(path + len, why, n);
}

int32_t wrt_path_field(const field_info *fs, int32_t n_fs, const char *path) {
    int32_t best = -1;
    size_t best_len = 0;
    for (int32_t i = 0; path && i < n_fs; i++) {
        const char *name = fs[i].field.name;
        size_t len = strlen(name);
        if (len > best_len && strncmp(path, name, len) == 0 && path[len] == '.') {
            best = i;
            best_len = len;
        }
    }
    return best;
}

/* realloc of n elements, the new ones zeroed. */
static int grow_zeroed(void *pp, size_t old_n, size_t n, size_t elem) {
    void **p = pp;
    void *q = realloc(*p, n * elem);
    if (!q) return -1;
    memset((char *)q + old_n * elem, 0, (n - old_n) * elem);
    *p = q;
    return 0;
}

int call_wrt_reserve(tsr_call *call, int32_t n_in, int32_t n_out, int32_t n_results) {
    if (n_in > call->cap_wrt_in) {
        if (grow_zeroed(&call->wrt_in, (size_t)call->cap_wrt_in, (size_t)n_in,
                        sizeof *call->wrt_in) ||
            grow_zeroed(&call->wrt_in_paths, (size_t)call->cap_wrt_in, (size_t)n_in,
                        sizeof *call->wrt_in_paths))
            return TSR_E_NOMEM;
        call->cap_wrt_in = n_in;
    }
    if (n_out > call->cap_wrt_out) {
        if (grow_zeroed(&call->wrt_out, (size_t)call->cap_wrt_out, (size_t)n_out,
                        sizeof *call->wrt_out) ||
            grow_zeroed(&call->wrt_out_paths, (size_t)call->cap_wrt_out, (size_t)n_out,
                        sizeof *call->wrt_out_paths))
            return TSR_E_NOMEM;
        call->cap_wrt_out = n_out;
    }
    /* Seeds and results share one capacity (one per wrt entry at most,
     * or one per jacobian block). */
    int32_t cap = n_results;
    if (n_in > cap) cap = n_in;
    if (n_out > cap) cap = n_out;
    if (cap <= call->cap_results) return 0;
    size_t old = (size_t)call->cap_results, want = (size_t)cap;
    if (grow_zeroed(&call->seeds, old, want, sizeof *call->seeds) ||
        grow_zeroed(&call->seed_set, old, want, 1) ||
        grow_zeroed(&call->results, old, want, sizeof *call->results) ||
        grow_zeroed(&call->expect, old, want, sizeof *call->expect) ||
        grow_zeroed(&call->bufs, old, want, sizeof *call->bufs) ||
        grow_zeroed(&call->targets, old, want, sizeof *call->targets) ||
        grow_zeroed(&call->result_bytes, old, want, sizeof *call->result_bytes) ||
        (call->cast_seed && grow_zeroed(&call->cast_seed, old, want, sizeof *call->cast_seed)))
        return TSR_E_NOMEM;
    call->cap_results = cap;
    return 0;
}

int call_wrt_keep_paths(tsr_call *call) {
    const tsr_component *c = call->comp;
    size_t total = 0;
    for (int32_t k = 0; k < call->n_wrt_in; k++)
        if (call->wrt_in_paths[k] != c->in[call->wrt_in[k]].field.name)
            total += strlen(call->wrt_in_paths[k]) + 1;
    for (int32_t k = 0; k < call->n_wrt_out; k++)
        if (call->wrt_out_paths[k] != c->out[call->wrt_out[k]].field.name)
            total += strlen(call->wrt_out_paths[k]) + 1;
    if (total == 0) return 0;
    char *store = malloc(total);
    if (!store) return TSR_E_NOMEM;
    char *at = store;
    for (int32_t k = 0; k < call->n_wrt_in; k++)
        if (call->wrt_in_paths[k] != c->in[call->wrt_in[k]].field.name) {
            size_t len = strlen(call->wrt_in_paths[k]) + 1;
            memcpy(at, call->wrt_in_paths[k], len);
            call->wrt_in_paths[k] = at;
            at += len;
        }
    for (int32_t k = 0; k < call->n_wrt_out; k++)
        if (call->wrt_out_paths[k] != c->out[call->wrt_out[k]].field.name) {
            size_t len = strlen(call->wrt_out_paths[k]) + 1;
            memcpy(at, call->wrt_out_paths[k], len);
            call->wrt_out_paths[k] = at;
            at += len;
        }
    free(call->path_store);
    call->path_store = store;
    return 0;
}

int call_has_free_entries(const tsr_call *call) {
    const tsr_component *c = call->comp;
    for (int32_t k = 0; k < call->n_wrt_in; k++)
        if (c->in[call->wrt_in[k]].field.kind == TSR_KIND_JSON) return 1;
    for (int32_t k = 0; k < call->n_wrt_out; k++)
        if (c->out[call->wrt_out[k]].field.kind == TSR_KIND_JSON) return 1;
    return 0;
}
