/* SPDX-License-Identifier: MIT */
/* The log level's names, and TESSERA_LOG: the environment's default level
 * for every host (C, the CLI, Python, tessera serve), below an explicit
 * log_level option. A value that names no level is refused with one
 * warning per process on stderr, and the default stays: a typo in the
 * environment never fails an open. Capitals are accepted (DEBUG). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int log_level_parse(const char *value, tsr_log_level *level, int *off) {
    if (strcmp(value, "off") == 0) {
        *off = 1;
        return 0;
    }
    for (int l = 0; l < 4; l++)
        if (strcmp(value, level_names[l]) == 0) {
            *level = (tsr_log_level)l;
            *off = 0;
            return 0;
        }
    return -1;
}

static atomic_int warned;

void log_env_quiet(void) { atomic_store(&warned, 1); }

void log_env_default(struct tsr_options *o) {
    const char *value = getenv("TESSERA_LOG");
    if (!value || !value[0]) return;
    /* DEBUG as debug: environment variables are often written in capitals. */
    char lower[16];
    size_t i = 0;
    for (; value[i] && i < sizeof lower - 1; i++)
        lower[i] = (char)((value[i] >= 'A' && value[i] <= 'Z') ? value[i] - 'A' + 'a' : value[i]);
    lower[i] = '\0';
    tsr_log_level level = o->log_level;
    int off = o->log_off;
    if (!value[i] && log_level_parse(lower, &level, &off) == 0) {
        o->log_level = level;
        o->log_off = off;
        return;
    }
    if (atomic_exchange(&warned, 1)) return;
    char line[256];
    snprintf(line, sizeof line,
             "TESSERA_LOG='%.64s' is not a log level (accepted: debug, info, warn, error, off); "
             "the default, warn, stays",
             value);
    stderr_line("tessera", line);
}
