/* SPDX-License-Identifier: MIT */
/* The library options as `tessera help options` prints them, the help of
 * `tessera help`, and what the other forms of the help texts share:
 * capturing a help text, wrapping a paragraph. */
#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/option_table.h>

#include "cli.h"
#include "help_render.h"

int cli_capture_begin(cli_capture_state *s) {
    s->text = NULL;
    s->len = 0;
    s->mem = open_memstream(&s->text, &s->len);
    if (!s->mem) {
        cli_error("help", "out of memory");
        return CLI_OUTPUT;
    }
    s->saved = cli_out;
    cli_out = s->mem;
    return CLI_OK;
}

char *cli_capture_end(cli_capture_state *s) {
    cli_out = s->saved;
    if (fclose(s->mem) != 0 || !s->text) {
        free(s->text);
        cli_error("help", "out of memory");
        return NULL;
    }
    return s->text;
}

char *cli_capture(void (*print)(void)) {
    cli_capture_state s;
    if (cli_capture_begin(&s) != CLI_OK) return NULL;
    print();
    return cli_capture_end(&s);
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
