/* SPDX-License-Identifier: MIT */
/* Options of `tessera check-gradients`. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"

#define COMMAND "check-gradients"

enum {
    OPT_MODE = 256,
    OPT_CONFIG,
    OPT_MAX_EVALS,
    OPT_SEED,
    OPT_RTOL,
    OPT_ATOL,
    OPT_EPS,
    OPT_ABSOLUTE,
    OPT_TAYLOR,
    OPT_TAYLOR_STEPS,
    OPT_ENDPOINTS,
    OPT_INPUTS,
    OPT_OUTPUTS,
    OPT_MAX_FAILURES,
    OPT_OPTION
};

/* A number > 0 (tolerances and steps: 0 would mean "the default"). */
static int positive_number(const char *option, const char *arg, double *out) {
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (end == arg || *end != '\0' || errno == ERANGE || !isfinite(v) || v <= 0)
        return cli_usage_error(COMMAND, "%s takes a number > 0, got '%s'", option, arg);
    *out = v;
    return CLI_OK;
}

static int count(const char *option, const char *arg, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (end == arg || *end != '\0' || errno == ERANGE || v < lo || v > hi)
        return cli_usage_error(COMMAND, "%s takes an integer from %lld to %lld, got '%s'", option,
                               (long long)lo, (long long)hi, arg);
    *out = v;
    return CLI_OK;
}

static int seed(const char *arg, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 0);
    if (end == arg || *end != '\0' || errno == ERANGE || strchr(arg, '-'))
        return cli_usage_error(COMMAND, "--seed takes an integer from 0 to 2^64-1, got '%s'", arg);
    *out = v;
    return CLI_OK;
}

static int endpoints(const char *arg, uint32_t *mask) {
    *mask = 0;
    const char *p = arg;
    for (;;) {
        size_t n = strcspn(p, ",");
        int ep = -1;
        if (n == 3 && strncmp(p, "jvp", 3) == 0) ep = TSR_EP_JVP;
        else if (n == 3 && strncmp(p, "vjp", 3) == 0) ep = TSR_EP_VJP;
        else if (n == 8 && strncmp(p, "jacobian", 8) == 0) ep = TSR_EP_JACOBIAN;
        else if (n == 3 && strncmp(p, "hvp", 3) == 0) ep = TSR_EP_HVP;
        if (ep < 0)
            return cli_usage_error(COMMAND,
                                   "--endpoints: unknown endpoint '%.*s' (jvp, vjp, jacobian, "
                                   "hvp)",
                                   (int)n, p);
        *mask |= 1u << ep;
        if (p[n] == '\0') return CLI_OK;
        p += n + 1;
    }
}

/* "a,b" into a NULL-terminated list of names pointing into a copy. */
static int name_list(const char *option, const char *arg, char **buf, const char ***names,
                     int32_t *n) {
    free(*buf);
    free(*names);
    *names = NULL;
    *buf = strdup(arg);
    size_t cap = 2;
    for (const char *p = arg; *p; p++) cap += *p == ',';
    *names = calloc(cap, sizeof **names);
    if (!*buf || !*names) {
        cli_error(COMMAND, "out of memory");
        return CLI_USAGE;
    }
    *n = 0;
    for (char *p = *buf;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        if (*p == '\0')
            return cli_usage_error(COMMAND, "%s: empty field name in '%s'", option, arg);
        (*names)[(*n)++] = p;
        if (!comma) return CLI_OK;
        p = comma + 1;
    }
}

