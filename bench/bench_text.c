/* SPDX-License-Identifier: MIT */
/*
 * What a TEXT option costs per call: the same scalar call with and
 * without a "method" option (bench/plugins/option.c), set with
 * tsr_call_set_text before every run as a caller changing options would,
 * in-process and in worker mode. Prints a table and writes CSV.
 *
 * Budgets: <= 50 ns over the call without it in-process, <= 1 us in a
 * worker. Batches with and without the option alternate; each figure is
 * the median over batches, the overhead the median of the paired
 * differences with their 10-90% spread. Measured on the machine as it is
 * ("idle") and beside one busy process per CPU ("loaded").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "bench_util.h"

#define BATCHES 31

typedef struct row {
    const char *mode;
    const char *machine;     /* "idle" or "loaded" (one busy process per CPU) */
    double plain_ns, text_ns, budget_ns;
    double over_ns, over_p10, over_p90;   /* paired differences */
} row;

static tsr_component *open_in(const char *path, const char *mode) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    tsr_component *c = NULL;
    if (!o || tsr_options_set(o, "mode", mode, &err) != 0 || tsr_open(path, o, &c, &err) != 0)
        fprintf(stderr, "bench_text: cannot open %s in %s: %s\n", path, mode, err.message);
    tsr_options_free(o);
    return c;
}

/* One batch of n calls of `call` (the option set before each run when
 * with_text): ns per call, or -1 when a call failed. */
static double batch_ns(tsr_call *call, int with_text, long n) {
    static const char *const methods[] = {"fast", "accurate"};
    int64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++) {
        if (with_text && tsr_call_set_text(call, "method", methods[0]) != 0) return -1;
        if (tsr_call_run(call) != 0) {
            fprintf(stderr, "bench_text: %s\n", tsr_call_errmsg(call));
            return -1;
        }
    }
    return (double)(bench_now_ns() - t0) / (double)n;
}

/* Batches with and without the option interleaved, so that both meet
 * the same state of the machine: the medians of each, and the median
 * and 10-90% spread of the paired differences. */
static int time_pair(tsr_component *plain, tsr_component *opt, long n, row *r) {
    double x = 2.0, without[BATCHES], with[BATCHES], diff[BATCHES];
    tsr_array xa = {.data = &x, .dtype = TSR_FLOAT64, .rank = 0};
    tsr_call *a = tsr_call_new(plain, TSR_EP_APPLY), *b = tsr_call_new(opt, TSR_EP_APPLY);
    int rc = -1;
    if (!a || !b || tsr_call_set_input(a, "x", &xa) != 0 || tsr_call_set_input(b, "x", &xa) != 0)
        goto done;
    for (int k = -1; k < BATCHES; k++) {   /* batch -1 warms up */
        double w0 = batch_ns(a, 0, n), w1 = batch_ns(b, 1, n);
        if (w0 < 0 || w1 < 0) goto done;
        if (k < 0) continue;
        without[k] = w0;
        with[k] = w1;
        diff[k] = w1 - w0;
    }
    r->plain_ns = bench_quantile(without, BATCHES, 0.5);
    r->text_ns = bench_quantile(with, BATCHES, 0.5);
    r->over_ns = bench_quantile(diff, BATCHES, 0.5);
    r->over_p10 = bench_quantile(diff, BATCHES, 0.1);
    r->over_p90 = bench_quantile(diff, BATCHES, 0.9);
    rc = 0;
done:
    tsr_call_free(a);
    tsr_call_free(b);
    return rc;
}

int main(int argc, char **argv) {
    const char *csv = TSR_BENCH_CSV_DEFAULT;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else {
            fprintf(stderr, "usage: bench_text [--csv PATH] [--quick]\n");
            return 2;
        }
    }
    static const char *const modes[] = {"inproc", "worker"};
    const double budgets[] = {50, 1000};
    const long calls[] = {quick ? 20000 : 200000, quick ? 2000 : 20000};
    row rows[4];
    int n_rows = 0;
    for (int loaded = 0; loaded < 2; loaded++) {
        bench_load l = {.n = 0};
        if (loaded) bench_load_start(&l, 300);
        for (int m = 0; m < 2; m++) {
            tsr_component *plain = open_in(TSR_BENCH_PLAIN_PLUGIN, modes[m]);
            tsr_component *opt = open_in(TSR_BENCH_OPTION_PLUGIN, modes[m]);
            row r = {.mode = modes[m], .machine = loaded ? "loaded" : "idle",
                     .budget_ns = budgets[m]};
            int rc = plain && opt ? time_pair(plain, opt, calls[m], &r) : -1;
            tsr_close(plain);
            tsr_close(opt);
            if (rc != 0) {
                bench_load_stop(&l);
                return 1;
            }
            rows[n_rows++] = r;
        }
        bench_load_stop(&l);
    }
    printf("%-22s %-7s %-7s %11s %11s %10s %19s %8s\n", "row", "mode", "machine", "without ns",
           "with ns", "over ns", "over p10..p90 ns", "budget");
    for (int k = 0; k < n_rows; k++) {
        const row *r = &rows[k];
        printf("%-22s %-7s %-7s %11.1f %11.1f %10.1f %9.1f..%-9.1f %6.0f %s\n",
               "text option per call", r->mode, r->machine, r->plain_ns, r->text_ns, r->over_ns,
               r->over_p10, r->over_p90, r->budget_ns, r->over_ns <= r->budget_ns ? "ok" : "OVER");
    }
    if (bench_make_parent_dirs(csv) != 0) return 1;
    FILE *f = fopen(csv, "w");
    if (!f) return 1;
    fprintf(f, "row,mode,machine,without_ns,with_ns,over_ns,over_p10_ns,over_p90_ns,budget_ns\n");
    for (int k = 0; k < n_rows; k++)
        fprintf(f, "text option per call,%s,%s,%.1f,%.1f,%.1f,%.1f,%.1f,%.0f\n", rows[k].mode,
                rows[k].machine, rows[k].plain_ns, rows[k].text_ns, rows[k].over_ns,
                rows[k].over_p10, rows[k].over_p90, rows[k].budget_ns);
    fclose(f);
    printf("\nwrote %s\n", csv);
    return 0;
}
