/* SPDX-License-Identifier: MIT */
/* `tessera`: the main command, its global options and the dispatch to
 * subcommands. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct subcommand {
    const char *name;
    int endpoint; /* a negative id (SCHEMA, SERVE, ...): not an endpoint call */
} subcommand;

enum { SCHEMA = -1, CHECK_GRADIENTS = -2, INFO = -3, SERVE = -4, CHECK_MANIFEST = -5, DOCS = -6, TEST = -7, CONFIG = -8 };

/* Tesseract's own command names are accepted as aliases. */
static const subcommand subcommands[] = {
    {"schema", SCHEMA},
    {"info", INFO},
    {"check-gradients", CHECK_GRADIENTS},
    {"check-manifest", CHECK_MANIFEST},
    {"serve", SERVE},
    {"docs", DOCS},
    {"test", TEST},
    {"config", CONFIG},
    {"apply", TSR_EP_APPLY},
    {"jvp", TSR_EP_JVP},
    {"jacobian-vector-product", TSR_EP_JVP},
    {"vjp", TSR_EP_VJP},
    {"vector-jacobian-product", TSR_EP_VJP},
    {"jacobian", TSR_EP_JACOBIAN},
    {"abstract-eval", TSR_EP_ABSTRACT_EVAL},
    {"abstract_eval", TSR_EP_ABSTRACT_EVAL},
};

int main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    cli_own_stdout();   /* before anything, a component included, writes */
    opterr = 0; /* our own messages */
    int opt;
    /* '+': stop at the subcommand; its options are its own. */
    while ((opt = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h': cli_print_main_help(); return CLI_OK;
        case 'V': cli_print_version(); return CLI_OK;
        default:
            return cli_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage_error(NULL, "missing command");

    const char *name = argv[optind];
    if (strcmp(name, "help") == 0) {
        cli_print_main_help();
        return CLI_OK;
    }
    for (size_t k = 0; k < sizeof subcommands / sizeof subcommands[0]; k++) {
        if (strcmp(name, subcommands[k].name) != 0) continue;
        int sub_argc = argc - optind;
        char **sub_argv = argv + optind;
        optind = 0; /* restart getopt for the subcommand (GNU: full reset) */
        if (subcommands[k].endpoint == SCHEMA) return cli_cmd_schema(sub_argc, sub_argv);
        if (subcommands[k].endpoint == INFO) return cli_cmd_info(sub_argc, sub_argv);
        if (subcommands[k].endpoint == SERVE) return cli_cmd_serve(sub_argc, sub_argv);
        if (subcommands[k].endpoint == TEST) return cli_cmd_test(sub_argc, sub_argv);
        if (subcommands[k].endpoint == DOCS) return cli_cmd_docs(sub_argc, sub_argv);
        if (subcommands[k].endpoint == CONFIG) return cli_cmd_config(sub_argc, sub_argv);
        if (subcommands[k].endpoint == CHECK_MANIFEST)
            return cli_cmd_check_manifest(sub_argc, sub_argv);
        if (subcommands[k].endpoint == CHECK_GRADIENTS)
            return cli_cmd_check_gradients(sub_argc, sub_argv);
        return cli_cmd_call((tsr_endpoint)subcommands[k].endpoint, sub_argc, sub_argv);
    }
    return cli_usage_error(NULL, "unknown command '%s'", name);
}
