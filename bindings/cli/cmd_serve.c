/* SPDX-License-Identifier: MIT */
/* `tessera serve PLUGIN`: the component behind Tesseract's REST API
 * (libtessera-serve) until SIGINT or SIGTERM. A program, unlike the
 * library: it blocks those signals in every thread and waits for them, so
 * that a stop finishes the requests in progress. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera_serve.h"

#include "cli.h"

enum {
    OPT_HOST = 256,
    OPT_PORT,
    OPT_MODE,
    OPT_OPTION,
    OPT_CONFIG,
    OPT_TOKEN_FILE,
    OPT_INPUT_PATH,
    OPT_OUTPUT_PATH,
    OPT_FORMAT,
    OPT_COMPRESSION,
    OPT_MAX_BODY,
    OPT_THREADS,
    OPT_LINGER,
    OPT_MAX_CONNECTIONS,
    OPT_IDLE_TIMEOUT,
    OPT_HEADER_TIMEOUT,
    OPT_BODY_TIMEOUT,
    OPT_PER_ADDRESS,
    OPT_UMBRIDGE_SIZE,
    OPT_QUIET
};

typedef struct serve_args {
    tsr_options *library;
    http_serve_options serve;
    const char *token_file;
    const char *plugin;
    char umbridge_sizes[1024];   /* the --umbridge-size values, comma-separated */
    int quiet;
    int help;
} serve_args;

static int number(const char *opt, const char *text, unsigned long long max,
                  unsigned long long *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || v > max || text[0] == '-')
        return cli_usage_error("serve", "%s takes a number up to %llu, got '%s'", opt, max, text);
    *out = v;
    return CLI_OK;
}

/* A number from 1 to max (0 would mean no limit, or the default). */
static int positive(const char *opt, const char *text, unsigned long long max, uint32_t *out) {
    unsigned long long v = 0;
    int rc = number(opt, text, max, &v);
    if (rc == CLI_OK && v == 0)
        rc = cli_usage_error("serve", "%s takes a number from 1 to %llu, got '%s'", opt, max,
                             text);
    if (rc == CLI_OK) *out = (uint32_t)v;
    return rc;
}

static int parse_one(int opt, const char *arg, serve_args *a) {
    unsigned long long v = 0;
    int rc = CLI_OK;
    switch (opt) {
    case 'h': a->help = 1; break;
    case OPT_HOST: a->serve.host = arg; break;
    case OPT_PORT:
        if ((rc = number("--port", arg, 65535, &v)) == CLI_OK) a->serve.port = (uint16_t)v;
        break;
    case OPT_MODE: {
        tsr_error err = TSR_ERROR_INIT;
        if (tsr_options_set(a->library, "mode", arg, &err) != 0)
            rc = cli_usage_error("serve", "unknown mode '%s' (inproc, isolated or worker)", arg);
        break;
    }
    case OPT_OPTION: rc = cli_set_option("serve", a->library, arg); break;
    case OPT_CONFIG: rc = cli_set_config("serve", a->library, arg); break;
    case OPT_TOKEN_FILE: a->token_file = arg; break;
    case OPT_INPUT_PATH: a->serve.input_dir = arg; break;
    case OPT_OUTPUT_PATH: a->serve.output_dir = arg; break;
    case OPT_FORMAT: {
        int enc = tsr_encoding_from_name(arg);
        if (enc < 0)
            rc = cli_usage_error("serve", "unknown format '%s' (json, json+base64, json+binref)",
                                 arg);
        else
            a->serve.default_encoding = (tsr_encoding)enc;
        break;
    }
    case OPT_COMPRESSION:
        if (strcmp(arg, "lz4") && strcmp(arg, "none"))
            rc = cli_usage_error("serve", "unsupported compression '%s' (lz4 or none)", arg);
        a->serve.lz4 = strcmp(arg, "lz4") == 0;
        break;
    case OPT_MAX_BODY:
        if ((rc = number("--max-body-bytes", arg, UINT64_MAX >> 1, &v)) == CLI_OK)
            a->serve.max_body_bytes = v;
        break;
    case OPT_THREADS:
        if ((rc = number("--threads", arg, 1024, &v)) == CLI_OK) a->serve.threads = (uint32_t)v;
        break;
    case OPT_LINGER:
        if ((rc = number("--linger-us", arg, 100000, &v)) == CLI_OK)
            a->serve.linger_us = v ? (uint32_t)v : HTTP_SERVE_NO_LINGER;
        break;
    case OPT_MAX_CONNECTIONS:
        if ((rc = number("--max-connections", arg, 65536, &v)) == CLI_OK)
            a->serve.max_connections = (uint32_t)v;
        break;
    case OPT_IDLE_TIMEOUT:
        if ((rc = number("--idle-timeout", arg, 86400, &v)) == CLI_OK)
            a->serve.idle_timeout_s = (uint32_t)v;
        break;
    case OPT_HEADER_TIMEOUT:
        rc = positive("--header-timeout", arg, 86400, &a->serve.header_timeout_s);
        break;
    case OPT_BODY_TIMEOUT:
        rc = positive("--body-timeout", arg, 86400, &a->serve.body_timeout_s);
        break;
    case OPT_PER_ADDRESS:
        rc = positive("--max-connections-per-address", arg, 65536,
                      &a->serve.max_connections_per_address);
        break;
    case OPT_UMBRIDGE_SIZE: {
        /* SYM=N, checked whole when the server starts (umbridge_map.c). */
        size_t used = strlen(a->umbridge_sizes);
        if (!strchr(arg, '=') || strchr(arg, ',') ||
            used + strlen(arg) + 2 > sizeof a->umbridge_sizes)
            rc = cli_usage_error("serve", "--umbridge-size takes SYMBOL=N, got '%s'", arg);
        else
            snprintf(a->umbridge_sizes + used, sizeof a->umbridge_sizes - used, "%s%s",
                     used ? "," : "", arg);
        a->serve.umbridge_sizes = a->umbridge_sizes;
        break;
    }
    case OPT_QUIET: a->quiet = 1; break;
    case ':': rc = cli_usage_error("serve", "an option needs a value"); break;
    default: rc = cli_usage_error("serve", "unknown option"); break;
    }
    return rc;
}

