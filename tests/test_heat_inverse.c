/* SPDX-License-Identifier: MIT */
/* The inverse problem of the heat plugin, solved through the host API with
 * the descent that build/bin/heat_invert runs (plugins/heat/invert_core.c):
 * from a temperature measured at the final time, recover the conductivity. */
#include "test_util.h"

#include "invert_core.h"

#define HEAT BUNDLED_PLUGIN("heat")
#define CELLS 24

/* A two-layer rod (k = 1 then 3 from x = 0.5, with a smooth transition),
 * starting at temperature 0 and heated in its last cell, next to the
 * insulated end, for 60 steps of 0.01: the heat crosses every cell on its
 * way to the cooled wall. */
typedef struct two_layer {
    double k_true[CELLS], source[CELLS], initial[CELLS], observed[CELLS];
    heat_experiment e;
} two_layer;

static void two_layer_setup(two_layer *t, tsr_component *c) {
    for (int i = 0; i < CELLS; i++) {
        double x = (i + 0.5) / CELLS;
        t->k_true[i] = 2.0 + tanh((x - 0.5) / 0.08);
        t->source[i] = i == CELLS - 1 ? CELLS : 0.0; /* power 1 in total */
        t->initial[i] = 0.0;
    }
    t->e = (heat_experiment){.n = CELLS, .dt = 0.01, .steps = 60, .source = t->source,
                             .initial_temperature = t->initial, .observations = t->observed};
    char err[TSR_ERRMSG_MAX];
    int rc = heat_simulate(c, &t->e, t->k_true, t->observed, err, sizeof err);
    cr_assert_eq(rc, 0, "simulating the measurement failed: %s", err);
}

static tsr_component *open_heat(const char *mode) {
    tsr_options *opts = tsr_options_new();
    tsr_error err = {0};
    cr_assert_not_null(opts);
    cr_assert_eq(tsr_options_set(opts, "mode", mode, &err), 0, "%s", err.message);
    tsr_component *c = open_ok(HEAT, opts);
    tsr_options_free(opts);
    return c;
}

/* Run the descent from k = 1 everywhere; k holds the estimate. */
static heat_inverse_result invert_from_constant(tsr_component *c, two_layer *t, double *k,
                                                const heat_inverse_settings *st) {
    for (int i = 0; i < CELLS; i++) k[i] = 1.0;
    heat_inverse_result r;
    char err[TSR_ERRMSG_MAX];
    int rc = heat_invert(c, &t->e, st, k, &r, err, sizeof err);
    cr_assert_eq(rc, 0, "heat_invert failed: %s", err);
    return r;
}

/* From k = 1 the misfit falls by 1e6 (at least 1e4 is asked of the
 * example) and k is recovered within 2% in every cell up to x = 0.8.
 * Beyond, the cells' conductivities are less observable: the temperature
 * sees face conductances (harmonic means of neighbours), and recovering
 * cells from faces cell by cell from the wall amplifies what the data leave
 * undetermined near the far end. */
Test(heat_inverse, recovers_two_layer_conductivity) {
    tsr_component *c = open_heat("inproc");
    two_layer t;
    two_layer_setup(&t, c);
    heat_inverse_settings st = heat_inverse_defaults();
    double k[CELLS];
    heat_inverse_result r = invert_from_constant(c, &t, k, &st);
    cr_assert(r.converged, "not converged after %d iterations: misfit %g -> %g", r.iterations,
              r.initial_misfit, r.final_misfit);
    cr_assert(r.initial_misfit > 1e-4, "the constant guess must be visibly wrong (%g)",
              r.initial_misfit);
    cr_assert_leq(r.final_misfit, r.initial_misfit / 1e6);
    cr_assert_gt(r.iterations, 0);
    cr_assert_eq(r.vjp_calls, r.iterations + 1, "one gradient per iteration and one at the start");
    cr_assert_geq(r.apply_calls, r.iterations + 1);
    for (int i = 0; (i + 0.5) / CELLS <= 0.8; i++) {
        double rel = fabs(k[i] - t.k_true[i]) / t.k_true[i];
        cr_assert(rel < 0.02, "cell %d: k %.4f, true %.4f (%.1f%% off)", i, k[i], t.k_true[i],
                  100 * rel);
    }
    tsr_close(c);
}

/* A worker process returns the same numbers as in-process, so the descent
 * takes the same path: same iterations, same estimate. */
