/* SPDX-License-Identifier: MIT */
/*
 * A schema that exercises the host's validation:
 *
 *   inputs   left   float64 (npts,)    differentiable
 *            right  float64 (npts,)    differentiable
 *            grid   float64 (npts, 3)  differentiable
 *            wild   float64 (*,)       differentiable (any length)
 *            scale  float64 ()         differentiable
 *            shift  int32 ()
 *            flag   bool ()
 *   outputs  combo        float64 (npts,)   = scale*left + right + rowsum(grid) + shift
 *            total        float64 ()        = sum(wild)
 *            picked       float64 (*,)      flag ? the positive entries of left : left
 *                                           (shape depends on values: allocated here)
 *            scaled_grid  float64 (npts, 3) = scale * grid
 *
 * apply, jvp and vjp are implemented; jacobian and abstract_eval are not.
 * Every endpoint also checks what the host handed it and fails loudly if
 * the host broke the ABI's promises.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/plugin.h>

enum { IN_LEFT, IN_RIGHT, IN_GRID, IN_WILD, IN_SCALE, IN_SHIFT, IN_FLAG, N_IN };
enum { OUT_COMBO, OUT_TOTAL, OUT_PICKED, OUT_SGRID, N_OUT };

static const tsr_dim vec[] = {TSR_SYM("npts")};
static const tsr_dim grid3[] = {TSR_SYM("npts"), TSR_FIXED(3)};
static const tsr_dim any[] = {TSR_ANY};

static const tsr_field inputs[N_IN] = {
    {.name = "left", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "right", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "grid", .dtype = TSR_FLOAT64, .rank = 2, .dims = grid3, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "wild", .dtype = TSR_FLOAT64, .rank = 1, .dims = any, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "scale", .dtype = TSR_FLOAT64, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "shift", .dtype = TSR_INT32, .rank = 0},
    {.name = "flag", .dtype = TSR_BOOL, .rank = 0},
};

static const tsr_field outputs[N_OUT] = {
    {.name = "combo", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "total", .dtype = TSR_FLOAT64, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "picked", .dtype = TSR_FLOAT64, .rank = 1, .dims = any},
    {.name = "scaled_grid", .dtype = TSR_FLOAT64, .rank = 2, .dims = grid3, .flags = TSR_FIELD_DIFFERENTIABLE},
};

#define F64(args, i) ((const double *)(args)->inputs[i].data)

/* What every endpoint may rely on: all inputs, in schema order, with the
 * declared dtypes, and symbolic dims already checked by the host. */
static int check_inputs(tsr_ctx *ctx, const tsr_args *args) {
    if (args->struct_size < sizeof(tsr_args))
        return tsr_ctx_errorf(ctx, "host passed tsr_args of %u bytes", args->struct_size);
    if (args->n_inputs != N_IN) return tsr_ctx_errorf(ctx, "host passed %d inputs", args->n_inputs);
    for (int i = 0; i < N_IN; i++) {
        const tsr_array *a = &args->inputs[i];
        if (a->dtype != inputs[i].dtype || a->rank != inputs[i].rank)
            return tsr_ctx_errorf(ctx, "host passed input %s with a wrong dtype or rank", inputs[i].name);
    }
    int64_t n = args->inputs[IN_LEFT].shape[0];
    if (args->inputs[IN_RIGHT].shape[0] != n || args->inputs[IN_GRID].shape[0] != n ||
        args->inputs[IN_GRID].shape[1] != 3)
        return tsr_ctx_errorf(ctx, "host passed inconsistent shapes");
    return 0;
}

