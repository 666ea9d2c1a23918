/* SPDX-License-Identifier: MIT */
/*
 * heat: transient heat conduction in a rod, with a hand-written tangent-linear
 * model (jvp) and discrete adjoint (vjp), for inverse problems such as
 * recovering the conductivity profile from a measured temperature.
 *
 * The scheme (finite volumes, implicit Euler, harmonic-mean faces, wall at
 * temperature 0 at x = 0, insulated end at x = 1) lives in heat_scheme.c;
 * this file holds the schema, the checks of the inputs and the endpoints.
 *
 * Cost, for n cells and K steps (each step one O(n) tridiagonal solve):
 *   apply     K solves, O(n) memory
 *   jvp       2K solves (forward and tangent together), O(n) memory
 *   vjp       2K solves (forward, then adjoint), O(K n) memory: the
 *             trajectory T^1 .. T^K kept for the backward sweep
 *   jacobian  one forward run, then one adjoint sweep per output entry
 *             (n for temperature, 1 for misfit), each giving the rows of
 *             every requested input at once: O(K n^2) time, O(K n) memory.
 *             Tangent columns would take n sweeps per requested input.
 * Every buffer is allocated per call, so calls may run concurrently.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/plugin.h>

#include "heat_scheme.h"
#include "plugin_util.h"

/* Field indices, in schema order. The differentiable inputs come first. */
enum { IN_CONDUCTIVITY = 0, IN_SOURCE = 1, IN_INITIAL = 2, IN_OBSERVATIONS = 3, IN_DT = 4,
       IN_STEPS = 5 };
enum { N_DIFFERENTIABLE_INPUTS = 3 };
enum { OUT_TEMPERATURE = 0, OUT_MISFIT = 1 };

static const tsr_dim cells_n[] = {TSR_SYM("n")};

static const tsr_field inputs[] = {
    {.name = "conductivity", .dtype = TSR_FLOAT64, .rank = 1, .dims = cells_n,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "thermal conductivity k of each of the n cells of the rod 0 <= x <= 1; every "
            "entry > 0. Faces between cells use the harmonic mean."},
    {.name = "source", .dtype = TSR_FLOAT64, .rank = 1, .dims = cells_n,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "heat source of each cell (per unit volume and time), constant in time"},
    {.name = "initial_temperature", .dtype = TSR_FLOAT64, .rank = 1, .dims = cells_n,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "temperature of each cell at time 0, relative to the wall at x = 0"},
    {.name = "observations", .dtype = TSR_FLOAT64, .rank = 1, .dims = cells_n,
     .flags = 0,
     .doc = "measured temperature of each cell at the final time; only misfit uses it"},
    {.name = "dt", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL, .flags = 0,
     .doc = "time step of implicit Euler, > 0"},
    {.name = "steps", .dtype = TSR_INT64, .rank = 0, .dims = NULL, .flags = 0,
     .doc = "number of time steps K >= 1; the final time is K * dt"},
};

static const tsr_field outputs[] = {
    {.name = "temperature", .dtype = TSR_FLOAT64, .rank = 1, .dims = cells_n,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "temperature of each cell at the final time K * dt"},
    {.name = "misfit", .dtype = TSR_FLOAT64, .rank = 0, .dims = NULL,
     .flags = TSR_FIELD_DIFFERENTIABLE,
     .doc = "0.5 * sum_i (temperature[i] - observations[i])^2"},
};

/* One call's problem, its factored system and its work buffers. */
typedef struct heat_call {
    heat_problem problem;
    const double *observations;
    heat_scheme scheme;
    double *buffer;  /* scratch vectors and, for vjp and jacobian, the trajectory */
} heat_call;

