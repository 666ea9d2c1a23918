/* SPDX-License-Identifier: MIT */
/* hvp for a component without a native one (tsr_component_hvp_source):
 *
 *   FD_VJP    central difference of the vjp along the tangent v:
 *             Hv ~ (vjp(x + h v) - vjp(x - h v)) / 2h, the vjp the
 *             component's own, or w^T J from its own jacobian. Two
 *             vjp (or jacobian) calls. Error O(h^2) + O(eps / h) relative
 *             to the vjp's size.
 *   FD_APPLY  central second differences of g = sum_o w_o . f_o along each
 *             element e_i of the hvp_inputs and along v:
 *             (Hv)_i ~ (g(+h e_i + s v) - g(+h e_i - s v)
 *                       - g(-h e_i + s v) + g(-h e_i - s v)) / (4 h s).
 *             1 + 4n apply calls for n input elements. Error O(h^2) +
 *             O(eps / h^2): steps ~ eps^(1/4).
 *
 * Steps are relative to max(|x|, 1), as fd_fallback.c's. Along the
 * direction v the step is the largest that moves no element by more than
 * its own relative step: h = step * min_i max(|x_i|, 1) / |v_i| over the
 * v_i != 0 (one large input, b = 300 beside x ~ 1, must not make the step
 * of the others large). Each evaluation is
 * an ordinary call (through a worker in worker mode) whose cancel_root is
 * the hvp call: a cancel stops the fallback between evaluations, and the
 * limits hold for each evaluation as for any call. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/gradcheck/fd_elements.h"
#include "core/internal.h"

typedef struct hvp_run {
    tsr_call *call;          /* the hvp call being served */
    tsr_call *inner;         /* evaluates vjp, jacobian or apply */
    tsr_array *work;         /* per hvp_input: a copy the steps perturb */
    double **dir;            /* per hvp_input: the tangent as doubles */
    double tmax;             /* max |v| (0: no direction) */
    double reach;            /* min over v_i != 0 of max(|x_i|, 1) / |v_i| */
    int single;              /* a float32 input: the steps follow float32's eps */
} hvp_run;

static int check_fields(tsr_call *call) {
    const tsr_component *c = call->comp;
    for (int32_t k = 0; k < call->n_wrt_in + call->n_wrt_out; k++) {
        int in = k < call->n_wrt_in;
        const tsr_field *f = in ? &c->in[call->wrt_in[k]].field
                                : &c->out[call->wrt_out[k - call->n_wrt_in]].field;
        const char *path = in ? call->wrt_in_paths[k] : call->wrt_out_paths[k - call->n_wrt_in];
        if (f->kind == TSR_KIND_JSON)
            return call_fail(call, TSR_E_UNSUPPORTED,
                             "hvp by finite differences cannot differentiate inside JSON fields "
                             "('%s'); only the component's own hvp can",
                             path);
        if (f->dtype != TSR_FLOAT32 && f->dtype != TSR_FLOAT64)
            return call_fail(call, TSR_E_UNSUPPORTED,
                             "hvp by finite differences needs float32 or float64 fields; %s "
                             "'%s' is %s",
                             in ? "input" : "output", f->name, tsr_dtype_name(f->dtype));
    }
    return 0;
}

/* The inner call, every input bound, the hvp_inputs to working copies
 * from the component's buffers (in worker mode the arena: they cross by
 * reference); the tangents read as doubles. */
