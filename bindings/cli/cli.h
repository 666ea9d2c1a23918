/* SPDX-License-Identifier: MIT */
/*
 * The `tessera` command line: shared declarations of its parts.
 *   main.c        the main command: global options, dispatch
 *   options.c     options common to the subcommands
 *   io.c          reading payloads, writing results
 *   commands.c    the one table of commands (name, arguments, summary, run, help)
 *   help.c        help texts
 *   help_options.c, help_man.c, help_completion.c (help_render.h)
 *                 the library options' help, and the help texts as a man
 *                 page, Markdown and bash completion
 *   cmd_schema.c  `tessera schema`
 *   cmd_info.c    `tessera info`
 *   cmd_call.c    `tessera apply|jvp|vjp|jacobian|abstract-eval`
 *   cmd_gradcheck.c, gradcheck_args.c, gradcheck_print.c
 *                 `tessera check-gradients`
 *   cmd_check_manifest.c, check_manifest_run.c, check_manifest_values.c
 *                 `tessera check-manifest`: a new manifest tried in a worker
 *   cmd_serve.c   `tessera serve` (on libtessera-serve, bindings/http)
 *   cmd_docs.c    `tessera docs`: the component's API as an HTML page (the
 *                 page itself is bindings/http's docs_*.c, shared with serve)
 *   cmd_config.c  `tessera config`: where the headers, library and CMake package are
 *   cmd_test.c, test_run.c, test_compare.c
 *                 `tessera test`: Tesseract regression cases (test_case.h)
 *   cmd_init.c, init_write.c, init_templates/
 *                 `tessera init`: a new component to start from
 *   exit_guard.c  a component that ends the process is an error, never success
 *   own_stdout.c  the command's stdout is its results; what components print goes to stderr
 */
#ifndef TESSERA_CLI_H
#define TESSERA_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

/* Exit statuses, the same for every command: cli_print_exit_statuses
 * prints them in every help text, and docs/guides/command-line.md has the same table. */
enum cli_exit {
    CLI_OK = 0,
    CLI_CALL_FAILED = 1,   /* the endpoint failed or refused its arguments */
    CLI_USAGE = 2,         /* bad command line */
    CLI_LOAD_FAILED = 3,   /* the plugin could not be loaded or initialised */
    CLI_PAYLOAD = 4,       /* the payload could not be read or decoded */
    CLI_OUTPUT = 5         /* the results could not be encoded or written */
};

/* Options every subcommand shares. */
typedef struct cli_options {
    tsr_encoding encoding;   /* -f */
    const char *output_path; /* -o; NULL: stdout */
    tsr_options *library;    /* --mode, --config */
    bool help;               /* -h */
    bool openapi;            /* schema --openapi */
    char **positional;       /* what remains after the options */
    int n_positional;
    /* Arrays in files (endpoint calls only). */
    const char *binref_in;   /* --input-path: base of relative binref paths */
    const char *binref_out;  /* --output-path: where json+binref writes .bin files */
    bool lz4;                /* --compression lz4 */
    bool checksum;           /* --checksum */
    bool allow_escape;       /* --allow-escape */
    tsr_file_io io;          /* --io */
    bool error_json;         /* --error-format json (endpoint calls) */
    bool stats;              /* --stats (endpoint calls): what the call cost, on stderr */
} cli_options;

/* call_stats.c: c's tsr_stats on stderr, "tessera: stats: " lines (one per
 * endpoint called, times as "ms=" like tessera serve's access log). */
void cli_print_stats(const tsr_component *c);

/* Parse argv (argv[0] is the subcommand's name). with_format: the
 * subcommand takes -f. Returns CLI_OK or CLI_USAGE (message printed). */
int cli_parse_options(int argc, char **argv, bool with_format, cli_options *out);
void cli_options_free(cli_options *o);
/* --option KEY=VALUE (tsr_options_set) into lib. CLI_OK or CLI_USAGE (message printed). */
int cli_set_option(const char *command, tsr_options *lib, const char *assignment);
/* --config KEY=VALUE into lib. Returns CLI_OK or CLI_USAGE (message printed). */
int cli_set_config(const char *command, tsr_options *lib, const char *assignment);

/* Read a payload argument: literal JSON text, @FILE, or - / @- for stdin.
 * The text is NUL-terminated, *len excludes the NUL; free() it. */
int cli_read_payload(const char *arg, char **text, size_t *len);
/* The same, leaving the message in why (n bytes) instead of printing it. */
int cli_read_payload_why(const char *arg, char **text, size_t *len, char *why, size_t n);

/* Write text and a newline to the -o file or stdout. */
int cli_write_output(const cli_options *o, const char *text);

