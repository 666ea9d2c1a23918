/* SPDX-License-Identifier: MIT */
/*
 * The component of the contract table (tests/python/test_contract_table.py),
 * the same schema as tests/pycomponents/contract_table/tesseract_api.py so
 * that every row can be asked of Tesseract too:
 *
 *   data.x      float64 (n,)  differentiable
 *   data.scale  float64 ()    differentiable, default 2.0
 *   offset      float64 (n,)  optional
 *   repeat      uint8 ()      default 1
 *
 *   out.y      = repeat * scale * x + offset (offset 0 when left out)
 *   out.total  = sum(out.y)
 */
#include <stdint.h>

#include <tessera/plugin.h>

static const tsr_dim n_dims[] = {TSR_SYM("n")};
/* tsr_array.data is not const; the host only reads a default. */
static double scale_default = 2.0;
static const tsr_array scale_default_array = {
    .data = &scale_default, .dtype = TSR_FLOAT64, .rank = 0};
static uint8_t repeat_default = 1;
static const tsr_array repeat_default_array = {
    .data = &repeat_default, .dtype = TSR_UINT8, .rank = 0};

#define DIFF TSR_FIELD_DIFFERENTIABLE
static const tsr_field inputs[] = {
    {.name = "data.x", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims, .flags = DIFF},
    {.name = "data.scale", .dtype = TSR_FLOAT64, .rank = 0, .flags = DIFF,
     .default_value = &scale_default_array},
    {.name = "offset", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims,
     .flags = TSR_FIELD_OPTIONAL},
    {.name = "repeat", .dtype = TSR_UINT8, .rank = 0, .default_value = &repeat_default_array},
};
static const tsr_field outputs[] = {
    {.name = "out.y", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims, .flags = DIFF},
    {.name = "out.total", .dtype = TSR_FLOAT64, .rank = 0, .flags = DIFF},
};
enum { IN_X, IN_SCALE, IN_OFFSET, IN_REPEAT };
enum { OUT_Y, OUT_TOTAL };

typedef struct values {
    const double *x, *offset;
    double scale, repeat;
    int64_t n;
} values;

static values read_inputs(const tsr_args *args) {
    const tsr_array *in = args->inputs;
    return (values){
        .x = in[IN_X].data,
        .offset = in[IN_OFFSET].data,   /* NULL: left out */
        .scale = *(const double *)in[IN_SCALE].data,
        .repeat = *(const uint8_t *)in[IN_REPEAT].data,
        .n = in[IN_X].shape[0],
    };
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    values v = read_inputs(args);
    double *y = args->results[OUT_Y].data, total = 0;
    for (int64_t i = 0; i < v.n; i++) {
        y[i] = v.repeat * v.scale * v.x[i] + (v.offset ? v.offset[i] : 0.0);
        total += y[i];
    }
    *(double *)args->results[OUT_TOTAL].data = total;
    return 0;
}

/* d y_i / d x_i = repeat * scale, d y_i / d scale = repeat * x_i; total
 * sums y. */
static int vjp(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    values v = read_inputs(args);
    const double *gy = NULL, *gt = NULL;
    for (int32_t k = 0; k < args->n_wrt_out; k++) {
        if (args->wrt_out[k] == OUT_Y) gy = args->seeds[k].data;
        else gt = args->seeds[k].data;
    }
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        double *r = args->results[k].data;
        if (args->wrt_in[k] == IN_X) {
            for (int64_t i = 0; i < v.n; i++)
                r[i] = v.repeat * v.scale * ((gy ? gy[i] : 0.0) + (gt ? *gt : 0.0));
        } else {
            double s = 0;
            for (int64_t i = 0; i < v.n; i++)
                s += v.repeat * v.x[i] * ((gy ? gy[i] : 0.0) + (gt ? *gt : 0.0));
            *r = s;
        }
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "contract_table",
    .version = "1.0",
    .description = "The contract table's component: y = repeat * scale * x + offset.",
    .inputs = inputs, .n_inputs = 4,
    .outputs = outputs, .n_outputs = 2,
    .apply = apply,
    .vjp = vjp,
};
TSR_PLUGIN_DEFINE(plugin)