/* The checks the schema cannot express. */
static int check_inputs(tsr_ctx *ctx, const heat_problem *p) {
    if (p->n < 1) return tsr_ctx_errorf(ctx, "conductivity: the rod needs at least 1 cell, got 0");
    if (!(p->dt > 0.0) || !isfinite(p->dt))
        return tsr_ctx_errorf(ctx, "dt: the time step must be a positive finite number, got %g",
                              p->dt);
    if (p->steps < 1)
        return tsr_ctx_errorf(ctx, "steps: at least 1 time step is needed, got %lld",
                              (long long)p->steps);
    for (int64_t i = 0; i < p->n; i++) {
        double k = p->conductivity[i];
        if (!(k > 0.0) || !isfinite(k))
            return tsr_ctx_errorf(ctx,
                                  "conductivity[%lld] = %g: conductivity must be positive and "
                                  "finite in every cell",
                                  (long long)i, k);
    }
    return 0;
}

/* Unpack and check the inputs, build and factor the system, and allocate
 * `vectors` scratch vectors of n values plus, when keep_trajectory is set,
 * room for T^1 .. T^K. On failure everything is released. */
static int prepare(tsr_ctx *ctx, const tsr_args *args, int64_t vectors, int keep_trajectory,
                   heat_call *hc) {
    memset(hc, 0, sizeof *hc);
    heat_problem *p = &hc->problem;
    p->n = args->inputs[IN_CONDUCTIVITY].shape[0];
    p->dt = *(const double *)args->inputs[IN_DT].data;
    p->steps = *(const int64_t *)args->inputs[IN_STEPS].data;
    p->conductivity = args->inputs[IN_CONDUCTIVITY].data;
    p->source = args->inputs[IN_SOURCE].data;
    p->initial_temperature = args->inputs[IN_INITIAL].data;
    hc->observations = args->inputs[IN_OBSERVATIONS].data;
    if (check_inputs(ctx, p) != 0) return -1;

    int64_t rows = vectors + (keep_trajectory ? p->steps : 0);
    if (rows > (int64_t)(SIZE_MAX / sizeof(double)) / p->n)
        return tsr_ctx_errorf(ctx, "steps: %lld steps of %lld cells are too many to keep in memory",
                              (long long)p->steps, (long long)p->n);
    hc->buffer = rows > 0 ? malloc((size_t)(rows * p->n) * sizeof(double)) : NULL;
    if (rows > 0 && hc->buffer == NULL)
        return tsr_ctx_errorf(ctx, "out of memory for %lld x %lld work values%s",
                              (long long)rows, (long long)p->n,
                              keep_trajectory ? " (the trajectory the adjoint needs)" : "");

    int64_t bad_row = 0;
    heat_status st = heat_scheme_init(&hc->scheme, p, &bad_row);
    if (st != HEAT_OK) {
        free(hc->buffer);
        hc->buffer = NULL;
        if (st == HEAT_NO_MEMORY) return tsr_ctx_errorf(ctx, "out of memory for the system matrix");
        return tsr_ctx_errorf(ctx,
                              "the implicit system lost diagonal dominance at cell %lld: "
                              "dt * conductivity * n^2 overflowed",
                              (long long)bad_row);
    }
    return 0;
}

static void release(heat_call *hc) {
    heat_scheme_free(&hc->scheme);
    free(hc->buffer);
}

/* Scratch vector v (0-based) of the call's buffer. */
static double *scratch(const heat_call *hc, int64_t v) {
    return hc->buffer + v * hc->problem.n;
}

/* The trajectory, after the scratch vectors. */
static double *trajectory(const heat_call *hc, int64_t vectors) {
    return scratch(hc, vectors);
}

/* The final temperature in a trajectory: its last row. */
static const double *final_row(const heat_call *hc, const double *traj) {
    return traj + (hc->problem.steps - 1) * hc->problem.n;
}

static double misfit_of(const heat_call *hc, const double *T) {
    double sum = 0.0;
    for (int64_t i = 0; i < hc->problem.n; i++) {
        double r = T[i] - hc->observations[i];
        sum += r * r;
    }
    return 0.5 * sum;
}