static int parse(int argc, char **argv, serve_args *a) {
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"host", required_argument, NULL, OPT_HOST},
        {"port", required_argument, NULL, OPT_PORT},
        {"mode", required_argument, NULL, OPT_MODE},
        {"option", required_argument, NULL, OPT_OPTION},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
        {"input-path", required_argument, NULL, OPT_INPUT_PATH},
        {"output-path", required_argument, NULL, OPT_OUTPUT_PATH},
        {"output-format", required_argument, NULL, OPT_FORMAT},
        {"compression", required_argument, NULL, OPT_COMPRESSION},
        {"max-body-bytes", required_argument, NULL, OPT_MAX_BODY},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"linger-us", required_argument, NULL, OPT_LINGER},
        {"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
        {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
        {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
        {"body-timeout", required_argument, NULL, OPT_BODY_TIMEOUT},
        {"max-connections-per-address", required_argument, NULL, OPT_PER_ADDRESS},
        {"umbridge-size", required_argument, NULL, OPT_UMBRIDGE_SIZE},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {NULL, 0, NULL, 0},
    };
    int opt, rc = CLI_OK;
    opterr = 0;
    while (rc == CLI_OK && (opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        /* The message names the option, as every other command's does. */
        if (opt == '?') rc = cli_usage_error("serve", "unknown option '%s'", argv[optind - 1]);
        else if (opt == ':')
            rc = cli_usage_error("serve", "option '%s' needs a value", argv[optind - 1]);
        else rc = parse_one(opt, optarg, a);
    }
    if (rc != CLI_OK || a->help) return rc;
    /* The library's default when --max-connections is not given. */
    unsigned max = a->serve.max_connections ? a->serve.max_connections : 256;
    if (a->serve.max_connections_per_address > max)
        return cli_usage_error("serve",
                               "--max-connections-per-address %u is more than --max-connections "
                               "(%u)", (unsigned)a->serve.max_connections_per_address, max);
    if (optind != argc - 1)
        return cli_usage_error("serve", optind >= argc ? "missing PLUGIN" : "too many arguments");
    a->plugin = argv[optind];
    return CLI_OK;
}

/* The token: the file's first line, which must not be empty. */
static int read_token(const char *path, char *token, size_t n) {
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("serve", "cannot read the token file '%s': %s", path, strerror(errno));
        return CLI_USAGE;
    }
    int ok = fgets(token, (int)n, f) != NULL;
    fclose(f);
    token[strcspn(token, "\r\n")] = '\0';
    if (!ok || !token[0]) {
        cli_error("serve", "the token file '%s' is empty", path);
        return CLI_USAGE;
    }
    return CLI_OK;
}

static void log_line(void *user, const char *line) {
    (void)user;
    fprintf(stderr, "tessera serve: %s\n", line);
}

/* Serve until SIGINT or SIGTERM (blocked in every thread, taken here). */
static int serve_until_signal(tsr_component *c, const serve_args *a) {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    http_server *s = NULL;
    tsr_error err = TSR_ERROR_INIT;
    if (http_serve_start(c, &a->serve, &s, &err) != 0) {
        cli_error("serve", "%s", err.message);
        return CLI_LOAD_FAILED;
    }
    fprintf(stderr, "tessera serve: %s on http://%s:%u (stop with Ctrl-C or SIGTERM)\n",
            tsr_component_name(c) ? tsr_component_name(c) : a->plugin,
            a->serve.host ? a->serve.host : "127.0.0.1", (unsigned)http_serve_port(s));
    int sig = 0;
    while (sigwait(&stop, &sig) != 0) {
    }
    fprintf(stderr, "tessera serve: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    http_serve_stop(s);
    return CLI_OK;
}

int cli_cmd_serve(int argc, char **argv) {
    serve_args a = {.library = tsr_options_new(), .serve = {.struct_size = sizeof a.serve}};
    if (!a.library) {
        cli_error("serve", "out of memory");
        return CLI_USAGE;
    }
    char token[1024];
    int rc = parse(argc, argv, &a);
    if (rc == CLI_OK && a.help) cli_print_serve_help();
    if (rc == CLI_OK && !a.help && a.token_file &&
        (rc = read_token(a.token_file, token, sizeof token)) == CLI_OK)
        a.serve.token = token;
    if (!a.quiet) a.serve.log = log_line;
    if (rc == CLI_OK && !a.help) {
        char path_buf[PATH_MAX];
        tsr_component *c = NULL;
        tsr_error err = TSR_ERROR_INIT;
        if (tsr_open(cli_plugin_path(a.plugin, path_buf, sizeof path_buf), a.library, &c,
                     &err) != 0) {
            cli_error(NULL, "%s", err.message);
            rc = CLI_LOAD_FAILED;
        } else {
            rc = serve_until_signal(c, &a);
            tsr_close(c);
        }
    }
    tsr_options_free(a.library);
    return rc;
}