/* A result the host was able to shape from the schema. */
static int check_result(tsr_ctx *ctx, const tsr_array *r, int32_t rank, const int64_t *shape) {
    if (!r->data) return tsr_ctx_errorf(ctx, "host did not allocate a schema-shaped result");
    if (r->dtype != TSR_FLOAT64 || r->rank != rank)
        return tsr_ctx_errorf(ctx, "host shaped a result with the wrong dtype or rank");
    for (int32_t d = 0; d < rank; d++)
        if (r->shape[d] != shape[d]) return tsr_ctx_errorf(ctx, "host shaped a result wrongly");
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    int rc = check_inputs(ctx, args);
    if (rc) return rc;
    if (args->n_results != N_OUT) return tsr_ctx_errorf(ctx, "host passed %d results", args->n_results);
    int64_t n = args->inputs[IN_LEFT].shape[0];
    int64_t nw = args->inputs[IN_WILD].shape[0];
    int64_t vshape[1] = {n}, gshape[2] = {n, 3};
    tsr_array *res = args->results;
    if ((rc = check_result(ctx, &res[OUT_COMBO], 1, vshape)) ||
        (rc = check_result(ctx, &res[OUT_TOTAL], 0, NULL)) ||
        (rc = check_result(ctx, &res[OUT_SGRID], 2, gshape)))
        return rc;
    if (res[OUT_PICKED].data != NULL)
        return tsr_ctx_errorf(ctx, "host allocated 'picked', whose shape depends on values");

    const double *left = F64(args, IN_LEFT), *right = F64(args, IN_RIGHT);
    const double *grid = F64(args, IN_GRID), *wild = F64(args, IN_WILD);
    double scale = *F64(args, IN_SCALE);
    int32_t shift = *(const int32_t *)args->inputs[IN_SHIFT].data;
    bool flag = *(const bool *)args->inputs[IN_FLAG].data;

    double *combo = res[OUT_COMBO].data, *sgrid = res[OUT_SGRID].data;
    for (int64_t i = 0; i < n; i++) {
        combo[i] = scale * left[i] + right[i] + shift;
        for (int j = 0; j < 3; j++) {
            combo[i] += grid[i * 3 + j];
            sgrid[i * 3 + j] = scale * grid[i * 3 + j];
        }
    }
    double total = 0;
    for (int64_t k = 0; k < nw; k++) total += wild[k];
    *(double *)res[OUT_TOTAL].data = total;

    int64_t count = 0;
    for (int64_t i = 0; i < n; i++)
        if (!flag || left[i] > 0) count++;
    res[OUT_PICKED].rank = 1;
    res[OUT_PICKED].shape[0] = count;
    double *picked = tsr_ctx_alloc(ctx, OUT_PICKED);
    if (!picked && count > 0) return -1;
    for (int64_t i = 0, o = 0; i < n; i++)
        if (!flag || left[i] > 0) picked[o++] = left[i];
    return 0;
}

/* Tangent (or cotangent) of every differentiable field, zero-filled where
 * the caller gave none. */
typedef struct dual {
    double *in[N_IN];
    double *out[N_OUT];
    double *block;
} dual;

static int dual_init(tsr_ctx *ctx, const tsr_args *args, dual *d) {
    int64_t n = args->inputs[IN_LEFT].shape[0], nw = args->inputs[IN_WILD].shape[0];
    int64_t sizes[N_IN] = {n, n, 3 * n, nw, 1, 0, 0};
    int64_t osizes[N_OUT] = {n, 1, 0, 3 * n};
    int64_t total = 0;
    for (int i = 0; i < N_IN; i++) total += sizes[i];
    for (int i = 0; i < N_OUT; i++) total += osizes[i];
    d->block = calloc((size_t)total + 1, sizeof(double));
    if (!d->block) return tsr_ctx_errorf(ctx, "out of memory");
    double *p = d->block;
    for (int i = 0; i < N_IN; i++) { d->in[i] = p; p += sizes[i]; }
    for (int i = 0; i < N_OUT; i++) { d->out[i] = p; p += osizes[i]; }
    return 0;
}

