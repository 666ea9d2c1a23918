/* SPDX-License-Identifier: MIT */
/* Options shared by the subcommands: -f, -o, --mode, --option, --config, -h, and
 * for endpoint calls those of arrays in files: --input-path,
 * --output-path, --compression, --checksum, --io, --allow-escape, and
 * --error-format. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
    OPT_MODE = 256,
    OPT_OPTION,
    OPT_CONFIG,
    OPT_INPUT_PATH,
    OPT_OUTPUT_PATH,
    OPT_COMPRESSION,
    OPT_CHECKSUM,
    OPT_IO,
    OPT_ALLOW_ESCAPE,
    OPT_OPENAPI,
    OPT_ERROR_FORMAT,
    OPT_STATS
};

int cli_set_config(const char *command, tsr_options *lib, const char *assignment) {
    const char *eq = strchr(assignment, '=');
    if (eq == NULL || eq == assignment)
        return cli_usage_error(command, "--config takes KEY=VALUE, got '%s'", assignment);
    size_t key_len = (size_t)(eq - assignment);
    char *key = strndup(assignment, key_len);
    if (key == NULL) {
        cli_error(command, "out of memory");
        return CLI_USAGE;
    }
    int rc = tsr_options_set_config(lib, key, eq + 1);
    free(key);
    if (rc != 0) return cli_usage_error(command, "cannot set --config '%s': %s", assignment, tsr_strerror(rc));
    return CLI_OK;
}

/* --option KEY=VALUE: any option of tsr_options_set (workers, timeout_ms,
 * python, ...). */
int cli_set_option(const char *command, tsr_options *lib, const char *assignment) {
    const char *eq = strchr(assignment, '=');
    if (eq == NULL || eq == assignment)
        return cli_usage_error(command, "--option takes KEY=VALUE, got '%s'", assignment);
    char *key = strndup(assignment, (size_t)(eq - assignment));
    if (key == NULL) {
        cli_error(command, "out of memory");
        return CLI_USAGE;
    }
    tsr_error err = {0};
    int rc = tsr_options_set(lib, key, eq + 1, &err);
    free(key);
    return rc ? cli_usage_error(command, "--option %s: %s", assignment, err.message) : CLI_OK;
}

static const char *file_option_name(int opt) {
    switch (opt) {
    case OPT_INPUT_PATH: return "input-path";
    case OPT_OUTPUT_PATH: return "output-path";
    case OPT_COMPRESSION: return "compression";
    case OPT_CHECKSUM: return "checksum";
    case OPT_IO: return "io";
    case OPT_ERROR_FORMAT: return "error-format";
    case OPT_STATS: return "stats";
    default: return "allow-escape";
    }
}

/* Options of arrays in files, for endpoint calls. */
static int parse_file_option(const char *command, int opt, const char *arg, cli_options *o) {
    if ((opt == OPT_INPUT_PATH || opt == OPT_OUTPUT_PATH) && arg[0] == '\0')
        return cli_usage_error(command, "%s needs a directory, not ''",
                               opt == OPT_INPUT_PATH ? "--input-path" : "--output-path");
    switch (opt) {
    case OPT_INPUT_PATH:
        o->binref_in = arg;
        return CLI_OK;
    case OPT_OUTPUT_PATH:
        o->binref_out = arg;
        return CLI_OK;
    case OPT_COMPRESSION:
        if (strcmp(arg, "lz4") != 0 && strcmp(arg, "none") != 0)
            return cli_usage_error(command, "unsupported compression '%s' (lz4 or none)", arg);
        o->lz4 = strcmp(arg, "lz4") == 0;
        return CLI_OK;
    case OPT_CHECKSUM:
        o->checksum = true;
        return CLI_OK;
    case OPT_ALLOW_ESCAPE:
        o->allow_escape = true;
        return CLI_OK;
    case OPT_STATS:
        o->stats = true;
        return CLI_OK;
    case OPT_ERROR_FORMAT:
        if (strcmp(arg, "json") != 0 && strcmp(arg, "text") != 0)
            return cli_usage_error(command, "unknown --error-format '%s' (text or json)", arg);
        o->error_json = strcmp(arg, "json") == 0;
        return CLI_OK;
    default: { /* OPT_IO */
        int io = tsr_file_io_from_name(arg);
        if (io < 0)
            return cli_usage_error(command, "unknown --io '%s' (io_uring, posix or auto)", arg);
        o->io = (tsr_file_io)io;
        return CLI_OK;
    }
    }
}

