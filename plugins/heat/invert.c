/* SPDX-License-Identifier: MIT */
/*
 * heat_invert: recover a conductivity profile from one measured temperature
 * field, through the heat plugin's adjoint.
 *
 * A rod of n cells, cooled at x = 0 (held at temperature 0) and insulated
 * at x = 1, starts at temperature 0 and is heated uniformly; after the
 * final time every cell's temperature is measured. The measurement is made
 * here, synthetically, from a "true" conductivity: 1 with a smooth bump
 * to 2 around x = 0.4. The descent starts from k = 1 everywhere and
 * minimises the misfit over log k (invert_core.c), printing its progress.
 *
 *     heat_invert [--plugin PATH] [--mode inproc|worker] [--iters N]
 *                 [--cells N] [--smoothness W] [--every N]
 *
 * Exit status: 0 when the misfit fell by the requested factor (1e6),
 * 1 when it did not, 2 on an error.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tessera/tessera.h>

#include "invert_core.h"

typedef struct cli {
    const char *plugin;
    const char *mode;
    int iters;
    int64_t cells;
    double smoothness;
    int every;
} cli;

static void usage(FILE *to) {
    fprintf(to,
            "usage: heat_invert [--plugin PATH] [--mode inproc|worker] [--iters N]\n"
            "                   [--cells N] [--smoothness W] [--every N]\n"
            "Recovers a conductivity profile from a synthetic final-temperature measurement\n"
            "by gradient descent with the heat plugin's adjoint (vjp).\n"
            "  --plugin PATH     heat.so (default: found beside this program)\n"
            "  --mode MODE       inproc (default) or worker\n"
            "  --iters N         most iterations (default 2000)\n"
            "  --cells N         cells of the rod (default 64)\n"
            "  --smoothness W    weight of a smoothness term on log k (default 0)\n"
            "  --every N         print progress every N iterations (default 25)\n");
}

static int parse_int(const char *text, long lo, long hi, long *out) {
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, cli *o) {
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "heat_invert: %s needs a value\n", arg);
            return -1;
        }
        const char *value = argv[++i];
        long v = 0;
        char *end;
        if (strcmp(arg, "--plugin") == 0) {
            o->plugin = value;
        } else if (strcmp(arg, "--mode") == 0) {
            o->mode = value;
        } else if (strcmp(arg, "--iters") == 0 && parse_int(value, 0, INT_MAX, &v) == 0) {
            o->iters = (int)v;
        } else if (strcmp(arg, "--cells") == 0 && parse_int(value, 2, 1000000, &v) == 0) {
            o->cells = v;
        } else if (strcmp(arg, "--every") == 0 && parse_int(value, 1, INT_MAX, &v) == 0) {
            o->every = (int)v;
        } else if (strcmp(arg, "--smoothness") == 0 &&
                   (o->smoothness = strtod(value, &end), *end == '\0' && o->smoothness >= 0)) {
            continue;
        } else {
            fprintf(stderr, "heat_invert: bad option or value: %s %s\n", arg, value);
            return -1;
        }
    }
    return 0;
}

/* The plugin beside this program: in the build tree, then installed. */
static const char *default_plugin(char *buf, size_t cap) {
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return NULL;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL) return NULL;
    *slash = '\0';
    const char *candidates[] = {HEAT_PLUGIN_FROM_BUILD_BIN, HEAT_PLUGIN_FROM_INSTALLED_BIN};
    for (int k = 0; k < 2; k++) {
        snprintf(buf, cap, "%s/%s", exe, candidates[k]);
        if (access(buf, R_OK) == 0) return buf;
    }
    return NULL;
}

/* The conductivity to recover: 1, with a smooth bump to 2 around x = 0.4. */
static double true_conductivity(double x) {
    double z = (x - 0.4) / 0.12;
    return 1.0 + exp(-z * z);
}

typedef struct progress_printer {
    const double *k_true;
    int64_t n;
} progress_printer;

static double relative_error(const double *k, const double *k_true, int64_t n) {
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < n; i++) {
        diff += (k[i] - k_true[i]) * (k[i] - k_true[i]);
        norm += k_true[i] * k_true[i];
    }
    return sqrt(diff / norm);
}

