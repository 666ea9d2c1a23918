/* SPDX-License-Identifier: MIT */
/* The "endpoints" of a manifest: for each, the routine's symbol, its
 * argument list, how it reports failure, and whether the arguments cover
 * the schema (every output written, every input passed, every derivative
 * the schema promises computed). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_internal.h"

static const char *const endpoint_keys[] = {"apply", "jvp", "vjp", "jacobian", "hvp", "doc", NULL};
static const char *const routine_keys[] = {"symbol", "args", "returns", "errors", "doc", NULL};
static const tsr_endpoint routine_eps[] = {TSR_EP_APPLY, TSR_EP_JVP, TSR_EP_VJP,
                                           TSR_EP_JACOBIAN, TSR_EP_HVP};
#define N_ROUTINE_EPS (sizeof routine_eps / sizeof routine_eps[0])

int mf_endpoints_declare(mf_parse *p) {
    struct manifest *m = p->m;
    json_t *eps = json_object_get(m->root, "endpoints");
    if (!json_is_object(eps))
        return mf_fail(p, TSR_E_DESCRIPTOR, "endpoints",
                       "%s (expected an object with at least \"apply\")",
                       eps ? "not an object" : "missing");
    int rc = mf_check_keys(p, eps, "endpoints", endpoint_keys);
    if (rc) return rc;
    if (!json_object_get(eps, "apply"))
        return mf_fail(p, TSR_E_DESCRIPTOR, "endpoints", "'apply' is required");
    for (size_t i = 0; i < N_ROUTINE_EPS; i++) {
        tsr_endpoint ep = routine_eps[i];
        if (!json_object_get(eps, tsr_endpoint_name(ep))) continue;
        m->ep[ep].present = 1;
    }
    m->desc.apply = mf_call_apply;
    m->desc.jvp = m->ep[TSR_EP_JVP].present ? mf_call_jvp : NULL;
    m->desc.vjp = m->ep[TSR_EP_VJP].present ? mf_call_vjp : NULL;
    m->desc.jacobian = m->ep[TSR_EP_JACOBIAN].present ? mf_call_jacobian : NULL;
    m->desc.hvp = m->ep[TSR_EP_HVP].present ? mf_call_hvp : NULL;
    return 0;
}

/* "errors": {"-1": "...", "2": "...", "negative": "...", "positive": "..."} */
static int parse_messages(mf_parse *p, mf_endpoint *e, json_t *obj, const char *entry) {
    char at[160];
    mf_entry(at, sizeof at, entry, "errors");
    if (!json_is_object(obj))
        return mf_fail(p, TSR_E_DESCRIPTOR, at, "expected an object of status values to messages");
    e->messages = calloc(json_object_size(obj) + 1, sizeof *e->messages);
    if (!e->messages) return mf_fail(p, TSR_E_NOMEM, at, "out of memory");
    const char *key;
    json_t *text;
    json_object_foreach(obj, key, text) {
        mf_message *msg = &e->messages[e->n_messages];
        char kat[288];
        snprintf(kat, sizeof kat, "%s.%s", at, key);
        if (!json_is_string(text)) return mf_fail(p, TSR_E_DESCRIPTOR, kat, "expected a string");
        msg->text = json_string_value(text);
        if (strcmp(key, "negative") == 0) {
            msg->match = MF_MATCH_NEGATIVE;
        } else if (strcmp(key, "positive") == 0) {
            msg->match = MF_MATCH_POSITIVE;
        } else {
            char *end;
            errno = 0;
            long long v = strtoll(key, &end, 10);
            if (errno || end == key || *end)
                return mf_fail(p, TSR_E_DESCRIPTOR, kat,
                               "expected an integer status, \"negative\" or \"positive\"");
            msg->match = MF_MATCH_VALUE;
            msg->value = v;
        }
        e->n_messages++;
    }
    return 0;
}

/* The uses of each field by the arguments, for the coverage checks. */
typedef struct usage {
    int32_t *count;        /* per field */
    int32_t *first;        /* per field: the first argument using it */
} usage;