static int parse_one(const char *command, int opt, const char *arg, const char *token,
                     bool with_format, cli_options *o) {
    tsr_error err = TSR_ERROR_INIT;
    switch (opt) {
    case 'h':
        o->help = true;
        return CLI_OK;
    case 'f':
        /* token may already be the value, so name the option itself. */
        if (!with_format) return cli_usage_error(command, "unknown option '-f'");
        if (strcmp(arg, "json") != 0 && strcmp(arg, "json+base64") != 0 &&
            strcmp(arg, "json+binref") != 0)
            return cli_usage_error(command,
                                   "unsupported format '%s' (json, json+base64 or json+binref)", arg);
        o->encoding = (tsr_encoding)tsr_encoding_from_name(arg);
        return CLI_OK;
    case 'o':
        o->output_path = arg;
        return CLI_OK;
    case OPT_MODE:
        if (tsr_options_set(o->library, "mode", arg, &err) != 0)
            return cli_usage_error(command, "unknown mode '%s' (inproc, isolated or worker)", arg);
        return CLI_OK;
    case OPT_OPTION:
        return cli_set_option(command, o->library, arg);
    case OPT_OPENAPI:
        /* only `schema` takes it, which has no -f */
        if (with_format) return cli_usage_error(command, "unknown option '--openapi'");
        o->openapi = true;
        return CLI_OK;
    case OPT_CONFIG:
        return cli_set_config(command, o->library, arg);
    case OPT_INPUT_PATH:
    case OPT_OUTPUT_PATH:
    case OPT_COMPRESSION:
    case OPT_CHECKSUM:
    case OPT_IO:
    case OPT_ALLOW_ESCAPE:
    case OPT_ERROR_FORMAT:
    case OPT_STATS:
        /* token may be the option's value: name the option itself. */
        if (!with_format) return cli_usage_error(command, "unknown option '--%s'", file_option_name(opt));
        return parse_file_option(command, opt, arg, o);
    case ':':
        return cli_usage_error(command, "option '%s' needs a value", token);
    default:
        break;
    }
    return cli_usage_error(command, "unknown option '%s'", token);
}

int cli_parse_options(int argc, char **argv, bool with_format, cli_options *out) {
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"format", required_argument, NULL, 'f'},
        {"output-format", required_argument, NULL, 'f'}, /* Tesseract's spelling */
        {"output", required_argument, NULL, 'o'},
        {"mode", required_argument, NULL, OPT_MODE},
        {"option", required_argument, NULL, OPT_OPTION},
        {"openapi", no_argument, NULL, OPT_OPENAPI},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"input-path", required_argument, NULL, OPT_INPUT_PATH},
        {"output-path", required_argument, NULL, OPT_OUTPUT_PATH},
        {"compression", required_argument, NULL, OPT_COMPRESSION},
        {"checksum", no_argument, NULL, OPT_CHECKSUM},
        {"io", required_argument, NULL, OPT_IO},
        {"allow-escape", no_argument, NULL, OPT_ALLOW_ESCAPE},
        {"error-format", required_argument, NULL, OPT_ERROR_FORMAT},
        {"stats", no_argument, NULL, OPT_STATS},
        {NULL, 0, NULL, 0},
    };
    const char *command = argv[0];
    memset(out, 0, sizeof *out);
    out->encoding = TSR_ENCODING_JSON;
    out->library = tsr_options_new();
    if (out->library == NULL) {
        cli_error(command, "out of memory");
        return CLI_USAGE;
    }
    opterr = 0;
    int opt;
    /* ':' first: a missing value is reported as ':' rather than '?'. */
    while ((opt = getopt_long(argc, argv, ":hf:o:", longopts, NULL)) != -1) {
        const char *token = argv[optind - 1];
        if (opt == '?' && optopt != 0 && optopt != '?') {
            char short_opt[3] = {'-', (char)optopt, '\0'};
            token = short_opt;
            return cli_usage_error(command, "unknown option '%s'", token);
        }
        int rc = parse_one(command, opt, optarg, token, with_format, out);
        if (rc != CLI_OK) return rc;
    }
    out->positional = argv + optind;
    out->n_positional = argc - optind;
    return CLI_OK;
}

void cli_options_free(cli_options *o) {
    tsr_options_free(o->library);
    o->library = NULL;
}
