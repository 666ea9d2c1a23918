/* SPDX-License-Identifier: MIT */
/* The call object: binding inputs, differentiation targets and seeds,
 * validating them against the schema, and the steps of a run around the
 * endpoint's code (tsr_call_run, which may hand a derivative to the
 * finite-difference fallback, is in call_run.c, above gradcheck/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "invalid_input.h"
#include "shape_hint.h"

static int32_t max_i32(int32_t a, int32_t b) { return a > b ? a : b; }

static int same_header(const tsr_array *a, const tsr_array *b) {
    return a->dtype == b->dtype && a->rank == b->rank &&
           memcmp(a->shape, b->shape, (size_t)a->rank * sizeof(int64_t)) == 0;
}

TSR_API tsr_call *tsr_call_new(tsr_component *c, tsr_endpoint ep) {
    if (!c || (int)ep < 0 || (int)ep >= TSR_EP_COUNT) return NULL;
    tsr_call *call = calloc(1, sizeof *call);
    if (!call) return NULL;
    host_ctx_init(&call->ctx, c, call);
    cancel_init(call);
    call->comp = c;
    call->ep = ep;
    int32_t n_in = max_i32(c->n_in, 1), n_out = max_i32(c->n_out, 1);
    int32_t cap = max_i32(n_out, n_in);
    if (ep == TSR_EP_JACOBIAN) cap = max_i32(cap, n_in * n_out);
    if (ep == TSR_EP_HVP) cap = n_in + n_out;   /* cotangents then tangents */
    call->cap_results = cap;
    call->inputs = calloc((size_t)n_in, sizeof *call->inputs);
    call->input_bound = calloc((size_t)n_in, 1);
    call->wrt_in = calloc((size_t)n_in, sizeof *call->wrt_in);
    call->wrt_out = calloc((size_t)n_out, sizeof *call->wrt_out);
    call->wrt_in_paths = calloc((size_t)n_in, sizeof *call->wrt_in_paths);
    call->wrt_out_paths = calloc((size_t)n_out, sizeof *call->wrt_out_paths);
    call->cap_wrt_in = n_in;
    call->cap_wrt_out = n_out;
    call->seeds = calloc((size_t)cap, sizeof *call->seeds);
    call->seed_set = calloc((size_t)cap, 1);
    call->results = calloc((size_t)cap, sizeof *call->results);
    call->expect = calloc((size_t)cap, sizeof *call->expect);
    call->bufs = calloc((size_t)cap, sizeof *call->bufs);
    call->targets = calloc((size_t)cap, sizeof *call->targets);
    call->result_bytes = calloc((size_t)cap, sizeof *call->result_bytes);
    call->symval = calloc((size_t)max_i32(c->n_sym, 1), sizeof *call->symval);
    call->sym_from = calloc((size_t)max_i32(c->n_sym, 1), sizeof *call->sym_from);
    if (!call->inputs || !call->input_bound || !call->wrt_in || !call->wrt_out || !call->wrt_in_paths ||
        !call->wrt_out_paths || !call->seeds ||
        !call->seed_set || !call->results || !call->expect || !call->bufs || !call->targets ||
        !call->result_bytes || !call->symval || !call->sym_from) {
        tsr_call_free(call);
        return NULL;
    }
    if (ep == TSR_EP_APPLY || ep == TSR_EP_ABSTRACT_EVAL) call->wrt_set = 1;
    return call;
}

TSR_API void tsr_call_free(tsr_call *call) {
    if (!call) return;
    for (int32_t k = 0; call->bufs && k < call->cap_results; k++)
        result_release(call->comp, &call->bufs[k]);
    if (call->backend_call) call->comp->backend->call_free(call->comp, call->backend_call);
    result_release(call->comp, &call->scratch);
    for (int32_t i = 0; call->fd_work && i < call->comp->n_in; i++)
        result_release(call->comp, &call->fd_work[i]);
    free(call->fd_work);
    for (int32_t t = 1; t < call->n_fd_lanes; t++) {
        for (int32_t i = 0; i < call->comp->n_in; i++)
            result_release(call->comp, &call->fd_lane_work[(size_t)(t - 1) * call->comp->n_in + i]);
        tsr_call_free(call->fd_lane_apply[t - 1]);
    }
    free(call->fd_lane_work);
    free(call->fd_lane_apply);
    for (int32_t t = 0; t < call->n_subs; t++) tsr_call_free(call->subs[t]);
    tsr_call_free(call->fd_apply);
    free(call->subs);
    free(call->inputs);
    free(call->input_bound);
    free(call->wrt_in);
    free(call->wrt_out);
    free(call->wrt_in_paths);
    free(call->wrt_out_paths);
    free(call->path_store);
    free(call->seeds);
    free(call->seed_set);
    free(call->results);
    free(call->expect);
    free(call->bufs);
    free(call->targets);
    free(call->result_bytes);
    free(call->symval);
    free(call->sym_from);
    cast_release(call);
    text_release(call);
    cancel_release(call);
    free(call);
}

