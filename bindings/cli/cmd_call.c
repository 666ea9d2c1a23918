/* SPDX-License-Identifier: MIT */
/* `tessera apply|jvp|vjp|hvp|jacobian|abstract-eval PLUGIN PAYLOAD`: decode
 * the payload, run the endpoint, print the results. */
#include <limits.h>
#include <stdlib.h>

#include "cli.h"

/* Everything one invocation holds, released in one place. */
typedef struct invocation {
    char *payload_text;
    size_t payload_len;
    tsr_component *component;
    tsr_payload *payload;
    tsr_call *call;
    char *result;
} invocation;

static void release(invocation *inv) {
    tsr_json_free(inv->result);
    tsr_call_free(inv->call);
    tsr_payload_free(inv->payload);
    tsr_close(inv->component);
    free(inv->payload_text);
}

static int run(tsr_endpoint ep, const cli_options *o, invocation *inv) {
    tsr_error err = TSR_ERROR_INIT;
    char why[PATH_MAX + 128];
    int rc = cli_read_payload_why(o->positional[1], &inv->payload_text, &inv->payload_len, why,
                                  sizeof why);
    if (rc != CLI_OK) {
        cli_report_failure(o, TSR_E_IO, "", why, NULL, 0);
        return rc;
    }
    const char *request = inv->payload_text;
    size_t request_len = inv->payload_len;

    char path_buf[PATH_MAX];
    const char *path = cli_plugin_path(o->positional[0], path_buf, sizeof path_buf);
    cli_exit_guard_arm(path, "its load");
    if (tsr_open(path, o->library, &inv->component, &err) != 0) {
        cli_report_failure(o, err.code, err.loc, err.message, NULL, 0);
        return CLI_LOAD_FAILED;
    }
    cli_exit_guard_arm(tsr_component_name(inv->component), tsr_endpoint_name(ep));
    tsr_input_options in = {.struct_size = sizeof in, .base_dir = o->binref_in,
                            .allow_escape = o->allow_escape, .io = o->io};
    if (tsr_payload_parse_ex(inv->component, ep, inv->payload_text, inv->payload_len, &in,
                             &inv->payload, &err) != 0) {
        cli_report_failure(o, err.code, err.loc, err.message, request, request_len);
        return CLI_PAYLOAD;
    }
    inv->call = tsr_call_new(inv->component, ep);
    if (inv->call == NULL) {
        cli_report_failure(o, TSR_E_NOMEM, "", "out of memory", NULL, 0);
        return CLI_CALL_FAILED;
    }
    if (tsr_payload_bind(inv->payload, inv->call, &err) != 0) {
        cli_report_failure(o, err.code, err.loc, err.message, request, request_len);
        return CLI_PAYLOAD;
    }
    if (tsr_call_run(inv->call) != 0) {
        cli_report_run_failure(o, inv->call, request, request_len);
        return CLI_CALL_FAILED;
    }
    tsr_output_options out = {.struct_size = sizeof out, .encoding = o->encoding, .lz4 = o->lz4,
                              .checksum = o->checksum, .output_dir = o->binref_out, .io = o->io};
    /* Tesseract makes its output path when it is missing; so do we. */
    if (o->encoding == TSR_ENCODING_BINREF && o->binref_out != NULL &&
        (rc = cli_make_dirs(o->binref_out)) != CLI_OK)
        return rc;
    if (tsr_payload_format_results_ex(inv->payload, inv->call, &out, &inv->result, &err) != 0) {
        cli_report_failure(o, err.code, err.loc, err.message, request, request_len);
        return CLI_OUTPUT;
    }
    return cli_write_output(o, inv->result);
}

int cli_cmd_call(tsr_endpoint ep, int argc, char **argv) {
    const char *command = argv[0];
    cli_options o;
    int rc = cli_parse_options(argc, argv, true, &o);
    if (rc == CLI_OK && o.help) {
        cli_print_call_help(command, ep);
    } else if (rc == CLI_OK && o.n_positional != 2) {
        rc = cli_usage_error(command, o.n_positional == 0   ? "missing PLUGIN and PAYLOAD"
                                      : o.n_positional == 1 ? "missing PAYLOAD"
                                                            : "too many arguments");
    } else if (rc == CLI_OK) {
        invocation inv = {0};
        rc = run(ep, &o, &inv);
        /* After a failed call too: its cost is counted (not after a load
         * that failed: nothing to count). */
        if (o.stats && inv.component) cli_print_stats(inv.component);
        release(&inv);   /* still guarded: a component's fini may end the process too */
        cli_exit_guard_disarm();
    }
    cli_options_free(&o);
    return rc;
}