static int parse_one(int opt, const char *arg, const char *token, gradcheck_args *a) {
    tsr_gradcheck_options *o = &a->opts;
    tsr_error err = TSR_ERROR_INIT;
    int64_t v = 0;
    int rc;
    switch (opt) {
    case 'h': a->help = true; return CLI_OK;
    case 'f':
        if (strcmp(arg, "json") != 0 && strcmp(arg, "text") != 0)
            return cli_usage_error(COMMAND, "unsupported format '%s' (text or json)", arg);
        a->json = strcmp(arg, "json") == 0;
        return CLI_OK;
    case OPT_MODE:
        if (tsr_options_set(a->library, "mode", arg, &err) != 0)
            return cli_usage_error(COMMAND, "unknown mode '%s' (inproc, isolated or worker)", arg);
        return CLI_OK;
    case OPT_CONFIG: return cli_set_config(COMMAND, a->library, arg);
    case OPT_OPTION: return cli_set_option(COMMAND, a->library, arg);
    case OPT_MAX_EVALS: return count("--max-evals", arg, 1, INT64_MAX, &o->max_evals);
    case OPT_MAX_FAILURES: return count("--max-failures", arg, 1, INT64_MAX, &o->max_failures);
    case OPT_TAYLOR_STEPS:
        rc = count("--taylor-steps", arg, 3, TSR_GRADCHECK_MAX_TAYLOR_STEPS, &v);
        if (rc == CLI_OK) o->taylor_steps = (int32_t)v;
        return rc;
    case OPT_SEED: return seed(arg, &o->seed);
    case OPT_RTOL: return positive_number("--rtol", arg, &o->rtol);
    case OPT_ATOL: return positive_number("--atol", arg, &o->atol);
    case OPT_EPS: return positive_number("--eps", arg, &o->eps);
    case OPT_ABSOLUTE: o->absolute_step = 1; return CLI_OK;
    case OPT_TAYLOR: o->taylor = 1; return CLI_OK;
    case OPT_ENDPOINTS: return endpoints(arg, &o->endpoints);
    case OPT_INPUTS:
        return name_list("--input-paths", arg, &a->input_list, &a->input_paths, &o->n_input_paths);
    case OPT_OUTPUTS:
        return name_list("--output-paths", arg, &a->output_list, &a->output_paths,
                         &o->n_output_paths);
    case ':': return cli_usage_error(COMMAND, "option '%s' needs a value", token);
    default: return cli_usage_error(COMMAND, "unknown option '%s'", token);
    }
}

int cli_gradcheck_parse(int argc, char **argv, gradcheck_args *out) {
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"format", required_argument, NULL, 'f'},
        {"mode", required_argument, NULL, OPT_MODE},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"option", required_argument, NULL, OPT_OPTION},
        {"max-evals", required_argument, NULL, OPT_MAX_EVALS},
        {"max-failures", required_argument, NULL, OPT_MAX_FAILURES},
        {"seed", required_argument, NULL, OPT_SEED},
        {"rtol", required_argument, NULL, OPT_RTOL},
        {"atol", required_argument, NULL, OPT_ATOL},
        {"eps", required_argument, NULL, OPT_EPS},
        {"absolute-step", no_argument, NULL, OPT_ABSOLUTE},
        {"taylor", no_argument, NULL, OPT_TAYLOR},
        {"taylor-steps", required_argument, NULL, OPT_TAYLOR_STEPS},
        {"endpoints", required_argument, NULL, OPT_ENDPOINTS},
        {"input-paths", required_argument, NULL, OPT_INPUTS},
        {"output-paths", required_argument, NULL, OPT_OUTPUTS},
        {NULL, 0, NULL, 0},
    };
    memset(out, 0, sizeof *out);
    out->opts.struct_size = sizeof out->opts;
    out->opts.max_failures = CLI_GRADCHECK_MAX_FAILURES;
    out->library = tsr_options_new();
    if (!out->library) {
        cli_error(COMMAND, "out of memory");
        return CLI_USAGE;
    }
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":hf:", longopts, NULL)) != -1) {
        const char *token = argv[optind - 1];
        char short_opt[3] = {'-', (char)optopt, '\0'};
        if (opt == '?' && optopt != 0 && optopt != '?') token = short_opt;
        int rc = parse_one(opt, optarg, token, out);
        if (rc != CLI_OK) return rc;
    }
    out->opts.input_paths = out->input_paths;
    out->opts.output_paths = out->output_paths;
    out->positional = argv + optind;
    out->n_positional = argc - optind;
    return CLI_OK;
}

void cli_gradcheck_args_free(gradcheck_args *a) {
    tsr_options_free(a->library);
    free(a->input_list);
    free(a->output_list);
    free(a->input_paths);
    free(a->output_paths);
    memset(a, 0, sizeof *a);
}
