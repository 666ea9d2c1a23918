/* SPDX-License-Identifier: MIT */
/* `tessera check-manifest MANIFEST [PAYLOAD]`: before a new manifest is
 * trusted in-process, run each endpoint it has once in a worker, where a
 * crash, an exit or a hang ends only the worker, with small inputs (the
 * payload's, or made from the schema), and report for each: ran, failed
 * (the cause), crashed the worker (a signal), ended it (exit) or hung
 * (timeout); whether the results are finite, the inputs came back
 * unchanged, and a second run gives the same answer. The inputs lie in the
 * worker's shared memory, so that a routine writing one it was trusted
 * not to write is seen. Status 0 only when every endpoint ran cleanly. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_manifest.h"

enum { OPT_TIMEOUT = 256, OPT_OPTION, OPT_CONFIG };

static void note(notes *ns, const char *text) {
    if (ns->n == NOTE_MAX) {
        ns->dropped++;
        return;
    }
    snprintf(ns->line[ns->n++], NOTE_BYTES, "%s", text);
}

/* Warnings of the load go into the report: those logged while it opens,
 * and those naming the manifest (a worker's lines may arrive only at a
 * later wait). Other warnings repeat what the report says (a worker that
 * died or was killed), so errors alone pass. */
static void on_log(void *user, tsr_log_level level, const char *component, const char *message) {
    check *ck = user;
    size_t n = strlen(ck->path);
    int manifest = strncmp(message, ck->path, n) == 0 && strncmp(message + n, ": ", 2) == 0;
    if (level >= TSR_LOG_WARN && (ck->loading || manifest)) note(&ck->load, message);
    else if (level >= TSR_LOG_ERROR) fprintf(stderr, "tessera[%s] ERROR: %s\n", component, message);
}

static void on_output(void *user, const char *component, const char *line) {
    (void)component;
    note(&((check *)user)->printed, line);
}

/* ---- the command ----------------------------------------------------------- */

typedef struct check_args {
    tsr_options *lib;
    int64_t timeout_ms;
    int help;
    char **positional;
    int n_positional;
} check_args;

