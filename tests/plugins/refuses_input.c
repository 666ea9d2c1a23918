/* SPDX-License-Identifier: MIT */
/* An endpoint that refuses input values with tsr_ctx_invalid, chosen by
 * x[0]: 0 accepts, -1 refuses inputs.x as greater_than_equal, -2 with no
 * type (value_error) at a path with a space and a dict key, -3 with a
 * message of 700 bytes; 1..4 fail with messages whose last line only looks
 * like the convention (a plain plugin failure). */
#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim dims[] = {TSR_ANY};
static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = dims},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 0},
};

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *in = &args->inputs[0];
    double *y = tsr_ctx_alloc(ctx, 0);
    if (!y) return -1;
    const double *x = in->data;
    if (in->shape[0] > 0) {
        char big[701];
        switch ((int)x[0]) {
        case -1: return tsr_ctx_invalid(ctx, "inputs.x", "greater_than_equal", "x[0] must be >= 0");
        case -2: return tsr_ctx_invalid(ctx, "inputs.opts.{a key}", NULL, "no such key");
        case -3:
            memset(big, 'm', sizeof big - 1);
            big[sizeof big - 1] = '\0';
            return tsr_ctx_invalid(ctx, "inputs.x", "too_long", big);
        case 1: return tsr_ctx_errorf(ctx, "bad\ninvalid: Not_Lower inputs.x");
        case 2: return tsr_ctx_errorf(ctx, "invalid: value_error inputs.x\nnot the last line");
        case 3: return tsr_ctx_errorf(ctx, "bad\ninvalid: value_error inputs.\tx");
        case 4: return tsr_ctx_errorf(ctx, "bad\ninvalid: value_error");
        default: break;
        }
    }
    *y = 0;
    for (int64_t i = 0; i < in->shape[0]; i++) *y += x[i];
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "refuses_input", .version = "1.0",
    .inputs = inputs, .n_inputs = 1,
    .outputs = outputs, .n_outputs = 1,
    .apply = apply,
};
TSR_PLUGIN_DEFINE(plugin)
