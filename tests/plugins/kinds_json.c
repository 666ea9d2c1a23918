/* SPDX-License-Identifier: MIT */
/*
 * TEXT and JSON both ways, for the request layer's tests: a TEXT option
 * with choices (method), a JSON input (opts) and an array (x).
 *   y    = x, doubled for method "twice"           (n,)
 *   echo = opts as the endpoint got it             JSON
 *   tag  = method                                  TEXT
 * opts holding "steps":-N is refused with tsr_ctx_invalid at
 * inputs.opts.steps (greater_than_equal), as a component validating its
 * own values would. opts holding "hostile":"malformed" makes echo text
 * that is not JSON, "hostile":"nul" a tag with a NUL byte inside: results
 * a host must refuse.
 */
#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim n_dims[] = {TSR_SYM("n")};
static const char *const methods[] = {"plain", "twice"};
static const tsr_array method_default = {.data = (void *)"plain", .dtype = TSR_UINT8, .rank = 1,
                                         .shape = {5}};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims},
    {.name = "method", .kind = TSR_KIND_TEXT, .choices = methods, .n_choices = 2,
     .default_value = &method_default, .doc = "plain or twice"},
    {.name = "opts", .kind = TSR_KIND_JSON, .doc = "any JSON value"},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims},
    {.name = "echo", .kind = TSR_KIND_JSON},
    {.name = "tag", .kind = TSR_KIND_TEXT},
};

/* A TEXT or JSON result holding the len bytes of text. */
static int put_text(tsr_ctx *ctx, const tsr_args *args, int32_t k, const char *text, size_t len) {
    args->results[k].rank = 1;
    args->results[k].shape[0] = (int64_t)len;
    char *out = tsr_ctx_alloc(ctx, k);
    if (!out) return tsr_ctx_errorf(ctx, "no buffer for result %d", (int)k);
    memcpy(out, text, len);
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *x = &args->inputs[0];
    const char *method = tsr_input_text(&args->inputs[1]);
    const char *opts = tsr_input_text(&args->inputs[2]);
    if (strstr(opts, "\"steps\":-") != NULL)
        return tsr_ctx_invalid(ctx, "inputs.opts.steps", "greater_than_equal",
                               "Input should be greater than or equal to 0");
    double k = strcmp(method, "twice") == 0 ? 2.0 : 1.0;
    double *y = args->results[0].data;
    for (int64_t i = 0; i < x->shape[0]; i++) y[i] = k * ((const double *)x->data)[i];
    if (strstr(opts, "\"hostile\":\"malformed\"") != NULL) {
        int rc = put_text(ctx, args, 1, "{\"a\":", 5);
        return rc ? rc : put_text(ctx, args, 2, method, (size_t)args->inputs[1].shape[0]);
    }
    if (strstr(opts, "\"hostile\":\"nul\"") != NULL) {
        int rc = put_text(ctx, args, 1, opts, (size_t)args->inputs[2].shape[0]);
        return rc ? rc : put_text(ctx, args, 2, "ab\0c", 4);
    }
    int rc = put_text(ctx, args, 1, opts, (size_t)args->inputs[2].shape[0]);
    return rc ? rc : put_text(ctx, args, 2, method, (size_t)args->inputs[1].shape[0]);
}

static int abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    args->results[0].rank = 1;
    args->results[0].shape[0] = args->inputs[0].shape[0];
    for (int32_t k = 1; k <= 2; k++) {
        args->results[k].rank = 1;
        args->results[k].shape[0] = args->inputs[k == 1 ? 2 : 1].shape[0];
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "kinds_json", .version = "1.0",
    .inputs = inputs, .n_inputs = 3,
    .outputs = outputs, .n_outputs = 3,
    .apply = apply, .abstract_eval = abstract_eval,
};
TSR_PLUGIN_DEFINE(plugin)
