/* SPDX-License-Identifier: MIT */
/* `tessera`: the main command, its global options and the dispatch to
 * subcommands (the table of commands.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

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
        case 'h': cli_print_main_help(cli_commands, cli_n_commands); return CLI_OK;
        case 'V': cli_print_version(); return CLI_OK;
        default:
            return cli_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage_error(NULL, "missing command");

    const cli_command *command = cli_find_command(argv[optind]);
    if (command) {
        int sub_argc = argc - optind;
        char **sub_argv = argv + optind;
        optind = 0; /* restart getopt for the subcommand (GNU: full reset) */
        return command->run(sub_argc, sub_argv);
    }
    const char *name = argv[optind];
    return cli_usage_error(NULL, "unknown command '%s'", name);
}