static int ok(tsr_call *call) {
    call->errcode = 0;
    call->errmsg[0] = '\0';
    call->errloc[0] = '\0';
    return 0;
}

TSR_API int tsr_call_set_input_at(tsr_call *call, int32_t index, const tsr_array *a) {
    if (!call) return TSR_E_ARGUMENT;
    if (index < 0 || index >= call->comp->n_in)
        return call_fail_at(call, TSR_E_UNKNOWN_FIELD, "inputs", NULL,
                            "input index %d out of range (%d inputs)", (int)index,
                            (int)call->comp->n_in);
    if (!a) {
        call->validated = 0;
        call->n_bound -= call->input_bound[index];
        call->input_bound[index] = 0;
        return 0;
    }
    if (a->rank < 0 || a->rank > TSR_MAX_RANK)
        return call_fail_at(call, TSR_E_SHAPE, "inputs", call->comp->in[index].field.name,
                            "input '%s': rank %d is out of range (0 to %d)",
                            call->comp->in[index].field.name, (int)a->rank, TSR_MAX_RANK);
    /* Copy only the dims in use: this sits on every call's path. */
    tsr_array *dst = &call->inputs[index];
    dst->data = a->data;
    if (!call->input_bound[index] || !same_header(dst, a)) {
        call->validated = 0;
        dst->dtype = a->dtype;
        dst->rank = a->rank;
        memcpy(dst->shape, a->shape, (size_t)a->rank * sizeof(int64_t));
    }
    call->n_bound += !call->input_bound[index];
    call->input_bound[index] = 1;
    if (call->comp->in[index].field.kind != TSR_KIND_ARRAY) return text_bind_array(call, index, a);
    return 0;
}

static void list_names(const field_info *fs, int32_t n, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n && used < cap; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", fs[i].field.name);
        if (w > 0) used += (size_t)w;
    }
}

TSR_API int tsr_call_set_input(tsr_call *call, const char *name, const tsr_array *a) {
    if (!call) return TSR_E_ARGUMENT;
    /* NULL is a bad argument, not a name the schema lacks (errors.md) */
    if (!name) return call_fail_at(call, TSR_E_ARGUMENT, "inputs", NULL, "the input name is NULL");
    int32_t i = tsr_component_find_input(call->comp, name);
    if (i < 0) {
        char known[512];
        list_names(call->comp->in, call->comp->n_in, known, sizeof known);
        return call_fail_at(call, TSR_E_UNKNOWN_FIELD, "inputs", name,
                            "'%s' is not an input (inputs: %s)", name, known);
    }
    return tsr_call_set_input_at(call, i, a);
}

TSR_API int tsr_call_set_text(tsr_call *call, const char *name, const char *utf8) {
    if (!call) return TSR_E_ARGUMENT;
    int32_t i = tsr_component_find_input(call->comp, name);
    if (i < 0) return tsr_call_set_input(call, name, NULL);   /* names the known inputs */
    const field_info *f = &call->comp->in[i];
    if (f->field.kind == TSR_KIND_ARRAY)
        return call_fail_at(call, TSR_E_DTYPE, "inputs", f->field.name,
                            "input '%s' is an array, not text (bind it with tsr_call_set_input)",
                            f->field.name);
    if (!utf8)
        return call_fail_at(call, TSR_E_ARGUMENT, "inputs", f->field.name,
                            "input '%s': the text is NULL", f->field.name);
    tsr_array a = {.data = (void *)(uintptr_t)utf8, .dtype = TSR_UINT8, .rank = 1};
    a.shape[0] = (int64_t)strlen(utf8);
    int rc = tsr_call_set_input_at(call, i, &a);
    /* A C string: its NUL is there already, no copy needed. */
    if (!rc && call->text) call->text[i].copy = 0;
    return rc;
}

/* Names of the differentiation lists, as in Tesseract's payloads. */
static const char *wrt_in_label(tsr_endpoint ep) { return ep_wrt_in_label(ep); }
static const char *wrt_out_label(tsr_endpoint ep) { return ep_wrt_out_label(ep); }

static const char *item_at(int32_t k, char *buf, size_t n) {
    snprintf(buf, n, "%d", (int)k);
    return buf;
}

/* The longest list a call takes: a field may repeat (paths inside a JSON
 * field), up to SCHEMA_MAX_WRT entries. */
static int32_t wrt_bound(int32_t n_fs) { return n_fs > SCHEMA_MAX_WRT ? n_fs : SCHEMA_MAX_WRT; }

