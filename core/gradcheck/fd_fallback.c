/* SPDX-License-Identifier: MIT */
/* Derivatives by finite differences of apply, for plugins that declare an
 * fd_method instead of writing jvp, vjp or jacobian (costs in plugin.h).
 * Runs in the host in every mode: each evaluation is an ordinary apply
 * call, through a worker in worker mode. With a pool of workers (lanes >
 * 1) the columns of a vjp or jacobian are split across lanes, each with
 * its own apply call on its own thread, driving its own worker as a
 * batch's lanes do (batch.c); each column's arithmetic is the sequential
 * one, so the results are bit-identical. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gradcheck/fd_elements.h"
#include "core/internal.h"

/* One finite-difference evaluation context. */
typedef struct fd_run {
    tsr_call *call;          /* the derivative call being served */
    tsr_call *apply;         /* evaluates f */
    tsr_array *work;         /* per wrt input: a copy the steps perturb */
    int64_t *out_count;      /* per wrt output: its elements, fixed by the base point */
    /* A lane's failure is kept here (lanes may not write the shared call)
     * and handed to the call once every lane has stopped. */
    int in_lane;
    int err_code;
    char err[TSR_ERRMSG_MAX];
} fd_run;

static int fd_fail(fd_run *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fd_fail(fd_run *r, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->err_code = code;
    return r->in_lane ? code : call_fail(r->call, code, "%s", r->err);
}

/* splitmix64: a seeded, repeatable stream of +-1 directions for SPSA. */
static double next_sign(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return ((z ^ (z >> 31)) & 1) ? 1.0 : -1.0;
}

static double default_step(const tsr_component *c, tsr_dtype dt) {
    if (c->fd_step > 0) return c->fd_step;
    double eps = dt == TSR_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    return c->fd_method == TSR_FD_FORWARD ? sqrt(eps) : cbrt(eps);
}

/* The scale a step is relative to: the magnitude (at least 1), or 1
 * under fd_step_rule=absolute. */
static double step_scale(const tsr_component *c, double magnitude) {
    return c->opts.fd_absolute ? 1.0 : fmax(magnitude, 1.0);
}

/* Step for element i of wrt input k: relative to its magnitude. */
static double step_at(const fd_run *r, int32_t k, int64_t i) {
    const tsr_array *x = &r->call->inputs[r->call->wrt_in[k]];
    return default_step(r->call->comp, x->dtype) * step_scale(r->call->comp, fabs(fd_get_el(x, i)));
}

static int check_dtypes(tsr_call *call) {
    tsr_component *c = call->comp;
    for (int32_t k = 0; k < call->n_wrt_in + call->n_wrt_out; k++) {
        int in = k < call->n_wrt_in;
        const tsr_field *f = in ? &c->in[call->wrt_in[k]].field
                                : &c->out[call->wrt_out[k - call->n_wrt_in]].field;
        if (f->kind == TSR_KIND_JSON)
            return call_fail(call, TSR_E_UNSUPPORTED,
                             "finite differences cannot differentiate inside JSON fields ('%s'); "
                             "only the component's own %s can",
                             in ? call->wrt_in_paths[k] : call->wrt_out_paths[k - call->n_wrt_in],
                             tsr_endpoint_name(call->ep));
    }
    for (int32_t k = 0; k < call->n_wrt_in; k++) {
        const tsr_field *f = &c->in[call->wrt_in[k]].field;
        if (f->dtype != TSR_FLOAT32 && f->dtype != TSR_FLOAT64)
            return call_fail(call, TSR_E_UNSUPPORTED,
                             "finite differences need float32 or float64 fields; input '%s' is %s",
                             f->name, tsr_dtype_name(f->dtype));
    }
    for (int32_t o = 0; o < call->n_wrt_out; o++) {
        const tsr_field *f = &c->out[call->wrt_out[o]].field;
        if (f->dtype != TSR_FLOAT32 && f->dtype != TSR_FLOAT64)
            return call_fail(call, TSR_E_UNSUPPORTED,
                             "finite differences need float32 or float64 fields; output '%s' is %s",
                             f->name, tsr_dtype_name(f->dtype));
    }
    return 0;
}

/* Bind every input to the apply call: the differentiated ones to their
 * working copies (from the component's buffers: in worker mode the arena,
 * so that they cross by reference), the others as given. */
static int fd_setup(fd_run *r) {
    tsr_call *call = r->call;
    tsr_component *c = call->comp;
    if (!call->fd_apply && !(call->fd_apply = tsr_call_new(c, TSR_EP_APPLY)))
        return call_fail(call, TSR_E_NOMEM, "out of memory");
    call->fd_apply->cancel_root = call->cancel_root;   /* its evaluations stop at a cancel */
    if (!call->fd_work && !(call->fd_work = calloc((size_t)c->n_in, sizeof *call->fd_work)))
        return call_fail(call, TSR_E_NOMEM, "out of memory");
    r->apply = call->fd_apply;
    r->work = calloc((size_t)(call->n_wrt_in > 0 ? call->n_wrt_in : 1), sizeof *r->work);
    if (!r->work) return call_fail(call, TSR_E_NOMEM, "out of memory");
    return fd_bind_inputs(call, r->apply, r->work, call->fd_work);
}

/* f at the working copies; out[o] receives output wrt_out[o] as doubles. */
static int fd_eval(fd_run *r, double **out) {
    tsr_call *call = r->call;
    if (call_run_native(r->apply) != 0)
        return fd_fail(r, tsr_call_errcode(r->apply),
                       "apply failed during finite differences: %s", call_cause(r->apply));
    for (int32_t o = 0; o < call->n_wrt_out; o++) {
        const tsr_array *y = tsr_call_result(r->apply, call->wrt_out[o]);
        int64_t m = fd_count_of(y);
        if (r->out_count[o] < 0) r->out_count[o] = m;
        if (m != r->out_count[o])
            return fd_fail(r, TSR_E_PLUGIN_RESULT,
                           "output '%s' changed size under a finite-difference step",
                           call->comp->out[call->wrt_out[o]].field.name);
        if (!out[o] && !(out[o] = malloc((size_t)(m > 0 ? m : 1) * sizeof(double))))
            return fd_fail(r, TSR_E_NOMEM, "out of memory");
        for (int64_t p = 0; p < m; p++) out[o][p] = fd_get_el(y, p);
    }
    return 0;
}

/* After the first evaluation every output shape is known: allocate the
 * results the host could not size before (value-dependent shapes). */
static int fd_alloc_results(fd_run *r) {
    tsr_call *call = r->call;
    for (int32_t k = 0; k < call->n_results; k++) {
        tsr_array *res = &call->results[k];
        if (res->data) continue;
        int32_t o = call->ep == TSR_EP_JACOBIAN ? k / call->n_wrt_in : k;
        /* Its leading dims are the output's; a jacobian block's trailing
         * dims (the input's) are already set. */
        const tsr_array *y = tsr_call_result(r->apply, call->wrt_out[o]);
        memcpy(res->shape, y->shape, (size_t)y->rank * sizeof(int64_t));
        char why[TSR_ERRMSG_MAX];
        int code = TSR_E_PLUGIN_RESULT;
        if (!call_result_alloc(call, k, &code, why, sizeof why)) return call_fail(call, code, "%s", why);
    }
    return 0;
}

/* Every output's element count from the schema and the inputs (its dims
 * fixed or bound by the inputs' symbols), and every result already given
 * a buffer: 1, with r->out_count set; else 0 (the base point tells). */
static int sizes_from_schema(fd_run *r) {
    tsr_call *call = r->call;
    for (int32_t k = 0; k < call->n_results; k++)
        if (!call->results[k].data) return 0;
    for (int32_t o = 0; o < call->n_wrt_out; o++) {
        const field_info *f = &call->comp->out[call->wrt_out[o]];
        int64_t shape[TSR_MAX_RANK];
        if (f->field.kind != TSR_KIND_ARRAY || shape_from_symbols(f, call->symval, shape) != 0)
            return 0;
        r->out_count[o] = shape_count(shape, f->field.rank);
    }
    return 1;
}

static void free_outputs(double **v, int32_t n) {
    for (int32_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

/* f(x + s*h*d) for every differentiated input at once: d = dir[k] (NULL =
 * unit vector at element `at` of input `only`). */
static int eval_shifted(fd_run *r, double s, double **dir, int32_t only, int64_t at,
                        const double *h, double **out) {
    tsr_call *call = r->call;
    for (int32_t k = 0; k < call->n_wrt_in; k++) {
        const tsr_array *x = &call->inputs[call->wrt_in[k]];
        if (dir) {
            for (int64_t i = 0; i < fd_count_of(x); i++)
                fd_set_el(&r->work[k], i, fd_get_el(x, i) + s * h[0] * dir[k][i]);
        } else if (k == only) {
            fd_set_el(&r->work[k], at, fd_get_el(x, at) + s * h[0]);
        }
    }
    int rc = fd_eval(r, out);
    /* Restore exact copies for the next step. */
    for (int32_t k = 0; k < call->n_wrt_in; k++) {
        const tsr_array *x = &call->inputs[call->wrt_in[k]];
        if (dir) {
            size_t bytes = 0;
            shape_bytes(x, &bytes);
            if (bytes) memcpy(r->work[k].data, x->data, bytes);
        } else if (k == only) {
            fd_set_el(&r->work[k], at, fd_get_el(x, at));
        }
    }
    return rc;
}

/* (f(x + h d) - f(x - h d)) / 2h, or forward (f(x + h d) - f0) / h. */
static int difference(fd_run *r, double **dir, int32_t only, int64_t at, double h,
                      double **f0, double **plus, double **minus) {
    int rc = eval_shifted(r, 1.0, dir, only, at, &h, plus);
    if (rc) return rc;
    int central = r->call->comp->fd_method != TSR_FD_FORWARD;
    if (central && (rc = eval_shifted(r, -1.0, dir, only, at, &h, minus))) return rc;
    for (int32_t o = 0; o < r->call->n_wrt_out; o++) {
        int64_t m = fd_count_of(tsr_call_result(r->apply, r->call->wrt_out[o]));
        const double *lo = central ? minus[o] : f0[o];
        double denom = central ? 2 * h : h;
        for (int64_t p = 0; p < m; p++) plus[o][p] = (plus[o][p] - lo[p]) / denom;
    }
    return 0;
}

static double max_abs(const tsr_array *a) {
    double m = 0;
    for (int64_t i = 0; i < fd_count_of(a); i++) m = fmax(m, fabs(fd_get_el(a, i)));
    return m;
}

/* jvp: one directional difference along the tangents. */
static int fd_jvp(fd_run *r, double **f0, double **plus, double **minus) {
    tsr_call *call = r->call;
    double xmax = 0, tmax = 0;
    double **dir = calloc((size_t)call->n_wrt_in + 1, sizeof *dir);
    if (!dir) return call_fail(call, TSR_E_NOMEM, "out of memory");
    int rc = 0;
    for (int32_t k = 0; k < call->n_wrt_in && !rc; k++) {
        const tsr_array *t = &call->seeds[k];
        xmax = fmax(xmax, max_abs(&call->inputs[call->wrt_in[k]]));
        tmax = fmax(tmax, max_abs(t));
        if (!(dir[k] = malloc((size_t)(fd_count_of(t) > 0 ? fd_count_of(t) : 1) * sizeof(double))))
            rc = call_fail(call, TSR_E_NOMEM, "out of memory");
        for (int64_t i = 0; !rc && i < fd_count_of(t); i++) dir[k][i] = fd_get_el(t, i);
    }
    /* One step for the whole direction, relative to the largest input. */
    tsr_dtype dt = call->n_wrt_in > 0 ? call->inputs[call->wrt_in[0]].dtype : TSR_FLOAT64;
    double h = default_step(call->comp, dt) * step_scale(call->comp, xmax) / (tmax > 0 ? tmax : 1.0);
    if (!rc && tmax > 0) rc = difference(r, dir, -1, 0, h, f0, plus, minus);
    for (int32_t o = 0; !rc && o < call->n_wrt_out; o++) {
        tsr_array *res = &call->results[o];
        for (int64_t p = 0; p < fd_count_of(res); p++) fd_set_el(res, p, tmax > 0 ? plus[o][p] : 0.0);
    }
    for (int32_t k = 0; k < call->n_wrt_in; k++) free(dir[k]);
    free(dir);
    return rc;
}

/* The cotangent-weighted sum of a difference: sum_o c_o . df_o. */
static double weigh(const tsr_call *call, const fd_run *r, double **df) {
    double s = 0;
    for (int32_t o = 0; o < call->n_wrt_out; o++) {
        const tsr_array *c = &call->seeds[o];
        int64_t m = fd_count_of(tsr_call_result(r->apply, call->wrt_out[o]));
        for (int64_t p = 0; p < m; p++) s += fd_get_el(c, p) * df[o][p];
    }
    return s;
}

/* Column i of wrt input k of a jacobian or vjp, into the call's results:
 * elements no other column writes. */
static int fd_column(fd_run *r, int32_t k, int64_t i, double **f0, double **plus, double **minus) {
    tsr_call *call = r->call;
    int rc = difference(r, NULL, k, i, step_at(r, k, i), f0, plus, minus);
    if (rc) return rc;
    if (call->ep == TSR_EP_VJP) {
        fd_set_el(&call->results[k], i, weigh(call, r, plus));
        return 0;
    }
    int64_t n = fd_count_of(&call->inputs[call->wrt_in[k]]);
    for (int32_t o = 0; o < call->n_wrt_out; o++) {
        tsr_array *block = &call->results[o * call->n_wrt_in + k];
        int64_t m = fd_count_of(tsr_call_result(r->apply, call->wrt_out[o]));
        for (int64_t p = 0; p < m; p++) fd_set_el(block, p * n + i, plus[o][p]);
    }
    return 0;
}

/* Columns [first, end) of all wrt inputs' elements in order; stop (when
 * given) is raised by a lane that failed and ends the others early. */
static int fd_column_range(fd_run *r, int64_t first, int64_t end, double **f0, double **plus,
                           double **minus, _Atomic int *stop) {
    tsr_call *call = r->call;
    int64_t j = 0;
    for (int32_t k = 0; k < call->n_wrt_in && j < end; k++) {
        int64_t n = fd_count_of(&call->inputs[call->wrt_in[k]]);
        for (int64_t i = 0; i < n && j < end; i++, j++) {
            if (j < first) continue;
            if (stop && atomic_load_explicit(stop, memory_order_relaxed)) return 0;
            int rc = fd_column(r, k, i, f0, plus, minus);
            if (rc) return rc;
        }
    }
    return 0;
}

/* One lane of parallel differences: its own apply call, working copies
 * and outputs. */
typedef struct fd_lane {
    fd_run run;
    int64_t first, end;
    double **f0, **plus, **minus;
    _Atomic int *stop;
    int rc;
    pthread_t thread;
} fd_lane;

static void *fd_lane_main(void *arg) {
    fd_lane *l = arg;
    l->rc = fd_column_range(&l->run, l->first, l->end, l->f0, l->plus, l->minus, l->stop);
    if (l->rc) atomic_store(l->stop, 1);
    return NULL;
}

/* The apply calls and working copies of lanes 1 .. n-1, kept by the call
 * from run to run (lane 0 is fd_apply with fd_work). */
static int fd_lanes_ensure(tsr_call *call, int32_t n) {
    tsr_component *c = call->comp;
    if (call->n_fd_lanes >= n) return 0;
    tsr_call **apply = realloc(call->fd_lane_apply, (size_t)(n - 1) * sizeof *apply);
    if (!apply) return TSR_E_NOMEM;
    call->fd_lane_apply = apply;
    result_buf *work = realloc(call->fd_lane_work, (size_t)(n - 1) * (size_t)c->n_in * sizeof *work);
    if (!work) return TSR_E_NOMEM;
    call->fd_lane_work = work;
    if (call->n_fd_lanes < 1) call->n_fd_lanes = 1;
    while (call->n_fd_lanes < n) {
        int32_t t = call->n_fd_lanes;
        memset(&work[(size_t)(t - 1) * c->n_in], 0, (size_t)c->n_in * sizeof *work);
        if (!(apply[t - 1] = tsr_call_new(c, TSR_EP_APPLY))) return TSR_E_NOMEM;
        apply[t - 1]->lane = t;   /* each lane its own worker */
        call->n_fd_lanes++;
    }
    return 0;
}

/* Bind lane t's apply call like fd_setup binds lane 0's, into l. */
static int fd_lane_setup(fd_run *base, fd_lane *l, int32_t t, int32_t n_out) {
    tsr_call *call = base->call;
    tsr_component *c = call->comp;
    l->run = (fd_run){.call = call, .in_lane = 1};
    if (t == 0) {
        l->run.apply = base->apply;
        l->run.work = base->work;
        l->run.out_count = base->out_count;
        return 0;
    }
    fd_run *r = &l->run;
    r->apply = call->fd_lane_apply[t - 1];
    r->apply->cancel_root = call->cancel_root;   /* its evaluations stop at a cancel */
    r->work = calloc((size_t)(call->n_wrt_in > 0 ? call->n_wrt_in : 1), sizeof *r->work);
    r->out_count = malloc((size_t)n_out * sizeof *r->out_count);
    l->plus = calloc((size_t)n_out, sizeof *l->plus);
    l->minus = calloc((size_t)n_out, sizeof *l->minus);
    if (!r->work || !r->out_count || !l->plus || !l->minus)
        return call_fail(call, TSR_E_NOMEM, "out of memory");
    memcpy(r->out_count, base->out_count, (size_t)n_out * sizeof *r->out_count);
    return fd_bind_inputs(call, r->apply, r->work, &call->fd_lane_work[(size_t)(t - 1) * c->n_in]);
}

static void fd_lane_release(fd_lane *l, int32_t t, int32_t n_out) {
    if (t == 0) return;
    free(l->run.work);
    free(l->run.out_count);
    free_outputs(l->plus, n_out);
    free_outputs(l->minus, n_out);
}

/* The columns split across `lanes` threads (this one runs lane 0); a
 * failure is the lowest lane's that failed, as the sequential order would
 * meet the lower columns first; every thread is joined before return. */
static int fd_columns_parallel(fd_run *r, int32_t lanes, int64_t columns, double **f0,
                               double **plus, double **minus) {
    tsr_call *call = r->call;
    int32_t n_out = call->n_wrt_out > 0 ? call->n_wrt_out : 1;
    if (fd_lanes_ensure(call, lanes) != 0) return call_fail(call, TSR_E_NOMEM, "out of memory");
    fd_lane *ls = calloc((size_t)lanes, sizeof *ls);
    if (!ls) return call_fail(call, TSR_E_NOMEM, "out of memory");
    _Atomic int stop = 0;
    int rc = 0;
    int32_t ready = 0;
    int64_t per = columns / lanes, extra = columns % lanes, next = 0;
    for (; ready < lanes && !rc; ready++) {
        fd_lane *l = &ls[ready];
        rc = fd_lane_setup(r, l, ready, n_out);
        l->first = next;
        l->end = next = next + per + (ready < extra);
        l->f0 = f0;
        l->stop = &stop;
        if (ready == 0) {
            l->plus = plus;
            l->minus = minus;
        }
    }
    int32_t started = 1;
    if (!rc) {
        for (int32_t t = 1; t < lanes; t++, started++)
            if (pthread_create(&ls[t].thread, NULL, fd_lane_main, &ls[t]) != 0) break;
        fd_lane_main(&ls[0]);
        /* Lanes that could not get a thread run here, one after the other. */
        for (int32_t t = started; t < lanes; t++) fd_lane_main(&ls[t]);
        for (int32_t t = 1; t < started; t++) lane_join(call, ls[t].thread);
        for (int32_t t = 0; t < lanes && !rc; t++)
            if (ls[t].rc) rc = call_fail(call, ls[t].run.err_code, "%s", ls[t].run.err);
    }
    for (int32_t t = 0; t < ready; t++) fd_lane_release(&ls[t], t, n_out);
    free(ls);
    return rc;
}

/* jacobian and vjp, element by element (forward, central): on a pool of
 * workers, the columns split across its lanes. */
static int fd_columns(fd_run *r, double **f0, double **plus, double **minus) {
    tsr_call *call = r->call;
    int64_t columns = 0;
    for (int32_t k = 0; k < call->n_wrt_in; k++) columns += fd_count_of(&call->inputs[call->wrt_in[k]]);
    int32_t lanes = call->comp->lanes;
    if (lanes > 256) lanes = 256;
    if (lanes > columns) lanes = (int32_t)columns;
    if (lanes > 1) return fd_columns_parallel(r, lanes, columns, f0, plus, minus);
    return fd_column_range(r, 0, columns, f0, plus, minus, NULL);
}

/* jacobian and vjp by SPSA: S central differences along random +-1
 * directions scaled per element, J ~ mean(df (x) d / h). */
static int fd_spsa(fd_run *r, double **plus, double **minus) {
    tsr_call *call = r->call;
    uint32_t samples = call->comp->fd_samples;
    uint64_t seed = 0x7e55e7a5eed5ull;
    double **dir = calloc((size_t)call->n_wrt_in + 1, sizeof *dir);
    int rc = dir ? 0 : call_fail(call, TSR_E_NOMEM, "out of memory");
    for (int32_t k = 0; k < call->n_wrt_in && !rc; k++) {
        int64_t n = fd_count_of(&call->inputs[call->wrt_in[k]]);
        if (!(dir[k] = malloc((size_t)(n > 0 ? n : 1) * sizeof(double))))
            rc = call_fail(call, TSR_E_NOMEM, "out of memory");
    }
    for (int32_t k = 0; !rc && k < call->n_results; k++)
        for (int64_t p = 0; p < fd_count_of(&call->results[k]); p++) fd_set_el(&call->results[k], p, 0.0);
    for (uint32_t s = 0; s < samples && !rc; s++) {
        /* The direction carries each element's own step; h = 1 below. */
        for (int32_t k = 0; k < call->n_wrt_in; k++)
            for (int64_t i = 0; i < fd_count_of(&call->inputs[call->wrt_in[k]]); i++)
                dir[k][i] = next_sign(&seed) * step_at(r, k, i);
        if ((rc = difference(r, dir, -1, 0, 1.0, NULL, plus, minus))) break;
        double w = call->ep == TSR_EP_VJP ? weigh(call, r, plus) : 0;
        for (int32_t k = 0; k < call->n_wrt_in; k++) {
            int64_t n = fd_count_of(&call->inputs[call->wrt_in[k]]);
            for (int64_t i = 0; i < n; i++) {
                double inv = 1.0 / dir[k][i];
                if (call->ep == TSR_EP_VJP) {
                    tsr_array *res = &call->results[k];
                    fd_set_el(res, i, fd_get_el(res, i) + w * inv / samples);
                    continue;
                }
                for (int32_t o = 0; o < call->n_wrt_out; o++) {
                    tsr_array *block = &call->results[o * call->n_wrt_in + k];
                    int64_t m = fd_count_of(tsr_call_result(r->apply, call->wrt_out[o]));
                    for (int64_t p = 0; p < m; p++)
                        fd_set_el(block, p * n + i, fd_get_el(block, p * n + i) + plus[o][p] * inv / samples);
                }
            }
        }
    }
    for (int32_t k = 0; dir && k < call->n_wrt_in; k++) free(dir[k]);
    free(dir);
    return rc;
}

int fd_invoke(tsr_call *call) {
    if (call->ep == TSR_EP_HVP) return hvp_fd_invoke(call);
    int rc = check_dtypes(call);
    if (rc) return rc;
    fd_run r = {.call = call};
    int32_t n_out = call->n_wrt_out > 0 ? call->n_wrt_out : 1;
    double **f0 = calloc((size_t)n_out, sizeof *f0);
    double **plus = calloc((size_t)n_out, sizeof *plus);
    double **minus = calloc((size_t)n_out, sizeof *minus);
    r.out_count = malloc((size_t)n_out * sizeof *r.out_count);
    if (!f0 || !plus || !minus || !r.out_count) rc = call_fail(call, TSR_E_NOMEM, "out of memory");
    for (int32_t o = 0; !rc && o < n_out; o++) r.out_count[o] = -1;
    /* The base point gives every output's shape, and forward differences
     * its values. Central and SPSA differences take two shifted points
     * and no base: where the schema fixes the sizes, that is one apply (one
     * simulation, one solve) fewer per derivative. */
    if (!rc) rc = fd_setup(&r);
    int base = !rc && (call->comp->fd_method == TSR_FD_FORWARD || !sizes_from_schema(&r));
    if (!rc && base) rc = fd_eval(&r, f0);
    if (!rc && base) rc = fd_alloc_results(&r);
    if (!rc && call->ep == TSR_EP_JVP) rc = fd_jvp(&r, f0, plus, minus);
    else if (!rc && call->comp->fd_method == TSR_FD_SPSA) rc = fd_spsa(&r, plus, minus);
    else if (!rc) rc = fd_columns(&r, f0, plus, minus);
    free_outputs(f0, n_out);
    free_outputs(plus, n_out);
    free_outputs(minus, n_out);
    free(r.work);
    free(r.out_count);
    return rc;
}
