/* SPDX-License-Identifier: MIT */
/* `tessera init DIR --kind plugin|python|manifest [--name NAME]`: a small
 * complete component to start from (its source, build, example inputs,
 * regression cases and README) written into a new folder. Every argument
 * is checked before anything is written. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "init_write.h"

#define NAME_MAX_LEN 64

static const char *const kinds[] = {"plugin", "python", "manifest"};

void cli_print_init_help(void) {
    fputs("Usage: tessera init [OPTIONS] DIR --kind plugin|python|manifest\n"
          "\n"
          "Write a small complete component into DIR (made with its parents; an\n"
          "existing DIR must be empty, and no file is ever overwritten): the\n"
          "function y = alpha * sin(x) with its derivatives, example_inputs.json,\n"
          "regression cases in test_cases/ and a README.md saying how to build, run\n"
          "and test it. Kinds:\n"
          "  plugin     a C plugin NAME.c with apply, jvp, vjp, jacobian and\n"
          "             abstract_eval, and a CMakeLists.txt (find_package(tessera))\n"
          "             building build/libNAME.so, its ctest tests running\n"
          "             check-gradients and test\n"
          "  python     a Tesseract tesseract_api.py (pydantic schemas, NumPy only)\n"
          "             with jacobian, jvp, vjp and abstract_eval, its\n"
          "             tesseract_config.yaml, and a pytest file\n"
          "  manifest   a legacy-style C library NAME.c (every argument by\n"
          "             reference, a status last) with its adjoint, the manifest\n"
          "             NAME.json describing it, and a CMakeLists.txt building\n"
          "             build/libNAME.so, its ctest tests running check-manifest,\n"
          "             check-gradients and test\n"
          "Then, in DIR (plugin, manifest):\n"
          "  cmake -S . -B build -DCMAKE_PREFIX_PATH=\"$(tessera config --cmake-dir)\"\n"
          "  cmake --build build\n"
          "  tessera check-gradients build/libNAME.so @example_inputs.json   (plugin)\n"
          "  tessera check-gradients NAME.json @example_inputs.json          (manifest)\n"
          "or (python): tessera check-gradients . @example_inputs.json\n"
          "\n"
          "Options:\n"
          "  --kind plugin|python|manifest   the component's kind (required)\n"
          "  --name NAME          the component's name (default: DIR's last part,\n"
          "                       '-' read as '_'): a letter or '_', then letters,\n"
          "                       digits or '_', at most 64, as C and Python\n"
          "                       identifiers are\n"
          "  -h, --help           show this help\n"
          "\n"
          "Exit status: 0 written (each file listed on stdout), 2 usage error (a bad\n"
          "kind or name, no DIR), 5 DIR exists and is not an empty folder, or could\n"
          "not be written (then nothing of it is left).\n\n",
          cli_out);
    cli_print_exit_statuses();
}

static bool valid_name(const char *name) {
    size_t len = strlen(name);
    if (len == 0 || len > NAME_MAX_LEN) return false;
    for (size_t k = 0; k < len; k++) {
        char c = name[k];
        bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!letter && !(k > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

/* The default name: DIR's last part, '-' as '_' (my-model: my_model). */
static void name_from_dir(const char *dir, char *out, size_t n) {
    size_t end = strlen(dir);
    while (end > 1 && dir[end - 1] == '/') end--;
    size_t start = end;
    while (start > 0 && dir[start - 1] != '/') start--;
    snprintf(out, n, "%.*s", (int)(end - start), dir + start);
    for (char *p = out; *p != '\0'; p++)
        if (*p == '-') *p = '_';
}

/* DIR may be new or an empty folder. CLI_OK, else CLI_OUTPUT (printed). */
static int check_dir(const char *dir) {
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT) return CLI_OK;
        cli_error("init", "cannot use '%s': %s", dir, strerror(errno));
        return CLI_OUTPUT;
    }
    if (!S_ISDIR(st.st_mode)) {
        cli_error("init", "'%s' exists and is not a folder: give a new or empty folder", dir);
        return CLI_OUTPUT;
    }
    DIR *d = opendir(dir);
    if (d == NULL) {
        cli_error("init", "cannot read the folder '%s': %s", dir, strerror(errno));
        return CLI_OUTPUT;
    }
    const char *first = NULL;
    struct dirent *e;
    while (first == NULL && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) first = e->d_name;
    int rc = CLI_OK;
    if (first != NULL) {
        cli_error("init",
                  "the folder '%s' is not empty (it holds '%s'): tessera init writes only into "
                  "a new or empty folder, and nothing was written",
                  dir, first);
        rc = CLI_OUTPUT;
    }
    closedir(d);
    return rc;
}

/* What to run next, for the kind just written. */
static void print_next(const char *dir, const char *kind, const char *name) {
    fprintf(cli_out, "\nA %s component '%s' in %s; next (README.md says more):\n  cd %s\n", kind,
            name, dir, dir);
    if (strcmp(kind, "python") == 0) {
        fputs("  tessera check-gradients . @example_inputs.json\n  tessera test .\n", cli_out);
        return;
    }
    fputs("  cmake -S . -B build -DCMAKE_PREFIX_PATH=\"$(tessera config --cmake-dir)\"\n"
          "  cmake --build build\n",
          cli_out);
    if (strcmp(kind, "plugin") == 0)
        fprintf(cli_out, "  tessera check-gradients build/lib%s.so @example_inputs.json\n", name);
    else
        fprintf(cli_out, "  tessera check-gradients %s.json @example_inputs.json\n", name);
    fputs("  ctest --test-dir build --output-on-failure\n", cli_out);
}

int cli_cmd_init(int argc, char **argv) {
    static const struct option longopts[] = {
        {"kind", required_argument, NULL, 'k'},
        {"name", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *kind = NULL, *name = NULL;
    opterr = 0; /* our own messages */
    int opt;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k': kind = optarg; break;
        case 'n': name = optarg; break;
        case 'h': cli_print_init_help(); return CLI_OK;
        case ':': return cli_usage_error("init", "'%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("init", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage_error("init", "missing DIR, the folder to create");
    if (optind + 1 < argc)
        return cli_usage_error("init", "one DIR only; unexpected '%s'", argv[optind + 1]);
    const char *dir = argv[optind];
    if (dir[0] == '\0') return cli_usage_error("init", "DIR is empty");
    if (kind == NULL) return cli_usage_error("init", "missing --kind (plugin, python or manifest)");
    bool known = false;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        known |= strcmp(kind, kinds[k]) == 0;
    if (!known)
        return cli_usage_error("init", "unknown --kind '%s' (plugin, python or manifest)", kind);
    char derived[NAME_MAX_LEN * 4];
    if (name == NULL) {
        name_from_dir(dir, derived, sizeof derived);
        if (!valid_name(derived))
            return cli_usage_error("init",
                                   "cannot name the component after '%s': give --name NAME (a "
                                   "letter or '_', then letters, digits or '_', at most %d)",
                                   derived, NAME_MAX_LEN);
        name = derived;
    } else if (!valid_name(name)) {
        return cli_usage_error("init",
                               "invalid --name '%s': a name is a letter or '_', then letters, "
                               "digits or '_', at most %d (a C and Python identifier)",
                               name, NAME_MAX_LEN);
    }
    int rc = check_dir(dir);
    if (rc == CLI_OK) rc = init_write(dir, kind, name);
    if (rc == CLI_OK) print_next(dir, kind, name);
    return rc;
}