static int count_uses(const mf_endpoint *e, mf_kind kind, int32_t n, int input_side,
                      usage *u) {
    /* the seed a result's init names: vjp an output's cotangent, jvp and
     * hvp an input's tangent */
    mf_kind init_kind = e->ep == TSR_EP_VJP ? MF_COTANGENT : MF_TANGENT;
    u->count = calloc((size_t)n + 1, sizeof *u->count);
    u->first = calloc((size_t)n + 1, sizeof *u->first);
    if (!u->count || !u->first) return -1;
    for (int32_t i = -1; i < e->n_args; i++) {
        const mf_arg *a = i < 0 ? e->result : &e->args[i];   /* -1: the function's result */
        if (!a) continue;
        int32_t f = -1;
        if (a->kind == kind) f = (kind == MF_JACOBIAN && input_side) ? a->field2 : a->field;
        else if (input_side && kind == MF_IN && a->kind == MF_DIM && a->dim.field >= 0)
            f = a->dim.field;   /* an input passed only through its size still counts */
        else if (input_side && kind == MF_IN && a->kind == MF_OUT && a->field2 >= 0)
            f = a->field2;      /* so does one copied into an output first */
        else if (kind == init_kind && a->kind == MF_RESULT && a->field2 >= 0)
            f = a->field2;      /* and a seed copied into a result first */
        if (f < 0) continue;
        if (u->count[f]++ == 0) u->first[f] = i;
    }
    return 0;
}

static void usage_free(usage *u) {
    free(u->count);
    free(u->first);
}

/* Each field of a side (or each differentiable one) used by `kind` in
 * some step, and at most once in each (at least once, any number of times,
 * when `at_least` is set): two arguments of one routine on one buffer
 * would alias. */
static int check_cover(mf_parse *p, const mf_steps *st, const char *entry, mf_kind kind,
                       int input_side, int only_diff, int at_least, const char *why) {
    const tsr_component *c = p->c;
    const field_info *fs = input_side ? backend_schema(c).in : backend_schema(c).out;
    int32_t n = input_side ? backend_schema(c).n_in : backend_schema(c).n_out;
    int32_t total[SCHEMA_MAX_FIELDS + 1] = {0};
    int rc = 0;
    char at[160];
    mf_entry(at, sizeof at, entry, "args");
    for (int32_t s = 0; s < st->n && !rc; s++) {
        usage u;
        if (count_uses(&st->r[s], kind, n, input_side, &u) != 0) {
            usage_free(&u);
            return mf_fail(p, TSR_E_NOMEM, entry, "out of memory");
        }
        for (int32_t f = 0; f < n && !rc; f++) {
            total[f] += u.count[f];
            if (u.count[f] > 1 && !at_least) {
                char sat[160];
                if (st->n > 1) snprintf(sat, sizeof sat, "%s[%d].args", entry, (int)s);
                rc = mf_fail(p, TSR_E_DESCRIPTOR, st->n > 1 ? sat : at,
                             "%s '%s' is passed to %d '%s' arguments (the first is args[%d]); "
                             "the routine would write one buffer through several arguments",
                             input_side ? "input" : "output", fs[f].field.name,
                             (int)u.count[f], mf_kind_names[kind], (int)u.first[f]);
            }
        }
        usage_free(&u);
    }
    for (int32_t f = 0; f < n && !rc; f++) {
        if (only_diff && !(fs[f].field.flags & TSR_FIELD_DIFFERENTIABLE)) continue;
        if (total[f] == 0)
            rc = mf_fail(p, TSR_E_DESCRIPTOR, at,
                         "wrong arity: %s%s '%s' is passed to no '%s' argument, %s",
                         only_diff ? "differentiable " : "", input_side ? "input" : "output",
                         fs[f].field.name, mf_kind_names[kind], why);
    }
    return rc;
}

