/* SPDX-License-Identifier: MIT */
/*
 * rosenbrock: the n-dimensional Rosenbrock function
 *
 *     value = sum_{i=0}^{n-2} [ b * (x[i+1] - x[i]^2)^2 + (a - x[i])^2 ]
 *
 * with its exact derivatives w.r.t. x, a and b. A cheap, curved test
 * density: MCMC and optimisation loops call it many times per second,
 * which is the case in-process calls are made for.
 *
 * Every endpoint walks the same terms; rosenbrock_term() gives the value
 * of term i and its partial derivatives, and each endpoint combines them.
 * hvp uses the term's second derivatives (rosenbrock_term_hvp).
 */
#include <stdint.h>

#include <tessera/plugin.h>

#include "plugin_util.h"

/* Field indices, in schema order. */
enum { IN_X = 0, IN_A = 1, IN_B = 2 };
enum { OUT_VALUE = 0 };

static const tsr_dim vector_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "x", .dtype = TSR_FLOAT64, .rank = 1, .dims = vector_n,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "point at which to evaluate; n >= 2 coordinates"},
    {.name = "a", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "offset parameter: each term pulls x[i] towards a; usually 1, where the "
            "minimum is value 0 at x = (1, ..., 1)"},
    {.name = "b", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "curvature parameter: weight of the (x[i+1] - x[i]^2)^2 valley terms; usually 100"},
};

static const tsr_field outputs[] = {
    {.name = "value", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "sum_{i=0}^{n-2} [ b*(x[i+1] - x[i]^2)^2 + (a - x[i])^2 ]"},
};

/* Term i of the sum and its partial derivatives. */
typedef struct rosenbrock_term_parts {
    double value;
    double d_xi;    /* d term / d x[i]   */
    double d_xnext; /* d term / d x[i+1] */
    double d_a;
    double d_b;
} rosenbrock_term_parts;

static rosenbrock_term_parts rosenbrock_term(double xi, double xnext, double a, double b) {
    double valley = xnext - xi * xi;
    double offset = a - xi;
    rosenbrock_term_parts t = {
        .value = b * valley * valley + offset * offset,
        .d_xi = -4.0 * b * valley * xi - 2.0 * offset,
        .d_xnext = 2.0 * b * valley,
        .d_a = 2.0 * offset,
        .d_b = valley * valley,
    };
    return t;
}

typedef struct rosenbrock_inputs {
    int64_t n;
    const double *x;
    double a;
    double b;
} rosenbrock_inputs;

/* The schema can only say "a vector"; the sum needs at least one term. */
static int check_length(tsr_ctx *ctx, const tsr_args *args) {
    int64_t n = args->inputs[IN_X].shape[0];
    if (n < 2) {
        return tsr_ctx_errorf(ctx,
                              "x: the Rosenbrock function needs at least 2 coordinates, "
                              "got %lld",
                              (long long)n);
    }
    return 0;
}

static int unpack_inputs(tsr_ctx *ctx, const tsr_args *args, rosenbrock_inputs *in) {
    if (check_length(ctx, args) != 0) return -1;
    in->n = args->inputs[IN_X].shape[0];
    in->x = args->inputs[IN_X].data;
    in->a = *(const double *)args->inputs[IN_A].data;
    in->b = *(const double *)args->inputs[IN_B].data;
    return 0;
}

static int rosenbrock_apply(tsr_ctx *ctx, const tsr_args *args) {
    rosenbrock_inputs in;
    if (unpack_inputs(ctx, args, &in) != 0) return -1;
    double *value = result_f64(ctx, args, OUT_VALUE, 0, NULL);
    if (value == NULL) return -1;
    double sum = 0.0;
    for (int64_t i = 0; i + 1 < in.n; i++) {
        /* Inlined; the compiler drops the partials apply does not use. */
        sum += rosenbrock_term(in.x[i], in.x[i + 1], in.a, in.b).value;
    }
    *value = sum;
    return 0;
}

