/* SPDX-License-Identifier: MIT */
/*
 * Running the `tessera` command line from a Criterion test: a child
 * process with a given stdin, its exit status, stdout and stderr.
 * Header-only because every tests/test_*.c is its own program.
 */
#ifndef TESSERA_TEST_CLI_RUN_H
#define TESSERA_TEST_CLI_RUN_H

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* Exit statuses documented in `tessera --help`. */
enum { EXIT_CALL = 1, EXIT_USAGE = 2, EXIT_LOAD = 3, EXIT_PAYLOAD = 4, EXIT_OUTPUT = 5 };

typedef struct cli_run {
    int status; /* exit status; -1 if the process did not exit normally */
    char *out;
    char *err;
} cli_run;

static inline char *cli_slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    size_t cap = 1024, len = 0, n;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

/* Run `tessera args...` (args NULL-terminated) with stdin_text (NULL:
 * empty) on its stdin; before_exec (may be NULL) runs in the child just
 * before it starts the command (to restrict it, say). */
static inline cli_run run_cli_with(const char *stdin_text, void (*before_exec)(void),
                                   const char *const *args) {
    char in_path[256], out_path[256], err_path[256];
    temp_path(in_path, sizeof in_path);
    temp_path(out_path, sizeof out_path);
    temp_path(err_path, sizeof err_path);
    write_file(in_path, stdin_text ? stdin_text : "");
    /* execv takes char *const []: the arguments are copied, not cast. */
    char *argv[64];
    int argc = 0;
    argv[argc++] = "tessera";
    for (; args[argc - 1] != NULL; argc++) {
        cr_assert(argc < 63);
        argv[argc] = strdup(args[argc - 1]);
        cr_assert(argv[argc] != NULL);
    }
    argv[argc] = NULL;
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork failed");
    if (pid == 0) {
        int in = open(in_path, O_RDONLY), out = open(out_path, O_WRONLY | O_TRUNC),
            err = open(err_path, O_WRONLY | O_TRUNC);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
            _exit(127);
        if (before_exec != NULL) before_exec();
        execv(TSR_CLI, argv);
        _exit(127);
    }
    int wstatus;
    cr_assert_eq(waitpid(pid, &wstatus, 0), pid);
    for (int i = 1; i < argc; i++) free(argv[i]);
    cli_run r = {.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1};
    r.out = cli_slurp(out_path);
    r.err = cli_slurp(err_path);
    unlink(in_path);
    unlink(out_path);
    unlink(err_path);
    return r;
}

static inline cli_run run_cli_v(const char *stdin_text, const char *const *args) {
    return run_cli_with(stdin_text, NULL, args);
}

#define run_cli(stdin_text, ...) run_cli_v((stdin_text), (const char *const[]){__VA_ARGS__, NULL})

static inline void run_free(cli_run *r) {
    free(r->out);
    free(r->err);
}

/* Success: status 0, nothing on stderr. */
static inline void assert_ok(const cli_run *r) {
    cr_assert_eq(r->status, 0, "exit %d, stdout: %s, stderr: %s", r->status, r->out, r->err);
    cr_assert_str_eq(r->err, "", "stderr must stay empty on success");
}

/* Failure: the status, nothing on stdout, and the message on stderr. */
static inline void assert_fails(const cli_run *r, int status, const char *needle) {
    cr_assert_eq(r->status, status, "expected exit %d, got %d; stdout: %s; stderr: %s", status,
                 r->status, r->out, r->err);
    cr_assert_str_eq(r->out, "", "a failure writes nothing on stdout");
    assert_contains(r->err, needle);
}

#endif /* TESSERA_TEST_CLI_RUN_H */
