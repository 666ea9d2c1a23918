/* SPDX-License-Identifier: MIT */
/* The command's stdout is its results only. Components run in this
 * process and print: a C plugin's printf, a Python component's print
 * (the embedded interpreter writes fd 1), a legacy routine's messages.
 * At start-up the command keeps a private copy of fd 1 for its own output
 * (cli_out, close-on-exec so that workers do not hold it) and points fd 1
 * at stderr, where whatever a component prints then lands, as
 * tesseract-runtime does. Only the command does this: it owns its
 * process; the library, which lives in other people's, never does. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

FILE *cli_out;

void cli_own_stdout(void) {
    cli_out = stdout;   /* what is left when fd 1 cannot be kept */
    int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    if (fd < 0) return;   /* fd 1 closed: the results have nowhere to go anyway */
    FILE *own = fdopen(fd, "w");
    if (own == NULL) {
        close(fd);
        return;
    }
    /* stderr closed: a component's text is dropped rather than mixed
     * into the results */
    int to = STDERR_FILENO;
    if (fcntl(STDERR_FILENO, F_GETFD) < 0) to = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (to < 0 || dup2(to, STDOUT_FILENO) < 0) {
        if (to != STDERR_FILENO && to >= 0) close(to);
        fclose(own);   /* closes fd; fd 1 is still the results' */
        return;
    }
    if (to != STDERR_FILENO) close(to);
    cli_out = own;
    /* A component's lines come out as it prints them, among the
     * command's own messages on stderr, instead of in one block at exit;
     * text without a newline is written at exit. */
    setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
}

bool cli_is_stdout(const char *path) {
    static const char *const names[] = {"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"};
    if (path == NULL) return true;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(path, names[k]) == 0) return true;
    return false;
}