/* Entry k of a list names no field: a path inside one, or nothing known. */
static int resolve_path(tsr_call *call, const char *label, const char *what, const char *name,
                        const field_info *fs, int32_t n_fs, int32_t k, int32_t *field) {
    char at[16], why[300];
    int32_t f = wrt_path_field(fs, n_fs, name);
    if (f < 0) {
        char known[512];
        list_names(fs, n_fs, known, sizeof known);
        return call_fail_at(call, TSR_E_UNKNOWN_FIELD, label, item_at(k, at, sizeof at),
                            "%s: '%s' is not an %s (%ss: %s)", label, name ? name : "(null)",
                            what, what, known);
    }
    const tsr_field *fd = &fs[f].field;
    if (fd->kind == TSR_KIND_ARRAY)
        return call_fail_at(call, TSR_E_UNKNOWN_FIELD, label, item_at(k, at, sizeof at),
                            "%s: '%s' is not an %s: %s '%s' is an array, and paths go inside "
                            "JSON fields only",
                            label, name, what, what, fd->name);
    if (fd->kind == TSR_KIND_TEXT)
        return call_fail_at(call, TSR_E_NOT_DIFFERENTIABLE, label, item_at(k, at, sizeof at),
                            "%s: '%s': %s '%s' is text, which has no derivatives", label, name,
                            what, fd->name);
    if (!(fd->flags & TSR_FIELD_DIFFERENTIABLE))
        return call_fail_at(call, TSR_E_NOT_DIFFERENTIABLE, label, item_at(k, at, sizeof at),
                            "%s: '%s': %s '%s' is not differentiable", label, name, what,
                            fd->name);
    if (wrt_path_check(fd->name, name, why, sizeof why) != 0)
        return call_fail_at(call, TSR_E_UNKNOWN_FIELD, label, item_at(k, at, sizeof at),
                            "%s: '%s' is not a path inside %s '%s': %s", label, name, what,
                            fd->name, why);
    *field = f;
    return 0;
}

static int resolve_wrt(tsr_call *call, const char *label, const char *what,
                       const char *const *names, int32_t n, const field_info *fs, int32_t n_fs,
                       int32_t *idx, const char **paths) {
    if (n < 0 || (n > 0 && !names))
        return call_fail_at(call, TSR_E_ARGUMENT, label, NULL,
                            "%s: invalid list (%d names for %d %ss)", label, (int)n, (int)n_fs,
                            what);
    char at[16];   /* a failure's loc names the list item: "jvp_inputs.1" */
    for (int32_t k = 0; k < n; k++) {
        if (!names[k])
            return call_fail_at(call, TSR_E_ARGUMENT, label, item_at(k, at, sizeof at),
                                "%s: entry %d is NULL", label, (int)k);
        int32_t f = find_field(fs, n_fs, names[k]);
        if (f < 0) {
            int rc = resolve_path(call, label, what, names[k], fs, n_fs, k, &f);
            if (rc) return rc;
            paths[k] = names[k];   /* copied by call_wrt_keep_paths */
        } else {
            if (!(fs[f].field.flags & TSR_FIELD_DIFFERENTIABLE))
                return call_fail_at(call, TSR_E_NOT_DIFFERENTIABLE, label,
                                    item_at(k, at, sizeof at), "%s: %s '%s' is not differentiable",
                                    label, what, names[k]);
            paths[k] = fs[f].field.name;   /* a whole field's path is its name */
        }
        /* An array field once; a JSON field once per path. */
        int json = fs[f].field.kind == TSR_KIND_JSON;
        for (int32_t j = 0; j < k; j++)
            if (idx[j] == f && (!json || strcmp(paths[j], paths[k]) == 0))
                return call_fail_at(call, TSR_E_ARGUMENT, label, item_at(k, at, sizeof at),
                                    "%s: '%s' is named twice", label, names[k]);
        idx[k] = f;
    }
    return 0;
}

