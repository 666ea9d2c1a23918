/* SPDX-License-Identifier: MIT */
/*
 * What a TEXT option costs per call: the same scalar call with and
 * without a "method" option (bench/plugins/option.c), set with
 * tsr_call_set_text before every run as a caller changing options would,
 * in-process and in worker mode. Prints a table and writes CSV.
 *
 * Budgets: <= 50 ns over the call without it in-process, <= 1 us in a
 * worker. Each figure is the median of batches of calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "bench_util.h"

#define BATCHES 31

typedef struct row {
    const char *mode;
    double plain_ns, text_ns, budget_ns;
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

/* Median ns per call over BATCHES batches of n calls. */
static double time_calls(tsr_component *c, int with_text, long n) {
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    double x = 2.0, t[BATCHES];
    tsr_array xa = {.data = &x, .dtype = TSR_FLOAT64, .rank = 0};
    if (!call || tsr_call_set_input(call, "x", &xa) != 0) return -1;
    static const char *const methods[] = {"fast", "accurate"};
    for (int b = -1; b < BATCHES; b++) {   /* batch -1 warms up */
        int64_t t0 = bench_now_ns();
        for (long i = 0; i < n; i++) {
            if (with_text && tsr_call_set_text(call, "method", methods[0]) != 0) return -1;
            if (tsr_call_run(call) != 0) {
                fprintf(stderr, "bench_text: %s\n", tsr_call_errmsg(call));
                tsr_call_free(call);
                return -1;
            }
        }
        if (b >= 0) t[b] = (double)(bench_now_ns() - t0) / (double)n;
    }
    tsr_call_free(call);
    return bench_quantile(t, BATCHES, 0.5);
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
    row rows[2];
    int n_rows = 0;
    for (int m = 0; m < 2; m++) {
        tsr_component *plain = open_in(TSR_BENCH_PLAIN_PLUGIN, modes[m]);
        tsr_component *opt = open_in(TSR_BENCH_OPTION_PLUGIN, modes[m]);
        if (!plain || !opt) return 1;
        row r = {modes[m], time_calls(plain, 0, calls[m]), time_calls(opt, 1, calls[m]),
                 budgets[m]};
        tsr_close(plain);
        tsr_close(opt);
        if (r.plain_ns < 0 || r.text_ns < 0) return 1;
        rows[n_rows++] = r;
    }
    printf("%-28s %-8s %12s %12s %12s %8s\n", "row", "mode", "without ns", "with ns", "over ns",
           "budget");
    for (int k = 0; k < n_rows; k++) {
        double over = rows[k].text_ns - rows[k].plain_ns;
        printf("%-28s %-8s %12.1f %12.1f %12.1f %6.0f %s\n", "text option per call", rows[k].mode,
               rows[k].plain_ns, rows[k].text_ns, over, rows[k].budget_ns,
               over <= rows[k].budget_ns ? "ok" : "OVER");
    }
    if (bench_make_parent_dirs(csv) != 0) return 1;
    FILE *f = fopen(csv, "w");
    if (!f) return 1;
    fprintf(f, "row,mode,without_ns,with_ns,over_ns,budget_ns\n");
    for (int k = 0; k < n_rows; k++)
        fprintf(f, "text option per call,%s,%.1f,%.1f,%.1f,%.0f\n", rows[k].mode,
                rows[k].plain_ns, rows[k].text_ns, rows[k].text_ns - rows[k].plain_ns,
                rows[k].budget_ns);
    fclose(f);
    printf("\nwrote %s\n", csv);
    return 0;
}