/* Every jacobian block the schema allows is named exactly once. */
static int check_jacobian_cover(mf_parse *p, const mf_steps *st, const char *entry) {
    const tsr_component *c = p->c;
    char at[160];
    mf_entry(at, sizeof at, entry, "args");
    for (int32_t o = 0; o < backend_schema(c).n_out; o++) {
        if (!(backend_schema(c).out[o].field.flags & TSR_FIELD_DIFFERENTIABLE)) continue;
        for (int32_t i = 0; i < backend_schema(c).n_in; i++) {
            if (!(backend_schema(c).in[i].field.flags & TSR_FIELD_DIFFERENTIABLE)) continue;
            int uses = 0, most = 0;
            for (int32_t s = 0; s < st->n; s++) {
                int here = 0;
                for (int32_t k = 0; k < st->r[s].n_args; k++)
                    here += st->r[s].args[k].kind == MF_JACOBIAN && st->r[s].args[k].field == o &&
                            st->r[s].args[k].field2 == i;
                uses += here;
                if (here > most) most = here;
            }
            if (uses == 0 || most > 1)
                return mf_fail(p, TSR_E_DESCRIPTOR, at,
                               "%s: the block ['%s', '%s'] is named %d times, once expected",
                               uses ? "duplicate jacobian block" : "wrong arity",
                               backend_schema(c).out[o].field.name, backend_schema(c).in[i].field.name, uses);
        }
    }
    return 0;
}

static int check_coverage(mf_parse *p, const mf_steps *st, tsr_endpoint ep, const char *entry) {
    switch (ep) {
    case TSR_EP_APPLY: {
        int rc = check_cover(p, st, entry, MF_OUT, 0, 0, 0, "so the routine would not write it");
        return rc ? rc
                  : check_cover(p, st, entry, MF_IN, 1, 0, 1,
                                "so the routine would ignore it (pass it, or drop it from the "
                                "schema)");
    }
    case TSR_EP_JVP: {
        int rc = check_cover(p, st, entry, MF_TANGENT, 1, 1, 0,
                             "so its tangent would be ignored");
        return rc ? rc
                  : check_cover(p, st, entry, MF_RESULT, 0, 1, 0,
                                "so its tangent would not be computed");
    }
    case TSR_EP_VJP: {
        int rc = check_cover(p, st, entry, MF_COTANGENT, 0, 1, 0,
                             "so its cotangent would be ignored");
        return rc ? rc
                  : check_cover(p, st, entry, MF_RESULT, 1, 1, 0,
                                "so its gradient would not be computed");
    }
    case TSR_EP_HVP: {
        int rc = check_cover(p, st, entry, MF_COTANGENT, 0, 1, 0,
                             "so its cotangent would be ignored");
        if (!rc)
            rc = check_cover(p, st, entry, MF_TANGENT, 1, 1, 0, "so its tangent would be ignored");
        return rc ? rc
                  : check_cover(p, st, entry, MF_RESULT, 1, 1, 0,
                                "so its Hessian-vector product would not be computed");
    }
    default: return check_jacobian_cover(p, st, entry);
    }
}

static int parse_args(mf_parse *p, mf_endpoint *e, json_t *obj, const char *entry) {
    char at[160];
    mf_entry(at, sizeof at, entry, "args");
    json_t *args = json_object_get(obj, "args");
    if (!json_is_array(args))
        return mf_fail(p, TSR_E_DESCRIPTOR, at, "%s (expected the routine's arguments, in order)",
                       args ? "not a list" : "missing");
    if (json_array_size(args) > MF_MAX_ARGS)
        return mf_fail(p, TSR_E_DESCRIPTOR, at, "%zu arguments, at most %d are supported",
                       json_array_size(args), MF_MAX_ARGS);
    e->args = calloc(json_array_size(args) + 1, sizeof *e->args);
    if (!e->args) return mf_fail(p, TSR_E_NOMEM, at, "out of memory");
    int infos = 0;
    for (size_t i = 0; i < json_array_size(args); i++) {
        char aat[192];
        mf_entry_at(aat, sizeof aat, at, i);
        mf_arg *a = &e->args[i];
        int rc = mf_arg_parse(p, e, json_array_get(args, i), aat, a);
        e->n_args = (int32_t)i + 1;   /* so that manifest_free sees what this one holds */
        if (rc) return rc;
        if (a->kind == MF_INFO && ++infos > 1)
            return mf_fail(p, TSR_E_DESCRIPTOR, aat, "a second 'info' argument (one at most)");
        if (a->kind == MF_CHAR && a->hidden_len) e->n_hidden++;
        if (e->ep != TSR_EP_APPLY || a->copy || a->order_f || a->zero || a->kind == MF_WORKSPACE ||
            (a->kind == MF_OUT && a->field2 >= 0))
            e->stages = 1;
    }
    int rc = mf_workspaces_link(p, e, entry);
    return rc ? rc : mf_query_cache_init(p, e, entry);
}

