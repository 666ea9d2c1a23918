/* SPDX-License-Identifier: MIT */
/*
 * Fields beyond arrays (plugin.h, "Field kinds"): a TEXT input with
 * choices and a default (mode), a JSON input (config), an array of any
 * rank (a, differentiable) beside an ordinary one (x).
 *   y     = x * (mode == "double" ? 2 : 1)            (n,)
 *   label = "<mode>|<config>"                         TEXT
 *   total = a * scale, scale 3 for "double", else 1   any rank, like a
 * jvp and vjp wrt a (total is linear in a); abstract_eval reads mode and
 * config to size label.
 */
#include <stdio.h>
#include <string.h>

#include <tessera/plugin.h>

static const tsr_dim n_dims[] = {TSR_SYM("n")};
static const char *const modes[] = {"single", "double", "caf\xc3\xa9"};
static const tsr_array mode_default = {.data = (void *)"single", .dtype = TSR_UINT8, .rank = 1,
                                       .shape = {6}};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims},
    {.name = "mode", .kind = TSR_KIND_TEXT, .choices = modes, .n_choices = 3,
     .default_value = &mode_default, .doc = "how to scale"},
    {.name = "config", .kind = TSR_KIND_JSON, .flags = TSR_FIELD_OPTIONAL},
    {.name = "a", .dtype = TSR_FLOAT64, .rank = TSR_RANK_ANY, .flags = TSR_FIELD_DIFFERENTIABLE},
};
static const tsr_field outputs[] = {
    {.name = "y", .dtype = TSR_FLOAT64, .rank = 1, .dims = n_dims},
    {.name = "label", .kind = TSR_KIND_TEXT},
    {.name = "total", .dtype = TSR_FLOAT64, .rank = TSR_RANK_ANY,
     .flags = TSR_FIELD_DIFFERENTIABLE},
};

static double scale_of(const tsr_array *mode) {
    return tsr_text_choice(mode, modes, 3) == 1 ? 3.0 : 1.0;
}

static const char *config_of(const tsr_array *config) {
    return tsr_input_absent(config) ? "none" : tsr_input_text(config);
}

/* label's length: the endpoints compute it alike. */
static int64_t label_len(const tsr_args *args) {
    return (int64_t)strlen(tsr_input_text(&args->inputs[1])) + 1 +
           (int64_t)strlen(config_of(&args->inputs[2]));
}

static int shape_like(tsr_array *r, const tsr_array *a) {
    r->rank = a->rank;
    for (int32_t d = 0; d < a->rank; d++) r->shape[d] = a->shape[d];
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    const tsr_array *x = &args->inputs[0], *mode = &args->inputs[1], *a = &args->inputs[3];
    /* The host's NUL is there, and the length agrees with it. */
    if ((int64_t)strlen(tsr_input_text(mode)) != mode->shape[0])
        return tsr_ctx_errorf(ctx, "mode is not NUL-terminated at its length");
    double k = scale_of(mode);
    double *y = args->results[0].data;
    for (int64_t i = 0; i < x->shape[0]; i++)
        y[i] = ((const double *)x->data)[i] * (k == 3.0 ? 2.0 : 1.0);
    tsr_array *label = &args->results[1];
    label->rank = 1;
    label->shape[0] = label_len(args);
    char *text = tsr_ctx_alloc(ctx, 1);
    if (!text) return tsr_ctx_errorf(ctx, "no buffer for label");
    if (text[label->shape[0]] != '\0') return tsr_ctx_errorf(ctx, "label's buffer lacks its NUL");
    memcpy(text, tsr_input_text(mode), (size_t)mode->shape[0]);
    text[mode->shape[0]] = '|';
    memcpy(text + mode->shape[0] + 1, config_of(&args->inputs[2]),
           (size_t)(label->shape[0] - mode->shape[0] - 1));
    tsr_array *total = &args->results[2];
    shape_like(total, a);
    double *t = tsr_ctx_alloc(ctx, 2);
    if (!t) return tsr_ctx_errorf(ctx, "no buffer for total");
    for (int64_t i = 0; i < tsr_array_count(a); i++) t[i] = k * ((const double *)a->data)[i];
    return 0;
}

/* jvp: total's tangent is scale * a's; vjp: a's cotangent is scale * total's. */
static int derivative(tsr_ctx *ctx, const tsr_args *args) {
    if (args->n_wrt_in != 1 || args->n_wrt_out != 1)
        return tsr_ctx_errorf(ctx, "differentiate a to total");
    /* a whole field's path is its name, in every mode */
    if (!args->wrt_in_paths || !args->wrt_out_paths || strcmp(args->wrt_in_paths[0], "a") != 0 ||
        strcmp(args->wrt_out_paths[0], "total") != 0)
        return tsr_ctx_errorf(ctx, "the wrt paths are not the fields' names");
    double k = scale_of(&args->inputs[1]);
    const tsr_array *s = &args->seeds[0];
    tsr_array *r = &args->results[0];
    int jvp = args->endpoint == TSR_EP_JVP;
    if (jvp) {
        shape_like(r, &args->inputs[3]);
        if (!tsr_ctx_alloc(ctx, 0)) return tsr_ctx_errorf(ctx, "no buffer");
    }
    if (s->rank != r->rank) return tsr_ctx_errorf(ctx, "seed of rank %d", (int)s->rank);
    for (int64_t i = 0; i < tsr_array_count(s); i++)
        ((double *)r->data)[i] = k * ((const double *)s->data)[i];
    return 0;
}

static int abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    args->results[0].rank = 1;
    args->results[0].shape[0] = args->inputs[0].shape[0];
    args->results[1].rank = 1;
    args->results[1].shape[0] = label_len(args);   /* text inputs have their bytes here */
    shape_like(&args->results[2], &args->inputs[3]);
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "kinds", .version = "1.0",
    .inputs = inputs, .n_inputs = 4,
    .outputs = outputs, .n_outputs = 3,
    .apply = apply, .jvp = derivative, .vjp = derivative, .abstract_eval = abstract_eval,
};
TSR_PLUGIN_DEFINE(plugin)
