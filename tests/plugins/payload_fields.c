/* SPDX-License-Identifier: MIT */
/*
 * A component whose schema exercises what payloads must carry: dotted
 * (nested) field names on both sides, several dtypes (float64, int32,
 * bool, float32, complex128), a fixed dimension, a wildcard dimension, a
 * scalar and a non-differentiable field.
 *
 *   moved.nodes = scale * mesh.nodes        float64 (n, 2)
 *   moved.cells = mesh.cells                int32 (m, 3)
 *   flags       = !flags                    bool (any)
 *   total       = scale * sum(mesh.nodes)   float64 ()
 *   z           = conj(z)                   complex128 (k,)
 *
 * jvp is implemented for moved.nodes and total with respect to mesh.nodes
 * and scale.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

#include <tessera/plugin.h>

enum { IN_NODES, IN_CELLS, IN_FLAGS, IN_SCALE, IN_Z };
enum { OUT_NODES, OUT_CELLS, OUT_FLAGS, OUT_TOTAL, OUT_Z };

static const tsr_dim nodes_dims[] = {TSR_SYM("n"), TSR_FIXED(2)};
static const tsr_dim cells_dims[] = {TSR_SYM("m"), TSR_FIXED(3)};
static const tsr_dim any_dims[] = {TSR_ANY};
static const tsr_dim z_dims[] = {TSR_SYM("k")};

static const tsr_field inputs[] = {
    {.name = "mesh.nodes", .dtype = TSR_FLOAT64, .rank = 2, .dims = nodes_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE, .doc = "node coordinates"},
    {.name = "mesh.cells", .dtype = TSR_INT32, .rank = 2, .dims = cells_dims},
    {.name = "flags", .dtype = TSR_BOOL, .rank = 1, .dims = any_dims},
    {.name = "scale", .dtype = TSR_FLOAT32, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "z", .dtype = TSR_COMPLEX128, .rank = 1, .dims = z_dims},
};

static const tsr_field outputs[] = {
    {.name = "moved.nodes", .dtype = TSR_FLOAT64, .rank = 2, .dims = nodes_dims,
     .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "moved.cells", .dtype = TSR_INT32, .rank = 2, .dims = cells_dims},
    {.name = "flags", .dtype = TSR_BOOL, .rank = 1, .dims = any_dims},
    {.name = "total", .dtype = TSR_FLOAT64, .rank = 0, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "z", .dtype = TSR_COMPLEX128, .rank = 1, .dims = z_dims},
};

static double sum_f64(const tsr_array *a) {
    const double *v = a->data;
    double s = 0.0;
    for (int64_t i = 0; i < tsr_array_count(a); i++) s += v[i];
    return s;
}

/* A result buffer: the host's, or, for the wildcard-shaped flags, one
 * asked for after stating the shape. */
static void *result_buffer(tsr_ctx *ctx, const tsr_args *args, int32_t k, const tsr_array *like) {
    tsr_array *r = &args->results[k];
    if (r->data != NULL) return r->data;
    r->rank = like->rank;
    for (int32_t d = 0; d < like->rank; d++) r->shape[d] = like->shape[d];
    return tsr_ctx_alloc(ctx, k);
}

static int fields_apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *nodes = &args->inputs[IN_NODES], *cells = &args->inputs[IN_CELLS];
    const tsr_array *flags = &args->inputs[IN_FLAGS], *z = &args->inputs[IN_Z];
    double scale = *(const float *)args->inputs[IN_SCALE].data;

    double *moved = result_buffer(ctx, args, OUT_NODES, nodes);
    int32_t *cells_out = result_buffer(ctx, args, OUT_CELLS, cells);
    bool *flags_out = result_buffer(ctx, args, OUT_FLAGS, flags);
    double *total = result_buffer(ctx, args, OUT_TOTAL, &args->inputs[IN_SCALE]);
    double complex *z_out = result_buffer(ctx, args, OUT_Z, z);
    if (!moved || !cells_out || !flags_out || !total || !z_out) return -1;

    const double *nv = nodes->data;
    for (int64_t i = 0; i < tsr_array_count(nodes); i++) moved[i] = scale * nv[i];
    const int32_t *cv = cells->data;
    for (int64_t i = 0; i < tsr_array_count(cells); i++) cells_out[i] = cv[i];
    const bool *fv = flags->data;
    for (int64_t i = 0; i < tsr_array_count(flags); i++) flags_out[i] = !fv[i];
    *total = scale * sum_f64(nodes);
    const double complex *zv = z->data;
    for (int64_t i = 0; i < tsr_array_count(z); i++) z_out[i] = conj(zv[i]);
    return 0;
}

static int fields_jvp(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *nodes = &args->inputs[IN_NODES];
    double scale = *(const float *)args->inputs[IN_SCALE].data;
    const double *d_nodes = NULL;
    double d_scale = 0.0;
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        if (args->wrt_in[k] == IN_NODES) d_nodes = args->seeds[k].data;
        if (args->wrt_in[k] == IN_SCALE) d_scale = *(const float *)args->seeds[k].data;
    }
    int64_t n = tsr_array_count(nodes);
    const double *nv = nodes->data;
    for (int32_t k = 0; k < args->n_wrt_out; k++) {
        double *r = args->results[k].data;
        if (r == NULL) return tsr_ctx_errorf(ctx, "result %d has no buffer", (int)k);
        if (args->wrt_out[k] == OUT_NODES) {
            for (int64_t i = 0; i < n; i++)
                r[i] = (d_nodes ? scale * d_nodes[i] : 0.0) + nv[i] * d_scale;
        } else {
            double s = 0.0;
            for (int64_t i = 0; d_nodes && i < n; i++) s += d_nodes[i];
            *r = scale * s + sum_f64(nodes) * d_scale;
        }
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "payload_fields",
    .version = "1.0",
    .description = "nested names and mixed dtypes for payload tests",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = fields_apply,
    .jvp = fields_jvp,
};
TSR_PLUGIN_DEFINE(plugin)
