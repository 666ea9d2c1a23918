/* SPDX-License-Identifier: MIT */
/*
 * `tessera config`: where the headers, the library, the CMake package and
 * the pkg-config files are that go with this `tessera`, for a build against
 * them (as pybind11-config does for pybind11).
 *
 * Everything is derived from where this executable is (/proc/self/exe,
 * links resolved), never from the prefix it was configured with, so that
 * `cmake --install --prefix P`, a moved install and the Python wheel all
 * answer for themselves. Two layouts:
 *   - installed (a prefix, or the wheel's tessera/_native): the executable
 *     is in PREFIX/bin, and libdir, includedir and the CMake and pkg-config
 *     dirs are the install's, relative to PREFIX (TSR_CONFIG_* below, from
 *     GNUInstallDirs at configure time);
 *   - the build tree: the executable is the build's own bin/tessera (its
 *     directory is the one the build put it in); the headers are the
 *     sources' include/ and the build's generated include/, the library
 *     and the CMake and pkg-config files are the build's (build/lib).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

enum config_value { V_PREFIX, V_CFLAGS, V_LIBS, V_CMAKE_DIR, V_CMAKE_ARGS, V_PKGCONFIG_DIR };

/* The places found for this executable. */
typedef struct layout {
    char prefix[PATH_MAX];
    char libdir[PATH_MAX];
    char includedir[PATH_MAX];
    char generated_includedir[PATH_MAX]; /* the build tree's version.h; "" installed */
    char cmakedir[PATH_MAX];
    char pkgconfigdir[PATH_MAX];
} layout;

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file_in(const char *dir, const char *name) {
    char path[PATH_MAX + 64];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir/rel into out; a rel that does not fit is an error (never a cut path). */
static int join(char *out, const char *dir, const char *rel) {
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, rel);
    return n > 0 && n < PATH_MAX ? 0 : -1;
}

/* The layout of this executable. CLI_OK, or CLI_CALL_FAILED with the
 * reason printed. */
static int find_layout(layout *l) {
    char exe[PATH_MAX];
    if (realpath("/proc/self/exe", exe) == NULL) {
        cli_error("config", "cannot find this executable (/proc/self/exe): %s", strerror(errno));
        return CLI_CALL_FAILED;
    }
    char bindir[PATH_MAX];
    snprintf(bindir, sizeof bindir, "%s", dirname(exe));
    memset(l, 0, sizeof *l);
    char built[PATH_MAX];
    if (realpath(TSR_CONFIG_BUILD_BINDIR, built) != NULL && strcmp(built, bindir) == 0) {
        if (realpath(TSR_CONFIG_BUILD_DIR, l->prefix) == NULL ||
            join(l->libdir, l->prefix, "lib") || join(l->cmakedir, l->prefix, "lib/cmake/tessera") ||
            join(l->pkgconfigdir, l->prefix, "lib/pkgconfig") ||
            realpath(TSR_CONFIG_SOURCE_INCLUDEDIR, l->includedir) == NULL ||
            realpath(TSR_CONFIG_GENERATED_INCLUDEDIR, l->generated_includedir) == NULL) {
            cli_error("config", "the build tree %s is incomplete (its sources' include/ or its "
                      "include/ is missing): reconfigure it", TSR_CONFIG_BUILD_DIR);
            return CLI_CALL_FAILED;
        }
        return CLI_OK;
    }
    char up[PATH_MAX];
    if (join(up, bindir, "..") || realpath(up, l->prefix) == NULL ||
        join(l->libdir, l->prefix, TSR_CONFIG_LIBDIR) ||
        join(l->includedir, l->prefix, TSR_CONFIG_INCLUDEDIR) ||
        join(l->cmakedir, l->prefix, TSR_CONFIG_CMAKEDIR) ||
        join(l->pkgconfigdir, l->prefix, TSR_CONFIG_PKGCONFIGDIR)) {
        cli_error("config", "cannot make the paths of the install above %s", bindir);
        return CLI_CALL_FAILED;
    }
    return CLI_OK;
}

/* Whether what `value` names is there; prints why not. */
static int check(const layout *l, enum config_value v) {
    const char *missing = NULL;
    char what[PATH_MAX + 64] = "";
    switch (v) {
    case V_PREFIX: missing = is_dir(l->prefix) ? NULL : l->prefix; break;
    case V_CFLAGS:
        if (!is_file_in(l->includedir, "tessera/tessera.h")) missing = "tessera/tessera.h";
        else if (l->generated_includedir[0] && !is_file_in(l->generated_includedir, "tessera/version.h"))
            missing = "tessera/version.h";
        snprintf(what, sizeof what, "%s", l->includedir);
        break;
    case V_LIBS:
        missing = is_file_in(l->libdir, "libtessera.so") ? NULL : "libtessera.so";
        snprintf(what, sizeof what, "%s", l->libdir);
        break;
    case V_CMAKE_DIR:
    case V_CMAKE_ARGS:
        missing = is_file_in(l->cmakedir, "tesseraConfig.cmake") ? NULL : "tesseraConfig.cmake";
        snprintf(what, sizeof what, "%s", l->cmakedir);
        break;
    case V_PKGCONFIG_DIR:
        missing = is_file_in(l->pkgconfigdir, "tessera.pc") ? NULL : "tessera.pc";
        snprintf(what, sizeof what, "%s", l->pkgconfigdir);
        break;
    }
    if (missing == NULL) return CLI_OK;
    if (v == V_PREFIX) cli_error("config", "the prefix %s is not a directory", l->prefix);
    else
        cli_error("config", "no %s in %s: this tessera is not beside a complete Tessera "
                  "(install it with 'cmake --install BUILD --prefix P' or 'pip install')",
                  missing, what);
    return CLI_CALL_FAILED;
}