/* Room for the lists and their results, within the bounds. */
static int wrt_room(tsr_call *call, int32_t n_in, int32_t n_out) {
    tsr_component *c = call->comp;
    tsr_endpoint ep = call->ep;
    if (n_in > wrt_bound(c->n_in) || n_out > wrt_bound(c->n_out)) {
        int in = n_in > wrt_bound(c->n_in);
        return call_fail_at(call, TSR_E_ARGUMENT, in ? wrt_in_label(ep) : wrt_out_label(ep),
                            NULL, "%s: %d entries, at most %d", in ? wrt_in_label(ep) :
                            wrt_out_label(ep), (int)(in ? n_in : n_out),
                            (int)wrt_bound(in ? c->n_in : c->n_out));
    }
    int64_t results = ep_result_count(ep, n_in, n_out);
    int64_t blocks = (int64_t)(c->n_in > 0 ? c->n_in : 1) * (c->n_out > 0 ? c->n_out : 1);
    int64_t bound = blocks > SCHEMA_MAX_WRT ? blocks : SCHEMA_MAX_WRT;
    if (ep == TSR_EP_JACOBIAN && results > bound)
        return call_fail_at(call, TSR_E_ARGUMENT, wrt_in_label(ep), NULL,
                            "jacobian: %d outputs by %d inputs make %lld blocks, at most %lld",
                            (int)n_out, (int)n_in, (long long)results, (long long)bound);
    /* Seeds share the results' capacity: hvp has more seeds than results. */
    int64_t slots = ep == TSR_EP_HVP ? (int64_t)n_in + n_out : results;
    if (call_wrt_reserve(call, n_in, n_out, (int32_t)slots) != 0)
        return call_fail(call, TSR_E_NOMEM, "out of memory for the differentiation lists");
    return 0;
}

TSR_API int tsr_call_set_wrt(tsr_call *call, const char *const *in_names, int32_t n_in,
                             const char *const *out_names, int32_t n_out) {
    if (!call) return TSR_E_ARGUMENT;
    tsr_endpoint ep = call->ep;
    if (!ep_is_derivative(ep))
        return call_fail(call, TSR_E_ARGUMENT,
                         "differentiation targets apply only to jvp, vjp, jacobian and hvp");
    tsr_component *c = call->comp;
    call->wrt_set = 0;
    call->validated = 0;
    call->n_wrt_in = call->n_wrt_out = 0;
    call->results_valid = 0;
    memset(call->seed_set, 0, (size_t)call->cap_results);
    int rc = wrt_room(call, n_in, n_out);
    if (rc) return rc;
    rc = resolve_wrt(call, wrt_in_label(ep), "input", in_names, n_in, c->in, c->n_in,
                         call->wrt_in, call->wrt_in_paths);
    if (!rc)
        rc = resolve_wrt(call, wrt_out_label(ep), "output", out_names, n_out, c->out, c->n_out,
                         call->wrt_out, call->wrt_out_paths);
    if (rc) return rc;
    call->n_wrt_in = n_in;
    call->n_wrt_out = n_out;
    if (call_wrt_keep_paths(call) != 0) {
        call->n_wrt_in = call->n_wrt_out = 0;
        return call_fail(call, TSR_E_NOMEM, "out of memory for the differentiation paths");
    }
    call->wrt_set = 1;
    return ok(call);
}

/* Seed slot k of the given kind (tangent: of wrt_in entry k; cotangent:
 * of wrt_out entry k) bound to a, or unbound for a NULL. */
static int bind_seed(tsr_call *call, int tangent, const char *name, const tsr_array *a) {
    tsr_endpoint ep = call->ep;
    const char *label = tangent ? "tangent_vector" : "cotangent_vector";
    if (!call->wrt_set)
        return call_fail(call, TSR_E_ARGUMENT, "set %s and %s (tsr_call_set_wrt) before seeds",
                         wrt_in_label(ep), wrt_out_label(ep));
    if (!name)
        return call_fail_at(call, TSR_E_ARGUMENT, label, NULL, "%s: the name is NULL", label);
    const char *const *paths = tangent ? call->wrt_in_paths : call->wrt_out_paths;
    int32_t n = tangent ? call->n_wrt_in : call->n_wrt_out;
    /* hvp: the tangents follow the cotangents (plugin.h). */
    int32_t base = ep == TSR_EP_HVP && tangent ? call->n_wrt_out : 0;
    /* A whole field's path is its name. */
    for (int32_t j = 0; j < n; j++)
        if (strcmp(paths[j], name) == 0) {
            int32_t k = base + j;
            if (!a) {
                call->validated = 0;
                call->seed_set[k] = 0;
                return 0;
            }
            if (a->rank < 0 || a->rank > TSR_MAX_RANK)
                return call_fail_at(call, TSR_E_SHAPE, label, name,
                                    "%s['%s']: rank %d is out of range", label, name,
                                    (int)a->rank);
            if (!call->seed_set[k] || !same_header(&call->seeds[k], a)) call->validated = 0;
            call->seeds[k] = *a;
            call->seed_set[k] = 1;
            return 0;
        }
    return call_fail_at(call, TSR_E_UNKNOWN_FIELD, label, name, "%s: '%s' is not one of %s",
                        label, name, tangent ? wrt_in_label(ep) : wrt_out_label(ep));
}

TSR_API int tsr_call_set_seed(tsr_call *call, const char *name, const tsr_array *a) {
    if (!call) return TSR_E_ARGUMENT;
    tsr_endpoint ep = call->ep;
    if (ep != TSR_EP_JVP && ep != TSR_EP_VJP && ep != TSR_EP_HVP)
        return call_fail(call, TSR_E_ARGUMENT,
                         "only jvp (tangent_vector), vjp and hvp (cotangent_vector) take seeds");
    return bind_seed(call, ep == TSR_EP_JVP, name, a);
}

