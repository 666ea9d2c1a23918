/* SPDX-License-Identifier: MIT */
/*
 * A cheap chain through the public API: steps per second of a MALA sampler
 * (Metropolis-adjusted Langevin) on the 2-D Rosenbrock "banana"
 * pi(x) ∝ exp(-rosenbrock(x; a = 1, b = 5)), in each mode. Every step is
 * one apply (the value at the proposal) and one vjp (its gradient) of the
 * rosenbrock plugin, on two tsr_call objects made once and reused.
 *
 * The random numbers come from one seeded generator, so every mode runs the
 * same chain: the position after the first `check` steps must agree to the
 * bit across modes (else the program exits 1). Budget: at least 10^6 steps
 * per second in-process (PASS/OVER). It is a report: it exits 0 whether or
 * not the budget is met.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "bench_util.h"

#ifndef TSR_BENCH_ROSENBROCK_PLUGIN
#define TSR_BENCH_ROSENBROCK_PLUGIN "plugins/rosenbrock.so"
#endif
#ifndef TSR_BENCH_CSV_DEFAULT
#define TSR_BENCH_CSV_DEFAULT "bench/results/mcmc.csv"
#endif

#define DIM 2
#define BUDGET_STEPS_PER_S 1e6

static const double ROSEN_A = 1.0, ROSEN_B = 5.0, STEP_SIZE = 0.05;

/* splitmix64: small, fast and good enough for a benchmark's proposals. */
static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double rng_uniform(uint64_t *s) {
    return ((double)(rng_next(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Two independent standard normals (Box-Muller). */
static void rng_normal2(uint64_t *s, double out[2]) {
    double r = sqrt(-2.0 * log(rng_uniform(s))), t = 6.283185307179586 * rng_uniform(s);
    out[0] = r * cos(t);
    out[1] = r * sin(t);
}

typedef struct chain {
    tsr_component *c;
    tsr_call *value;    /* apply: value(x) */
    tsr_call *grad;     /* vjp of value with respect to x, cotangent 1 */
    double *prop;       /* the proposal, bound to both calls (arena memory in worker mode) */
    double *ab;         /* a, b */
    double one;         /* the cotangent */
} chain;

static int fail_call(const char *mode, tsr_call *call) {
    fprintf(stderr, "bench_mcmc: %s: %s\n", mode, tsr_call_errmsg(call));
    return -1;
}

static void chain_close(chain *ch) {
    tsr_call_free(ch->value);
    tsr_call_free(ch->grad);
    if (ch->c) {
        tsr_component_free_buffer(ch->c, ch->prop);
        tsr_component_free_buffer(ch->c, ch->ab);
    }
    tsr_close(ch->c);
    memset(ch, 0, sizeof *ch);
}

static int chain_open(chain *ch, const char *plugin, const char *mode) {
    memset(ch, 0, sizeof *ch);
    tsr_error err = TSR_ERROR_INIT;
    tsr_options *opts = tsr_options_new();
    if (!opts || tsr_options_set(opts, "mode", mode, &err) != 0) {
        fprintf(stderr, "bench_mcmc: %s: cannot set options\n", mode);
        tsr_options_free(opts);
        return -1;
    }
    int rc = tsr_open(plugin, opts, &ch->c, &err);
    tsr_options_free(opts);
    if (rc != 0) {
        fprintf(stderr, "bench_mcmc: %s: %s\n", mode, err.message);
        return -1;
    }
    ch->prop = tsr_component_alloc(ch->c, DIM * sizeof(double));
    ch->ab = tsr_component_alloc(ch->c, 2 * sizeof(double));
    ch->value = tsr_call_new(ch->c, TSR_EP_APPLY);
    ch->grad = tsr_call_new(ch->c, TSR_EP_VJP);
    if (!ch->prop || !ch->ab || !ch->value || !ch->grad) {
        fprintf(stderr, "bench_mcmc: %s: out of memory\n", mode);
        chain_close(ch);
        return -1;
    }
    ch->ab[0] = ROSEN_A, ch->ab[1] = ROSEN_B, ch->one = 1.0;
    tsr_array x = {.data = ch->prop, .dtype = TSR_FLOAT64, .rank = 1, .shape = {DIM}};
    tsr_array a = {.data = &ch->ab[0], .dtype = TSR_FLOAT64, .rank = 0};
    tsr_array b = {.data = &ch->ab[1], .dtype = TSR_FLOAT64, .rank = 0};
    tsr_array seed = {.data = &ch->one, .dtype = TSR_FLOAT64, .rank = 0};
    const char *wrt_in[] = {"x"}, *wrt_out[] = {"value"};
    tsr_call *calls[] = {ch->value, ch->grad};
    for (int k = 0; k < 2; k++) {
        if (tsr_call_set_input(calls[k], "x", &x) != 0 ||
            tsr_call_set_input(calls[k], "a", &a) != 0 ||
            tsr_call_set_input(calls[k], "b", &b) != 0) {
            rc = fail_call(mode, calls[k]);
            chain_close(ch);
            return rc;
        }
    }
    if (tsr_call_set_wrt(ch->grad, wrt_in, 1, wrt_out, 1) != 0 ||
        tsr_call_set_seed(ch->grad, "value", &seed) != 0) {
        rc = fail_call(mode, ch->grad);
        chain_close(ch);
        return rc;
    }
    return 0;
}

/* log pi and its gradient at ch->prop. */
static int evaluate(chain *ch, const char *mode, double *logp, double grad[DIM]) {
    if (tsr_call_run(ch->value) != 0) return fail_call(mode, ch->value);
    if (tsr_call_run(ch->grad) != 0) return fail_call(mode, ch->grad);
    *logp = -*(const double *)tsr_call_output(ch->value, "value")->data;
    const double *g = tsr_call_output(ch->grad, "x")->data;
    for (int i = 0; i < DIM; i++) grad[i] = -g[i];
    return 0;
}

static double log_q(const double to[DIM], const double from[DIM], const double grad_from[DIM]) {
    double s = 0;
    for (int i = 0; i < DIM; i++) {
        double d = to[i] - from[i] - STEP_SIZE * grad_from[i];
        s += d * d;
    }
    return -s / (4.0 * STEP_SIZE);
}

typedef struct run_result {
    double seconds;
    long accepted;
    double x_check[DIM];   /* the position after `check` steps */
    double mean[DIM];      /* over the second half of the chain */
} run_result;

static int run_chain(chain *ch, const char *mode, long steps, long check, run_result *out) {
    uint64_t rng = 20240611;
    double x[DIM] = {0}, grad[DIM], logp, xi[DIM], gnew[DIM], lnew;
    double sum[DIM] = {0};
    memcpy(ch->prop, x, sizeof x);
    if (evaluate(ch, mode, &logp, grad) != 0) return -1;
    long accepted = 0;
    int64_t t0 = bench_now_ns();
    for (long s = 0; s < steps; s++) {
        rng_normal2(&rng, xi);
        double log_u = log(rng_uniform(&rng));
        for (int i = 0; i < DIM; i++)
            ch->prop[i] = x[i] + STEP_SIZE * grad[i] + sqrt(2.0 * STEP_SIZE) * xi[i];
        if (evaluate(ch, mode, &lnew, gnew) != 0) return -1;
        double log_alpha = lnew - logp + log_q(x, ch->prop, gnew) - log_q(ch->prop, x, grad);
        if (log_u < log_alpha) {
            memcpy(x, ch->prop, sizeof x);
            memcpy(grad, gnew, sizeof grad);
            logp = lnew;
            accepted++;
        }
        if (s + 1 == check) memcpy(out->x_check, x, sizeof x);
        if (s >= steps / 2)
            for (int i = 0; i < DIM; i++) sum[i] += x[i];
    }
    out->seconds = (double)(bench_now_ns() - t0) * 1e-9;
    out->accepted = accepted;
    long kept = steps - steps / 2;
    for (int i = 0; i < DIM; i++) out->mean[i] = kept > 0 ? sum[i] / (double)kept : NAN;
    return 0;
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: bench_mcmc [--plugin PATH] [--steps N] [--worker-steps N] [--csv PATH]\n"
            "                  [--modes LIST]\n"
            "  --plugin PATH     the rosenbrock plugin (default %s)\n"
            "  --steps N         MALA steps in-process, inproc and isolated (default 1000000)\n"
            "  --worker-steps N  steps in worker mode (default steps / 20, at least --check)\n"
            "  --modes LIST      comma-separated modes (default inproc,isolated,worker)\n"
            "  --csv PATH        where to write the results (default %s)\n",
            TSR_BENCH_ROSENBROCK_PLUGIN, TSR_BENCH_CSV_DEFAULT);
}

int main(int argc, char **argv) {
    const char *plugin = TSR_BENCH_ROSENBROCK_PLUGIN, *csv = TSR_BENCH_CSV_DEFAULT;
    const char *modes_arg = "inproc,isolated,worker";
    long steps = 1000000, worker_steps = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--plugin") && i + 1 < argc) plugin = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atol(argv[++i]);
        else if (!strcmp(argv[i], "--worker-steps") && i + 1 < argc) worker_steps = atol(argv[++i]);
        else if (!strcmp(argv[i], "--modes") && i + 1 < argc) modes_arg = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (steps < 1) steps = 1;
    if (worker_steps < 1) worker_steps = steps / 20 > 0 ? steps / 20 : 1;
    long check = worker_steps < steps ? worker_steps : steps;
    if (check > 1000) check = 1000;

    char modes_buf[256];
    snprintf(modes_buf, sizeof modes_buf, "%s", modes_arg);
    const char *modes[8];
    int n_modes = 0;
    for (char *tok = strtok(modes_buf, ","); tok && n_modes < 8; tok = strtok(NULL, ","))
        modes[n_modes++] = tok;

    printf("MALA on rosenbrock (dim %d, a = %g, b = %g, step size %g): per step one apply + "
           "one vjp,\nreused tsr_call objects; plugin %s\n", DIM, ROSEN_A, ROSEN_B, STEP_SIZE,
           plugin);
    printf("%-9s %9s %10s %12s %11s %10s %18s  %s\n", "mode", "steps", "seconds", "steps/s",
           "us/step", "accept", "mean (2nd half)", "budget");
    fflush(stdout);

    run_result res[8];
    int ok[8] = {0}, failed = 0;
    for (int m = 0; m < n_modes; m++) {
        chain ch;
        long n = strcmp(modes[m], "worker") ? steps : worker_steps;
        if (chain_open(&ch, plugin, modes[m]) != 0) {
            failed = 1;
            continue;
        }
        /* One untimed short chain: page in, wake the worker. */
        run_result warm;
        if (run_chain(&ch, modes[m], n < 1000 ? n : 1000, 0, &warm) != 0 ||
            run_chain(&ch, modes[m], n, check, &res[m]) != 0) {
            chain_close(&ch);
            failed = 1;
            continue;
        }
        chain_close(&ch);
        ok[m] = 1;
        double rate = (double)n / res[m].seconds;
        const char *verdict = "";
        if (!strcmp(modes[m], "inproc")) verdict = rate >= BUDGET_STEPS_PER_S ? "PASS" : "OVER";
        printf("%-9s %9ld %10.3f %12.0f %11.3f %10.3f %8.4f %8.4f  %s\n", modes[m], n,
               res[m].seconds, rate, 1e6 / rate, (double)res[m].accepted / (double)n,
               res[m].mean[0], res[m].mean[1], verdict);
        fflush(stdout);
    }

    /* Every mode must have walked the same chain. */
    int first = -1, agree = 1;
    for (int m = 0; m < n_modes; m++) {
        if (!ok[m]) continue;
        if (first < 0) first = m;
        else if (memcmp(res[m].x_check, res[first].x_check, sizeof res[m].x_check) != 0) agree = 0;
    }
    if (first >= 0)
        printf("position after %ld steps: %s\n", check,
               agree ? "identical in every mode" : "DIFFERS between modes");
    printf("budget: >= %.0f steps/s in-process (inproc)\n", BUDGET_STEPS_PER_S);

    FILE *f = bench_open_csv("bench_mcmc", csv);
    if (!f) return 1;
    fprintf(f, "mode,dim,steps,seconds,steps_per_s,us_per_step,acceptance,budget_steps_per_s,"
               "budget\n");
    for (int m = 0; m < n_modes; m++) {
        if (!ok[m]) continue;
        long n = strcmp(modes[m], "worker") ? steps : worker_steps;
        double rate = (double)n / res[m].seconds;
        int judged = !strcmp(modes[m], "inproc");
        fprintf(f, "%s,%d,%ld,%.6f,%.1f,%.4f,%.4f,", modes[m], DIM, n, res[m].seconds, rate,
                1e6 / rate, (double)res[m].accepted / (double)n);
        if (judged) fprintf(f, "%.0f,%s\n", BUDGET_STEPS_PER_S, rate >= BUDGET_STEPS_PER_S ? "PASS" : "OVER");
        else fprintf(f, ",\n");
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_mcmc: cannot write %s\n", csv);
        return 1;
    }
    return failed || !agree ? 1 : 0;
}