Test(heat_inverse, worker_mode_follows_the_same_path) {
    tsr_component *inproc = open_heat("inproc");
    tsr_component *worker = open_heat("worker");
    two_layer t;
    two_layer_setup(&t, inproc);
    heat_inverse_settings st = heat_inverse_defaults();
    st.reduction = 1e4;
    double k_inproc[CELLS], k_worker[CELLS];
    heat_inverse_result a = invert_from_constant(inproc, &t, k_inproc, &st);
    heat_inverse_result b = invert_from_constant(worker, &t, k_worker, &st);
    cr_assert(b.converged);
    cr_assert_eq(a.iterations, b.iterations);
    cr_assert_eq(a.final_misfit, b.final_misfit);
    cr_assert(memcmp(k_inproc, k_worker, sizeof k_inproc) == 0, "estimates differ");
    tsr_close(inproc);
    tsr_close(worker);
}

typedef struct progress_log {
    int calls;
    int first_iteration, last_iteration;
    double first_misfit, last_misfit;
} progress_log;

static void record(void *user, const heat_inverse_progress *p) {
    progress_log *log = user;
    if (log->calls == 0) {
        log->first_iteration = p->iteration;
        log->first_misfit = p->misfit;
    }
    cr_assert_gt(p->conductivity[0], 0.0);
    log->calls++;
    log->last_iteration = p->iteration;
    log->last_misfit = p->misfit;
}

/* Progress is reported at iteration 0, every report_every iterations and
 * at the end, with the misfits the result states. */
Test(heat_inverse, reports_progress) {
    tsr_component *c = open_heat("inproc");
    two_layer t;
    two_layer_setup(&t, c);
    progress_log log = {0};
    heat_inverse_settings st = heat_inverse_defaults();
    st.reduction = 1e4;
    st.report_every = 5;
    st.report = record;
    st.user = &log;
    double k[CELLS];
    heat_inverse_result r = invert_from_constant(c, &t, k, &st);
    cr_assert_eq(log.first_iteration, 0);
    cr_assert_eq(log.first_misfit, r.initial_misfit);
    cr_assert_eq(log.last_iteration, r.iterations);
    cr_assert_eq(log.last_misfit, r.final_misfit);
    int expected = 1 + r.iterations / 5 + (r.iterations % 5 != 0);
    cr_assert_eq(log.calls, expected, "%d reports for %d iterations", log.calls, r.iterations);
    tsr_close(c);
}

/* With a smoothness term the descent still lowers the objective, and a
 * limit of 0 iterations leaves the guess as it was. */
Test(heat_inverse, smoothness_term_and_iteration_limit) {
    tsr_component *c = open_heat("inproc");
    two_layer t;
    two_layer_setup(&t, c);
    heat_inverse_settings st = heat_inverse_defaults();
    st.smoothness = 1e-4;
    st.max_iterations = 50;
    double k[CELLS];
    heat_inverse_result r = invert_from_constant(c, &t, k, &st);
    cr_assert_eq(r.iterations, 50);
    cr_assert_lt(r.final_misfit, r.initial_misfit / 100);

    st.max_iterations = 0;
    r = invert_from_constant(c, &t, k, &st);
    cr_assert_eq(r.iterations, 0);
    cr_assert_not(r.converged);
    for (int i = 0; i < CELLS; i++) cr_assert_eq(k[i], 1.0);
    tsr_close(c);
}

/* A guess with k <= 0 is refused before any call; a failure of the plugin
 * comes back with its code and message. */
Test(heat_inverse, errors_are_reported) {
    tsr_component *c = open_heat("inproc");
    two_layer t;
    two_layer_setup(&t, c);
    heat_inverse_settings st = heat_inverse_defaults();
    double k[CELLS];
    for (int i = 0; i < CELLS; i++) k[i] = 1.0;
    k[3] = 0.0;
    heat_inverse_result r;
    char buf[TSR_ERRMSG_MAX] = "";
    const char *err = buf;
    assert_code(heat_invert(c, &t.e, &st, k, &r, buf, sizeof buf), TSR_E_ARGUMENT, err);
    assert_contains(err, "conductivity[3]");

    for (int i = 0; i < CELLS; i++) k[i] = 1.0;
    t.e.steps = 0;
    assert_code(heat_invert(c, &t.e, &st, k, &r, buf, sizeof buf), TSR_E_PLUGIN, err);
    assert_contains(err, "steps");
    tsr_close(c);
}
