/* SPDX-License-Identifier: MIT */
/* Gradient checks: the report as compact JSON (layout in gradcheck.h). */
#include <math.h>

#include "codecs/json_writer.h"
#include "gradcheck_internal.h"
#include "core/internal.h"

static const char *reference_name(tsr_gradcheck_reference ref) {
    switch (ref) {
    case TSR_GRADCHECK_VS_FD: return "fd";
    case TSR_GRADCHECK_VS_JACOBIAN: return "jacobian";
    case TSR_GRADCHECK_VS_TAYLOR: return "taylor";
    case TSR_GRADCHECK_VS_VJP_FD: return "vjp_fd";
    default: return NULL;
    }
}

/* JSON has no NaN or infinity. */
static void number(json_writer *w, double v) {
    if (isfinite(v)) jw_double(w, v);
    else jw_null(w);
}

static void string_or_null(json_writer *w, const char *s) {
    if (s) jw_string(w, s);
    else jw_null(w);
}

static void index_of(json_writer *w, const char *key, int64_t index) {
    jw_key(w, key);
    if (index >= 0) jw_int(w, index);
    else jw_null(w);
}

static void multi_of(json_writer *w, const char *key, int64_t index, int32_t rank,
                     const int64_t *multi) {
    jw_key(w, key);
    if (index < 0) {
        jw_null(w);
        return;
    }
    jw_begin_array(w);
    for (int32_t d = 0; d < rank; d++) jw_int(w, multi[d]);
    jw_end_array(w);
}

static void numbers(json_writer *w, const char *key, const double *v, int32_t n) {
    jw_key(w, key);
    jw_begin_array(w);
    for (int32_t k = 0; k < n; k++) number(w, v[k]);
    jw_end_array(w);
}

static void write_summaries(json_writer *w, const tsr_gradcheck_report *r) {
    static const tsr_endpoint eps[] = {TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN, TSR_EP_HVP};
    jw_key(w, "endpoints");
    jw_begin_object(w);
    for (size_t k = 0; k < 4; k++) {
        const tsr_gradcheck_summary *s = tsr_gradcheck_summary_of(r, eps[k]);
        jw_key(w, tsr_endpoint_name(eps[k]));
        jw_begin_object(w);
        jw_key(w, "checked");
        jw_bool(w, s->checked != 0);
        jw_key(w, "reference");
        string_or_null(w, reference_name(s->reference));
        jw_key(w, "checks");
        jw_int(w, s->checks);
        jw_key(w, "failures");
        jw_int(w, s->failures);
        jw_key(w, "max_abs_err");
        number(w, s->max_abs_err);
        jw_key(w, "max_rel_err");
        number(w, s->max_rel_err);
        jw_key(w, "calls");
        jw_int(w, s->calls);
        jw_end_object(w);
    }
    jw_end_object(w);
}

static void write_failure(json_writer *w, const tsr_gradcheck_failure *f) {
    jw_begin_object(w);
    jw_key(w, "endpoint");
    jw_string(w, tsr_endpoint_name(f->endpoint));
    jw_key(w, "reference");
    string_or_null(w, reference_name(f->reference));
    jw_key(w, "input");
    string_or_null(w, f->input);
    jw_key(w, "output");
    string_or_null(w, f->output);
    index_of(w, "in_index", f->in_index);
    index_of(w, "out_index", f->out_index);
    multi_of(w, "in_multi", f->in_index, f->in_rank, f->in_multi);
    multi_of(w, "out_multi", f->out_index, f->out_rank, f->out_multi);
    const char *keys[] = {"got", "want", "abs_err", "rel_err", "tolerance"};
    double vals[] = {f->got, f->want, f->abs_err, f->rel_err, f->tolerance};
    for (int k = 0; k < 5; k++) {
        jw_key(w, keys[k]);
        number(w, vals[k]);
    }
    jw_end_object(w);
}

static void write_taylor(json_writer *w, const tsr_gradcheck_taylor *t) {
    jw_begin_object(w);
    jw_key(w, "endpoint");
    jw_string(w, tsr_endpoint_name(t->endpoint));
    jw_key(w, "input");
    jw_string(w, t->input);
    jw_key(w, "output");
    jw_string(w, t->output);
    numbers(w, "steps", t->step, t->n_steps);
    numbers(w, "residuals", t->residual, t->n_steps);
    numbers(w, "floors", t->floor, t->n_steps);
    numbers(w, "orders", t->order, t->n_steps - 1);
    jw_key(w, "passed");
    jw_bool(w, t->passed != 0);
    jw_end_object(w);
}

TSR_API int tsr_gradcheck_report_json(const tsr_gradcheck_report *r, char **out, tsr_error *err) {
    if (out) *out = NULL;
    if (!r || !out) {
        error_set(err, TSR_E_ARGUMENT, "tsr_gradcheck_report_json: %s is NULL",
                  !r ? "the report" : "out");
        return TSR_E_ARGUMENT;
    }
    json_writer w;
    jw_init(&w);
    jw_begin_object(&w);
    jw_key(&w, "passed");
    jw_bool(&w, tsr_gradcheck_passed(r) != 0);
    jw_key(&w, "taylor");
    jw_bool(&w, tsr_gradcheck_is_taylor(r) != 0);
    jw_key(&w, "apply_evals");
    jw_int(&w, tsr_gradcheck_apply_evals(r));
    write_summaries(&w, r);
    jw_key(&w, "failures");
    jw_begin_array(&w);
    for (int64_t k = 0; k < tsr_gradcheck_n_failures(r); k++)
        write_failure(&w, tsr_gradcheck_failure_at(r, k));
    jw_end_array(&w);
    jw_key(&w, "skipped");
    jw_begin_array(&w);
    for (int32_t k = 0; k < tsr_gradcheck_n_skipped(r); k++) {
        const tsr_gradcheck_skip *s = tsr_gradcheck_skipped_at(r, k);
        jw_begin_object(&w);
        jw_key(&w, "field");
        jw_string(&w, s->field);
        jw_key(&w, "kind");
        jw_string(&w, s->is_input ? "input" : "output");
        jw_key(&w, "reason");
        jw_string(&w, s->reason);
        jw_end_object(&w);
    }
    jw_end_array(&w);
    jw_key(&w, "taylor_tests");
    jw_begin_array(&w);
    for (int32_t k = 0; k < tsr_gradcheck_n_taylor(r); k++)
        write_taylor(&w, tsr_gradcheck_taylor_at(r, k));
    jw_end_array(&w);
    jw_end_object(&w);
    *out = jw_finish(&w);
    if (!*out) {
        error_set(err, TSR_E_NOMEM, "out of memory writing the gradient-check report");
        return TSR_E_NOMEM;
    }
    return 0;
}
