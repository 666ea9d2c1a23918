/* SPDX-License-Identifier: MIT */
/* `tessera check-gradients`: its options and its report, shared by
 * cmd_gradcheck.c, gradcheck_args.c and gradcheck_print.c. */
#ifndef TESSERA_CLI_GRADCHECK_H
#define TESSERA_CLI_GRADCHECK_H

#include <stdbool.h>
#include <stdio.h>

#include <tessera/gradcheck.h>

#include "cli.h"

/* Failures listed unless --max-failures says otherwise (all are counted). */
#define CLI_GRADCHECK_MAX_FAILURES 20

typedef struct gradcheck_args {
    tsr_gradcheck_options opts;
    tsr_options *library;     /* --mode, --config */
    bool json;                /* -f json */
    bool help;
    char *input_list;         /* --input-paths, split in place */
    char *output_list;
    const char **input_paths;
    const char **output_paths;
    char **positional;
    int n_positional;
} gradcheck_args;

/* Parse argv (argv[0] is "check-gradients"). Returns CLI_OK or CLI_USAGE
 * (message printed). */
int cli_gradcheck_parse(int argc, char **argv, gradcheck_args *out);
void cli_gradcheck_args_free(gradcheck_args *a);

/* The human-readable report on stdout. */
void cli_gradcheck_print(const tsr_gradcheck_report *r, const tsr_component *c,
                         const gradcheck_args *a);

/* Whether the report compared nothing (every derivative left out, or
 * served by finite differences and not named): not a pass. */
bool cli_gradcheck_nothing_checked(const tsr_gradcheck_report *r);
/* Why, in one or two lines. */
void cli_gradcheck_why_nothing(const tsr_gradcheck_report *r, const tsr_component *c, FILE *f);

/* Progress bar on stderr (installed only when stderr is a terminal). */
void cli_gradcheck_progress(void *user, int64_t done, int64_t total);
void cli_gradcheck_progress_end(void);

#endif /* TESSERA_CLI_GRADCHECK_H */