TSR_API int tsr_call_set_tangent(tsr_call *call, const char *name, const tsr_array *a) {
    if (!call) return TSR_E_ARGUMENT;
    if (call->ep != TSR_EP_HVP)
        return call_fail(call, TSR_E_ARGUMENT,
                         "tsr_call_set_tangent is for hvp (jvp's tangents are its seeds: "
                         "tsr_call_set_seed)");
    return bind_seed(call, 1, name, a);
}

/* ---- validation at run time ------------------------------------------- */

static int check_array(tsr_call *call, const char *what, const field_info *f,
                       const tsr_array *a, int need_data) {
    char why[400], label[SCHEMA_MAX_NAME + 32];
    const char *name = f->field.name, *section = array_section(what);
    if (a->dtype != f->field.dtype && !cast_accepts(call, a->dtype, f->field.dtype)) {
        const char *given = tsr_dtype_name(a->dtype), *want = tsr_dtype_name(f->field.dtype);
        array_label(what, name, label, sizeof label);
        if (!given)
            return call_fail_at(call, TSR_E_DTYPE, section, name,
                                "%s: invalid dtype code %d given, %s expected", label,
                                (int)a->dtype, want);
        if (call->comp->opts.casting == CASTING_SAME_KIND)
            return call_fail_at(call, TSR_E_DTYPE, section, name,
                                "%s: dtype %s given, %s expected, and casting=same_kind does "
                                "not convert %s to %s (bool < integers < floats < complex)",
                                label, given, want, given, want);
        return call_fail_at(call, TSR_E_DTYPE, section, name, "%s: dtype %s given, %s expected",
                            label, given, want);
    }
    if (shape_match(f, a->shape, a->rank, call->symval, call->sym_from, call->comp->sym_names,
                    why, sizeof why) != 0)
        return call_fail_at(call, TSR_E_SHAPE, section, name, "%s: %s",
                            array_label(what, name, label, sizeof label), why);
    int64_t count = shape_count(a->shape, a->rank);
    if (count < 0)
        return call_fail_at(call, TSR_E_SHAPE, section, name, "%s: the element count overflows",
                            array_label(what, name, label, sizeof label));
    if (need_data && !a->data && count > 0)
        return call_fail_at(call, TSR_E_ARGUMENT, section, name,
                            "%s: data is NULL for %lld elements",
                            array_label(what, name, label, sizeof label), (long long)count);
    /* Counted as the plugin gets it: converted to the field's dtype. */
    tsr_array as_passed = *a;
    as_passed.dtype = f->field.dtype;
    return limit_take(call, limit_array_bytes(&as_passed), what, name);
}

static int bind_inputs(tsr_call *call) {
    tsr_component *c = call->comp;
    int need_data = call->ep != TSR_EP_ABSTRACT_EVAL;
    for (int32_t s = 0; s < c->n_sym; s++) call->symval[s] = -1;
    call->limit_used = 0;
    /* Left-out inputs take their default or are absent (defaults.c); a
     * call that binds every input never gets here. */
    int some_left_out = call->n_bound != c->n_in;
    if (some_left_out) {
        int rc = defaults_fill(call);
        if (rc) return rc;
    }
    for (int32_t i = 0; i < c->n_in; i++) {
        if (some_left_out && !call->input_bound[i] && tsr_input_absent(&call->inputs[i]))
            continue;   /* binds nothing and holds nothing to check */
        int rc = check_array(call, "input", &c->in[i], &call->inputs[i], need_data);
        if (rc) return rc;
    }
    return 0;
}

/* A seed at an entry on a JSON field: any float array of any shape (the
 * component checks it). */
static int check_free_seed(tsr_call *call, const char *what, const char *path,
                           const tsr_array *s) {
    char label[SCHEMA_MAX_PATH + 32];
    const char *section = array_section(what);
    if (!wrt_free_dtype(s->dtype)) {
        const char *given = tsr_dtype_name(s->dtype);
        return call_fail_at(call, TSR_E_DTYPE, section, path,
                            "%s: dtype %s given; a seed inside a JSON field is float16, "
                            "float32 or float64",
                            array_label(what, path, label, sizeof label), given ? given : "?");
    }
    int64_t count = shape_count(s->shape, s->rank);
    if (count < 0)
        return call_fail_at(call, TSR_E_SHAPE, section, path, "%s: the element count overflows",
                            array_label(what, path, label, sizeof label));
    if (!s->data && count > 0)
        return call_fail_at(call, TSR_E_ARGUMENT, section, path,
                            "%s: data is NULL for %lld elements",
                            array_label(what, path, label, sizeof label), (long long)count);
    return limit_take(call, limit_array_bytes(s), what, path);
}

