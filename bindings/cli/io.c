/* SPDX-License-Identifier: MIT */
/* Reading payloads and writing results, and the messages on stderr. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

__attribute__((format(printf, 2, 0)))
static void vreport(const char *command, const char *fmt, va_list ap) {
    /* what a component printed on stdout (now stderr) comes first */
    fflush(stdout);
    if (command != NULL) fprintf(stderr, "tessera %s: error: ", command);
    else fprintf(stderr, "tessera: error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *command, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(command, fmt, ap);
    va_end(ap);
}

void cli_report_failure(const cli_options *o, int code, const char *loc, const char *message,
                        const char *request, size_t request_len) {
    cli_report_typed_failure(o, NULL, code, loc, message, request, request_len);
}

void cli_report_run_failure(const cli_options *o, const tsr_call *call, const char *request,
                            size_t request_len) {
    cli_report_typed_failure(o, tsr_call_errtype(call), tsr_call_errcode(call),
                             tsr_call_errloc(call), tsr_call_errmsg(call), request, request_len);
}

void cli_report_typed_failure(const cli_options *o, const char *type, int code, const char *loc,
                              const char *message, const char *request, size_t request_len) {
    char *body = NULL;
    if (o->error_json &&
        tsr_error_detail_json_typed(type, code, loc, message, request, request_len, &body) == 0) {
        fflush(stdout);
        fprintf(stderr, "%s\n", body);
        tsr_json_free(body);
        return;
    }
    cli_error(NULL, "%s", message);
}

int cli_usage_error(const char *command, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(command, fmt, ap);
    va_end(ap);
    if (command != NULL) fprintf(stderr, "Try 'tessera %s --help'.\n", command);
    else fprintf(stderr, "Try 'tessera --help'.\n");
    return CLI_USAGE;
}

/* Whole stream into a NUL-terminated buffer. */
static int slurp(FILE *f, char **text, size_t *len) {
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    if (buf == NULL) return ENOMEM;
    for (;;) {
        if (cap - used < 2) {
            if (cap > SIZE_MAX / 2) {
                free(buf);
                return ENOMEM;
            }
            char *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                return ENOMEM;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t n = fread(buf + used, 1, cap - used - 1, f);
        used += n;
        if (n == 0) break;
    }
    if (ferror(f)) {
        int e = errno ? errno : EIO;
        free(buf);
        return e;
    }
    buf[used] = '\0';
    *text = buf;
    *len = used;
    return 0;
}

int cli_read_payload_why(const char *arg, char **text, size_t *len, char *why, size_t n) {
    const char *path = arg[0] == '@' ? arg + 1 : NULL;
    if (strcmp(arg, "-") == 0 || (path != NULL && strcmp(path, "-") == 0)) {
        int e = slurp(stdin, text, len);
        if (e != 0) snprintf(why, n, "cannot read the payload from stdin: %s", strerror(e));
        return e ? CLI_PAYLOAD : CLI_OK;
    }
    if (path != NULL) {
        FILE *f = fopen(path, "rb");
        if (f == NULL) {
            snprintf(why, n, "cannot open payload file '%s': %s", path, strerror(errno));
            return CLI_PAYLOAD;
        }
        int e = slurp(f, text, len);
        fclose(f);
        if (e != 0) snprintf(why, n, "cannot read payload file '%s': %s", path, strerror(e));
        return e ? CLI_PAYLOAD : CLI_OK;
    }
    *len = strlen(arg);
    *text = strdup(arg);
    if (*text == NULL) {
        snprintf(why, n, "out of memory");
        return CLI_PAYLOAD;
    }
    return CLI_OK;
}

int cli_read_payload(const char *arg, char **text, size_t *len) {
    char why[PATH_MAX + 128];
    int rc = cli_read_payload_why(arg, text, len, why, sizeof why);
    if (rc != CLI_OK) cli_error(NULL, "%s", why);
    return rc;
}

int cli_write_output(const cli_options *o, const char *text) {
    FILE *f = cli_out;
    const char *where = "stdout";
    char why[PATH_MAX + 128];
    if (!cli_is_stdout(o->output_path)) {
        where = o->output_path;
        f = fopen(o->output_path, "w");
        if (f == NULL) {
            snprintf(why, sizeof why, "cannot open output file '%s': %s", where, strerror(errno));
            cli_report_failure(o, TSR_E_IO, "", why, NULL, 0);
            return CLI_OUTPUT;
        }
    }
    int failed = fputs(text, f) == EOF || fputc('\n', f) == EOF || fflush(f) != 0;
    int e = errno;
    if (f != cli_out && fclose(f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    if (failed) {
        snprintf(why, sizeof why, "cannot write the results to %s: %s", where, strerror(e));
        cli_report_failure(o, TSR_E_IO, "", why, NULL, 0);
        return CLI_OUTPUT;
    }
    return CLI_OK;
}

const char *cli_plugin_path(const char *arg, char *buf, size_t size) {
    if (strchr(arg, '/') != NULL || access(arg, F_OK) != 0) return arg;
    int n = snprintf(buf, size, "./%s", arg);
    return n > 0 && (size_t)n < size ? buf : arg;
}

int cli_make_dirs(const char *dir) {
    char *path = strdup(dir);
    if (path == NULL) {
        cli_error(NULL, "out of memory");
        return CLI_OUTPUT;
    }
    int rc = CLI_OK;
    /* Each prefix ending before a '/', then the whole path. */
    for (char *p = path + 1;; p++) {
        bool end = *p == '\0';
        if (*p != '/' && !end) continue;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            cli_error(NULL, "cannot create output path '%s': %s", path, strerror(errno));
            rc = CLI_OUTPUT;
            break;
        }
        if (end) break;
        *p = '/';
    }
    free(path);
    return rc;
}