/* A failure of the library on stderr: the "tessera: error: MESSAGE" line,
 * or with --error-format json Tesseract's 422 body in one line
 * (tsr_error_detail_json of code, loc and message, quoting the request's
 * input at loc; request may be NULL), as `tessera serve` sends it. */
void cli_report_failure(const cli_options *o, int code, const char *loc, const char *message,
                        const char *request, size_t request_len);
/* The same with the type of the failure (NULL: the code's), and for a
 * failed run (its type the endpoint's for a value it refused). */
void cli_report_typed_failure(const cli_options *o, const char *type, int code, const char *loc,
                              const char *message, const char *request, size_t request_len);
void cli_report_run_failure(const cli_options *o, const tsr_call *call, const char *request,
                            size_t request_len);

/* Print "tessera: error: ..." (or "tessera COMMAND: error: ...") to stderr. */
void cli_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A usage error: message plus a pointer to --help; returns CLI_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The path tsr_open should get: a bare file name that exists in the
 * current directory is made "./name", since tsr_open would otherwise
 * search the loader's path. Returns arg or buf. */
const char *cli_plugin_path(const char *arg, char *buf, size_t size);

/* own_stdout.c: the command's own stdout, for its results and help texts
 * (never stdout, which is fd 1: after cli_own_stdout, stderr). */
extern FILE *cli_out;
/* First thing in main: keep fd 1 as cli_out and point fd 1 at stderr, so
 * that what a component prints does not mix with the results. */
void cli_own_stdout(void);
/* Whether an -o path names the command's stdout: NULL, "-", /dev/stdout,
 * /dev/fd/1 (opened by name, they would now be stderr). */
bool cli_is_stdout(const char *path);

/* exit_guard.c: while armed, an exit by the component (a legacy routine's
 * STOP) prints what happened and ends the command with CLI_CALL_FAILED
 * instead of the status the component chose. what: "its load", "the call
 * of apply", ... (a string literal); component: a name or path. */
void cli_exit_guard_arm(const char *component, const char *what);
void cli_exit_guard_disarm(void);

void cli_print_exit_statuses(void);   /* the one table, for every help text */
void cli_print_schema_help(void);
void cli_print_call_help(const char *command, tsr_endpoint ep);
void cli_print_version(void);
void cli_print_gradcheck_help(void);

/* commands.c: every command, in the order `tessera --help` lists them.
 * Everything that lists commands (the main help, the man page, the
 * Markdown reference, the completion) reads this table. */
typedef struct cli_command {
    const char *name;    /* "check-gradients" */
    const char *args;    /* "PLUGIN PAYLOAD"; "" for none */
    const char *summary; /* one line, no full stop */
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
    void (*help)(void);  /* the command's --help text, to cli_out */
} cli_command;
extern const cli_command cli_commands[];
extern const size_t cli_n_commands;
/* The command named name (or one of Tesseract's names for it), or NULL. */
const cli_command *cli_find_command(const char *name);
/* The main help, listing the commands of the table given. */
void cli_print_main_help(const cli_command *commands, size_t n);

/* `tessera help [COMMAND | options]` (commands.c; its help: help_options.c). */
int cli_cmd_help(int argc, char **argv);
void cli_print_help_help(void);
/* The library options (tsr_option_info_at), as `tessera help options`. */
void cli_print_options_help(void);
/* What print writes to cli_out, as a malloc'd string; NULL when out of
 * memory (message printed). */
char *cli_capture(void (*print)(void));

int cli_cmd_schema(int argc, char **argv);
int cli_cmd_info(int argc, char **argv);
void cli_print_info_help(void);
/* Make dir and its missing parents (mode 0700). CLI_OK or CLI_OUTPUT
 * (message printed). */
int cli_make_dirs(const char *dir);
/* ep: the endpoint the subcommand names. */
int cli_cmd_call(tsr_endpoint ep, int argc, char **argv);
int cli_cmd_check_gradients(int argc, char **argv);
/* cmd_check_manifest.c: `tessera check-manifest`, each endpoint run once
 * in a worker before the manifest is trusted in-process. */
int cli_cmd_check_manifest(int argc, char **argv);
void cli_print_check_manifest_help(void);
/* cmd_serve.c: `tessera serve`. */
int cli_cmd_serve(int argc, char **argv);
void cli_print_serve_help(void);
/* cmd_test.c: `tessera test`. */
int cli_cmd_test(int argc, char **argv);
void cli_print_test_help(void);

/* cmd_docs.c: `tessera docs`. */
int cli_cmd_docs(int argc, char **argv);
void cli_print_docs_help(void);

/* cmd_init.c: `tessera init`. */
int cli_cmd_init(int argc, char **argv);
void cli_print_init_help(void);
/* cmd_config.c: `tessera config`. */
int cli_cmd_config(int argc, char **argv);
void cli_print_config_help(void);

#endif /* TESSERA_CLI_H */