static int heat_apply(tsr_ctx *ctx, const tsr_args *args) {
    heat_call hc;
    if (prepare(ctx, args, 0, 0, &hc) != 0) return -1;
    int64_t n = hc.problem.n;
    double *T = result_f64(ctx, args, OUT_TEMPERATURE, 1, &n);
    double *misfit = result_f64(ctx, args, OUT_MISFIT, 0, NULL);
    if (T != NULL && misfit != NULL) {
        heat_forward(&hc.scheme, T, NULL);
        *misfit = misfit_of(&hc, T);
    }
    release(&hc);
    return T != NULL && misfit != NULL ? 0 : -1;
}

/* d temperature = dT^K from the tangent-linear model; d misfit =
 * (T^K - observations) . dT^K. */
static int heat_jvp(tsr_ctx *ctx, const tsr_args *args) {
    heat_call hc;
    if (prepare(ctx, args, 2, 0, &hc) != 0) return -1;
    int64_t n = hc.problem.n;
    double *T = scratch(&hc, 0), *dT = scratch(&hc, 1);
    heat_tangent(&hc.scheme, jvp_tangent(args, IN_CONDUCTIVITY), jvp_tangent(args, IN_SOURCE),
                 jvp_tangent(args, IN_INITIAL), T, dT);
    int rc = 0;
    for (int32_t k = 0; k < args->n_wrt_out && rc == 0; k++) {
        int temperature = args->wrt_out[k] == OUT_TEMPERATURE;
        double *out = result_f64(ctx, args, k, temperature ? 1 : 0, &n);
        if (out == NULL) {
            rc = -1;
        } else if (temperature) {
            copy_f64(out, dT, n);
        } else {
            double sum = 0.0;
            for (int64_t i = 0; i < n; i++) sum += (T[i] - hc.observations[i]) * dT[i];
            *out = sum;
        }
    }
    release(&hc);
    return rc;
}

/* Where one adjoint sweep writes the cotangents of the differentiable
 * inputs (NULL: not asked for), indexed by input field. */
typedef struct input_slots {
    double *of[N_DIFFERENTIABLE_INPUTS];
} input_slots;

static void run_adjoint(const heat_call *hc, const double *traj, const double *Tbar,
                        const input_slots *slots) {
    heat_adjoint(&hc->scheme, traj, Tbar, slots->of[IN_CONDUCTIVITY], slots->of[IN_SOURCE],
                 slots->of[IN_INITIAL]);
}

/* The cotangent of T^K is temperature's cotangent plus misfit's times the
 * residual T^K - observations; one adjoint sweep carries it back. */
static int heat_vjp(tsr_ctx *ctx, const tsr_args *args) {
    enum { SEED = 0, VECTORS = 1 };
    heat_call hc;
    if (prepare(ctx, args, VECTORS, 1, &hc) != 0) return -1;
    int64_t n = hc.problem.n;
    double *traj = trajectory(&hc, VECTORS), *seed = scratch(&hc, SEED);
    heat_forward(&hc.scheme, seed, traj); /* T^K is also the trajectory's last row */
    const double *T = final_row(&hc, traj);
    const double *temperature_bar = vjp_cotangent(args, OUT_TEMPERATURE);
    const double *misfit_bar = vjp_cotangent(args, OUT_MISFIT);
    for (int64_t i = 0; i < n; i++) {
        seed[i] = temperature_bar != NULL ? temperature_bar[i] : 0.0;
        if (misfit_bar != NULL) seed[i] += *misfit_bar * (T[i] - hc.observations[i]);
    }
    input_slots slots = {{NULL}};
    for (int32_t k = 0; k < args->n_wrt_in; k++) {
        slots.of[args->wrt_in[k]] = result_f64(ctx, args, k, 1, &n);
        if (slots.of[args->wrt_in[k]] == NULL) {
            release(&hc);
            return -1;
        }
    }
    run_adjoint(&hc, traj, seed, &slots);
    release(&hc);
    return 0;
}

/* Point slots at row `row` of output o's blocks (row 0 for misfit, whose
 * blocks are single rows). */
