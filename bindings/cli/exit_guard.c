/* SPDX-License-Identifier: MIT */
/* A component that ends the process: legacy routines call exit on errors
 * (reference LAPACK's XERBLA prints a line and STOPs, which is exit(0);
 * so does any Fortran STOP). In-process, the command would then end with
 * status 0 and no output, as if it had succeeded. While a component runs
 * (loading, calls, gradient checks) an exit hook is armed: an exit then
 * says what happened and turns the status into CLI_CALL_FAILED. A worker
 * (--mode worker) keeps the command alive instead: the call fails there
 * with a message. An abort or a signal already ends with a nonzero
 * status and needs nothing here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *guard_what;      /* what was running; NULL: not armed */
static char guard_component[256];

static void exit_hook(void) {
    if (!guard_what) return;
    char line[768];
    int n = snprintf(line, sizeof line,
                     "\ntessera: error: the component %s%s%s ended the process during %s (it "
                     "called exit, as a Fortran STOP or LAPACK's XERBLA does): nothing was "
                     "computed; run it with --mode worker to keep the command alive and get "
                     "a message\n",
                     guard_component[0] ? "'" : "", guard_component,
                     guard_component[0] ? "'" : "", guard_what);
    if (n > 0) {
        size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
        /* write(2): stdio may be half torn down by now */
        ssize_t w = write(STDERR_FILENO, line, len);
        (void)w;
    }
    _exit(CLI_CALL_FAILED);   /* exit() again from an exit hook is undefined */
}

void cli_exit_guard_arm(const char *component, const char *what) {
    static int registered;
    if (!registered) registered = atexit(exit_hook) == 0;
    snprintf(guard_component, sizeof guard_component, "%s", component ? component : "");
    guard_what = what;
}

void cli_exit_guard_disarm(void) { guard_what = NULL; }
