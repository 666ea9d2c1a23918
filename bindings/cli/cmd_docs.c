/* SPDX-License-Identifier: MIT */
/* `tessera docs PLUGIN [-o FILE]`: the component's API as one
 * self-contained HTML page (bindings/http/docs_html.h, shared with
 * `tessera serve`'s GET /docs). A file is written beside its
 * target and renamed over it, so a failed run leaves no half page. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tessera_serve.h"

/* All of text to fd; 0 or an errno. */
static int write_all(int fd, const char *text, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A temporary file beside path, filled, flushed to disk and renamed over
 * path; on any failure it is removed and path left as it was. */
static int write_file_atomically(const char *path, const char *text) {
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
        cli_error("docs", "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
        return CLI_OUTPUT;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cli_error("docs", "cannot write '%s': %s", path, strerror(errno));
        return CLI_OUTPUT;
    }
    /* mkstemp makes 0600; a page is as readable as any file the user makes */
    mode_t mask = umask(0);
    umask(mask);
    int e = fchmod(fd, 0666 & ~mask) != 0 ? errno : 0;
    if (e == 0) e = write_all(fd, text, strlen(text));
    if (e == 0 && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && e == 0) e = errno;
    if (e == 0 && rename(tmp, path) != 0) e = errno;
    if (e != 0) {
        unlink(tmp);
        cli_error("docs", "cannot write '%s': %s", path, strerror(e));
        return CLI_OUTPUT;
    }
    return CLI_OK;
}

static int write_page(const cli_options *o, const char *page) {
    const char *path = o->output_path;
    struct stat st;
    /* stdout, and targets that are not plain files (a pipe, a device):
     * written in place, never replaced */
    if (cli_is_stdout(path) || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
        FILE *f = cli_is_stdout(path) ? cli_out : fopen(path, "w");
        const char *where = f == cli_out ? "stdout" : path;
        int e = f == NULL ? errno : 0;
        if (f != NULL && (fputs(page, f) == EOF || fflush(f) != 0)) e = errno;
        if (f != NULL && f != cli_out && fclose(f) != 0 && e == 0) e = errno;
        if (e == 0) return CLI_OK;
        cli_error("docs", "cannot write '%s': %s", where, strerror(e));
        return CLI_OUTPUT;
    }
    /* a symlink stays one: the file it names is replaced */
    char target[PATH_MAX];
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, target) != NULL)
        path = target;
    return write_file_atomically(path, page);
}

/* The page of the component named by arg; CLI_OK with *page, or the
 * status with the message printed. */
static int make_page(const cli_options *o, const char *arg, char **page) {
    char path_buf[PATH_MAX];
    const char *path = cli_plugin_path(arg, path_buf, sizeof path_buf);
    tsr_component *c = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = CLI_OK;
    cli_exit_guard_arm(path, "its load");
    if (tsr_open(path, o->library, &c, &err) != 0) {
        cli_error(NULL, "%s", err.message);
        rc = CLI_LOAD_FAILED;
    } else if (http_serve_docs(c, arg, page, &err) != 0) {
        cli_error("docs", "%s", err.message);
        rc = CLI_OUTPUT;
    }
    tsr_close(c); /* still guarded: a component's fini may end the process too */
    cli_exit_guard_disarm();
    return rc;
}

int cli_cmd_docs(int argc, char **argv) {
    cli_options o;
    int rc = cli_parse_options(argc, argv, false, &o);
    if (rc == CLI_OK && o.help) {
        cli_print_docs_help();
    } else if (rc == CLI_OK && o.openapi) {
        rc = cli_usage_error("docs", "unknown option '--openapi' (it belongs to 'tessera schema')");
    } else if (rc == CLI_OK && o.n_positional != 1) {
        rc = cli_usage_error("docs", o.n_positional == 0 ? "missing PLUGIN" : "too many arguments");
    } else if (rc == CLI_OK) {
        char *page = NULL;
        rc = make_page(&o, o.positional[0], &page);
        if (rc == CLI_OK) rc = write_page(&o, page);
        free(page);
    }
    cli_options_free(&o);
    return rc;
}