static int claim_rows(tsr_ctx *ctx, const tsr_args *args, int32_t o, int64_t row,
                      input_slots *slots) {
    int64_t n = args->inputs[IN_CONDUCTIVITY].shape[0];
    int temperature = args->wrt_out[o] == OUT_TEMPERATURE;
    const int64_t shape[2] = {n, n};
    for (int32_t i = 0; i < args->n_wrt_in; i++) {
        double *block = result_f64(ctx, args, o * args->n_wrt_in + i, temperature ? 2 : 1,
                                   temperature ? shape : shape + 1);
        if (block == NULL) return -1;
        slots->of[args->wrt_in[i]] = block + row * n;
    }
    return 0;
}

/* Row p of d temperature / d input is the adjoint of the seed e_p; the
 * misfit row is the adjoint of the residual. */
static int heat_jacobian(tsr_ctx *ctx, const tsr_args *args) {
    enum { SEED = 0, VECTORS = 1 };
    heat_call hc;
    if (prepare(ctx, args, VECTORS, 1, &hc) != 0) return -1;
    int64_t n = hc.problem.n;
    double *traj = trajectory(&hc, VECTORS), *seed = scratch(&hc, SEED);
    heat_forward(&hc.scheme, seed, traj); /* T^K is also the trajectory's last row */
    const double *T = final_row(&hc, traj);
    int rc = 0;
    for (int32_t o = 0; o < args->n_wrt_out && rc == 0; o++) {
        input_slots slots = {{NULL}};
        if (args->wrt_out[o] == OUT_MISFIT) {
            for (int64_t i = 0; i < n; i++) seed[i] = T[i] - hc.observations[i];
            rc = claim_rows(ctx, args, o, 0, &slots);
            if (rc == 0) run_adjoint(&hc, traj, seed, &slots);
            continue;
        }
        for (int64_t p = 0; p < n && rc == 0; p++) {
            zero_f64(seed, n);
            seed[p] = 1.0;
            rc = claim_rows(ctx, args, o, p, &slots);
            if (rc == 0) run_adjoint(&hc, traj, seed, &slots);
        }
    }
    release(&hc);
    return rc;
}

static int heat_abstract_eval(tsr_ctx *ctx, const tsr_args *args) {
    int64_t n = args->inputs[IN_CONDUCTIVITY].shape[0];
    if (n < 1) return tsr_ctx_errorf(ctx, "conductivity: the rod needs at least 1 cell, got 0");
    tsr_array *temperature = &args->results[OUT_TEMPERATURE];
    temperature->dtype = TSR_FLOAT64;
    temperature->rank = 1;
    temperature->shape[0] = n;
    tsr_array *misfit = &args->results[OUT_MISFIT];
    misfit->dtype = TSR_FLOAT64;
    misfit->rank = 0;
    return 0;
}

static const tsr_plugin heat_plugin = {
    TSR_PLUGIN_HEADER,
    .flags = TSR_PLUGIN_THREAD_SAFE,
    .name = "heat",
    .version = "0.1.0",
    .description =
        "Transient heat conduction in a rod 0 <= x <= 1 of n cells (volumetric heat capacity "
        "1): implicit Euler, K = steps steps of dt, harmonic-mean face conductivities, wall "
        "at temperature 0 at x = 0, insulated end at x = 1. Gives the final temperature and "
        "misfit = 0.5 * sum (temperature - observations)^2, with the tangent-linear model "
        "(jvp) and the discrete adjoint (vjp) written by hand.",
    .inputs = inputs,
    .n_inputs = sizeof inputs / sizeof inputs[0],
    .outputs = outputs,
    .n_outputs = sizeof outputs / sizeof outputs[0],
    .apply = heat_apply,
    .jvp = heat_jvp,
    .vjp = heat_vjp,
    .jacobian = heat_jacobian,
    .abstract_eval = heat_abstract_eval,
};

TSR_PLUGIN_DEFINE(heat_plugin)