static void print_value(FILE *f, const layout *l, enum config_value v) {
    switch (v) {
    case V_PREFIX: fputs(l->prefix, f); break;
    case V_CFLAGS:
        fprintf(f, "-I%s", l->includedir);
        if (l->generated_includedir[0]) fprintf(f, " -I%s", l->generated_includedir);
        break;
    case V_LIBS: fprintf(f, "-L%s -Wl,-rpath,%s -ltessera", l->libdir, l->libdir); break;
    case V_CMAKE_DIR: fputs(l->cmakedir, f); break;
    case V_CMAKE_ARGS: fprintf(f, "-Dtessera_DIR=%s", l->cmakedir); break;
    case V_PKGCONFIG_DIR: fputs(l->pkgconfigdir, f); break;
    }
}

int cli_cmd_config(int argc, char **argv) {
    static const struct option longopts[] = {
        {"prefix", no_argument, NULL, 'p' + 256},
        {"cflags", no_argument, NULL, 'c' + 256},
        {"libs", no_argument, NULL, 'l' + 256},
        {"cmake-dir", no_argument, NULL, 'd' + 256},
        {"cmake-args", no_argument, NULL, 'a' + 256},
        {"pkgconfig-dir", no_argument, NULL, 'k' + 256},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    enum config_value asked[64];
    int n = 0, opt;
    while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        enum config_value v;
        switch (opt) {
        case 'h': cli_print_config_help(); return CLI_OK;
        case 'p' + 256: v = V_PREFIX; break;
        case 'c' + 256: v = V_CFLAGS; break;
        case 'l' + 256: v = V_LIBS; break;
        case 'd' + 256: v = V_CMAKE_DIR; break;
        case 'a' + 256: v = V_CMAKE_ARGS; break;
        case 'k' + 256: v = V_PKGCONFIG_DIR; break;
        default: return cli_usage_error("config", "unknown option '%s'", argv[optind - 1]);
        }
        if (n == (int)(sizeof asked / sizeof asked[0]))
            return cli_usage_error("config", "more than %d options", n);
        asked[n++] = v;
    }
    if (optind < argc) return cli_usage_error("config", "unexpected argument '%s'", argv[optind]);
    if (n == 0)
        return cli_usage_error("config", "nothing asked: give one or more of --prefix, --cflags, "
                               "--libs, --cmake-dir, --cmake-args, --pkgconfig-dir");
    layout l;
    int rc = find_layout(&l);
    for (int i = 0; rc == CLI_OK && i < n; i++) rc = check(&l, asked[i]);
    if (rc != CLI_OK) return rc;
    for (int i = 0; i < n; i++) {
        if (i) fputc(' ', cli_out);
        print_value(cli_out, &l, asked[i]);
    }
    fputc('\n', cli_out);
    if (fflush(cli_out) != 0 || ferror(cli_out)) {
        cli_error("config", "cannot write the output: %s", strerror(errno));
        return CLI_OUTPUT;
    }
    return CLI_OK;
}

void cli_print_config_help(void) {
    fputs("Usage: tessera config OPTION...\n"
          "\n"
          "Print where the Tessera that goes with this command is, for building a\n"
          "plugin or a host against it. The values asked for are printed on one line,\n"
          "in the order asked, separated by a space.\n"
          "\n"
          "Options:\n"
          "  --prefix         the top of the installation (the build tree, in one)\n"
          "  --cflags         -I flags for the headers (<tessera/plugin.h>, ...)\n"
          "  --libs           -L, -Wl,-rpath and -ltessera, to link libtessera.so\n"
          "  --cmake-dir      the directory holding tesseraConfig.cmake\n"
          "  --cmake-args     -Dtessera_DIR=<cmake-dir>, for cmake's command line\n"
          "  --pkgconfig-dir  the directory holding tessera.pc and tessera-plugin.pc\n"
          "  -h, --help       show this help\n"
          "\n"
          "The places are found from where this executable is, so they hold for an\n"
          "install prefix (PREFIX/bin/tessera), an installation moved as a whole, the\n"
          "Python package (pip install; the tessera command runs the one bundled in\n"
          "it) and a build tree (BUILD/bin/tessera). For example:\n"
          "  cc -shared -fPIC -o my.so my.c $(tessera config --cflags) -lm\n"
          "  cmake -S . -B build $(tessera config --cmake-args)\n"
          "  PKG_CONFIG_PATH=$(tessera config --pkgconfig-dir) pkg-config --libs tessera\n"
          "Exit status 1 when a place is missing (a partial installation).\n"
          "\n",
          cli_out);
    cli_print_exit_statuses();
}
