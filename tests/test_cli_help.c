/* SPDX-License-Identifier: MIT */
/*
 * The table of commands behind `tessera --help`: every command is listed
 * with a summary, answers --help (and `tessera help COMMAND`) with its
 * usage, refuses an unknown option; unknown commands are usage errors;
 * `tessera help options` lists every library option of the table.
 */
#include <string.h>

#include <tessera/option_table.h>

#include "cli_run.h"

/* The names `tessera help --commands` gives, one a line (owned by r). */
static size_t command_names(cli_run *r, char **names, size_t cap) {
    *r = run_cli(NULL, "help", "--commands");
    assert_ok(r);
    size_t n = 0;
    for (char *save = NULL, *line = strtok_r(r->out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        cr_assert(n < cap);
        names[n++] = line;
    }
    return n;
}

Test(cli_help_table, main_help_lists_every_command_with_a_summary) {
    cli_run list;
    char *names[64];
    size_t n = command_names(&list, names, 64);
    /* The commands a new user looks for, whatever else the table has. */
    const char *expected[] = {"schema", "info", "apply", "jvp", "vjp", "jacobian",
                              "abstract-eval", "check-gradients", "check-manifest", "test",
                              "docs", "serve", "help"};
    for (size_t e = 0; e < sizeof expected / sizeof expected[0]; e++) {
        size_t k = 0;
        while (k < n && strcmp(names[k], expected[e]) != 0) k++;
        cr_assert(k < n, "'%s' is missing from the table of commands", expected[e]);
    }
    cli_run help = run_cli(NULL, "--help");
    assert_ok(&help);
    for (size_t k = 0; k < n; k++) {
        char line_start[96];
        snprintf(line_start, sizeof line_start, "\n  %s ", names[k]);
        const char *at = strstr(help.out, line_start);
        if (!at) {
            snprintf(line_start, sizeof line_start, "\n  %s\n", names[k]);
            at = strstr(help.out, line_start);
        }
        cr_assert_not_null(at, "tessera --help does not list '%s':\n%s", names[k], help.out);
        /* A summary follows on its line or the next. */
        const char *eol = strchr(at + 1, '\n');
        cr_assert(eol && (size_t)(eol - at) > strlen(line_start) + 2, "'%s' has no summary",
                  names[k]);
    }
    /* `tessera help` is the same text. */
    cli_run plain = run_cli(NULL, "help");
    assert_ok(&plain);
    cr_assert_str_eq(plain.out, help.out);
    run_free(&plain);
    run_free(&help);
    run_free(&list);
}

Test(cli_help_table, main_help_fits_80_columns) {
    cli_run help = run_cli(NULL, "--help");
    assert_ok(&help);
    size_t line = 1, col = 0;
    for (const char *p = help.out; *p; p++) {
        if (*p == '\n') {
            line++;
            col = 0;
            continue;
        }
        cr_assert(++col <= 80, "line %zu of tessera --help is wider than 80 columns", line);
    }
    run_free(&help);
}

Test(cli_help_table, every_command_answers_help_with_its_usage) {
    cli_run list;
    char *names[64];
    size_t n = command_names(&list, names, 64);
    for (size_t k = 0; k < n; k++) {
        char usage[96];
        snprintf(usage, sizeof usage, "Usage: tessera %s", names[k]);
        cli_run dash = run_cli(NULL, names[k], "--help");
        assert_ok(&dash);
        assert_contains(dash.out, usage);
        assert_contains(dash.out, "Options:");
        assert_contains(dash.out, "-h, --help");
        cli_run short_opt = run_cli(NULL, names[k], "-h");
        assert_ok(&short_opt);
        cr_assert_str_eq(short_opt.out, dash.out, "'%s -h' and '%s --help' differ", names[k],
                         names[k]);
        cli_run via_help = run_cli(NULL, "help", names[k]);
        assert_ok(&via_help);
        cr_assert_str_eq(via_help.out, dash.out, "'help %s' and '%s --help' differ", names[k],
                         names[k]);
        run_free(&via_help);
        run_free(&short_opt);
        run_free(&dash);
    }
    run_free(&list);
}

Test(cli_help_table, every_command_refuses_an_unknown_option) {
    cli_run list;
    char *names[64];
    size_t n = command_names(&list, names, 64);
    for (size_t k = 0; k < n; k++) {
        cli_run r = run_cli(NULL, names[k], "--no-such-option");
        cr_assert_eq(r.status, EXIT_USAGE, "'%s --no-such-option' exited %d: %s", names[k],
                     r.status, r.err);
        assert_contains(r.err, "no-such-option");
        cr_assert_str_eq(r.out, "");
        run_free(&r);
    }
    run_free(&list);
}

Test(cli_help_table, unknown_command_is_a_usage_error) {
    cli_run r = run_cli(NULL, "frobnicate");
    assert_fails(&r, EXIT_USAGE, "unknown command 'frobnicate'");
    run_free(&r);
    r = run_cli(NULL, "help", "frobnicate");
    assert_fails(&r, EXIT_USAGE, "unknown command 'frobnicate'");
    run_free(&r);
    r = run_cli(NULL, "help", "--frobnicate");
    assert_fails(&r, EXIT_USAGE, "unknown option '--frobnicate'");
    run_free(&r);
    r = run_cli(NULL, "help", "apply", "jvp");
    assert_fails(&r, EXIT_USAGE, "at most one argument");
    run_free(&r);
    r = run_cli(NULL, "--frobnicate");
    assert_fails(&r, EXIT_USAGE, "unknown option '--frobnicate'");
    run_free(&r);
    r = run_cli(NULL, "");
    assert_fails(&r, EXIT_USAGE, "unknown command ''");
    run_free(&r);
}

/* Tesseract's names of the commands still run them and show their help
 * (under the name typed; `tessera help` names the command). */
Test(cli_help_table, tesseract_names_show_the_command_help) {
    const char *alias[][2] = {{"jacobian-vector-product", "jvp"},
                              {"vector-jacobian-product", "vjp"},
                              {"abstract_eval", "abstract-eval"}};
    for (size_t k = 0; k < 3; k++) {
        cli_run a = run_cli(NULL, alias[k][0], "--help");
        assert_ok(&a);
        char usage[96];
        snprintf(usage, sizeof usage, "Usage: tessera %s [OPTIONS] PLUGIN PAYLOAD", alias[k][0]);
        assert_contains(a.out, usage);
        cli_run b = run_cli(NULL, "help", alias[k][0]);
        assert_ok(&b);
        snprintf(usage, sizeof usage, "Usage: tessera %s [OPTIONS] PLUGIN PAYLOAD", alias[k][1]);
        assert_contains(b.out, usage);
        run_free(&a);
        run_free(&b);
    }
}

Test(cli_help_table, help_options_lists_every_option_of_the_table) {
    cli_run r = run_cli(NULL, "help", "options");
    assert_ok(&r);
    size_t n = 0;
    for (const tsr_option_info *o; (o = tsr_option_info_at(n)) != NULL; n++) {
        char head[160];
        snprintf(head, sizeof head, "\n%s  (%s; default %s)\n    values: %s\n", o->key, o->modes,
                 o->default_text, o->values);
        cr_assert(strstr(r.out, head) || strncmp(r.out, head + 1, strlen(head + 1)) == 0,
                  "'tessera help options' lacks '%s' as the table has it", o->key);
    }
    cr_assert_geq(n, 20);
    run_free(&r);
    /* The command help of --option points at it. */
    r = run_cli(NULL, "apply", "--help");
    assert_contains(r.out, "tessera help options");
    run_free(&r);
}
