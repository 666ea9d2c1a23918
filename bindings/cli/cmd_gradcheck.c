/* SPDX-License-Identifier: MIT */
/* `tessera check-gradients PLUGIN PAYLOAD`: compare the derivative
 * endpoints with finite differences (or Taylor convergence) at the inputs
 * of an apply payload, and report. */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "gradcheck.h"

#define COMMAND "check-gradients"

typedef struct invocation {
    char *payload_text;
    size_t payload_len;
    tsr_component *component;
    tsr_payload *payload;
    tsr_array *inputs;
    tsr_gradcheck_report *report;
    char *json;
} invocation;

static void release(invocation *inv) {
    tsr_json_free(inv->json);
    tsr_gradcheck_report_free(inv->report);
    free(inv->inputs);
    tsr_payload_free(inv->payload);
    tsr_close(inv->component);
    free(inv->payload_text);
}

/* The payload's inputs in schema order, as tsr_gradcheck_run takes them. */
static int gather_inputs(invocation *inv) {
    int32_t n = tsr_component_n_inputs(inv->component);
    inv->inputs = calloc((size_t)n + 1, sizeof *inv->inputs);
    if (!inv->inputs) {
        cli_error(NULL, "out of memory");
        return CLI_CALL_FAILED;
    }
    for (int32_t k = 0; k < n; k++) {
        const tsr_field *field = tsr_component_input(inv->component, k);
        const char *name = field->name;
        const tsr_array *a = tsr_payload_input(inv->payload, name);
        if (!a) a = field->default_value;   /* left out: its default */
        if (!a) {
            cli_error(NULL, "the payload lacks input '%s'%s", name,
                      (field->flags & TSR_FIELD_OPTIONAL)
                          ? " (optional inputs must be given to check gradients)"
                          : "");
            return CLI_PAYLOAD;
        }
        inv->inputs[k] = *a;
    }
    return CLI_OK;
}

/* The check reports what its options name (fields, endpoints, a step too
 * small to move an input) with these codes: usage errors. The rest are
 * calls that failed. */
static int run_failed(const tsr_error *err) {
    int usage = err->code == TSR_E_UNKNOWN_FIELD || err->code == TSR_E_NOT_DIFFERENTIABLE ||
                err->code == TSR_E_UNSUPPORTED || err->code == TSR_E_ARGUMENT;
    if (usage) return cli_usage_error(COMMAND, "%s", err->message);
    cli_error(NULL, "%s", err->message);
    return CLI_CALL_FAILED;
}

static int run(gradcheck_args *a, invocation *inv) {
    tsr_error err = TSR_ERROR_INIT;
    int rc = cli_read_payload(a->positional[1], &inv->payload_text, &inv->payload_len);
    if (rc != CLI_OK) return rc;
    char path_buf[PATH_MAX];
    const char *path = cli_plugin_path(a->positional[0], path_buf, sizeof path_buf);
    cli_exit_guard_arm(path, "its load");
    if (tsr_open(path, a->library, &inv->component, &err) != 0) {
        cli_error(NULL, "%s", err.message);
        return CLI_LOAD_FAILED;
    }
    cli_exit_guard_arm(tsr_component_name(inv->component), "the gradient check");
    if (tsr_payload_parse(inv->component, TSR_EP_APPLY, inv->payload_text, inv->payload_len,
                          &inv->payload, &err) != 0) {
        cli_error(NULL, "%s", err.message);
        return CLI_PAYLOAD;
    }
    rc = gather_inputs(inv);
    if (rc != CLI_OK) return rc;
    if (isatty(STDERR_FILENO)) a->opts.progress = cli_gradcheck_progress;
    rc = tsr_gradcheck_run(inv->component, inv->inputs, &a->opts, &inv->report, &err);
    cli_gradcheck_progress_end();
    if (rc != 0) return run_failed(&err);
    if (a->json) {
        if (tsr_gradcheck_report_json(inv->report, &inv->json, &err) != 0) {
            cli_error(NULL, "%s", err.message);
            return CLI_OUTPUT;
        }
        cli_options o = {.output_path = NULL};
        rc = cli_write_output(&o, inv->json);
        if (rc != CLI_OK) return rc;
    } else {
        cli_gradcheck_print(inv->report, inv->component, a);
        if (fflush(cli_out) != 0) {
            cli_error(NULL, "cannot write the report to stdout");
            return CLI_OUTPUT;
        }
    }
    if (cli_gradcheck_nothing_checked(inv->report)) {
        if (a->json) cli_gradcheck_why_nothing(inv->report, inv->component, stderr);
        return CLI_CALL_FAILED;
    }
    return tsr_gradcheck_passed(inv->report) ? CLI_OK : CLI_CALL_FAILED;
}

int cli_cmd_check_gradients(int argc, char **argv) {
    gradcheck_args a;
    int rc = cli_gradcheck_parse(argc, argv, &a);
    if (rc == CLI_OK && a.help) {
        cli_print_gradcheck_help();
    } else if (rc == CLI_OK && a.n_positional != 2) {
        rc = cli_usage_error(COMMAND, a.n_positional == 0   ? "missing PLUGIN and PAYLOAD"
                                      : a.n_positional == 1 ? "missing PAYLOAD"
                                                            : "too many arguments");
    } else if (rc == CLI_OK) {
        invocation inv = {0};
        rc = run(&a, &inv);
        release(&inv);
        cli_exit_guard_disarm();
    }
    cli_gradcheck_args_free(&a);
    return rc;
}