/* d value = grad_x . x_dot + d_a * a_dot + d_b * b_dot, over the tangents given. */
static int rosenbrock_jvp(tsr_ctx *ctx, const tsr_args *args) {
    rosenbrock_inputs in;
    if (unpack_inputs(ctx, args, &in) != 0) return -1;
    const double *x_dot = jvp_tangent(args, IN_X);
    const double *a_dot = jvp_tangent(args, IN_A);
    const double *b_dot = jvp_tangent(args, IN_B);
    double total = 0.0;
    for (int64_t i = 0; i + 1 < in.n; i++) {
        rosenbrock_term_parts t = rosenbrock_term(in.x[i], in.x[i + 1], in.a, in.b);
        if (x_dot != NULL) total += t.d_xi * x_dot[i] + t.d_xnext * x_dot[i + 1];
        if (a_dot != NULL) total += t.d_a * *a_dot;
        if (b_dot != NULL) total += t.d_b * *b_dot;
    }
    for (int32_t k = 0; k < args->n_wrt_out; k++) { /* wrt_out[k] can only be value */
        double *value_dot = result_f64(ctx, args, k, 0, NULL);
        if (value_dot == NULL) return -1;
        *value_dot = total;
    }
    return 0;
}

/* Where one endpoint's results for x, a and b go (NULL: not asked for). */
typedef struct gradient_slots {
    double *x;
    double *a;
    double *b;
} gradient_slots;

/* Get the buffer of result k, the derivative w.r.t. input `field`, and
 * file it in the matching slot. Its shape is that of the input. */
static int claim_slot(tsr_ctx *ctx, const tsr_args *args, int32_t k, int32_t field,
                      const int64_t *x_shape, gradient_slots *slots) {
    double *buf = result_f64(ctx, args, k, field == IN_X ? 1 : 0, x_shape);
    if (buf == NULL) return -1;
    if (field == IN_X) slots->x = buf;
    else if (field == IN_A) slots->a = buf;
    else slots->b = buf;
    return 0;
}

/* Write the gradient times `scale` into whichever slots were asked for. */
static void write_gradient(const rosenbrock_inputs *in, double scale, const gradient_slots *slots) {
    if (slots->x != NULL) zero_f64(slots->x, in->n);
    double d_a = 0.0, d_b = 0.0;
    for (int64_t i = 0; i + 1 < in->n; i++) {
        rosenbrock_term_parts t = rosenbrock_term(in->x[i], in->x[i + 1], in->a, in->b);
        if (slots->x != NULL) {
            slots->x[i] += scale * t.d_xi;
            slots->x[i + 1] += scale * t.d_xnext;
        }
        d_a += t.d_a;
        d_b += t.d_b;
    }
    if (slots->a != NULL) *slots->a = scale * d_a;
    if (slots->b != NULL) *slots->b = scale * d_b;
}

/* value is a scalar, so each VJP is the gradient times the cotangent
 * (zero when value is not among vjp_outputs). */
static int rosenbrock_vjp(tsr_ctx *ctx, const tsr_args *args) {
    rosenbrock_inputs in;
    if (unpack_inputs(ctx, args, &in) != 0) return -1;
    const double *c = vjp_cotangent(args, OUT_VALUE);
    gradient_slots slots = {NULL, NULL, NULL};
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        if (claim_slot(ctx, args, k, args->wrt_in[k], &in.n, &slots) != 0) return -1;
    }
    write_gradient(&in, c != NULL ? *c : 0.0, &slots);
    return 0;
}

/* value is a scalar, so the blocks are the gradient's pieces:
 * d value / d x of shape (n,), d value / d a and d value / d b of shape (). */
static int rosenbrock_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    rosenbrock_inputs in;
    if (unpack_inputs(ctx, args, &in) != 0) return -1;
    for (int32_t o = 0; o < args->n_wrt_out; o++) { /* wrt_out[o] can only be value */
        gradient_slots slots = {NULL, NULL, NULL};
        for (int32_t i = 0; i < args->n_wrt_in; i++) {
            int32_t k = o * args->n_wrt_in + i;
            if (claim_slot(ctx, args, k, args->wrt_in[i], &in.n, &slots) != 0) return -1;
        }
        write_gradient(&in, 1.0, &slots);
    }
    return 0;
}

