/* SPDX-License-Identifier: MIT */
/* Workspaces and their lengths. LAPACK passes scratch memory as WORK and
 * its length as LWORK; a length larger than the memory makes the routine
 * write past it (in-process: the host's heap). So a length is tied to its
 * workspace by name ({"length": "work"}) and computed from it, never
 * written twice; and a workspace may be "query": the routine is first
 * called with every queried length set to -1 and reports the size it
 * wants in the workspace's first element (LAPACK's workspace query). The
 * answer depends only on the shapes, so it is asked once per shape and
 * kept (MF_QUERY_CACHE shapes per routine). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_internal.h"

static int32_t find_workspace(const mf_endpoint *e, const char *name) {
    for (int32_t k = 0; k < e->n_args; k++)
        if (e->args[k].kind == MF_WORKSPACE && e->args[k].name &&
            strcmp(e->args[k].name, name) == 0)
            return k;
    return -1;
}

static void workspace_names(const mf_endpoint *e, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t k = 0; k < e->n_args; k++) {
        if (e->args[k].kind != MF_WORKSPACE || !e->args[k].name) continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", e->args[k].name);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
    }
    if (!used) snprintf(buf, n, "none has a \"name\"");
}

/* Two compiled expressions that are the same text in postfix. */
static int same_expr(const mf_expr *a, const mf_expr *b) {
    if (a->n_ops != b->n_ops) return 0;
    for (int32_t i = 0; i < a->n_ops; i++)
        if (a->ops[i].code != b->ops[i].code || a->ops[i].value != b->ops[i].value) return 0;
    return 1;
}

/* The value of an expression without symbols, or -1 when it has some. */
static int constant_value(const mf_expr *x, int64_t *v) {
    for (int32_t i = 0; i < x->n_ops; i++)
        if (x->ops[i].code == MF_OP_SYM || x->ops[i].code == MF_OP_VAL) return -1;
    return mf_expr_eval(x, NULL, NULL, v);
}

/* An int or const right after a workspace that has no declared length is
 * where LAPACK puts LWORK: when both are constants they must agree now;
 * otherwise, unless the two expressions are the same, each call checks
 * that the integer does not exceed the workspace (manifest_call.c). */
static int check_implicit_length(mf_parse *p, mf_endpoint *e, int32_t k, const char *at) {
    mf_arg *w = &e->args[k - 1], *a = &e->args[k];
    if (w->kind != MF_WORKSPACE || w->partner >= 0) return 0;
    if (a->kind != MF_INT && !(a->kind == MF_CONST && (a->dtype == TSR_INT32 ||
                                                       a->dtype == TSR_INT64)))
        return 0;
    if (a->kind == MF_INT && same_expr(a->expr, w->expr)) return 0;
    int64_t ws, len;
    int known = constant_value(w->expr, &ws) == 0;
    if (a->kind == MF_CONST) len = a->dtype == TSR_INT64 ? a->value.i64 : a->value.i32;
    else known = known && constant_value(a->expr, &len) == 0;
    if (known && len > ws)
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "%lld follows a workspace of %lld elements, where a routine takes the "
                       "workspace's length (LAPACK's WORK, LWORK), and is larger: the routine "
                       "would write past the workspace. Name the workspace and pass "
                       "{\"length\": NAME}",
                       (long long)len, (long long)ws);
    if (!known) a->partner = k - 1;
    return 0;
}

int mf_workspaces_link(mf_parse *p, mf_endpoint *e, const char *entry) {
    char at[192], names[256];
    for (int32_t k = 0; k < e->n_args; k++) {
        mf_arg *a = &e->args[k];
        snprintf(at, sizeof at, "%s.args[%d]", entry, (int)k);
        if (a->kind == MF_WORKSPACE && a->name) {
            int32_t first = find_workspace(e, a->name);
            if (first != k)
                return mf_fail(p, TSR_E_DESCRIPTOR, at,
                               "a second workspace named '%s' (the first is args[%d])", a->name,
                               (int)first);
        }
        if (a->kind != MF_LENGTH) continue;
        int32_t w = find_workspace(e, a->name);
        if (w < 0) {
            workspace_names(e, names, sizeof names);
            return mf_fail(p, TSR_E_DESCRIPTOR, at,
                           "'length' names no workspace of this routine: '%s' (workspaces: %s)",
                           a->name, names);
        }
        if (e->args[w].partner >= 0)
            return mf_fail(p, TSR_E_DESCRIPTOR, at,
                           "workspace '%s' already has its length in args[%d]", a->name,
                           (int)e->args[w].partner);
        e->args[w].partner = k;
        a->partner = w;
    }
    for (int32_t k = 0; k < e->n_args; k++) {
        mf_arg *a = &e->args[k];
        snprintf(at, sizeof at, "%s.args[%d]", entry, (int)k);
        if (a->kind == MF_WORKSPACE && a->query) {
            if (a->partner < 0)
                return mf_fail(p, TSR_E_DESCRIPTOR, at,
                               "workspace '%s' is queried, but no argument is its length: a "
                               "query passes -1 there, so add {\"length\": \"%s\"} where the "
                               "routine takes it",
                               a->name, a->name);
            e->queries.n_query++;
        }
        if (k > 0) {
            int rc = check_implicit_length(p, e, k, at);
            if (rc) return rc;
        }
    }
    return 0;
}

