/* SPDX-License-Identifier: MIT */
/*
 * Threads: one component shared by two threads, each with its own call
 * object. Threads record what they saw; assertions run in the main thread.
 */
#include <pthread.h>

#include "test_util.h"

#define RUNS 300
#define N 16

typedef struct worker {
    tsr_component *c;
    int id;
    int failures;          /* runs that failed */
    int wrong;             /* runs whose numbers were wrong */
    char first_error[TSR_ERRMSG_MAX];
} worker;

static void note_failure(worker *w, tsr_call *call) {
    if (w->failures++ == 0)
        snprintf(w->first_error, sizeof w->first_error, "%s", tsr_call_errmsg(call));
}

/* vectoradd apply with values that depend on the thread and the run. */
static void *vectoradd_worker(void *p) {
    worker *w = p;
    tsr_call *call = tsr_call_new(w->c, TSR_EP_APPLY);
    if (!call) {
        w->failures = RUNS;
        return NULL;
    }
    double a[N], b[N], s;
    for (int run = 0; run < RUNS; run++) {
        for (int i = 0; i < N; i++) {
            a[i] = w->id * 1000 + run + i;
            b[i] = -i;
        }
        s = w->id + 0.5;
        tsr_array aa = f64_vec(a, N), bb = f64_vec(b, N), ss = f64_scalar(&s);
        if (tsr_call_set_input(call, "a", &aa) || tsr_call_set_input(call, "b", &bb) ||
            tsr_call_set_input(call, "s", &ss) || tsr_call_run(call)) {
            note_failure(w, call);
            continue;
        }
        const double *r = tsr_call_output(call, "result")->data;
        for (int i = 0; i < N; i++)
            if (r[i] != a[i] * s + b[i]) {
                w->wrong++;
                break;
            }
    }
    tsr_call_free(call);
    return NULL;
}

/* rosenbrock vjp with respect to x, against the gradient written here. */
static void *rosenbrock_worker(void *p) {
    worker *w = p;
    tsr_call *call = tsr_call_new(w->c, TSR_EP_VJP);
    if (!call) {
        w->failures = RUNS;
        return NULL;
    }
    const char *ins[] = {"x"}, *outs[] = {"value"};
    double x[N], a = 1, b = 100, one = 1;
    tsr_array aa = f64_scalar(&a), bb = f64_scalar(&b), seed = f64_scalar(&one);
    if (tsr_call_set_wrt(call, ins, 1, outs, 1) || tsr_call_set_seed(call, "value", &seed) ||
        tsr_call_set_input(call, "a", &aa) || tsr_call_set_input(call, "b", &bb)) {
        note_failure(w, call);
        tsr_call_free(call);
        return NULL;
    }
    for (int run = 0; run < RUNS; run++) {
        fill_random(x, N, (uint64_t)(w->id * 10000 + run));
        tsr_array xx = f64_vec(x, N);
        if (tsr_call_set_input(call, "x", &xx) || tsr_call_run(call)) {
            note_failure(w, call);
            continue;
        }
        const double *g = tsr_call_output(call, "x")->data;
        for (int i = 0; i < N; i++) {
            double want = 0;
            if (i + 1 < N) want += -4 * b * x[i] * (x[i + 1] - x[i] * x[i]) - 2 * (a - x[i]);
            if (i > 0) want += 2 * b * (x[i] - x[i - 1] * x[i - 1]);
            if (fabs(g[i] - want) > 1e-10 * (1 + fabs(want))) {
                w->wrong++;
                break;
            }
        }
    }
    tsr_call_free(call);
    return NULL;
}

static void run_pair(worker *w, void *(*f0)(void *), void *(*f1)(void *)) {
    pthread_t t[2];
    cr_assert_eq(pthread_create(&t[0], NULL, f0, &w[0]), 0);
    cr_assert_eq(pthread_create(&t[1], NULL, f1, &w[1]), 0);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(w[k].failures, 0, "thread %d: %d failed runs, first: %s", k, w[k].failures,
                     w[k].first_error);
        cr_assert_eq(w[k].wrong, 0, "thread %d: %d runs with wrong numbers", k, w[k].wrong);
    }
}