/* Seed k: tangent of wrt_in entry j (shaped like that input) or
 * cotangent of wrt_out entry j (shaped like that output). */
static int check_seed(tsr_call *call, int tangent, int32_t j, int32_t k) {
    tsr_component *c = call->comp;
    const char *what = tangent ? "tangent_vector" : "cotangent_vector";
    const field_info *f = tangent ? &c->in[call->wrt_in[j]] : &c->out[call->wrt_out[j]];
    char label[SCHEMA_MAX_PATH + 32];
    const char *path = tangent ? call->wrt_in_paths[j] : call->wrt_out_paths[j];
    if (!call->seed_set[k])
        return call_fail_at(call, TSR_E_MISSING, what, path, "%s is missing",
                            array_label(what, path, label, sizeof label));
    const tsr_array *s = &call->seeds[k];
    if (f->field.kind == TSR_KIND_JSON) return check_free_seed(call, what, path, s);
    if (tangent) {
        const tsr_array *in = &call->inputs[call->wrt_in[j]];
        if (s->rank != in->rank ||
            memcmp(s->shape, in->shape, (size_t)in->rank * sizeof(int64_t)) != 0) {
            char a[96], b[96];
            return call_fail_at(call, TSR_E_SHAPE, what, f->field.name,
                                "%s: shape %s given, %s expected (the shape of input '%s')",
                                array_label(what, f->field.name, label, sizeof label),
                                shape_str(s->shape, s->rank, a, sizeof a),
                                shape_str(in->shape, in->rank, b, sizeof b), f->field.name);
        }
    }
    return check_array(call, what, f, s, 1);
}

/* Tangents are shaped like their inputs, cotangents like their outputs. */
static int check_seeds(tsr_call *call) {
    if (!call->wrt_set)
        return call_fail_at(call, TSR_E_MISSING, wrt_in_label(call->ep), NULL,
                            "%s and %s are not set (tsr_call_set_wrt)",
                         wrt_in_label(call->ep), wrt_out_label(call->ep));
    tsr_endpoint ep = call->ep;
    /* In the order of tsr_args: cotangents, then (hvp) tangents. */
    if (ep == TSR_EP_VJP || ep == TSR_EP_HVP)
        for (int32_t j = 0; j < call->n_wrt_out; j++) {
            int rc = check_seed(call, 0, j, j);
            if (rc) return rc;
        }
    if (ep == TSR_EP_JVP || ep == TSR_EP_HVP) {
        int32_t base = ep == TSR_EP_HVP ? call->n_wrt_out : 0;
        for (int32_t j = 0; j < call->n_wrt_in; j++) {
            int rc = check_seed(call, 1, j, base + j);
            if (rc) return rc;
        }
    }
    return 0;
}

static int unsupported(tsr_call *call) {
    char have[128] = "";
    size_t used = 0;
    for (int e = 0; e < TSR_EP_COUNT; e++)
        if (tsr_component_has_endpoint(call->comp, (tsr_endpoint)e)) {
            int w = snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "",
                             tsr_endpoint_name((tsr_endpoint)e));
            if (w > 0 && (size_t)w < sizeof have - used) used += (size_t)w;
        }
    if (call->ep == TSR_EP_ABSTRACT_EVAL) {
        char hint[1024];
        shape_hint(call->comp, hint, sizeof hint);
        return call_fail(call, TSR_E_UNSUPPORTED, "%s (available endpoints: %s)", hint, have);
    }
    if (call->ep == TSR_EP_HVP)
        return call_fail(call, TSR_E_UNSUPPORTED,
                         "the component has no hvp: it needs a native hvp, or a vjp (or "
                         "jacobian) for the host to difference%s (available: %s)",
                         call->comp->opts.hvp_fallback_off ? ", and hvp_fallback=off allows "
                                                             "only a native hvp" : "",
                         have);
    return call_fail(call, TSR_E_UNSUPPORTED,
                     "the component does not implement this endpoint (available: %s)", have);
}

static int plugin_failed(tsr_call *call, int status) {
    host_ctx *hc = &call->ctx;
    if (hc->alloc_code)
        return call_fail(call, hc->alloc_code, "%s", hc->alloc_msg);
    /* it stopped because it was interrupted (plugin.h): a cancellation */
    if (status == TSR_E_CANCELLED)
        return call_fail(call, TSR_E_CANCELLED, "cancelled: %s",
                         hc->plugin_msg_set ? hc->plugin_msg : "the plugin was interrupted");
    if (hc->plugin_msg_set)   /* TSR_E_VALUE when it refused an input (tsr_ctx_invalid) */
        return call_fail_plugin(call, TSR_E_PLUGIN, "the plugin failed: ", hc->plugin_msg);
    return call_fail(call, TSR_E_PLUGIN, "the plugin failed (status %d) without a message",
                     status);
}