static int jvp(tsr_ctx *ctx, const tsr_args *args) {
    int rc = check_inputs(ctx, args);
    if (rc) return rc;
    if (args->n_seeds != args->n_wrt_in || args->n_results != args->n_wrt_out)
        return tsr_ctx_errorf(ctx, "host passed %d seeds for %d jvp_inputs", args->n_seeds, args->n_wrt_in);
    dual t;
    if ((rc = dual_init(ctx, args, &t))) return rc;
    for (int k = 0; k < args->n_wrt_in; k++) {
        int f = args->wrt_in[k];
        const tsr_array *s = &args->seeds[k];
        if (s->dtype != TSR_FLOAT64 || s->rank != inputs[f].rank || !s->data) {
            free(t.block);
            return tsr_ctx_errorf(ctx, "host passed a malformed tangent for %s", inputs[f].name);
        }
        memcpy(t.in[f], s->data, (size_t)tsr_array_count(s) * sizeof(double));
    }
    int64_t n = args->inputs[IN_LEFT].shape[0], nw = args->inputs[IN_WILD].shape[0];
    const double *left = F64(args, IN_LEFT), *grid = F64(args, IN_GRID);
    double scale = *F64(args, IN_SCALE), ds = t.in[IN_SCALE][0];
    for (int64_t i = 0; i < n; i++) {
        t.out[OUT_COMBO][i] = ds * left[i] + scale * t.in[IN_LEFT][i] + t.in[IN_RIGHT][i];
        for (int j = 0; j < 3; j++) {
            t.out[OUT_COMBO][i] += t.in[IN_GRID][i * 3 + j];
            t.out[OUT_SGRID][i * 3 + j] = ds * grid[i * 3 + j] + scale * t.in[IN_GRID][i * 3 + j];
        }
    }
    for (int64_t k = 0; k < nw; k++) t.out[OUT_TOTAL][0] += t.in[IN_WILD][k];
    for (int k = 0; k < args->n_wrt_out; k++) {
        tsr_array *r = &args->results[k];
        if (!r->data) { free(t.block); return tsr_ctx_errorf(ctx, "host did not allocate a jvp result"); }
        memcpy(r->data, t.out[args->wrt_out[k]], (size_t)tsr_array_count(r) * sizeof(double));
    }
    free(t.block);
    return 0;
}

static int vjp(tsr_ctx *ctx, const tsr_args *args) {
    int rc = check_inputs(ctx, args);
    if (rc) return rc;
    if (args->n_seeds != args->n_wrt_out || args->n_results != args->n_wrt_in)
        return tsr_ctx_errorf(ctx, "host passed %d seeds for %d vjp_outputs", args->n_seeds, args->n_wrt_out);
    dual c;
    if ((rc = dual_init(ctx, args, &c))) return rc;
    for (int k = 0; k < args->n_wrt_out; k++) {
        int f = args->wrt_out[k];
        const tsr_array *s = &args->seeds[k];
        if (s->dtype != TSR_FLOAT64 || s->rank != outputs[f].rank || !s->data) {
            free(c.block);
            return tsr_ctx_errorf(ctx, "host passed a malformed cotangent for %s", outputs[f].name);
        }
        memcpy(c.out[f], s->data, (size_t)tsr_array_count(s) * sizeof(double));
    }
    int64_t n = args->inputs[IN_LEFT].shape[0], nw = args->inputs[IN_WILD].shape[0];
    const double *left = F64(args, IN_LEFT), *grid = F64(args, IN_GRID);
    double scale = *F64(args, IN_SCALE);
    for (int64_t i = 0; i < n; i++) {
        double cc = c.out[OUT_COMBO][i];
        c.in[IN_LEFT][i] = scale * cc;
        c.in[IN_RIGHT][i] = cc;
        c.in[IN_SCALE][0] += left[i] * cc;
        for (int j = 0; j < 3; j++) {
            double cg = c.out[OUT_SGRID][i * 3 + j];
            c.in[IN_GRID][i * 3 + j] = cc + scale * cg;
            c.in[IN_SCALE][0] += grid[i * 3 + j] * cg;
        }
    }
    for (int64_t k = 0; k < nw; k++) c.in[IN_WILD][k] = c.out[OUT_TOTAL][0];
    for (int k = 0; k < args->n_wrt_in; k++) {
        tsr_array *r = &args->results[k];
        if (!r->data) { free(c.block); return tsr_ctx_errorf(ctx, "host did not allocate a vjp result"); }
        memcpy(r->data, c.in[args->wrt_in[k]], (size_t)tsr_array_count(r) * sizeof(double));
    }
    free(c.block);
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "schemacheck", .version = "1.0",
    .inputs = inputs, .n_inputs = N_IN, .outputs = outputs, .n_outputs = N_OUT,
    .apply = apply, .jvp = jvp, .vjp = vjp,
};
TSR_PLUGIN_DEFINE(plugin)