static int setup(hvp_run *r, tsr_endpoint inner_ep) {
    tsr_call *call = r->call;
    tsr_component *c = call->comp;
    if (call->fd_apply && call->fd_apply->ep != inner_ep) {
        tsr_call_free(call->fd_apply);
        call->fd_apply = NULL;
    }
    if (!call->fd_apply && !(call->fd_apply = tsr_call_new(c, inner_ep)))
        return call_fail(call, TSR_E_NOMEM, "out of memory");
    r->inner = call->fd_apply;
    r->inner->cancel_root = call->cancel_root;   /* its evaluations stop at a cancel */
    if (!call->fd_work && !(call->fd_work = calloc((size_t)c->n_in, sizeof *call->fd_work)))
        return call_fail(call, TSR_E_NOMEM, "out of memory");
    size_t n_wi = (size_t)(call->n_wrt_in > 0 ? call->n_wrt_in : 1);
    r->work = calloc(n_wi, sizeof *r->work);
    r->dir = calloc(n_wi, sizeof *r->dir);
    if (!r->work || !r->dir) return call_fail(call, TSR_E_NOMEM, "out of memory");
    int rc = fd_bind_inputs(call, r->inner, r->work, call->fd_work);
    if (rc) return rc;
    for (int32_t k = 0; k < call->n_wrt_in; k++) {
        const tsr_array *x = &call->inputs[call->wrt_in[k]];
        const tsr_array *t = &call->seeds[call->n_wrt_out + k];
        int64_t n = fd_count_of(x);
        if (!(r->dir[k] = malloc((size_t)(n > 0 ? n : 1) * sizeof(double))))
            return call_fail(call, TSR_E_NOMEM, "out of memory");
        for (int64_t i = 0; i < n; i++) {
            double v = r->dir[k][i] = fd_get_el(t, i);
            if (v == 0) continue;
            double reach = fmax(fabs(fd_get_el(x, i)), 1.0) / fabs(v);
            r->reach = r->tmax == 0 ? reach : fmin(r->reach, reach);
            r->tmax = fmax(r->tmax, fabs(v));
        }
        if (x->dtype == TSR_FLOAT32) r->single = 1;
    }
    if (inner_ep == TSR_EP_APPLY) return 0;
    rc = tsr_call_set_wrt(r->inner, call->wrt_in_paths, call->n_wrt_in, call->wrt_out_paths,
                          call->n_wrt_out);
    for (int32_t o = 0; !rc && inner_ep == TSR_EP_VJP && o < call->n_wrt_out; o++)
        rc = tsr_call_set_seed(r->inner, call->wrt_out_paths[o], &call->seeds[o]);
    if (rc)
        return call_fail(call, rc, "cannot set up the %s that hvp differences: %s",
                         tsr_endpoint_name(inner_ep), call_cause(r->inner));
    return 0;
}

/* Set the working copies to x + s (v along every input) + e (element
 * `at` of input `only`; only < 0: none). */
static void shift(hvp_run *r, double s, int32_t only, int64_t at, double e) {
    tsr_call *call = r->call;
    for (int32_t k = 0; k < call->n_wrt_in; k++) {
        const tsr_array *x = &call->inputs[call->wrt_in[k]];
        for (int64_t i = 0; i < fd_count_of(x); i++)
            fd_set_el(&r->work[k], i,
                   fd_get_el(x, i) + s * r->dir[k][i] + (k == only && i == at ? e : 0.0));
    }
}

static int run_inner(hvp_run *r) {
    if (call_run_native(r->inner) == 0) return 0;
    return call_fail(r->call, tsr_call_errcode(r->inner), "%s failed during finite differences "
                     "of hvp: %s", tsr_endpoint_name(r->inner->ep), call_cause(r->inner));
}

/* The vjp at the working copies, into out[k] (elements of hvp_input k):
 * the inner vjp's results, or w^T J from the inner jacobian's blocks. */
static int eval_vjp(hvp_run *r, double **out) {
    tsr_call *call = r->call;
    int rc = run_inner(r);
    if (rc) return rc;
    for (int32_t k = 0; k < call->n_wrt_in; k++) {
        int64_t n = fd_count_of(&call->inputs[call->wrt_in[k]]);
        if (r->inner->ep == TSR_EP_VJP) {
            const tsr_array *g = tsr_call_result(r->inner, k);
            for (int64_t i = 0; i < n; i++) out[k][i] = fd_get_el(g, i);
            continue;
        }
        for (int64_t i = 0; i < n; i++) out[k][i] = 0;
        for (int32_t o = 0; o < call->n_wrt_out; o++) {
            const tsr_array *J = tsr_call_result(r->inner, o * call->n_wrt_in + k);
            const tsr_array *w = &call->seeds[o];
            int64_t m = fd_count_of(w);
            if (fd_count_of(J) != m * n)
                return call_fail(call, TSR_E_PLUGIN_RESULT,
                                 "jacobian block '%s'/'%s' has %lld elements, %lld expected",
                                 call->wrt_out_paths[o], call->wrt_in_paths[k],
                                 (long long)fd_count_of(J), (long long)(m * n));
            for (int64_t p = 0; p < m; p++) {
                double wp = fd_get_el(w, p);
                if (wp != 0)
                    for (int64_t i = 0; i < n; i++) out[k][i] += wp * fd_get_el(J, p * n + i);
            }
        }
    }
    return 0;
}

static void free_rows(double **v, int32_t n) {
    for (int32_t k = 0; v && k < n; k++) free(v[k]);
    free(v);
}

static double **alloc_rows(const tsr_call *call) {
    int32_t n_wi = call->n_wrt_in;
    double **v = calloc((size_t)(n_wi > 0 ? n_wi : 1), sizeof *v);
    for (int32_t k = 0; v && k < n_wi; k++) {
        int64_t n = fd_count_of(&call->inputs[call->wrt_in[k]]);
        if (!(v[k] = malloc((size_t)(n > 0 ? n : 1) * sizeof(double)))) {
            free_rows(v, n_wi);
            return NULL;
        }
    }
    return v;
}

