/* SPDX-License-Identifier: MIT */
/*
 * linear: y = A x, for a matrix A read once at load time.
 *
 * Shows a plugin with persistent state (init/fini, configuration) and an
 * output whose size the schema cannot give: y has m entries, m being the
 * number of rows of A, which no input carries. For such results the host
 * leaves data NULL, and the plugin sets the shape and calls
 * tsr_ctx_alloc() (through result_f64()).
 *
 * The state is read-only after init, so calls may run concurrently.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/plugin.h>

#include "matrix_file.h"
#include "plugin_util.h"

/* Field indices, in schema order. */
enum { IN_X = 0 };
enum { OUT_Y = 0 };

/* Configuration key naming the matrix file. */
#define MATRIX_CONFIG_KEY "matrix"

static const tsr_dim vector_n[] = {TSR_SYM("n")};
static const tsr_dim vector_m[] = {TSR_SYM("m")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "vector to multiply; its length n must equal the number of columns of A"},
};

static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_m,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "y = A x; its length m is the number of rows of A"},
};

typedef struct linear_state {
    dense_matrix a;
    char *path; /* where A came from, for error messages */
} linear_state;

static int linear_init(tsr_ctx *ctx, void **state) {
    const char *path = tsr_ctx_config(ctx, MATRIX_CONFIG_KEY);
    if (path == NULL || path[0] == '\0') {
        return tsr_ctx_errorf(ctx,
                              "configuration key '" MATRIX_CONFIG_KEY "' is %s: it must give "
                              "the path of the text file holding the matrix A",
                              path == NULL ? "missing" : "empty");
    }
    linear_state *s = calloc(1, sizeof *s);
    if (s == NULL) return tsr_ctx_errorf(ctx, "out of memory for the plugin state");
    s->path = strdup(path);
    if (s->path == NULL) {
        free(s);
        return tsr_ctx_errorf(ctx, "out of memory for the plugin state");
    }
    if (matrix_file_read(ctx, path, &s->a) != 0) {
        free(s->path);
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static void linear_fini(void *state) {
    linear_state *s = state;
    if (s == NULL) return;
    dense_matrix_free(&s->a);
    free(s->path);
    free(s);
}

/* The symbolic dim n is not tied to A by the schema; check it here. */
static int check_x_length(tsr_ctx *ctx, const linear_state *s, const tsr_args *args) {
    int64_t n = args->inputs[IN_X].shape[0];
    if (n != s->a.cols) {
        return tsr_ctx_errorf(ctx,
                              "x: got %lld entries, but the matrix A from '%s' is %lld x %lld, "
                              "so x needs %lld",
                              (long long)n, s->path, (long long)s->a.rows,
                              (long long)s->a.cols, (long long)s->a.cols);
    }
    return 0;
}

/* y = A v, or y = 0 when v is NULL (a zero tangent). */
static void multiply(const dense_matrix *a, const double *v, double *y) {
    for (int64_t i = 0; i < a->rows; i++) {
        double sum = 0.0;
        if (v != NULL) {
            const double *row = a->values + i * a->cols;
            for (int64_t j = 0; j < a->cols; j++) sum += row[j] * v[j];
        }
        y[i] = sum;
    }
}

/* x = A^T c, or x = 0 when c is NULL (a zero cotangent). Walks A by rows
 * so that memory is read in order. */
static void multiply_transposed(const dense_matrix *a, const double *c, double *x) {
    zero_f64(x, a->cols);
    if (c == NULL) return;
    for (int64_t i = 0; i < a->rows; i++) {
        const double *row = a->values + i * a->cols;
        for (int64_t j = 0; j < a->cols; j++) x[j] += row[j] * c[i];
    }
}

static int linear_apply(tsr_ctx *ctx, const tsr_args *args) {
    const linear_state *s = ctx->state;
    if (check_x_length(ctx, s, args) != 0) return -1;
    double *y = result_f64(ctx, args, OUT_Y, 1, &s->a.rows);
    if (y == NULL) return -1;
    multiply(&s->a, args->inputs[IN_X].data, y);
    return 0;
}

/* The map is linear, so its JVP is the map itself applied to the tangent. */
static int linear_jvp(tsr_ctx *ctx, const tsr_args *args) {
    const linear_state *s = ctx->state;
    if (check_x_length(ctx, s, args) != 0) return -1;
    const double *x_dot = jvp_tangent(args, IN_X);
    for (int32_t k = 0; k < args->n_wrt_out; k++) { /* wrt_out[k] can only be y */
        double *y_dot = result_f64(ctx, args, k, 1, &s->a.rows);
        if (y_dot == NULL) return -1;
        multiply(&s->a, x_dot, y_dot);
    }
    return 0;
}

static int linear_vjp(tsr_ctx *ctx, const tsr_args *args) {
    const linear_state *s = ctx->state;
    if (check_x_length(ctx, s, args) != 0) return -1;
    const double *y_bar = vjp_cotangent(args, OUT_Y);
    for (int32_t k = 0; k < args->n_wrt_in; k++) { /* wrt_in[k] can only be x */
        double *x_bar = result_f64(ctx, args, k, 1, &s->a.cols);
        if (x_bar == NULL) return -1;
        multiply_transposed(&s->a, y_bar, x_bar);
    }
    return 0;
}

/* dy/dx = A, an (m, n) block; m is unknown to the host, so the block is
 * usually left for the plugin to allocate. */
static int linear_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    const linear_state *s = ctx->state;
    if (check_x_length(ctx, s, args) != 0) return -1;
    const int64_t block_shape[2] = {s->a.rows, s->a.cols};
    for (int32_t k = 0; k < args->n_results; k++) {
        double *block = result_f64(ctx, args, k, 2, block_shape);
        if (block == NULL) return -1;
        copy_f64(block, s->a.values, s->a.rows * s->a.cols);
    }
    return 0;
}

static int linear_abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    const linear_state *s = ctx->state;
    if (check_x_length(ctx, s, args) != 0) return -1;
    tsr_array *y = &args->results[OUT_Y];
    y->dtype = TSR_FLOAT64;
    y->rank = 1;
    y->shape[0] = s->a.rows;
    return 0;
}

static const tsr_plugin linear_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "linear",
    .version = "0.1.0",
    .description = "Matrix-vector product y = A x. A (m x n) is read at load time from the "
                   "text file named by the configuration key 'matrix': the dimensions "
                   "'m n', then m*n numbers row by row; '#' starts a comment.",
    .inputs = inputs,
    .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs,
    .n_outputs = sizeof outputs / sizeof outputs[0],
    .init = linear_init,
    .fini = linear_fini,
    .apply = linear_apply,
    .jvp = linear_jvp,
    .vjp = linear_vjp,
    .jacobian = linear_jacobian,
    .abstract_eval = linear_abstract_eval,
};

TSR_PLUGIN_DEFINE(linear_plugin)
