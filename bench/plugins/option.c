/* SPDX-License-Identifier: MIT */
/* y = x for a scalar: the cheapest call there is, so that what a TEXT
 * option adds to it shows (bench_text). Built twice: option.so with a
 * TEXT input "method" (choices fast, accurate) that apply reads, and
 * plain.so without it. */
#include <tessera/plugin.h>

#ifdef BENCH_TEXT_OPTION
static const char *const methods[] = {"fast", "accurate"};
#endif
static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 0},
#ifdef BENCH_TEXT_OPTION
    {.name = "method", .kind = TSR_KIND_TEXT, .choices = methods, .n_choices = 2},
#endif
};
static const tsr_field outputs[] = {{.name = "y", .dtype = TSR_FLOAT64, .rank = 0}};

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    double k = 1.0;
#ifdef BENCH_TEXT_OPTION
    k = tsr_input_text(&args->inputs[1])[0] == 'f' ? 1.0 : -1.0;   /* fast: y = x */
#endif
    *(double *)args->results[0].data = k * *(const double *)args->inputs[0].data;
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "option", .version = "1.0",
    .inputs = inputs, .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs, .n_outputs = 1,
    .apply = apply, .flags = TSR_PLUGIN_THREAD_SAFE,
};
TSR_PLUGIN_DEFINE(plugin)
