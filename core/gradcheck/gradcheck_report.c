/* SPDX-License-Identifier: MIT */
/* Gradient checks: the report object, what the checks record in it, and
 * its public accessors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck_internal.h"
#include "core/internal.h"

/* A Taylor test as handed out (its arrays const) and the block it owns:
 * step, residual, floor, order. */
typedef struct gc_taylor {
    tsr_gradcheck_taylor t;
    double *block;
} gc_taylor;

struct tsr_gradcheck_report {
    int taylor;
    int64_t apply_evals;
    tsr_gradcheck_summary sum[4];      /* jvp, vjp, jacobian, hvp (summary_slot) */
    int64_t max_failures;
    tsr_gradcheck_failure *fail;
    int64_t n_fail, cap_fail;
    tsr_gradcheck_skip *skip;
    int32_t n_skip, cap_skip;
    gc_taylor *tay;
    int32_t n_tay, cap_tay;
};

/* Grow an array of elements of `size` bytes to hold one more. */
static int grow(void **items, int64_t n, int64_t *cap, size_t size) {
    if (n < *cap) return 0;
    int64_t want = *cap ? *cap * 2 : 16;
    void *p = realloc(*items, (size_t)want * size);
    if (!p) return TSR_E_NOMEM;
    *items = p;
    *cap = want;
    return 0;
}

tsr_gradcheck_report *gc_report_new(int taylor, int64_t max_failures) {
    tsr_gradcheck_report *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->taylor = taylor;
    r->max_failures = max_failures;
    return r;
}

/* The slot of a derivative endpoint's summary. */
static int summary_slot(tsr_endpoint ep) { return ep == TSR_EP_HVP ? 3 : (int)ep - TSR_EP_JVP; }

tsr_gradcheck_summary *gc_summary(tsr_gradcheck_report *r, tsr_endpoint ep) {
    return &r->sum[summary_slot(ep)];
}

void gc_count_apply(tsr_gradcheck_report *r) { r->apply_evals++; }

int gc_add_skip(tsr_gradcheck_report *r, const char *field, int is_input, const char *reason) {
    int64_t cap = r->cap_skip;
    if (grow((void **)&r->skip, r->n_skip, &cap, sizeof *r->skip)) return TSR_E_NOMEM;
    r->cap_skip = (int32_t)cap;
    r->skip[r->n_skip++] =
        (tsr_gradcheck_skip){.field = field, .is_input = is_input, .reason = reason};
    return 0;
}

static void fill_failure(tsr_gradcheck_failure *f, const gc_cmp *c, double abs_err,
                         double rel_err) {
    memset(f, 0, sizeof *f);
    f->endpoint = c->ep;
    f->reference = c->ref;
    /* A dense tangent (cotangent) spans every input (output): no field. */
    f->input = c->in ? c->in->name : NULL;
    f->output = c->out ? c->out->name : NULL;
    f->in_index = c->in_index;
    f->out_index = c->out_index;
    f->in_rank = c->in ? c->in->rank : 0;
    f->out_rank = c->out ? c->out->rank : 0;
    if (c->in && c->in_index >= 0) gc_unravel(c->in_index, c->in->rank, c->in->shape, f->in_multi);
    if (c->out && c->out_index >= 0)
        gc_unravel(c->out_index, c->out->rank, c->out->shape, f->out_multi);
    f->got = c->got;
    f->want = c->want;
    f->abs_err = abs_err;
    f->rel_err = rel_err;
    f->tolerance = c->tol;
}

int gc_compare(tsr_gradcheck_report *r, const gc_cmp *c) {
    tsr_gradcheck_summary *s = gc_summary(r, c->ep);
    double abs_err = fabs(c->got - c->want);
    double rel_err = c->scale > 0 ? abs_err / c->scale : abs_err > 0 ? INFINITY : 0.0;
    if (isnan(c->got) || isnan(c->want)) abs_err = rel_err = NAN;
    s->checks++;
    /* NaN sticks: once seen, the maximum stays NaN. */
    if (isnan(abs_err) || abs_err > s->max_abs_err) s->max_abs_err = abs_err;
    if (isnan(rel_err) || rel_err > s->max_rel_err) s->max_rel_err = rel_err;
    if (abs_err <= c->tol) return 0;
    s->failures++;
    if (r->n_fail >= r->max_failures) return 0;
    if (grow((void **)&r->fail, r->n_fail, &r->cap_fail, sizeof *r->fail)) return TSR_E_NOMEM;
    fill_failure(&r->fail[r->n_fail++], c, abs_err, rel_err);
    return 0;
}

