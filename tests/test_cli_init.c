/* SPDX-License-Identifier: MIT */
/*
 * `tessera init DIR --kind KIND [--name NAME]`: each kind writes its files,
 * the name in every path and text, and lists them; every bad argument (name,
 * kind, DIR missing, DIR a file or not empty, DIR unwritable) is refused
 * with its exit status and writes nothing; a disk that fills part way
 * leaves nothing behind. That what is written builds and passes its checks
 * is tests/init/test_init.sh (ctest init_components).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "child_verdict.h"
#include "cli_run.h"
#include "dir_entries.h"
#include "private_tmpfs.h"
#include "temp_dir.h"
#include "test_util.h"

static char root[256];

static void make_root(void) { make_temp_dir(root, sizeof root, "tessera-init"); }
static void remove_root(void) { remove_tree(root); }

TestSuite(cli_init, .init = make_root, .fini = remove_root, .timeout = 60);

static char *below(const char *rel) {
    char *p = NULL;
    cr_assert(asprintf(&p, "%s/%s", root, rel) > 0);
    return p;
}

static bool exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Every file a kind writes, "NAME" standing for the name. */
static const char *const plugin_files[] = {
    "CMakeLists.txt", "README.md", "NAME.c", "example_inputs.json", ".gitignore",
    "test_cases/apply.json", "test_cases/vjp.json", "test_cases/missing_alpha.json", NULL};
static const char *const python_files[] = {
    "tesseract_api.py", "tesseract_config.yaml", "test_NAME.py", "README.md",
    "example_inputs.json", ".gitignore", "test_cases/apply.json", "test_cases/vjp.json",
    "test_cases/missing_alpha.json", NULL};
static const char *const manifest_files[] = {
    "CMakeLists.txt", "README.md", "NAME.c", "NAME.json", "example_inputs.json", ".gitignore",
    "test_cases/apply.json", "test_cases/vjp.json", "test_cases/missing_alpha.json", NULL};

/* dir holds exactly files (with NAME as name), each listed on out, none
 * with the placeholder left, the README naming the component. */
static void check_written(const char *dir, const char *name, const char *const *files,
                          const char *out) {
    char line[1024];
    int n = 0;
    for (; files[n] != NULL; n++) {
        char rel[256];
        const char *at = strstr(files[n], "NAME");
        if (at != NULL)
            snprintf(rel, sizeof rel, "%.*s%s%s", (int)(at - files[n]), files[n], name, at + 4);
        else
            snprintf(rel, sizeof rel, "%s", files[n]);
        snprintf(line, sizeof line, "wrote %s/%s\n", dir, rel);
        assert_contains(out, line);
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        char *text = cli_slurp(path);
        cr_expect(strstr(text, "{{") == NULL, "%s keeps a placeholder", rel);
        if (strcmp(rel, "README.md") == 0) assert_contains(text, name);
        free(text);
    }
    char top[1024];
    snprintf(top, sizeof top, "%s/test_cases", dir);
    int entries = dir_entries(dir, "") - 1 + dir_entries(top, "");
    cr_expect_eq(entries, n, "%s holds %d files, %d expected", dir, entries, n);
}

Test(cli_init, plugin_writes_its_source_build_inputs_cases_and_readme) {
    char *dir = below("p/demo");
    cli_run r = run_cli(NULL, "init", dir, "--kind", "plugin", "--name", "demo");
    assert_ok(&r);
    check_written(dir, "demo", plugin_files, r.out);
    char *c = below("p/demo/demo.c");
    char *text = cli_slurp(c);
    assert_contains(text, "static int demo_vjp(");
    assert_contains(text, "TSR_PLUGIN_DEFINE(demo_plugin)");
    free(text);
    char *cmake = below("p/demo/CMakeLists.txt");
    text = cli_slurp(cmake);
    assert_contains(text, "find_package(tessera REQUIRED)");
    assert_contains(text, "pkg-config --cflags tessera-plugin");
    assert_contains(text, "check-gradients");
    free(text);
    assert_contains(r.out, "tessera check-gradients build/libdemo.so @example_inputs.json");
    run_free(&r);
    free(c);
    free(cmake);
    free(dir);
}

Test(cli_init, python_writes_a_tesseract_api_folder_with_a_pytest_file) {
    char *dir = below("py");
    cli_run r = run_cli(NULL, "init", "--kind", "python", "--name", "model", dir);
    assert_ok(&r);
    check_written(dir, "model", python_files, r.out);
    char *cfg = below("py/tesseract_config.yaml");
    char *text = cli_slurp(cfg);
    assert_contains(text, "name: model\n");
    free(text);
    assert_contains(r.out, "tessera check-gradients . @example_inputs.json");
    run_free(&r);
    free(cfg);
    free(dir);
}

