/* SPDX-License-Identifier: MIT */
/* The one table of commands: name, arguments, one-line summary, what runs
 * it and what prints its help. `tessera --help`, the dispatch in main.c,
 * the man page, docs/reference/cli.md and the bash completion are all
 * made from it (help_man.c, help_completion.c, which get it as an argument:
 * only this file and main.c name it), so a command added here appears in
 * each. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help_render.h"

/* The endpoint calls share cli_cmd_call and cli_print_call_help. */
#define CALL_COMMAND(fn, command, ep)                                                   \
    static int run_##fn(int argc, char **argv) { return cli_cmd_call(ep, argc, argv); } \
    static void help_##fn(void) { cli_print_call_help(command, ep); }
CALL_COMMAND(apply, "apply", TSR_EP_APPLY)
CALL_COMMAND(jvp, "jvp", TSR_EP_JVP)
CALL_COMMAND(vjp, "vjp", TSR_EP_VJP)
CALL_COMMAND(hvp, "hvp", TSR_EP_HVP)
CALL_COMMAND(jacobian, "jacobian", TSR_EP_JACOBIAN)
CALL_COMMAND(abstract_eval, "abstract-eval", TSR_EP_ABSTRACT_EVAL)

/* A new command adds one line here (its cli_cmd_NAME and cli_help_NAME
 * declared in cli.h; a summary of at most 48 characters, so that the
 * main help fits 80 columns); its help prints "Usage: tessera NAME ..." to cli_out
 * and lists each option as "  --option ARG   what it does", which the
 * completion reads (an ARG written a|b|c completes to a, b and c). */
const cli_command cli_commands[] = {
    {"schema", "PLUGIN", "its inputs, outputs and endpoints as JSON", cli_cmd_schema,
     cli_print_schema_help},
    {"info", "", "version, ABI, file I/O, shared memory, kernel", cli_cmd_info,
     cli_print_info_help},
    {"apply", "PLUGIN PAYLOAD", "evaluate: {\"inputs\": {...}} -> outputs", run_apply, help_apply},
    {"jvp", "PLUGIN PAYLOAD", "Jacobian-vector product", run_jvp, help_jvp},
    {"vjp", "PLUGIN PAYLOAD", "vector-Jacobian product", run_vjp, help_vjp},
    {"hvp", "PLUGIN PAYLOAD", "Hessian-vector product (vjp along a tangent)", run_hvp, help_hvp},
    {"jacobian", "PLUGIN PAYLOAD", "Jacobian of outputs with respect to inputs", run_jacobian,
     help_jacobian},
    {"abstract-eval", "PLUGIN PAYLOAD", "output shapes and dtypes from input shapes",
     run_abstract_eval, help_abstract_eval},
    {"check-gradients", "PLUGIN PAYLOAD", "check derivatives against finite differences",
     cli_cmd_check_gradients, cli_print_gradcheck_help},
    {"check-manifest", "MANIFEST [PAYLOAD]",
     "try each endpoint once in a worker", cli_cmd_check_manifest,
     cli_print_check_manifest_help},
    {"test", "PLUGIN [CASE.json ...]", "run Tesseract regression cases", cli_cmd_test,
     cli_print_test_help},
    {"docs", "PLUGIN", "the component's API as one HTML page", cli_cmd_docs, cli_print_docs_help},
    {"serve", "PLUGIN", "serve it over HTTP (Tesseract's REST API)", cli_cmd_serve,
     cli_print_serve_help},
    {"init", "DIR --kind plugin|python|manifest [--name NAME]", "write a new component to start from",
     cli_cmd_init, cli_print_init_help},
    {"config", "--cflags|--libs|--cmake-dir|--cmake-args|...", "build flags for code using Tessera",
     cli_cmd_config, cli_print_config_help},
    {"help", "[COMMAND | options]", "a command's help, or the library options", cli_cmd_help,
     cli_print_help_help},
};
const size_t cli_n_commands = sizeof cli_commands / sizeof cli_commands[0];

/* Tesseract's own command names, accepted too (not listed). */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"jacobian-vector-product", "jvp"},
    {"vector-jacobian-product", "vjp"},
    {"hessian-vector-product", "hvp"},
    {"abstract_eval", "abstract-eval"},
};

const cli_command *cli_find_command(const char *name) {
    for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++)
        if (strcmp(name, aliases[a].alias) == 0) name = aliases[a].name;
    for (size_t k = 0; k < cli_n_commands; k++)
        if (strcmp(name, cli_commands[k].name) == 0) return &cli_commands[k];
    return NULL;
}

static void main_help(void) { cli_print_main_help(cli_commands, cli_n_commands); }

/* `tessera help [COMMAND | options]`. Hidden modes print the same texts in
 * the forms the build installs or commits: --roff (tessera.1), --markdown
 * (docs/reference/cli.md), --markdown-options (docs/reference/options.md),
 * --bash-completion, --commands (one name a line, for tests). */
int cli_cmd_help(int argc, char **argv) {
    if (argc > 2) return cli_usage_error("help", "expected at most one argument");
    if (argc < 2) {
        main_help();
        return CLI_OK;
    }
    const char *what = argv[1];
    if (strcmp(what, "-h") == 0 || strcmp(what, "--help") == 0) {
        cli_print_help_help();
        return CLI_OK;
    }
    if (strcmp(what, "options") == 0) {
        cli_print_options_help();
        return CLI_OK;
    }
    if (strcmp(what, "--commands") == 0) {
        for (size_t k = 0; k < cli_n_commands; k++) fprintf(cli_out, "%s\n", cli_commands[k].name);
        return CLI_OK;
    }
    if (strcmp(what, "--roff") == 0) return help_print_roff(cli_commands, cli_n_commands);
    if (strcmp(what, "--markdown") == 0) return help_print_markdown(cli_commands, cli_n_commands);
    if (strcmp(what, "--markdown-options") == 0) return help_print_markdown_options();
    if (strcmp(what, "--bash-completion") == 0)
        return help_print_bash_completion(cli_commands, cli_n_commands);
    if (what[0] == '-') return cli_usage_error("help", "unknown option '%s'", what);
    const cli_command *c = cli_find_command(what);
    if (!c) return cli_usage_error("help", "unknown command '%s'", what);
    c->help();
    return CLI_OK;
}
