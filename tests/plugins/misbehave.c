/* SPDX-License-Identifier: MIT */
/*
 * A plugin that breaks the rules on request. The configuration key
 * "behave" (read at init) selects what apply does:
 *
 *   ok              dense = 2*xin, ragged = [1, 2], rows3 = one row of zeros
 *   fail_msg        reports "the solver diverged" and returns 7
 *   fail_silent     returns 3 without a message
 *   alloc_negative  asks for ragged of shape (-2,)
 *   alloc_rank      asks for ragged of rank TSR_MAX_RANK + 1
 *   alloc_rank_neg  asks for ragged of rank -1
 *   alloc_fixed     asks for rows3 of shape (2, 4), contradicting its fixed 3
 *   alloc_index     asks for result 99, which does not exist
 *   no_alloc        returns success without allocating ragged
 *   change_dtype    turns the pre-allocated dense into float32
 *   change_rank     turns the pre-allocated dense into rank 2
 *   change_shape    grows the pre-allocated dense by one element
 *
 * When the host correctly refuses an allocation the plugin returns -1 and
 * adds no message of its own, as a plugin should; if the host wrongly
 * grants it, the plugin succeeds, so that the test sees the difference.
 * jvp (dense with respect to xin) obeys fail_msg and fail_silent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/plugin.h>

enum { OUT_DENSE, OUT_RAGGED, OUT_ROWS3 };

static const tsr_dim vec[] = {TSR_SYM("n")};
static const tsr_dim any[] = {TSR_ANY};
static const tsr_dim rows3[] = {TSR_ANY, TSR_FIXED(3)};

static const tsr_field inputs[] = {
    {.name = "xin", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec, .flags = TSR_FIELD_DIFFERENTIABLE},
};
static const tsr_field outputs[] = {
    {.name = "dense", .dtype = TSR_FLOAT64, .rank = 1, .dims = vec, .flags = TSR_FIELD_DIFFERENTIABLE},
    {.name = "ragged", .dtype = TSR_FLOAT64, .rank = 1, .dims = any},
    {.name = "rows3", .dtype = TSR_FLOAT64, .rank = 2, .dims = rows3},
};

static char behaviour[64];

static int init(tsr_ctx *ctx, void **state) {
    const char *b = tsr_ctx_config(ctx, "behave");
    /* Static storage is enough: tests load one configuration at a time. */
    snprintf(behaviour, sizeof behaviour, "%s", b ? b : "ok");
    *state = behaviour;
    return 0;
}

static int is(tsr_ctx *ctx, const char *name) {
    return strcmp((const char *)ctx->state, name) == 0;
}

/* Shared failure modes of every endpoint; 1 when one applied. */
static int fail_on_request(tsr_ctx *ctx, int *rc) {
    if (is(ctx, "fail_msg")) {
        tsr_ctx_error(ctx, "the solver diverged");
        *rc = 7;
        return 1;
    }
    if (is(ctx, "fail_silent")) {
        *rc = 3;
        return 1;
    }
    return 0;
}

static int apply(tsr_ctx *ctx, const tsr_args *args) {
    int rc;
    if (fail_on_request(ctx, &rc)) return rc;
    tsr_array *res = args->results;
    const tsr_array *x = &args->inputs[0];
    int64_t n = tsr_array_count(x);
    double *dense = res[OUT_DENSE].data;
    for (int64_t i = 0; i < n; i++) dense[i] = 2 * ((const double *)x->data)[i];

    if (is(ctx, "change_dtype")) res[OUT_DENSE].dtype = TSR_FLOAT32;
    if (is(ctx, "change_rank")) {
        res[OUT_DENSE].rank = 2;
        res[OUT_DENSE].shape[1] = 1;
    }
    if (is(ctx, "change_shape")) res[OUT_DENSE].shape[0] += 1;

    tsr_array *ragged = &res[OUT_RAGGED];
    ragged->rank = 1;
    ragged->shape[0] = 2;
    if (is(ctx, "alloc_negative")) ragged->shape[0] = -2;
    if (is(ctx, "alloc_rank")) ragged->rank = TSR_MAX_RANK + 1;
    if (is(ctx, "alloc_rank_neg")) ragged->rank = -1;
    if (is(ctx, "alloc_index")) {
        if (!tsr_ctx_alloc(ctx, 99)) return -1;
    }
    if (!is(ctx, "no_alloc")) {
        double *r = tsr_ctx_alloc(ctx, OUT_RAGGED);
        if (!r) return -1;
        if (ragged->rank == 1 && ragged->shape[0] == 2) {
            r[0] = 1;
            r[1] = 2;
        }
    }

    tsr_array *r3 = &res[OUT_ROWS3];
    r3->rank = 2;
    r3->shape[0] = 1;
    r3->shape[1] = 3;
    if (is(ctx, "alloc_fixed")) {
        r3->shape[0] = 2;
        r3->shape[1] = 4;
    }
    double *m = tsr_ctx_alloc(ctx, OUT_ROWS3);
    if (!m) return -1;
    if (r3->shape[1] == 3) memset(m, 0, 3 * sizeof(double));
    return 0;
}

static int jvp(tsr_ctx *ctx, const tsr_args *args) {
    int rc;
    if (fail_on_request(ctx, &rc)) return rc;
    for (int k = 0; k < args->n_wrt_out; k++) {
        const tsr_array *t = &args->seeds[0];
        double *out = args->results[k].data;
        for (int64_t i = 0; i < tsr_array_count(t); i++)
            out[i] = 2 * ((const double *)t->data)[i];
    }
    return 0;
}

static const tsr_plugin plugin = {
    TSR_PLUGIN_HEADER,
    .name = "misbehave", .version = "1.0",
    .inputs = inputs, .n_inputs = 1, .outputs = outputs, .n_outputs = 3,
    .init = init, .apply = apply, .jvp = jvp,
};
TSR_PLUGIN_DEFINE(plugin)
