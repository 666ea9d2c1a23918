/* SPDX-License-Identifier: MIT */
/*
 * Fields of several dtypes and ranks, with correct derivatives, for the
 * gradient-check tests:
 *
 *   x float32 (n,)    differentiable     y float32 (n,) = x^2
 *   w float64 (2, 3)  differentiable     u float64 (3,) = sum_i w[i][j]^2 + k * sum(x)
 *   z complex128 (n,) differentiable     c complex128 (n,) = z
 *   h float16 ()      differentiable     (unused)
 *   k int64 ()        not differentiable
 *
 * Only the real pairs have derivatives; a check must skip z, h and c.
 */
#include <string.h>

#include <tessera/plugin.h>

enum { IN_X, IN_W, IN_Z, IN_H, IN_K };
enum { OUT_Y, OUT_U, OUT_C };

static const tsr_dim vec_n[] = {TSR_SYM("n")};
static const tsr_dim mat_23[] = {TSR_FIXED(2), TSR_FIXED(3)};
static const tsr_dim vec_3[] = {TSR_FIXED(3)};
#define D TSR_FIELD_DIFFERENTIABLE

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT32, .rank = 1, .dims = vec_n, .flags = D},
    {.name = "w", .dtype = TSR_FLOAT64, .rank = 2, .dims = mat_23, .flags = D},
    {.name = "z", .dtype = TSR_COMPLEX128, .rank = 1, .dims = vec_n, .flags = D},
    {.name = "h", .dtype = TSR_FLOAT16, .rank = 0, .dims = NULL, .flags = D},
    {.name = "k", .dtype = TSR_INT64, .rank = 0, .dims = NULL, .flags = 0},
};

static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT32, .rank = 1, .dims = vec_n, .flags = D},
    {.name = "u", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec_3, .flags = D},
    {.name = "c", .dtype = TSR_COMPLEX128, .rank = 1, .dims = vec_n, .flags = D},
};

typedef struct point {
    const float *x;
    const double *w;
    double k;
    int64_t n;
} point;

static point point_of(const tsr_args *args) {
    point p = {args->inputs[IN_X].data, args->inputs[IN_W].data,
               (double)*(const int64_t *)args->inputs[IN_K].data,
               tsr_array_count(&args->inputs[IN_X])};
    return p;
}

static int32_t position(const int32_t *list, int32_t n, int32_t field) {
    for (int32_t k = 0; k < n; k++)
        if (list[k] == field) return k;
    return -1;
}

static int only_real(tsr_ctx *ctx, const tsr_args *args) {
    for (int32_t k = 0; k < args->n_wrt_in; k++)
        if (args->wrt_in[k] != IN_X && args->wrt_in[k] != IN_W)
            return tsr_ctx_errorf(ctx, "only x and w have derivatives");
    for (int32_t k = 0; k < args->n_wrt_out; k++)
        if (args->wrt_out[k] == OUT_C) return tsr_ctx_errorf(ctx, "c has no derivatives");
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    point p = point_of(args);
    float *y = args->results[OUT_Y].data;
    double *u = args->results[OUT_U].data;
    double sx = 0.0;
    for (int64_t i = 0; i < p.n; i++) {
        y[i] = p.x[i] * p.x[i];
        sx += p.x[i];
    }
    for (int j = 0; j < 3; j++) u[j] = p.w[j] * p.w[j] + p.w[3 + j] * p.w[3 + j] + p.k * sx;
    memcpy(args->results[OUT_C].data, args->inputs[IN_Z].data, (size_t)p.n * 16);
    return 0;
}

static int jvp(tsr_ctx *ctx, const tsr_args *args) {
    if (only_real(ctx, args)) return -1;
    point p = point_of(args);
    int32_t ax = position(args->wrt_in, args->n_wrt_in, IN_X);
    int32_t aw = position(args->wrt_in, args->n_wrt_in, IN_W);
    const float *tx = ax >= 0 ? args->seeds[ax].data : NULL;
    const double *tw = aw >= 0 ? args->seeds[aw].data : NULL;
    for (int32_t k = 0; k < args->n_wrt_out; k++) {
        if (args->wrt_out[k] == OUT_Y) {
            float *r = args->results[k].data;
            for (int64_t i = 0; i < p.n; i++) r[i] = tx ? 2.0f * p.x[i] * tx[i] : 0.0f;
        } else {
            double *r = args->results[k].data, stx = 0.0;
            for (int64_t i = 0; tx && i < p.n; i++) stx += tx[i];
            for (int j = 0; j < 3; j++) {
                r[j] = p.k * stx;
                if (tw) r[j] += 2.0 * (p.w[j] * tw[j] + p.w[3 + j] * tw[3 + j]);
            }
        }
    }
    return 0;
}

static int vjp(tsr_ctx *ctx, const tsr_args *args) {
    if (only_real(ctx, args)) return -1;
    point p = point_of(args);
    int32_t ay = position(args->wrt_out, args->n_wrt_out, OUT_Y);
    int32_t au = position(args->wrt_out, args->n_wrt_out, OUT_U);
    const float *cy = ay >= 0 ? args->seeds[ay].data : NULL;
    const double *cu = au >= 0 ? args->seeds[au].data : NULL;
    double su = cu ? cu[0] + cu[1] + cu[2] : 0.0;
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        if (args->wrt_in[k] == IN_X) {
            float *r = args->results[k].data;
            for (int64_t i = 0; i < p.n; i++)
                r[i] = (float)((cy ? 2.0 * p.x[i] * cy[i] : 0.0) + p.k * su);
        } else {
            double *r = args->results[k].data;
            for (int e = 0; e < 6; e++) r[e] = cu ? 2.0 * p.w[e] * cu[e % 3] : 0.0;
        }
    }
    return 0;
}

static int jacobian(tsr_ctx *ctx, const tsr_args *args) {
    if (only_real(ctx, args)) return -1;
    point p = point_of(args);
    for (int32_t o = 0; o < args->n_wrt_out; o++) {
        for (int32_t k = 0; k < args->n_wrt_in; k++) {
            void *b = args->results[o * args->n_wrt_in + k].data;
            int out_y = args->wrt_out[o] == OUT_Y, in_x = args->wrt_in[k] == IN_X;
            if (out_y && in_x) { /* (n, n) float32 */
                float *f = b;
                memset(f, 0, (size_t)(p.n * p.n) * sizeof *f);
                for (int64_t i = 0; i < p.n; i++) f[i * p.n + i] = 2.0f * p.x[i];
            } else if (out_y) { /* (n, 2, 3) float32 */
                memset(b, 0, (size_t)(p.n * 6) * sizeof(float));
            } else if (in_x) { /* (3, n) float64 */
                double *d = b;
                for (int64_t e = 0; e < 3 * p.n; e++) d[e] = p.k;
            } else { /* (3, 2, 3) float64 */
                double *d = b;
                memset(d, 0, 18 * sizeof *d);
                for (int j = 0; j < 3; j++) {
                    d[j * 6 + j] = 2.0 * p.w[j];
                    d[j * 6 + 3 + j] = 2.0 * p.w[3 + j];
                }
            }
        }
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "mixed_dtypes",
    .version = "1.0.0",
    .description = "float32, float64, complex128 and float16 fields; derivatives of the real ones",
    .inputs = inputs,
    .n_inputs = 5,
    .outputs = outputs,
    .n_outputs = 3,
    .apply = apply,
    .jvp = jvp,
    .vjp = vjp,
    .jacobian = jacobian,
};

TSR_PLUGIN_DEFINE(plugin)