/* The Hessian of term i over (x[i], x[i+1], a, b) times the tangent
 * (ti, tn, ta, tb). With v = x[i+1] - x[i]^2 and o = a - x[i]:
 *   d2/dxi2 = 8b xi^2 - 4b v + 2   d2/dxi dxn = -4b xi   d2/dxi da = -2
 *   d2/dxi db = -4 v xi            d2/dxn2 = 2b          d2/dxn db = 2v
 *   d2/da2 = 2                     (d2/dxn da = d2/da db = d2/db2 = 0) */
typedef struct rosenbrock_term_hv {
    double xi, xn, a, b;   /* the rows of H t for x[i], x[i+1], a, b */
} rosenbrock_term_hv;

static rosenbrock_term_hv rosenbrock_term_hvp(double xi, double xn, double b, double ti,
                                              double tn, double ta, double tb) {
    double v = xn - xi * xi;
    rosenbrock_term_hv h = {
        .xi = (8.0 * b * xi * xi - 4.0 * b * v + 2.0) * ti - 4.0 * b * xi * tn - 2.0 * ta -
              4.0 * v * xi * tb,
        .xn = -4.0 * b * xi * ti + 2.0 * b * tn + 2.0 * v * tb,
        .a = -2.0 * ti + 2.0 * ta,
        .b = -4.0 * v * xi * ti + 2.0 * v * tn,
    };
    return h;
}

/* value is a scalar: the hvp is w H t, H the Hessian of value over the
 * hvp_inputs (the tangents of the others are zero). One pass: x[i]'s row
 * is complete once terms i - 1 and i are added, so each is written once. */
static int rosenbrock_hvp(tsr_ctx *ctx, const tsr_args *args) {
    rosenbrock_inputs in;
    if (unpack_inputs(ctx, args, &in) != 0) return -1;
    const double *c = vjp_cotangent(args, OUT_VALUE);
    const double *tx = hvp_tangent(args, IN_X);
    const double *ta = hvp_tangent(args, IN_A);
    const double *tb = hvp_tangent(args, IN_B);
    gradient_slots slots = {NULL, NULL, NULL};
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        if (claim_slot(ctx, args, k, args->wrt_in[k], &in.n, &slots) != 0) return -1;
    }
    double w = c != NULL ? *c : 0.0, t_a = ta ? *ta : 0.0, t_b = tb ? *tb : 0.0;
    double ha = 0.0, hb = 0.0, carry = 0.0;   /* carry: term i-1's part of x[i]'s row */
    for (int64_t i = 0; i + 1 < in.n; i++) {
        rosenbrock_term_hv h = rosenbrock_term_hvp(in.x[i], in.x[i + 1], in.b,
                                                   tx ? tx[i] : 0.0, tx ? tx[i + 1] : 0.0,
                                                   t_a, t_b);
        if (slots.x != NULL) slots.x[i] = w * (carry + h.xi);
        carry = h.xn;
        ha += h.a;
        hb += h.b;
    }
    if (slots.x != NULL) slots.x[in.n - 1] = w * carry;
    if (slots.a != NULL) *slots.a = w * ha;
    if (slots.b != NULL) *slots.b = w * hb;
    return 0;
}

static int rosenbrock_abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    if (check_length(ctx, args) != 0) return -1;
    tsr_array *value = &args->results[OUT_VALUE];
    value->dtype = TSR_FLOAT64;
    value->rank = 0;
    return 0;
}

static const tsr_plugin rosenbrock_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "rosenbrock",
    .version = "0.1.0",
    .description = "n-dimensional Rosenbrock function value = sum_{i=0}^{n-2} "
                   "[ b*(x[i+1] - x[i]^2)^2 + (a - x[i])^2 ] (n >= 2), with exact "
                   "derivatives w.r.t. x, a and b, first and second (hvp).",
    .inputs = inputs,
    .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs,
    .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = rosenbrock_apply,
    .jvp = rosenbrock_jvp,
    .vjp = rosenbrock_vjp,
    .jacobian = rosenbrock_jacobian,
    .abstract_eval = rosenbrock_abstract_eval,
    .hvp = rosenbrock_hvp,
};

TSR_PLUGIN_DEFINE(rosenbrock_plugin)