/* Orders from consecutive residuals above their floors; the test passes
 * when the last two counted orders reach min_order, or none counts. */
static void judge(tsr_gradcheck_taylor *t, double *order, double min_order) {
    const double *r = t->residual, *fl = t->floor;
    t->n_counted = 0;
    double last = NAN, before = NAN;
    for (int32_t k = 0; k + 1 < t->n_steps; k++) {
        order[k] = NAN;
        if (!(r[k] > fl[k] && r[k + 1] > fl[k + 1])) continue;
        order[k] = log2(r[k] / r[k + 1]);
        before = last;
        last = order[k];
        t->n_counted++;
    }
    t->passed = t->n_counted == 0 ||
                (last >= min_order && (t->n_counted == 1 || before >= min_order));
}

int gc_add_taylor(tsr_gradcheck_report *r, tsr_endpoint ep, const char *input, const char *output,
                  int32_t n_steps, const double *step, const double *residual, const double *floor_,
                  double min_order) {
    int64_t cap = r->cap_tay;
    if (grow((void **)&r->tay, r->n_tay, &cap, sizeof *r->tay)) return TSR_E_NOMEM;
    r->cap_tay = (int32_t)cap;
    double *block = malloc((size_t)n_steps * 4 * sizeof *block);
    if (!block) return TSR_E_NOMEM;
    size_t bytes = (size_t)n_steps * sizeof *block;
    memcpy(block, step, bytes);
    memcpy(block + n_steps, residual, bytes);
    memcpy(block + 2 * n_steps, floor_, bytes);
    gc_taylor *g = &r->tay[r->n_tay++];
    memset(g, 0, sizeof *g);
    g->block = block;
    tsr_gradcheck_taylor *t = &g->t;
    t->endpoint = ep;
    t->input = input;
    t->output = output;
    t->n_steps = n_steps;
    t->step = block;
    t->residual = block + n_steps;
    t->floor = block + 2 * n_steps;
    t->order = block + 3 * n_steps;
    judge(t, block + 3 * n_steps, min_order);
    tsr_gradcheck_summary *s = gc_summary(r, ep);
    s->checks++;
    if (!t->passed) s->failures++;
    return 0;
}

/* ---- public accessors ------------------------------------------------------ */

TSR_API void tsr_gradcheck_report_free(tsr_gradcheck_report *r) {
    if (!r) return;
    for (int32_t k = 0; k < r->n_tay; k++) free(r->tay[k].block);
    free(r->tay);
    free(r->skip);
    free(r->fail);
    free(r);
}

TSR_API int tsr_gradcheck_passed(const tsr_gradcheck_report *r) {
    if (!r) return 0;
    for (int k = 0; k < 4; k++)
        if (r->sum[k].failures > 0) return 0;
    return 1;
}

TSR_API int64_t tsr_gradcheck_apply_evals(const tsr_gradcheck_report *r) {
    return r ? r->apply_evals : 0;
}

TSR_API int tsr_gradcheck_is_taylor(const tsr_gradcheck_report *r) { return r ? r->taylor : 0; }

TSR_API const tsr_gradcheck_summary *tsr_gradcheck_summary_of(const tsr_gradcheck_report *r,
                                                              tsr_endpoint ep) {
    if (!r || (ep != TSR_EP_JVP && ep != TSR_EP_VJP && ep != TSR_EP_JACOBIAN && ep != TSR_EP_HVP))
        return NULL;
    return &r->sum[summary_slot(ep)];
}

TSR_API int64_t tsr_gradcheck_n_failures(const tsr_gradcheck_report *r) {
    return r ? r->n_fail : 0;
}

TSR_API const tsr_gradcheck_failure *tsr_gradcheck_failure_at(const tsr_gradcheck_report *r,
                                                              int64_t k) {
    return r && k >= 0 && k < r->n_fail ? &r->fail[k] : NULL;
}

TSR_API int32_t tsr_gradcheck_n_skipped(const tsr_gradcheck_report *r) {
    return r ? r->n_skip : 0;
}

TSR_API const tsr_gradcheck_skip *tsr_gradcheck_skipped_at(const tsr_gradcheck_report *r,
                                                           int32_t k) {
    return r && k >= 0 && k < r->n_skip ? &r->skip[k] : NULL;
}

TSR_API int32_t tsr_gradcheck_n_taylor(const tsr_gradcheck_report *r) { return r ? r->n_tay : 0; }

TSR_API const tsr_gradcheck_taylor *tsr_gradcheck_taylor_at(const tsr_gradcheck_report *r,
                                                           int32_t k) {
    return r && k >= 0 && k < r->n_tay ? &r->tay[k].t : NULL;
}