/* Everything but data pointers was checked by the last run: only a NULL
 * pointer could make this run invalid, and the slow path reports it. */
static int fast_path_ok(const tsr_call *call) {
    if (!call->validated) return 0;
    for (int32_t i = 0; i < call->comp->n_in; i++)
        if (!call->inputs[i].data) return 0;
    for (int32_t k = 0; k < call->args.n_seeds; k++)
        if (!call->seeds[k].data) return 0;
    return 1;
}

int call_validate(tsr_call *call) {
    tsr_component *c = call->comp;
    int rc = bind_inputs(call);
    if (!rc && call->ep != TSR_EP_APPLY && call->ep != TSR_EP_ABSTRACT_EVAL)
        rc = check_seeds(call);
    if (!rc) rc = results_prepare(call);
    if (rc) return rc;
    call->args = (tsr_args){
        .struct_size = sizeof(tsr_args),
        .endpoint = call->ep,
        .inputs = call->inputs,
        .n_inputs = c->n_in,
        .wrt_in = call->wrt_in,
        .n_wrt_in = call->n_wrt_in,
        .wrt_out = call->wrt_out,
        .n_wrt_out = call->n_wrt_out,
        .seeds = call->seeds,
        .n_seeds = ep_seed_count(call->ep, call->n_wrt_in, call->n_wrt_out),
        .results = call->results,
        .n_results = call->n_results,
        .wrt_in_paths = call->wrt_in_paths,
        .wrt_out_paths = call->wrt_out_paths,
    };
    return 0;
}

/* The host sized every result before the call (none waits for
 * tsr_ctx_alloc), so the same sizes hold while shapes do not change. */
static int results_all_host_sized(const tsr_call *call) {
    for (int32_t k = 0; k < call->n_results; k++)
        if (!call->expect[k].data) return 0;
    return 1;
}

int invoke_in_process(tsr_call *call) {
    tsr_component *c = call->comp;
    tsr_endpoint_fn fn = c->ep[call->ep];
    call->ctx.plugin_msg_set = 0;
    call->ctx.alloc_code = 0;
    if (!c->thread_safe) pthread_mutex_lock(&c->lock);
    int status = fn(&call->ctx.pub, &call->args);
    if (!c->thread_safe) pthread_mutex_unlock(&c->lock);
    atomic_fetch_add_explicit(&c->stats[BACKEND_STAT_CALLS], 1, memory_order_relaxed);
    if (status != 0 || call->ctx.alloc_code) return plugin_failed(call, status);
    return 0;
}

/* The steps of a run before and after the endpoint's code. begin: 0 when
 * the code is to run now (s->by_fd: the endpoint is left to finite
 * differences), 1 when there is none to run (abstract_eval answered by
 * the schema), or the call failed (cleaned up). end: the run finished with
 * rc, the code's status (0 after begin's 1). */
int call_run_begin(tsr_call *call, call_run_state *s) {
    tsr_component *c = call->comp;
    *s = (call_run_state){0};
    call->results_valid = 0;
    tsr_endpoint_fn fn = c->ep[call->ep];
    if (!fn && !tsr_component_has_endpoint(c, call->ep)) return unsupported(call);
    if (!fast_path_ok(call)) {
        call->validated = 0;
        int rc = call_validate(call);
        if (rc) return rc;
    }
    /* Text is checked at every run: its bytes may change, not its header. */
    if (c->n_text_in) {
        int rc = text_inputs_check(call);
        if (rc) {
            call->validated = 0;
            return rc;
        }
    }
    if (call->parent) batch_point_results(call);
    if (!fn && call->ep == TSR_EP_ABSTRACT_EVAL) {
        s->skipped = 1;
        return 1;
    }
    s->by_fd = !fn;
    s->cacheable = call->ep != TSR_EP_ABSTRACT_EVAL && results_all_host_sized(call);
    /* casting=same_kind: copies of another dtype stand in for the
     * caller's arrays during this run only. */
    s->casting = c->opts.casting != CASTING_EXACT;
    int rc = s->casting ? cast_begin(call) : 0;
    if (rc) {
        if (s->casting) cast_end(call);
        call->validated = 0;
        return rc;
    }
    results_aim(call);
    /* Buffers are reused from call to call: no result may carry another
     * call's bytes (result_fill.c). */
    s->here = !c->backend->prepares_results_elsewhere || !fn;
    if (s->here) call_results_fill(call);
    return 0;
}