static void print_progress(void *user, const heat_inverse_progress *p) {
    const progress_printer *pp = user;
    printf("%6d  %12.4e  %12.4e  %10.3e\n", p->iteration, p->misfit, p->gradient_norm,
           relative_error(p->conductivity, pp->k_true, pp->n));
    fflush(stdout);
}

/* A few cells of the answer beside the truth. */
static void print_profile(const double *k, const double *k_true, int64_t n) {
    printf("%8s  %8s  %8s\n", "x", "k true", "k found");
    int64_t stride = n >= 8 ? n / 8 : 1;
    for (int64_t i = stride / 2; i < n; i += stride)
        printf("%8.3f  %8.4f  %8.4f\n", ((double)i + 0.5) / (double)n, k_true[i], k[i]);
}

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static int open_plugin(const cli *o, tsr_component **c) {
    tsr_error err = {0};
    tsr_options *opts = tsr_options_new();
    if (opts == NULL || tsr_options_set(opts, "mode", o->mode, &err) != 0) {
        fprintf(stderr, "heat_invert: %s\n", opts ? err.message : "out of memory");
        tsr_options_free(opts);
        return -1;
    }
    int rc = tsr_open(o->plugin, opts, c, &err);
    tsr_options_free(opts);
    if (rc != 0) fprintf(stderr, "heat_invert: %s\n", err.message);
    return rc;
}

int main(int argc, char **argv) {
    char plugin_buf[4200];
    cli o = {.plugin = NULL, .mode = "inproc", .iters = 2000, .cells = 64, .every = 25};
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    if (o.plugin == NULL) o.plugin = default_plugin(plugin_buf, sizeof plugin_buf);
    if (o.plugin == NULL) {
        fprintf(stderr, "heat_invert: heat.so not found beside this program; use --plugin\n");
        return 2;
    }
    int64_t n = o.cells;
    double *arrays = calloc((size_t)(5 * n), sizeof(double));
    if (arrays == NULL) {
        fprintf(stderr, "heat_invert: out of memory\n");
        return 2;
    }
    double *k_true = arrays, *k = arrays + n, *source = arrays + 2 * n,
           *initial = arrays + 3 * n, *observed = arrays + 4 * n;
    for (int64_t i = 0; i < n; i++) {
        k_true[i] = true_conductivity(((double)i + 0.5) / (double)n);
        k[i] = 1.0;
        source[i] = 1.0;
    }
    heat_experiment e = {.n = n, .dt = 0.01, .steps = 100, .source = source,
                         .initial_temperature = initial, .observations = observed};

    tsr_component *c = NULL;
    if (open_plugin(&o, &c) != 0) {
        free(arrays);
        return 2;
    }
    char err[TSR_ERRMSG_MAX];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = heat_simulate(c, &e, k_true, observed, err, sizeof err);
    heat_inverse_result r;
    progress_printer pp = {.k_true = k_true, .n = n};
    heat_inverse_settings st = heat_inverse_defaults();
    st.max_iterations = o.iters;
    st.smoothness = o.smoothness;
    st.report_every = o.every;
    st.report = print_progress;
    st.user = &pp;
    if (rc == 0) {
        printf("heat_invert: %lld cells, %lld steps of dt = %g, mode %s\n", (long long)n,
               (long long)e.steps, e.dt, o.mode);
        printf("%6s  %12s  %12s  %10s\n", "iter", "misfit", "|grad|", "rel.err k");
        rc = heat_invert(c, &e, &st, k, &r, err, sizeof err);
    }
    double elapsed = seconds_since(&t0);
    tsr_close(c);
    if (rc != 0) {
        fprintf(stderr, "heat_invert: %s\n", err);
        free(arrays);
        return 2;
    }
    printf("%s after %d iterations (%lld apply + %lld vjp calls, %.3f s): misfit %.3e -> "
           "%.3e (reduced %.2ex), relative error of k %.2e\n",
           r.converged ? "converged" : "NOT converged", r.iterations,
           (long long)r.apply_calls, (long long)r.vjp_calls, elapsed, r.initial_misfit,
           r.final_misfit, r.initial_misfit / r.final_misfit, relative_error(k, k_true, n));
    print_profile(k, k_true, n);
    free(arrays);
    return r.converged ? 0 : 1;
}
