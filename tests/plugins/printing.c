/* SPDX-License-Identifier: MIT */
/*
 * A plugin that prints on stdout, for the tests that the command's own
 * stdout carries only its results: y = 2 x (x, y float64 (n,),
 * differentiable). init prints "printing: init"; every endpoint prints
 * "printing: ENDPOINT". None of it ends with a newline or is flushed, so
 * it stays in the buffer of the plugin's stdout FILE until the process
 * (or, isolated, its namespace's C library) writes it out.
 */
#include <stdio.h>

#include "minimal.h"

static int init(tsr_ctx *ctx, void **state) {
    (void)ctx;
    (void)state;
    printf("printing: init ");
    return 0;
}

static void scale(const tsr_array *from, const tsr_array *to) {
    const double *x = from->data;
    double *y = to->data;
    for (int64_t i = 0; i < tsr_array_count(from); i++) y[i] = 2.0 * x[i];
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    printf("printing: apply ");
    scale(&args->inputs[0], &args->results[0]);
    return 0;
}

static int jvp_vjp(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    printf("printing: %s ", args->endpoint == TSR_EP_JVP ? "jvp" : "vjp");
    scale(&args->seeds[0], &args->results[0]);
    return 0;
}

static int jacobian(tsr_ctx *ctx, const tsr_args *args) {
    (void)ctx;
    printf("printing: jacobian ");
    int64_t n = tsr_array_count(&args->inputs[0]);
    double *b = args->results[0].data;
    for (int64_t i = 0; i < n * n; i++) b[i] = i % (n + 1) == 0 ? 2.0 : 0.0;
    return 0;
}

static const tsr_field inputs[] = {MINIMAL_INPUT};
static const tsr_field outputs[] = {MINIMAL_OUTPUT};
static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "printing", .version = "1.0",
    .description = "y = 2 x, printing on stdout in init and in every endpoint",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 1,
    .init = init, .apply = apply, .jvp = jvp_vjp, .vjp = jvp_vjp, .jacobian = jacobian,
};
TSR_PLUGIN_DEFINE(plugin)