Test(cli_init, manifest_writes_a_library_its_manifest_and_its_build) {
    char *dir = below("m");
    cli_run r = run_cli(NULL, "init", dir, "--kind", "manifest", "--name", "legacy");
    assert_ok(&r);
    check_written(dir, "legacy", manifest_files, r.out);
    char *json = below("m/legacy.json");
    char *text = cli_slurp(json);
    assert_contains(text, "\"symbol\": \"legacy_\"");
    assert_contains(text, "\"library\": \"build/liblegacy.so\"");
    free(text);
    run_free(&r);
    free(json);
    free(dir);
}

Test(cli_init, names_the_component_after_the_folder_by_default) {
    char *dir = below("deep/er/my-model/");
    cli_run r = run_cli(NULL, "init", dir, "--kind", "plugin");
    assert_ok(&r);
    char *c = below("deep/er/my-model/my_model.c");
    cr_expect(exists(c), "the default name of my-model is my_model");
    assert_contains(r.out, "'my_model'");
    run_free(&r);
    free(c);
    free(dir);
}

Test(cli_init, writes_into_an_existing_empty_folder) {
    char *dir = below("empty");
    cr_assert_eq(mkdir(dir, 0755), 0);
    cli_run r = run_cli(NULL, "init", dir, "--kind", "manifest");
    assert_ok(&r);
    check_written(dir, "empty", manifest_files, r.out);
    run_free(&r);
    free(dir);
}

Test(cli_init, bad_names_are_usage_errors_and_write_nothing) {
    char long_name[80];
    memset(long_name, 'a', 65);
    long_name[65] = '\0';
    const char *names[] = {"1abc", "a-b", "", "x y", "../x", "a.b", "na\xc3\xafve", long_name};
    char *dir = below("named");
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        cli_run r = run_cli(NULL, "init", dir, "--kind", "plugin", "--name", names[k]);
        assert_fails(&r, EXIT_USAGE, "invalid --name");
        assert_contains(r.err, "a letter or '_', then letters, digits or '_', at most 64");
        cr_expect(!exists(dir), "nothing is written for the name '%s'", names[k]);
        run_free(&r);
    }
    /* 64 characters is the limit, not over it */
    long_name[64] = '\0';
    cli_run r = run_cli(NULL, "init", dir, "--kind", "plugin", "--name", long_name);
    assert_ok(&r);
    run_free(&r);
    free(dir);
}

Test(cli_init, a_folder_name_that_is_no_identifier_asks_for_name) {
    char *dir = below("2nd.try");
    cli_run r = run_cli(NULL, "init", dir, "--kind", "python");
    assert_fails(&r, EXIT_USAGE, "cannot name the component after '2nd.try': give --name NAME");
    cr_expect(!exists(dir));
    run_free(&r);
    free(dir);
}

