/* SPDX-License-Identifier: MIT */
/*
 * interp1d: y = interp(x; xp, fp) by one of three methods, chosen per call
 * by a TEXT option (plugin.h, "Field kinds"), as numpy.interp and
 * scipy.interpolate.interp1d(kind=...) do.
 *
 *   inputs   x      (n,)  float64  points to evaluate at
 *            xp     (m,)  float64  the knots, strictly increasing
 *            fp     (m,)  float64  the values at the knots, differentiable
 *            method TEXT  "linear" (default), "nearest" or "previous"
 *   outputs  y      (n,)  float64
 *
 * Outside [xp[0], xp[m-1]] the end values hold (numpy.interp's clamp).
 * "nearest" takes the lower knot at a tie; "previous" the knot at or
 * below x. y is linear in fp: y = W fp with W of at most two non-zeros a
 * row, so jvp is W t, vjp is W^T c and jacobian W itself; abstract_eval checks the method and
 * says y is shaped like x.
 */
#include <math.h>
#include <string.h>

#include <tessera/plugin.h>

enum { IN_X, IN_XP, IN_FP, IN_METHOD };
enum method { LINEAR, NEAREST, PREVIOUS };

static const char *const methods[] = {"linear", "nearest", "previous"};
static const tsr_array method_default = {.data = (void *)"linear", .dtype = TSR_UINT8,
                                         .rank = 1, .shape = {6}};
static const tsr_dim n_dims[] = {TSR_SYM("n")};
static const tsr_dim m_dims[] = {TSR_SYM("m")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .doc = "points to evaluate at"},
    {.name = "xp", .dtype = TSR_FLOAT64, .rank = 1, .dims = m_dims,
     .doc = "knots, strictly increasing"},
    {.name = "fp", .dtype = TSR_FLOAT64, .rank = 1, .dims = m_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "values at the knots"},
    {.name = "method", .kind = TSR_KIND_TEXT, .choices = methods, .n_choices = 3,
     .default_value = &method_default, .doc = "linear, nearest or previous"},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "the interpolated values"},
};

/* The row of W for one x: y = w0 * fp[i0] + w1 * fp[i0 + 1] (w1 may be 0). */
typedef struct weights {
    int64_t i0;
    double w0, w1;
} weights;

static weights weights_at(double x, const double *xp, int64_t m, enum method how) {
    if (m == 1 || x <= xp[0]) return (weights){0, 1.0, 0.0};
    if (x >= xp[m - 1]) return (weights){m - 1, 1.0, 0.0};
    int64_t lo = 0, hi = m - 1;   /* xp[lo] <= x < xp[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (xp[mid] <= x) lo = mid;
        else hi = mid;
    }
    switch (how) {
    case PREVIOUS: return (weights){lo, 1.0, 0.0};
    case NEAREST: return x - xp[lo] <= xp[hi] - x ? (weights){lo, 1.0, 0.0}
                                                  : (weights){hi, 1.0, 0.0};
    default: {
        double t = (x - xp[lo]) / (xp[hi] - xp[lo]);
        return (weights){lo, 1.0 - t, t};
    }
    }
}

/* The method of this call and the knots' check, shared by every endpoint. */
static int prepare(tsr_ctx *ctx, const tsr_args *args, enum method *how, int need_knots) {
    int32_t k = tsr_text_choice(&args->inputs[IN_METHOD], methods, 3);
    if (k < 0) /* the host checks the choices; this guards other hosts */
        return tsr_ctx_errorf(ctx, "method '%s' is not one of linear, nearest, previous",
                              tsr_input_text(&args->inputs[IN_METHOD]));
    *how = (enum method)k;
    int64_t m = args->inputs[IN_XP].shape[0];
    if (m < 1) return tsr_ctx_errorf(ctx, "xp is empty: at least one knot is needed");
    if (!need_knots) return 0;
    const double *xp = args->inputs[IN_XP].data;
    for (int64_t i = 0; i < m; i++)
        if (!isfinite(xp[i]) || (i > 0 && !(xp[i] > xp[i - 1])))
            return tsr_ctx_errorf(ctx, "xp is not strictly increasing and finite at index %lld",
                                  (long long)i);
    return 0;
}

/* out = W v (forward) for apply and jvp. */
static void forward(const tsr_args *args, enum method how, const double *v, double *out) {
    const double *x = args->inputs[IN_X].data, *xp = args->inputs[IN_XP].data;
    int64_t n = args->inputs[IN_X].shape[0], m = args->inputs[IN_XP].shape[0];
    for (int64_t i = 0; i < n; i++) {
        weights w = weights_at(x[i], xp, m, how);
        out[i] = w.w0 * v[w.i0] + (w.w1 != 0.0 ? w.w1 * v[w.i0 + 1] : 0.0);
    }
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    enum method how;
    if (prepare(ctx, args, &how, 1)) return 1;
    forward(args, how, args->inputs[IN_FP].data, args->results[0].data);
    return 0;
}

static int jvp(tsr_ctx *ctx, const tsr_args *args) {
    enum method how;
    if (prepare(ctx, args, &how, 1)) return 1;
    /* wrt fp only (the one differentiable input), to y */
    forward(args, how, args->seeds[0].data, args->results[0].data);
    return 0;
}

static int vjp(tsr_ctx *ctx, const tsr_args *args) {
    enum method how;
    if (prepare(ctx, args, &how, 1)) return 1;
    const double *x = args->inputs[IN_X].data, *xp = args->inputs[IN_XP].data;
    const double *c = args->seeds[0].data;
    double *g = args->results[0].data;
    int64_t n = args->inputs[IN_X].shape[0], m = args->inputs[IN_XP].shape[0];
    memset(g, 0, (size_t)m * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        weights w = weights_at(x[i], xp, m, how);
        g[w.i0] += w.w0 * c[i];
        if (w.w1 != 0.0) g[w.i0 + 1] += w.w1 * c[i];
    }
    return 0;
}

/* dy/dfp = W, of shape (n, m): at most two entries per row. */
static int jacobian(tsr_ctx *ctx, const tsr_args *args) {
    enum method how;
    if (prepare(ctx, args, &how, 1)) return 1;
    const double *x = args->inputs[IN_X].data, *xp = args->inputs[IN_XP].data;
    double *jac = args->results[0].data;
    int64_t n = args->inputs[IN_X].shape[0], m = args->inputs[IN_XP].shape[0];
    memset(jac, 0, (size_t)(n * m) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        weights w = weights_at(x[i], xp, m, how);
        jac[i * m + w.i0] += w.w0;
        if (w.w1 != 0.0) jac[i * m + w.i0 + 1] += w.w1;
    }
    return 0;
}

/* Shapes only, but the method's bytes are there: an unknown one fails
 * here as in apply. */
static int abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    enum method how;
    if (prepare(ctx, args, &how, 0)) return 1;
    args->results[0].rank = 1;
    args->results[0].shape[0] = args->inputs[IN_X].shape[0];
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "interp1d",
    .version = "1.0.0",
    .description = "1-D interpolation (linear, nearest, previous), differentiable in the values",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = apply, .jvp = jvp, .vjp = vjp, .jacobian = jacobian,
    .abstract_eval = abstract_eval,
    .flags = TSR_PLUGIN_THREAD_SAFE,
};
TSR_PLUGIN_DEFINE(plugin)
