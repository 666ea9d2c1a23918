/* SPDX-License-Identifier: MIT */
/* `tessera test COMPONENT [CASE.json ...]`: run Tesseract regression cases
 * against a component, by default every *.json of the test_cases/ folder
 * of the component (a folder) or beside it (a file), in name order; a line
 * per case and a summary. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "test_case.h"

void cli_print_test_help(void) {
    fputs("Usage: tessera test [OPTIONS] COMPONENT [CASE.json ...]\n"
          "\n"
          "Run Tesseract regression cases against the component, as\n"
          "`tesseract-runtime test` does: each case names an endpoint, its payload and\n"
          "either expected_outputs (compared within atol and rtol, default 1e-8 and\n"
          "1e-5; structure, shapes and dtypes exactly) or expected_exception (a Python\n"
          "class such as ValueError or pydantic.ValidationError; a request Tessera\n"
          "refuses is a ValidationError) with an optional expected_exception_regex.\n"
          "Without CASE arguments, every *.json in the test_cases/ folder of COMPONENT\n"
          "(a folder) or beside it (a file) is run. One line per case,\n"
          "PASS NAME or FAIL NAME: REASON, then a summary.\n"
          "\n"
          "Options:\n"
          "  --mode MODE          inproc, isolated or worker\n"
          "  --option KEY=VALUE   a library option (tessera help options); repeatable\n"
          "  --config KEY=VALUE   configuration for the component's init; repeatable\n"
          "  --input-path DIR     base of relative binref paths in payloads\n"
          "  -h, --help           show this help\n"
          "\n"
          "Exit status: 0 every case passed, 1 a case failed, 2 usage error (no\n"
          "cases found), 3 the component could not be loaded.\n\n",
          cli_out);
    cli_print_exit_statuses();
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The test_cases/ folder of a component path. */
static void cases_dir(const char *component, char *out, size_t n) {
    struct stat st;
    if (stat(component, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(out, n, "%s/test_cases", component);
        return;
    }
    const char *slash = strrchr(component, '/');
    if (slash == NULL)
        snprintf(out, n, "test_cases");
    else
        snprintf(out, n, "%.*s/test_cases", (int)(slash - component), component);
}

/* Every *.json in dir, sorted; NULL with *n 0 when there is none. */
static char **list_cases(const char *dir, int *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) return NULL;
    char **names = NULL;
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(names, (size_t)cap * sizeof *grown);
            if (grown == NULL) break;
            names = grown;
        }
        size_t size = strlen(dir) + len + 2;
        names[*n] = malloc(size);
        if (names[*n] == NULL) break;
        snprintf(names[*n], size, "%s/%s", dir, e->d_name);
        (*n)++;
    }
    closedir(d);
    if (names != NULL) qsort(names, (size_t)*n, sizeof *names, by_name);
    return names;
}

static void free_cases(char **names, int n) {
    for (int k = 0; k < n; k++) free(names[k]);
    free(names);
}

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static int run_cases(const cli_options *o, char **cases, int n_cases) {
    char path_buf[PATH_MAX];
    const char *path = cli_plugin_path(o->positional[0], path_buf, sizeof path_buf);
    tsr_component *c = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cli_exit_guard_arm(path, "its load");
    if (tsr_open(path, o->library, &c, &err) != 0) {
        cli_exit_guard_disarm();
        cli_error("test", "%s", err.message);
        return CLI_LOAD_FAILED;
    }
    cli_exit_guard_arm(tsr_component_name(c), "a test case");
    test_settings set = {.input_path = o->binref_in};
    int passed = 0;
    for (int k = 0; k < n_cases; k++) {
        char *text = NULL;
        size_t len = 0;
        char arg[PATH_MAX + 2];
        snprintf(arg, sizeof arg, "@%s", cases[k]);
        test_verdict v = {.passed = false};
        char why[PATH_MAX + 128];
        if (cli_read_payload_why(arg, &text, &len, why, sizeof why) != CLI_OK)
            snprintf(v.why, sizeof v.why, "%.900s", why);
        else
            test_run_case(c, text, len, &set, &v);
        free(text);
        /* One line per case: a reason's own newlines would break it. */
        for (char *p = v.why; *p != '\0'; p++)
            if (*p == '\n') *p = ' ';
        if (v.passed)
            fprintf(cli_out, "PASS %s\n", base_name(cases[k]));
        else
            fprintf(cli_out, "FAIL %s: %s\n", base_name(cases[k]), v.why);
        fflush(cli_out);
        passed += v.passed;
    }
    fprintf(cli_out, "%d passed, %d failed, %d cases\n", passed, n_cases - passed, n_cases);
    tsr_close(c);
    cli_exit_guard_disarm();
    return passed == n_cases ? CLI_OK : CLI_CALL_FAILED;
}

int cli_cmd_test(int argc, char **argv) {
    cli_options o;
    int rc = cli_parse_options(argc, argv, true, &o);
    if (rc == CLI_OK && o.help) {
        cli_print_test_help();
    } else if (rc == CLI_OK && o.n_positional < 1) {
        rc = cli_usage_error("test", "missing COMPONENT");
    } else if (rc == CLI_OK && o.n_positional > 1) {
        rc = run_cases(&o, o.positional + 1, o.n_positional - 1);
    } else if (rc == CLI_OK) {
        char dir[PATH_MAX];
        cases_dir(o.positional[0], dir, sizeof dir);
        int n = 0;
        char **cases = list_cases(dir, &n);
        rc = n == 0 ? cli_usage_error("test", "no cases: no *.json in %s", dir)
                    : run_cases(&o, cases, n);
        free_cases(cases, n);
    }
    cli_options_free(&o);
    return rc;
}
