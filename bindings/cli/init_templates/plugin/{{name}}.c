/*
 * {{name}}: y = alpha * sin(x), a complete Tessera plugin.
 *
 * It needs only <tessera/plugin.h>. Both inputs are differentiable, so it
 * writes every endpoint: apply, jvp, vjp, jacobian and abstract_eval.
 * Change the function, keep the derivatives in step, and run `ctest`
 * (README.md): `tessera check-gradients` compares them with finite
 * differences of apply.
 */
#include <math.h>
#include <stdint.h>

#include <tessera/plugin.h>

/* Field indices, in schema order. */
enum { IN_X = 0, IN_ALPHA = 1 };
enum { OUT_Y = 0 };

/* x and y share the symbolic dimension "n": the host checks the inputs
 * against it and allocates y with x's length before apply runs. */
static const tsr_dim dims_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = dims_n,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "the points (a vector)"},
    {.name = "alpha", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "the amplitude (a scalar)"},
};

static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = dims_n,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "alpha * sin(x)"},
};

/* Position of a field in a wrt list (jvp_inputs, vjp_outputs, ...), or -1:
 * callers may name any subset of the differentiable fields, in any order. */
static int32_t position(const int32_t *wrt, int32_t n_wrt, int32_t field) {
    for (int32_t k = 0; k < n_wrt; k++)
        if (wrt[k] == field) return k;
    return -1;
}

/* The buffer of result k. The host allocates every result whose shape it
 * can derive from the schema; for the others (data == NULL) the plugin sets
 * the shape and asks the host for memory. */
static double *result(tsr_ctx *ctx, const tsr_args *args, int32_t k, int32_t rank,
                      const int64_t *shape) {
    tsr_array *r = &args->results[k];
    if (r->data) return r->data;
    r->rank = rank;
    for (int32_t d = 0; d < rank; d++) r->shape[d] = shape[d];
    return tsr_ctx_alloc(ctx, k);
}

static int {{name}}_apply(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[IN_X].data;
    int64_t n = args->inputs[IN_X].shape[0];
    double alpha = *(const double *)args->inputs[IN_ALPHA].data;
    if (!isfinite(alpha)) return tsr_ctx_errorf(ctx, "alpha must be finite, got %g", alpha);
    double *y = args->results[OUT_Y].data;
    for (int64_t i = 0; i < n; i++) y[i] = alpha * sin(x[i]);
    return 0;
}

/* dy = alpha * cos(x) * dx + dalpha * sin(x); an input missing from
 * jvp_inputs has a zero tangent. */
static int {{name}}_jvp(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[IN_X].data;
    int64_t n = args->inputs[IN_X].shape[0];
    double alpha = *(const double *)args->inputs[IN_ALPHA].data;
    int32_t kx = position(args->wrt_in, args->n_wrt_in, IN_X);
    int32_t ka = position(args->wrt_in, args->n_wrt_in, IN_ALPHA);
    const double *dx = kx >= 0 ? args->seeds[kx].data : NULL;
    double dalpha = ka >= 0 ? *(const double *)args->seeds[ka].data : 0.0;
    for (int32_t k = 0; k < args->n_wrt_out; k++) { /* the only output is y */
        double *dy = result(ctx, args, k, 1, &n);
        if (!dy) return -1;
        for (int64_t i = 0; i < n; i++)
            dy[i] = (dx ? alpha * cos(x[i]) * dx[i] : 0.0) + dalpha * sin(x[i]);
    }
    return 0;
}

/* x_bar = alpha * cos(x) * y_bar, alpha_bar = sum(sin(x) * y_bar). */
static int {{name}}_vjp(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[IN_X].data;
    int64_t n = args->inputs[IN_X].shape[0];
    double alpha = *(const double *)args->inputs[IN_ALPHA].data;
    int32_t ky = position(args->wrt_out, args->n_wrt_out, OUT_Y);
    const double *y_bar = ky >= 0 ? args->seeds[ky].data : NULL;
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        if (args->wrt_in[k] == IN_X) {
            double *x_bar = result(ctx, args, k, 1, &n);
            if (!x_bar) return -1;
            for (int64_t i = 0; i < n; i++) x_bar[i] = y_bar ? alpha * cos(x[i]) * y_bar[i] : 0.0;
        } else {
            double *alpha_bar = result(ctx, args, k, 0, NULL);
            if (!alpha_bar) return -1;
            double s = 0.0;
            for (int64_t i = 0; y_bar && i < n; i++) s += sin(x[i]) * y_bar[i];
            *alpha_bar = s;
        }
    }
    return 0;
}

/* Blocks of shape (*out_shape, *in_shape): dy/dx = diag(alpha * cos(x))
 * (n, n) and dy/dalpha = sin(x) (n,). */
static int {{name}}_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    const double *x = args->inputs[IN_X].data;
    int64_t n = args->inputs[IN_X].shape[0];
    double alpha = *(const double *)args->inputs[IN_ALPHA].data;
    const int64_t nn[2] = {n, n};
    for (int32_t o = 0; o < args->n_wrt_out; o++) {
        for (int32_t i = 0; i < args->n_wrt_in; i++) {
            int32_t k = o * args->n_wrt_in + i;
            if (args->wrt_in[i] == IN_X) {
                double *block = result(ctx, args, k, 2, nn);
                if (!block) return -1;
                for (int64_t r = 0; r < n; r++)
                    for (int64_t c = 0; c < n; c++)
                        block[r * n + c] = r == c ? alpha * cos(x[r]) : 0.0;
            } else {
                double *block = result(ctx, args, k, 1, &n);
                if (!block) return -1;
                for (int64_t r = 0; r < n; r++) block[r] = sin(x[r]);
            }
        }
    }
    return 0;
}

/* Shapes only (no data): y has x's length. */
static int {{name}}_abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    tsr_array *y = &args->results[OUT_Y];
    y->dtype = TSR_FLOAT64;
    y->rank = 1;
    y->shape[0] = args->inputs[IN_X].shape[0];
    return 0;
}

static const tsr_plugin {{name}}_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE, /* no state: calls may run concurrently */
    .name = "{{name}}",
    .version = "0.1.0",
    .description = "y = alpha * sin(x) for a float64 vector x and a scalar alpha",
    .inputs = inputs,
    .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs,
    .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = {{name}}_apply,
    .jvp = {{name}}_jvp,
    .vjp = {{name}}_vjp,
    .jacobian = {{name}}_jacobian,
    .abstract_eval = {{name}}_abstract_eval,
};

TSR_PLUGIN_DEFINE({{name}}_plugin)