int mf_routine_parse(mf_parse *p, mf_endpoint *e, json_t *obj, const char *entry) {
    if (!json_is_object(obj))
        return mf_fail(p, TSR_E_DESCRIPTOR, entry, "expected an object with symbol and args");
    int rc = mf_check_keys(p, obj, entry, routine_keys);
    if (!rc) rc = mf_get_string(p, obj, "symbol", entry, 1, &e->symbol);
    if (!rc && !*e->symbol)
        rc = mf_fail(p, TSR_E_DESCRIPTOR, entry, "the symbol is empty");
    if (!rc) rc = mf_returns_parse(p, e, obj, entry);
    if (!rc) rc = parse_args(p, e, obj, entry);
    json_t *errors = json_object_get(obj, "errors");
    if (!rc && errors) {
        int has_info = 0;
        for (int32_t i = 0; i < e->n_args; i++) has_info |= e->args[i].kind == MF_INFO;
        if (!has_info && e->returns == TSR_DTYPE_INVALID)
            rc = mf_fail(p, TSR_E_DESCRIPTOR, entry,
                         "'errors' explains a status, but the routine reports none (add an "
                         "{\"info\": true} argument or \"returns\": \"int32\")");
        else
            rc = parse_messages(p, e, errors, entry);
    }
    if (!rc) rc = mf_cif_prepare(p, e, entry);
    if (!rc) mf_lint_routine(p, e, json_object_get(obj, "args"), entry);
    return rc;
}

/* An endpoint: one routine, or a list of them run in order. */
static int parse_steps(mf_parse *p, mf_steps *st, tsr_endpoint ep, json_t *v) {
    char entry[64];
    snprintf(entry, sizeof entry, "endpoints.%s", tsr_endpoint_name(ep));
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (json_is_array(v) && (n == 0 || n > MF_MAX_STEPS))
        return mf_fail(p, TSR_E_DESCRIPTOR, entry,
                       "a list of %zu routines; an endpoint runs 1 to %d of them in order", n,
                       MF_MAX_STEPS);
    st->r = calloc(n, sizeof *st->r);
    if (!st->r) return mf_fail(p, TSR_E_NOMEM, entry, "out of memory");
    for (size_t k = 0; k < n; k++) {
        mf_endpoint *e = &st->r[k];
        st->n = (int32_t)k + 1;   /* so that manifest_free sees what this one holds */
        e->present = 1;
        e->ep = ep;
        char at[96];
        if (json_is_array(v)) snprintf(at, sizeof at, "%s[%d]", entry, (int)k);
        else snprintf(at, sizeof at, "%s", entry);
        int rc = mf_routine_parse(p, e, json_is_array(v) ? json_array_get(v, k) : v, at);
        if (rc) return rc;
        st->stages |= e->stages;
    }
    if (n > 1) st->stages = 1;   /* the steps' buffers are laid out together */
    int rc = check_coverage(p, st, ep, entry);
    return rc ? rc : mf_steps_check(p, st, entry);
}

int mf_endpoints_parse(mf_parse *p) {
    json_t *eps = json_object_get(p->m->root, "endpoints");
    for (size_t i = 0; i < N_ROUTINE_EPS; i++) {
        mf_steps *st = &p->m->ep[routine_eps[i]];
        if (!st->present) continue;
        int rc = parse_steps(p, st, routine_eps[i],
                             json_object_get(eps, tsr_endpoint_name(routine_eps[i])));
        if (rc) return rc;
    }
    return 0;
}