int mf_query_cache_init(mf_parse *p, mf_endpoint *e, const char *entry) {
    mf_query_cache *q = &e->queries;
    if (!q->n_query) return 0;
    const tsr_component *c = p->c;
    q->key_len = 0;
    for (int32_t i = 0; i < backend_schema(c).n_in; i++)
        q->key_len += backend_schema(c).in[i].field.rank;
    q->key_len += p->m->n_value_syms;
    q->keys = calloc((size_t)MF_QUERY_CACHE * (size_t)q->key_len + 1, sizeof *q->keys);
    q->sizes = calloc((size_t)MF_QUERY_CACHE * (size_t)q->n_query, sizeof *q->sizes);
    if (!q->keys || !q->sizes) return mf_fail(p, TSR_E_NOMEM, entry, "out of memory");
    return 0;
}

void mf_query_cache_free(mf_endpoint *e) {
    free(e->queries.keys);
    free(e->queries.sizes);
    e->queries.keys = e->queries.sizes = NULL;
}

/* The key of a call: every input's shape, then the values that sizes
 * read (they are part of a shape too). */
static void make_key(const struct manifest *m, const mf_query_cache *q,
                     const tsr_array *inputs, int64_t *key) {
    int32_t n = 0;
    for (int32_t i = 0; i < m->desc.n_inputs; i++)
        for (int32_t d = 0; d < inputs[i].rank; d++) key[n++] = inputs[i].shape[d];
    for (int32_t s = 0; s < m->n_value_syms && n < q->key_len; s++)
        key[n++] = mf_value_of(m, s, inputs);
}

int mf_query_lookup(struct manifest *m, const mf_endpoint *e, const tsr_array *inputs,
                    int64_t *sizes) {
    const mf_query_cache *q = &e->queries;
    if (!q->n_query) return 1;
    int64_t key[SCHEMA_MAX_FIELDS * TSR_MAX_FIELD_RANK + MF_MAX_VALUE_SYMS];
    make_key(m, q, inputs, key);
    int found = 0;
    pthread_mutex_lock(&m->lock);
    for (int32_t k = 0; k < q->used && !found; k++) {
        if (memcmp(&q->keys[k * q->key_len], key, (size_t)q->key_len * sizeof *key) != 0)
            continue;
        found = 1;
        for (int32_t i = 0, j = 0; i < e->n_args; i++)
            if (e->args[i].kind == MF_WORKSPACE && e->args[i].query)
                sizes[i] = q->sizes[k * q->n_query + j++];
    }
    pthread_mutex_unlock(&m->lock);
    return found;
}

void mf_query_store(struct manifest *m, mf_endpoint *e, const tsr_array *inputs,
                    const int64_t *sizes) {
    mf_query_cache *q = &e->queries;   /* guarded by m->lock */
    if (!q->n_query) return;
    pthread_mutex_lock(&m->lock);
    int32_t k = q->used < MF_QUERY_CACHE ? q->used++ : q->next;
    if (q->used == MF_QUERY_CACHE) q->next = (q->next + 1) % MF_QUERY_CACHE;
    make_key(m, q, inputs, &q->keys[k * q->key_len]);
    for (int32_t i = 0, j = 0; i < e->n_args; i++)
        if (e->args[i].kind == MF_WORKSPACE && e->args[i].query)
            q->sizes[k * q->n_query + j++] = sizes[i];
    pthread_mutex_unlock(&m->lock);
}

/* Sizes beyond 2^53 elements are no answer a routine meant. */
#define MAX_REPORTED ((int64_t)1 << 53)

static int64_t from_real(double v) {
    if (!(v >= 0) || v > (double)MAX_REPORTED) return -1;
    return (int64_t)ceil(v);
}

int64_t mf_query_reported(const mf_arg *a, const void *first) {
    switch (a->dtype) {
    case TSR_FLOAT32:
    case TSR_COMPLEX64: {   /* the real part */
        float v;
        memcpy(&v, first, sizeof v);
        return from_real(v);
    }
    case TSR_INT32: {
        int32_t v;
        memcpy(&v, first, sizeof v);
        return v >= 0 ? v : -1;
    }
    case TSR_INT64: {
        int64_t v;
        memcpy(&v, first, sizeof v);
        return v >= 0 && v <= MAX_REPORTED ? v : -1;
    }
    default: {
        double v;
        memcpy(&v, first, sizeof v);
        return from_real(v);
    }
    }
}