static void zero_results(tsr_call *call) {
    for (int32_t k = 0; k < call->n_wrt_in; k++)
        for (int64_t i = 0; i < fd_count_of(&call->results[k]); i++) fd_set_el(&call->results[k], i, 0);
}

/* The relative first-order step: the plugin's fd_step, else cbrt(eps). */
static double central_step(const hvp_run *r) {
    if (r->call->comp->fd_step > 0) return r->call->comp->fd_step;
    return cbrt(r->single ? FLT_EPSILON : DBL_EPSILON);
}

static int by_vjp(hvp_run *r) {
    tsr_call *call = r->call;
    if (r->tmax == 0) {   /* no direction: the product is zero, no call needed */
        zero_results(call);
        return 0;
    }
    double h = central_step(r) * r->reach;
    double **plus = alloc_rows(call), **minus = alloc_rows(call);
    int rc = plus && minus ? 0 : call_fail(call, TSR_E_NOMEM, "out of memory");
    if (!rc) {
        shift(r, h, -1, 0, 0);
        rc = eval_vjp(r, plus);
    }
    if (!rc) {
        shift(r, -h, -1, 0, 0);
        rc = eval_vjp(r, minus);
    }
    for (int32_t k = 0; !rc && k < call->n_wrt_in; k++)
        for (int64_t i = 0; i < fd_count_of(&call->results[k]); i++)
            fd_set_el(&call->results[k], i, (plus[k][i] - minus[k][i]) / (2 * h));
    free_rows(plus, call->n_wrt_in);
    free_rows(minus, call->n_wrt_in);
    return rc;
}

/* g = sum_o w_o . f_o at the working copies. */
static int eval_weighted(hvp_run *r, double *g) {
    tsr_call *call = r->call;
    int rc = run_inner(r);
    if (rc) return rc;
    double s = 0;
    for (int32_t o = 0; o < call->n_wrt_out; o++) {
        const tsr_array *y = tsr_call_result(r->inner, call->wrt_out[o]);
        const tsr_array *w = &call->seeds[o];
        if (fd_count_of(y) != fd_count_of(w))
            return call_fail(call, TSR_E_PLUGIN_RESULT,
                             "output '%s' has %lld elements under a finite-difference step, its "
                             "cotangent %lld",
                             call->wrt_out_paths[o], (long long)fd_count_of(y),
                             (long long)fd_count_of(w));
        for (int64_t p = 0; p < fd_count_of(w); p++) s += fd_get_el(w, p) * fd_get_el(y, p);
    }
    *g = s;
    return 0;
}

static int by_apply(hvp_run *r) {
    tsr_call *call = r->call;
    double g = 0;
    int rc = eval_weighted(r, &g);   /* the base point: outputs' sizes checked once */
    if (rc || r->tmax == 0) {
        if (!rc) zero_results(call);
        return rc;
    }
    /* Second differences: eps^(1/4), or the plugin's first-order fd_step
     * (tuned to its noise, ~ noise^(1/3)) to the power 3/4 (~ noise^(1/4)). */
    double rel = call->comp->fd_step > 0 ? pow(call->comp->fd_step, 0.75)
                                         : pow(r->single ? FLT_EPSILON : DBL_EPSILON, 0.25);
    double s = rel * r->reach;
    for (int32_t k = 0; !rc && k < call->n_wrt_in; k++) {
        const tsr_array *x = &call->inputs[call->wrt_in[k]];
        for (int64_t i = 0; !rc && i < fd_count_of(x); i++) {
            double h = rel * fmax(fabs(fd_get_el(x, i)), 1.0), v[4];
            static const double sh[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
            for (int q = 0; !rc && q < 4; q++) {
                shift(r, sh[q][1] * s, k, i, sh[q][0] * h);
                rc = eval_weighted(r, &v[q]);
            }
            if (!rc) fd_set_el(&call->results[k], i, (v[0] - v[1] - v[2] + v[3]) / (4 * h * s));
        }
    }
    return rc;
}

int hvp_fd_invoke(tsr_call *call) {
    tsr_hvp_source src = tsr_component_hvp_source(call->comp);
    if (src != TSR_HVP_FD_VJP && src != TSR_HVP_FD_APPLY)
        return call_fail(call, TSR_E_UNSUPPORTED, "the component has no hvp");
    int rc = check_fields(call);
    if (rc) return rc;
    hvp_run r = {.call = call};
    tsr_endpoint inner = src == TSR_HVP_FD_APPLY ? TSR_EP_APPLY
                         : call->comp->ep[TSR_EP_VJP] ? TSR_EP_VJP
                                                      : TSR_EP_JACOBIAN;
    rc = setup(&r, inner);
    if (!rc) rc = src == TSR_HVP_FD_VJP ? by_vjp(&r) : by_apply(&r);
    free_rows(r.dir, call->n_wrt_in);
    free(r.work);
    return rc;
}
