/* SPDX-License-Identifier: MIT */
/* The help texts in other forms, all made from the table of commands
 * (commands.c), each command's --help and the table of library options:
 *   help_man.c          the man page (roff) and the Markdown references
 *   help_completion.c   the bash completion script
 *   help_options.c      the options text, capture and wrapping they share
 * Each prints to cli_out and returns CLI_OK or CLI_OUTPUT. */
#ifndef TESSERA_CLI_HELP_RENDER_H
#define TESSERA_CLI_HELP_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

int help_print_roff(const cli_command *commands, size_t n);
int help_print_markdown(const cli_command *commands, size_t n);
int help_print_markdown_options(void);
int help_print_bash_completion(const cli_command *commands, size_t n);

/* What is printed to cli_out between begin and end, as a malloc'd string
 * (NULL when out of memory, message printed). */
typedef struct cli_capture_state {
    FILE *mem, *saved;
    char *text;
    size_t len;
} cli_capture_state;
int cli_capture_begin(cli_capture_state *s);
char *cli_capture_end(cli_capture_state *s);

/* text wrapped to width columns, each line starting with indent. */
void help_wrap(FILE *f, const char *indent, size_t width, const char *text);
/* A help text without the table of exit statuses that ends each one (the
 * references print it once). Cuts text in place. */
void help_drop_exit_statuses(char *text);

#endif /* TESSERA_CLI_HELP_RENDER_H */
