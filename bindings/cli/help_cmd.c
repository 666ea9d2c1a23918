/* SPDX-License-Identifier: MIT */
/* `tessera help [COMMAND | options]`: a command's help text or the table of
 * library options. Hidden modes print the same texts in the forms the
 * build installs or commits: --roff (tessera.1), --markdown
 * (docs/reference/cli.md), --markdown-options (docs/reference/options.md),
 * --bash-completion, --commands (one name a line, for tests). */
#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/option_table.h>

#include "cli.h"
#include "help_render.h"

char *cli_capture(void (*print)(void)) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        cli_error("help", "out of memory");
        return NULL;
    }
    FILE *saved = cli_out;
    cli_out = mem;
    print();
    cli_out = saved;
    if (fclose(mem) != 0 || !text) {
        free(text);
        cli_error("help", "out of memory");
        return NULL;
    }
    return text;
}

void help_wrap(FILE *f, const char *indent, size_t width, const char *text) {
    size_t avail = width > strlen(indent) ? width - strlen(indent) : 1;
    const char *p = text;
    while (*p == ' ') p++;
    while (*p) {
        /* Take words while they fit (always one). */
        const char *end = p, *w = p;
        while (*w) {
            const char *we = w;
            while (*we && *we != ' ') we++;
            if (end != p && (size_t)(we - p) > avail) break;
            end = we;
            w = we;
            while (*w == ' ') w++;
        }
        fprintf(f, "%s%.*s\n", indent, (int)(end - p), p);
        p = end;
        while (*p == ' ') p++;
    }
}

void cli_print_options_help(void) {
    fputs("Library options: tsr_options_set(opts, KEY, VALUE) in C, --option KEY=VALUE\n"
          "on the command line. A key or value not listed here is refused\n"
          "(TSR_E_ARGUMENT; exit status 2 on the command line).\n"
          "\n",
          cli_out);
    for (size_t i = 0; tsr_option_info_at(i); i++) {
        const tsr_option_info *o = tsr_option_info_at(i);
        fprintf(cli_out, "%s  (%s; default %s)\n", o->key, o->modes, o->default_text);
        fprintf(cli_out, "    values: %s\n", o->values);
        char line[1024];
        snprintf(line, sizeof line, "%s%s", o->summary, *o->details ? "." : "");
        help_wrap(cli_out, "    ", 76, line);
        if (*o->details) help_wrap(cli_out, "    ", 76, o->details);
        fputs("\n", cli_out);
    }
}

void cli_print_help_help(void) {
    fputs("Usage: tessera help [COMMAND | options]\n"
          "\n"
          "Without an argument, the main help (as tessera --help). With a COMMAND,\n"
          "that command's help (as tessera COMMAND --help). With 'options', every\n"
          "library option that --option KEY=VALUE and tsr_options_set take: its\n"
          "values, default, the modes it applies to and what it does.\n"
          "\n"
          "Options:\n"
          "  -h, --help             show this help\n"
          "\n",
          cli_out);
    cli_print_exit_statuses();
}

int cli_cmd_help(int argc, char **argv) {
    if (argc > 2) return cli_usage_error("help", "expected at most one argument");
    if (argc < 2) {
        cli_print_main_help();
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
    if (strcmp(what, "--roff") == 0) return help_print_roff();
    if (strcmp(what, "--markdown") == 0) return help_print_markdown();
    if (strcmp(what, "--markdown-options") == 0) return help_print_markdown_options();
    if (strcmp(what, "--bash-completion") == 0) return help_print_bash_completion();
    if (what[0] == '-') return cli_usage_error("help", "unknown option '%s'", what);
    const cli_command *c = cli_find_command(what);
    if (!c) return cli_usage_error("help", "unknown command '%s'", what);
    c->help();
    return CLI_OK;
}