/* Two threads calling the same component through their own call objects
 * both get correct numbers on every run. */
Test(threads, two_threads_same_component) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    worker w[2] = {{.c = c, .id = 1}, {.c = c, .id = 2}};
    run_pair(w, vectoradd_worker, vectoradd_worker);
    tsr_close(c);
}

/* Two threads on two components at once (apply on one, vjp on the other). */
Test(threads, two_threads_two_components) {
    tsr_component *va = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_component *rb = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    worker w[2] = {{.c = va, .id = 3}, {.c = rb, .id = 4}};
    run_pair(w, vectoradd_worker, rosenbrock_worker);
    tsr_close(va);
    tsr_close(rb);
}

/* Thread-safe rosenbrock shared by two threads computing gradients. */
Test(threads, two_threads_same_component_vjp) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    worker w[2] = {{.c = c, .id = 5}, {.c = c, .id = 6}};
    run_pair(w, rosenbrock_worker, rosenbrock_worker);
    tsr_close(c);
}

/* y = x + 1 on the serial test plugin. */
static void *serial_worker(void *p) {
    worker *w = p;
    tsr_call *call = tsr_call_new(w->c, TSR_EP_APPLY);
    if (!call) {
        w->failures = RUNS;
        return NULL;
    }
    double x[N];
    for (int run = 0; run < RUNS; run++) {
        for (int i = 0; i < N; i++) x[i] = w->id * 1000 + run * N + i;
        tsr_array xx = f64_vec(x, N);
        if (tsr_call_set_input(call, "x", &xx) || tsr_call_run(call)) {
            note_failure(w, call);
            continue;
        }
        const double *y = tsr_call_output(call, "y")->data;
        for (int i = 0; i < N; i++)
            if (y[i] != x[i] + 1) {
                w->wrong++;
                break;
            }
    }
    tsr_call_free(call);
    return NULL;
}

/* A plugin without TSR_PLUGIN_THREAD_SAFE is never entered by two threads
 * at once (the plugin fails any call that finds another inside). */
Test(threads, non_thread_safe_plugin_is_serialised) {
    tsr_component *c = open_ok(TEST_PLUGIN("serial"), NULL);
    worker w[2] = {{.c = c, .id = 7}, {.c = c, .id = 8}};
    run_pair(w, serial_worker, serial_worker);
    tsr_close(c);
}

/* Open, run and close the stateful plugin repeatedly, scale = thread id. */
static void *open_close_worker(void *p) {
    worker *w = p;
    char scale[16];
    snprintf(scale, sizeof scale, "%d", w->id);
    for (int run = 0; run < 50; run++) {
        tsr_options *o = tsr_options_new();
        tsr_component *c = NULL;
        tsr_error err = TSR_ERROR_INIT;
        if (!o || tsr_options_set_config(o, "scale", scale) ||
            tsr_options_set(o, "log_level", "error", NULL) ||
            tsr_open(TEST_PLUGIN("stateful"), o, &c, &err)) {
            if (w->failures++ == 0) snprintf(w->first_error, sizeof w->first_error, "open failed");
            tsr_options_free(o);
            continue;
        }
        tsr_options_free(o);
        tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
        double x[2] = {run, -run};
        tsr_array xx = f64_vec(x, 2);
        if (!call || tsr_call_set_input(call, "x", &xx) || tsr_call_run(call)) {
            if (call) note_failure(w, call);
            else w->failures++;
        } else {
            const double *y = tsr_call_output(call, "y")->data;
            if (y[0] != w->id * x[0] || y[1] != w->id * x[1]) w->wrong++;
        }
        tsr_call_free(call);
        tsr_close(c);
    }
    return NULL;
}

/* tsr_open and tsr_close may run in two threads at once, each load
 * keeping its own configuration. */
Test(threads, concurrent_open_and_close) {
    worker w[2] = {{.id = 2}, {.id = 3}};
    run_pair(w, open_close_worker, open_close_worker);
}