Test(cli_init, bad_kind_missing_dir_and_bad_options_are_usage_errors) {
    char *dir = below("k");
    struct {
        const char *args[6];
        const char *needle;
    } cases[] = {
        {{"init", dir, "--kind", "rust", NULL},
         "unknown --kind 'rust' (plugin, python or manifest)"},
        {{"init", dir, NULL}, "missing --kind (plugin, python or manifest)"},
        {{"init", "--kind", "plugin", NULL}, "missing DIR"},
        {{"init", dir, "other", "--kind", "plugin", NULL}, "one DIR only; unexpected 'other'"},
        {{"init", "", "--kind", "plugin", NULL}, "DIR is empty"},
        {{"init", dir, "--kind", NULL}, "'--kind' needs a value"},
        {{"init", dir, "--kind", "plugin", "--force", NULL}, "unknown option '--force'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cli_run r = run_cli_v(NULL, cases[k].args);
        assert_fails(&r, EXIT_USAGE, cases[k].needle);
        assert_contains(r.err, "tessera init");
        cr_expect(!exists(dir), "case %zu wrote something", k);
        run_free(&r);
    }
    free(dir);
}

Test(cli_init, a_folder_that_is_not_empty_is_refused_and_left_alone) {
    char *dir = below("full");
    cr_assert_eq(mkdir(dir, 0755), 0);
    char *mine = below("full/README.md");
    write_file(mine, "my own notes\n");
    cli_run r = run_cli(NULL, "init", dir, "--kind", "plugin");
    assert_fails(&r, EXIT_OUTPUT, "is not empty (it holds 'README.md')");
    assert_contains(r.err, "nothing was written");
    cr_expect_eq(dir_entries(dir, ""), 1);
    char *text = cli_slurp(mine);
    cr_expect_str_eq(text, "my own notes\n", "an existing file is never overwritten");
    free(text);
    run_free(&r);
    free(mine);
    free(dir);
}

Test(cli_init, a_dir_that_is_a_file_or_below_a_file_is_refused) {
    char *file = below("plain");
    write_file(file, "x");
    cli_run r = run_cli(NULL, "init", file, "--kind", "plugin", "--name", "p");
    assert_fails(&r, EXIT_OUTPUT, "exists and is not a folder");
    run_free(&r);
    char *under = below("plain/sub/comp");
    r = run_cli(NULL, "init", under, "--kind", "plugin");
    assert_fails(&r, EXIT_OUTPUT, "Not a directory");
    run_free(&r);
    char *text = cli_slurp(file);
    cr_expect_str_eq(text, "x");
    free(text);
    cr_expect_eq(dir_entries(root, ""), 1, "only the file is in the test's folder");
    free(under);
    free(file);
}

Test(cli_init, help_names_every_kind_and_the_next_commands) {
    cli_run r = run_cli(NULL, "init", "--help");
    assert_ok(&r);
    assert_contains(r.out, "Usage: tessera init [OPTIONS] DIR --kind plugin|python|manifest");
    assert_contains(r.out, "  manifest ");
    assert_contains(r.out, "tessera check-gradients build/libNAME.so @example_inputs.json");
    assert_contains(r.out, "Exit status (every command):");
    run_free(&r);
}

/* ---- in a private mount namespace (a read-only or a small tmpfs) ---- */

/* `tessera init DIR --kind plugin` in this process's namespace: its exit
 * status, its stderr in err (n bytes), stdout discarded. */
static int init_here(const char *dir, char *err, size_t n) {
    char err_path[] = "/tmp/tessera-init-err-XXXXXX";
    int fd = mkstemp(err_path);
    if (fd < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, 1) < 0 || dup2(fd, 2) < 0) _exit(127);
        execl(TSR_CLI, "tessera", "init", dir, "--kind", "plugin", "--name", "p", (char *)NULL);
        _exit(127);
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) status = -1;
    ssize_t got = pread(fd, err, n - 1, 0);
    err[got > 0 ? got : 0] = '\0';
    close(fd);
    unlink(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A tmpfs over a new folder (flags, opts), `tessera init` of sub below it,
 * and the checks: exit 5, the cause on stderr, the tmpfs left empty. */
static const char *init_on_tmpfs(unsigned long flags, const char *opts, const char *sub,
                                 const char *cause) {
    char dir[256];
    if (try_make_temp_dir(dir, sizeof dir, "tessera-init-fs") != 0) return "mkdtemp failed";
    const char *v = private_tmpfs(dir, flags, opts);
    if (v == NULL) {
        static char target[512], err[4096];
        snprintf(target, sizeof target, "%s/%s", dir, sub);
        int status = init_here(target, err, sizeof err);
        if (status != 5)
            v = "expected exit 5";
        else if (strstr(err, cause) == NULL)
            v = "the cause is not on stderr";
        else if (dir_entries(dir, "") != 0)
            v = "files or folders were left behind";
        else
            v = "ok";
        if (strcmp(v, "ok") != 0) {
            snprintf(verdict, sizeof verdict, "%s (exit %d): %.2000s", v, status, err);
            v = verdict;
        }
        umount(dir);
    }
    rmdir(dir);
    return v;
}

static const char *read_only(void) {
    return init_on_tmpfs(MS_RDONLY, "size=64k,mode=0755", "comp", "Read-only file system");
}

/* 12 KiB: the first files fit (a page each), then the disk is full. */
static const char *small_disk(void) {
    return init_on_tmpfs(0, "size=12k,mode=0755", "a/b/comp", "No space left on device");
}

Test(cli_init, an_unwritable_folder_exits_5_and_writes_nothing) {
    run_in_child(read_only, "no privilege to mount a tmpfs");
}

Test(cli_init, a_disk_full_part_way_removes_every_file_and_folder_it_made) {
    run_in_child(small_disk, "no privilege to mount a tmpfs");
}