int call_run_end(tsr_call *call, const call_run_state *s, int rc) {
    if (!s->skipped) {
        if (!rc) rc = results_check(call);
        if (!rc && s->here && call->comp->opts.unwritten == UNWRITTEN_CHECK)
            rc = results_unwritten_fail(call);
        if (s->casting) cast_end(call);
        if (rc) {
            call->validated = 0;
            return rc;
        }
        call->validated = s->cacheable;
        results_deliver(call);
    }
    call->results_valid = 1;
    if (call->errcode) ok(call);
    return 0;
}

/* A run of an endpoint the component has itself (the apply calls of the
 * finite-difference fallback): tsr_call_run without the fallback. */
int call_run_native(tsr_call *call) {
    tsr_call *root = call->cancel_root;
    int rc = (root->check_fn || cancel_pending(call)) ? cancel_begin(call) : 0;
    if (!rc) {
        call_run_state s;
        rc = call_run_begin(call, &s);
        if (rc >= 0) {
            if (rc == 1) rc = 0;
            else rc = s.by_fd ? unsupported(call) : call->comp->backend->invoke(call);
            rc = call_run_end(call, &s, rc);
        }
    }
    if (root == call && cancel_pending(call)) rc = cancel_end(call, rc);
    return rc;
}

/* ---- the call as backends see it (backend.h) ---------------------------- */

tsr_component *call_component(const tsr_call *call) { return call->comp; }
const tsr_args *call_args(const tsr_call *call) { return &call->args; }
const tsr_array *call_expected(const tsr_call *call, int32_t k) { return &call->expect[k]; }
void **call_backend_slot(tsr_call *call) { return &call->backend_call; }
int32_t call_lane(const tsr_call *call) { return call->lane; }

/* ---- results ------------------------------------------------------------- */

TSR_API int32_t tsr_call_n_results(const tsr_call *call) {
    return (call && call->results_valid) ? call->n_results : 0;
}

TSR_API const tsr_array *tsr_call_result(const tsr_call *call, int32_t k) {
    if (!call || !call->results_valid || k < 0 || k >= call->n_results) return NULL;
    return &call->results[k];
}

TSR_API void *tsr_call_take_result(tsr_call *call, int32_t k) {
    if (!call || !call->results_valid || call->parent || call->ep == TSR_EP_ABSTRACT_EVAL ||
        k < 0 || k >= call->n_results)
        return NULL;
    void *p = call->results[k].data;
    if (!p || p != call->bufs[k].ptr) return NULL;   /* taken already */
    call->bufs[k] = (result_buf){0};
    /* The cached arguments name the buffer: the next run sizes and
     * allocates its results again. */
    call->validated = 0;
    return p;
}

TSR_API const tsr_array *tsr_call_output(const tsr_call *call, const char *name) {
    if (!call || !call->results_valid || !name) return NULL;
    const tsr_component *c = call->comp;
    for (int32_t k = 0; k < call->n_results; k++) {
        const char *rname;
        switch (call->ep) {
        case TSR_EP_JVP: rname = call->wrt_out_paths[k]; break;
        case TSR_EP_VJP:
        case TSR_EP_HVP: rname = call->wrt_in_paths[k]; break;
        case TSR_EP_JACOBIAN: return NULL;
        default: rname = c->out[k].field.name; break;
        }
        if (strcmp(rname, name) == 0) return &call->results[k];
    }
    return NULL;
}

TSR_API const char *tsr_call_output_text(const tsr_call *call, const char *name, size_t *len) {
    if (!call || !name || call->ep != TSR_EP_APPLY) return NULL;
    int32_t o = find_field(call->comp->out, call->comp->n_out, name);
    if (o < 0 || call->comp->out[o].field.kind == TSR_KIND_ARRAY) return NULL;
    const tsr_array *r = tsr_call_output(call, name);
    if (!r || !r->data || r->rank != 1) return NULL;
    if (len) *len = (size_t)r->shape[0];
    return r->data;
}

TSR_API const tsr_array *tsr_call_jacobian(const tsr_call *call, const char *out_name,
                                           const char *in_name) {
    if (!call || !call->results_valid || call->ep != TSR_EP_JACOBIAN || !out_name || !in_name)
        return NULL;
    for (int32_t o = 0; o < call->n_wrt_out; o++) {
        if (strcmp(call->wrt_out_paths[o], out_name) != 0) continue;
        for (int32_t i = 0; i < call->n_wrt_in; i++)
            if (strcmp(call->wrt_in_paths[i], in_name) == 0)
                return &call->results[o * call->n_wrt_in + i];
    }
    return NULL;
}

TSR_API int tsr_call_errcode(const tsr_call *call) { return call ? call->errcode : TSR_E_ARGUMENT; }

TSR_API const char *tsr_call_errmsg(const tsr_call *call) {
    return call ? call->errmsg : "no call (NULL)";
}