static int parse(int argc, char **argv, check_args *a) {
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
        {"option", required_argument, NULL, OPT_OPTION},
        {"config", required_argument, NULL, OPT_CONFIG},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->timeout_ms = DEFAULT_TIMEOUT_MS;
    a->lib = tsr_options_new();
    if (!a->lib) {
        cli_error(COMMAND, "out of memory");
        return CLI_USAGE;
    }
    opterr = 0;
    int opt, rc = CLI_OK;
    while (rc == CLI_OK && (opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (opt) {
        case 'h': a->help = 1; break;
        case OPT_TIMEOUT:
            a->timeout_ms = strtoll(optarg, &end, 10);
            if (end == optarg || *end || a->timeout_ms <= 0 || a->timeout_ms > INT32_MAX)
                rc = cli_usage_error(COMMAND, "--timeout-ms takes a positive number of "
                                              "milliseconds, got '%s'", optarg);
            break;
        case OPT_OPTION:
            if (strncmp(optarg, "mode=", 5) == 0)
                rc = cli_usage_error(COMMAND, "check-manifest always runs the component in a "
                                              "worker; --option mode is not taken");
            else if (strncmp(optarg, "timeout_ms=", 11) == 0)
                rc = cli_usage_error(COMMAND, "say --timeout-ms %s", optarg + 11);
            else rc = cli_set_option(COMMAND, a->lib, optarg);
            break;
        case OPT_CONFIG: rc = cli_set_config(COMMAND, a->lib, optarg); break;
        case ':':
            rc = cli_usage_error(COMMAND, "option '%s' needs a value", argv[optind - 1]);
            break;
        default: rc = cli_usage_error(COMMAND, "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    a->positional = argv + optind;
    a->n_positional = argc - optind;
    return rc;
}

/* Worker mode whatever else was asked, the timeout, a dead worker replaced
 * at the next endpoint, and the logs and output collected for the report. */
static int worker_options(check_args *a, check *ck) {
    char ms[32];
    snprintf(ms, sizeof ms, "%lld", (long long)a->timeout_ms);
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_options_set(a->lib, "mode", "worker", &err) != 0 ||
        tsr_options_set(a->lib, "timeout_ms", ms, &err) != 0 ||
        tsr_options_set(a->lib, "restart", "auto", &err) != 0) {
        cli_error(COMMAND, "%s", err.message);
        return CLI_USAGE;
    }
    tsr_options_set_log(a->lib, on_log, ck);
    tsr_options_set_output(a->lib, on_output, ck);
    return CLI_OK;
}

static void print_verdict(const check *ck) {
    FILE *f = cli_out;
    if (ck->n_bad == 0)
        fprintf(f, "verdict: safe to run in-process: every endpoint ran cleanly in a worker%s\n",
                ck->load.n ? " (but read the load warnings above)" : "");
    else if (ck->unsafe)
        fprintf(f, "verdict: NOT safe to run in-process: %s; run it in --mode worker until the "
                "manifest is fixed\n", ck->first);
    else
        fprintf(f, "verdict: NOT shown safe to run in-process: %s; fix the manifest, or give a "
                "PAYLOAD the routine accepts, and check again\n", ck->first);
}

/* Give back the arrays and the worker; its last lines (load warnings
 * among them) arrive by then. */
static void finish(check *ck) {
    for (int32_t k = 0; ck->in && k < ck->n_in; k++) cm_release(ck, &ck->in[k]);
    free(ck->in);
    free(ck->out_shape);
    ck->in = NULL;
    ck->out_shape = NULL;
    tsr_close(ck->c);
    ck->c = NULL;
}

/* The endpoints' lines into ck->out; 0, or -1 when out of memory. */
static int check_all(check *ck, int from_payload) {
    fprintf(ck->out, "inputs (%s):", from_payload ? "from the payload" : "generated");
    for (int32_t k = 0; k < ck->n_in; k++) {
        fputs(k ? ", " : " ", ck->out);
        cm_print_array(ck->out, &ck->in[k]);
    }
    fputs(ck->n_in ? "\n" : " none\n", ck->out);
    static const tsr_endpoint order[] = {TSR_EP_APPLY, TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN,
                                         TSR_EP_HVP};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (tsr_component_has_native_endpoint(ck->c, order[k])) cm_check_endpoint(ck, order[k]);
    return ferror(ck->out) ? -1 : 0;
}

static int run_checks(check_args *a, check *ck) {
    int rc = worker_options(a, ck);
    if (rc != CLI_OK) return rc;
    char path_buf[PATH_MAX];
    ck->path = cli_plugin_path(a->positional[0], path_buf, sizeof path_buf);
    tsr_error err = TSR_ERROR_INIT;
    ck->loading = 1;
    int open_rc = tsr_open(ck->path, a->lib, &ck->c, &err);
    ck->loading = 0;
    if (open_rc != 0) {
        for (int k = 0; k < ck->load.n; k++)
            fprintf(stderr, "tessera: warning: %s\n", ck->load.line[k]);
        cli_error(NULL, "%s", err.message);
        return CLI_LOAD_FAILED;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", tsr_component_name(ck->c));
    ck->n_in = tsr_component_n_inputs(ck->c);
    ck->in = calloc((size_t)ck->n_in + 1, sizeof *ck->in);
    ck->out_shape = calloc((size_t)tsr_component_n_outputs(ck->c) + 1, sizeof *ck->out_shape);
    if (!ck->in || !ck->out_shape) {
        cli_error(NULL, "out of memory");
        return CLI_CALL_FAILED;
    }
    if (a->n_positional == 2) rc = cm_payload_inputs(ck, a->positional[1]);
    else if (cm_generate_inputs(ck) != 0) {
        cli_error(NULL, "out of memory");
        rc = CLI_CALL_FAILED;
    }
    if (rc != CLI_OK) return rc;

    char *body = NULL;
    size_t body_len = 0;
    ck->out = open_memstream(&body, &body_len);
    int failed = !ck->out || check_all(ck, a->n_positional == 2) != 0;
    finish(ck);
    if (ck->out && fclose(ck->out) != 0) failed = 1;
    if (failed) {
        free(body);
        cli_error(NULL, "out of memory");
        return CLI_CALL_FAILED;
    }
    fprintf(cli_out, "check-manifest: %s (component '%s'), in a worker, timeout %lld ms\n",
            ck->path, name, (long long)ck->timeout_ms);
    cm_print_notes(cli_out, &ck->load, "load: warning: ");
    fputs(body, cli_out);
    free(body);
    print_verdict(ck);
    if (fflush(cli_out) != 0) {
        cli_error(NULL, "cannot write the report to stdout");
        return CLI_OUTPUT;
    }
    return ck->n_bad ? CLI_CALL_FAILED : CLI_OK;
}

int cli_cmd_check_manifest(int argc, char **argv) {
    check_args a;
    int rc = parse(argc, argv, &a);
    if (rc == CLI_OK && a.help) {
        cli_print_check_manifest_help();
    } else if (rc == CLI_OK && (a.n_positional < 1 || a.n_positional > 2)) {
        rc = cli_usage_error(COMMAND,
                             a.n_positional == 0 ? "missing MANIFEST" : "too many arguments");
    } else if (rc == CLI_OK) {
        check ck = {.timeout_ms = a.timeout_ms};
        rc = run_checks(&a, &ck);
        finish(&ck);
    }
    tsr_options_free(a.lib);
    return rc;
}
