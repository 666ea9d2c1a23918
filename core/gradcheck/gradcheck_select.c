/* SPDX-License-Identifier: MIT */
/* Gradient checks: which endpoints and fields are checked, and the
 * samples and buffers each selected field needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck_internal.h"

enum { PURPOSE_SAMPLE_IN = 1, PURPOSE_SAMPLE_OUT = 2 };

static int select_endpoints(gc_session *s, uint32_t asked) {
    static const tsr_endpoint eps[] = {TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN, TSR_EP_HVP};
    s->endpoints = 0;
    for (size_t k = 0; k < sizeof eps / sizeof eps[0]; k++) {
        uint32_t bit = 1u << eps[k];
        if (asked == 0) {
            /* An endpoint served by finite differences would only be
             * compared with finite differences: checked when asked. */
            if (tsr_component_has_native_endpoint(s->c, eps[k])) s->endpoints |= bit;
        } else if (asked & bit) {
            if (!tsr_component_has_endpoint(s->c, eps[k]))
                return gc_fail(s, TSR_E_UNSUPPORTED, "component '%s' has no %s endpoint to check",
                               tsr_component_name(s->c), tsr_endpoint_name(eps[k]));
            s->endpoints |= bit;
        }
    }
    return 0;
}

/* The differentiable fields of one side, for messages. */
static void list_differentiable(const gc_session *s, int inputs, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    int32_t n = inputs ? tsr_component_n_inputs(s->c) : tsr_component_n_outputs(s->c);
    for (int32_t k = 0; k < n; k++) {
        const tsr_field *f = inputs ? tsr_component_input(s->c, k) : tsr_component_output(s->c, k);
        if (!(f->flags & TSR_FIELD_DIFFERENTIABLE)) continue;
        int w = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", f->name);
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
    if (used == 0) snprintf(buf, cap, "none");
}

static const char *skip_reason(tsr_dtype dt) {
    switch (dt) {
    case TSR_FLOAT16: return "float16 fields are not checked (too coarse for finite differences)";
    case TSR_COMPLEX64: return "complex64 fields are not checked (real fields only)";
    case TSR_COMPLEX128: return "complex128 fields are not checked (real fields only)";
    default: return "only float32 and float64 fields are checked";
    }
}

/* Mark the fields of one side to check: those named, or every
 * differentiable one; real dtypes only, the rest reported as skipped. */
static int select_side(gc_session *s, int inputs, const char *const *paths, int32_t n_paths,
                       uint8_t *chosen) {
    const char *side = inputs ? "input" : "output";
    int32_t n = inputs ? tsr_component_n_inputs(s->c) : tsr_component_n_outputs(s->c);
    if (n_paths == 0) {
        for (int32_t k = 0; k < n; k++) {
            const tsr_field *f = inputs ? tsr_component_input(s->c, k) : tsr_component_output(s->c, k);
            chosen[k] = (f->flags & TSR_FIELD_DIFFERENTIABLE) != 0;
        }
    }
    for (int32_t p = 0; p < n_paths; p++) {
        if (paths[p] == NULL) return gc_fail(s, TSR_E_ARGUMENT, "%s path %d is NULL", side, (int)p);
        int32_t k = inputs ? tsr_component_find_input(s->c, paths[p]) : tsr_component_find_output(s->c, paths[p]);
        const tsr_field *f =
            k < 0 ? NULL : inputs ? tsr_component_input(s->c, k) : tsr_component_output(s->c, k);
        if (!f || !(f->flags & TSR_FIELD_DIFFERENTIABLE)) {
            char names[512];
            list_differentiable(s, inputs, names, sizeof names);
            if (!f)
                return gc_fail(s, TSR_E_UNKNOWN_FIELD, "no %s field '%s' (differentiable %ss: %s)",
                               side, paths[p], side, names);
            return gc_fail(s, TSR_E_NOT_DIFFERENTIABLE,
                           "%s '%s' is not differentiable (differentiable %ss: %s)", side,
                           paths[p], side, names);
        }
        if (chosen[k]) return gc_fail(s, TSR_E_ARGUMENT, "%s '%s' is named twice", side, paths[p]);
        chosen[k] = 1;
    }
    for (int32_t k = 0; k < n; k++) {
        const tsr_field *f = inputs ? tsr_component_input(s->c, k) : tsr_component_output(s->c, k);
        int json = f->kind == TSR_KIND_JSON;
        if (!chosen[k] || (gc_is_real(f->dtype) && !json)) continue;
        chosen[k] = 0;
        /* Derivatives inside a JSON value are at paths only its component knows. */
        const char *why = json ? "JSON fields are not checked (their derivatives are at paths "
                                 "inside them)"
                               : skip_reason(f->dtype);
        if (gc_add_skip(s->rep, f->name, inputs, why) != 0)
            return gc_fail(s, TSR_E_NOMEM, "out of memory");
    }
    return 0;
}

static int fill_inputs(gc_session *s, const uint8_t *chosen) {
    int32_t n = tsr_component_n_inputs(s->c);
    for (int32_t k = 0; k < n; k++) {
        if (!chosen[k]) continue;
        gc_in *in = &s->in[s->n_in];
        in->field = k;
        in->name = tsr_component_input(s->c, k)->name;
        s->in_names[s->n_in++] = in->name;
    }
    return 0;
}

static int fill_outputs(gc_session *s, const uint8_t *chosen) {
    int32_t n = tsr_component_n_outputs(s->c);
    for (int32_t k = 0; k < n; k++) {
        if (!chosen[k]) continue;
        gc_out *out = &s->out[s->n_out];
        out->field = k;
        out->name = tsr_component_output(s->c, k)->name;
        s->out_names[s->n_out++] = out->name;
    }
    return 0;
}

int gc_select(gc_session *s, const tsr_gradcheck_options *o) {
    int rc = select_endpoints(s, o->endpoints);
    if (rc) return rc;
    int32_t n_in = tsr_component_n_inputs(s->c), n_out = tsr_component_n_outputs(s->c);
    uint8_t *chosen = calloc((size_t)(n_in + n_out) + 1, 1);
    s->in = calloc((size_t)n_in + 1, sizeof *s->in);
    s->out = calloc((size_t)n_out + 1, sizeof *s->out);
    s->in_names = calloc((size_t)n_in + 1, sizeof *s->in_names);
    s->out_names = calloc((size_t)n_out + 1, sizeof *s->out_names);
    if (!chosen || !s->in || !s->out || !s->in_names || !s->out_names) {
        free(chosen);
        return gc_fail(s, TSR_E_NOMEM, "out of memory");
    }
    rc = select_side(s, 1, o->input_paths, o->n_input_paths, chosen);
    if (!rc) rc = select_side(s, 0, o->output_paths, o->n_output_paths, chosen + n_in);
    if (!rc) rc = fill_inputs(s, chosen);
    if (!rc) rc = fill_outputs(s, chosen + n_in);
    free(chosen);
    return rc;
}

static void *alloc_field(gc_session *s, tsr_dtype dt, int64_t n) {
    size_t bytes = (size_t)(n > 0 ? n : 1) * tsr_dtype_size(dt);
    void *p = tsr_component_alloc(s->c, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

static int prepare_input(gc_session *s, gc_in *in) {
    const tsr_array *a = &s->point[in->field];
    in->dtype = a->dtype;
    in->rank = a->rank;
    in->n = tsr_array_count(a);
    for (int32_t d = 0; d < a->rank && d < TSR_MAX_FIELD_RANK; d++) in->shape[d] = a->shape[d];
    in->orig = a->data;
    size_t bytes = (size_t)in->n * tsr_dtype_size(in->dtype);
    in->work = alloc_field(s, in->dtype, in->n);
    in->seed = alloc_field(s, in->dtype, in->n);
    int64_t k = in->n < s->max_evals ? in->n : s->max_evals;
    in->sample = malloc((size_t)(k > 0 ? k : 1) * sizeof *in->sample);
    if (!in->work || !in->seed || !in->sample) return gc_fail(s, TSR_E_NOMEM, "out of memory");
    if (bytes) memcpy(in->work, in->orig, bytes);
    uint64_t rng = gc_rng_init(s->seed, PURPOSE_SAMPLE_IN, in->field);
    in->n_sample = gc_sample(&rng, in->n, k, in->sample);
    int f32 = in->dtype == TSR_FLOAT32;
    in->eps = s->eps > 0 ? s->eps : f32 ? TSR_GRADCHECK_F32_EPS : TSR_GRADCHECK_F64_EPS;
    in->h0 = s->h0 > 0 ? s->h0 : f32 ? TSR_GRADCHECK_F32_TAYLOR_H0 : TSR_GRADCHECK_F64_TAYLOR_H0;
    return 0;
}

static int prepare_output(gc_session *s, gc_out *out, const tsr_array *a) {
    out->dtype = a->dtype;
    out->rank = a->rank;
    out->n = tsr_array_count(a);
    for (int32_t d = 0; d < a->rank && d < TSR_MAX_FIELD_RANK; d++) out->shape[d] = a->shape[d];
    out->offset = s->m_total;
    s->m_total += out->n;
    out->seed = alloc_field(s, out->dtype, out->n);
    int64_t k = out->n < s->max_evals ? out->n : s->max_evals;
    out->sample = malloc((size_t)(k > 0 ? k : 1) * sizeof *out->sample);
    if (!out->seed || !out->sample) return gc_fail(s, TSR_E_NOMEM, "out of memory");
    uint64_t rng = gc_rng_init(s->seed, PURPOSE_SAMPLE_OUT, out->field);
    out->n_sample = gc_sample(&rng, out->n, k, out->sample);
    out->sample_offset = s->m_sampled;
    s->m_sampled += out->n_sample;
    return 0;
}

int gc_prepare(gc_session *s) {
    for (int32_t k = 0; k < s->n_in; k++) {
        int rc = prepare_input(s, &s->in[k]);
        if (rc) return rc;
    }
    for (int32_t o = 0; o < s->n_out; o++) {
        const tsr_array *a = tsr_call_output(s->apply, s->out[o].name);
        if (!a) return gc_fail(s, TSR_E_PLUGIN_RESULT, "apply gave no output '%s'", s->out[o].name);
        int rc = prepare_output(s, &s->out[o], a);
        if (rc) return rc;
    }
    s->base = malloc((size_t)(s->m_total > 0 ? s->m_total : 1) * sizeof *s->base);
    if (!s->base) return gc_fail(s, TSR_E_NOMEM, "out of memory");
    for (int32_t o = 0; o < s->n_out; o++) {
        const tsr_array *a = tsr_call_output(s->apply, s->out[o].name);
        for (int64_t j = 0; j < s->out[o].n; j++)
            s->base[s->out[o].offset + j] = gc_get(a->data, a->dtype, j);
    }
    return 0;
}
