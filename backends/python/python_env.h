/* SPDX-License-Identifier: MIT */
/* Which Python a component runs under (python_env.c): the option python,
 * $TESSERA_PYTHON, an environment built from the component's
 * tesseract_requirements.txt, or the Python Tessera was built with; and
 * that interpreter's shared library (python_probe.c). */
#ifndef TESSERA_CORE_PYTHON_ENV_H
#define TESSERA_CORE_PYTHON_ENV_H

#include <stddef.h>

#include "core/backend.h"

typedef struct python_target {
    char python[4096];     /* the interpreter (a venv's python keeps the venv) */
    char libpython[4096];  /* its shared library, for dlopen */
    char version[16];      /* "3.11" */
} python_target;

/* The interpreter for the component whose tesseract_api.py is in api_dir,
 * building its environment first when that is the choice. 0, or a TSR_E_*
 * code with the cause in err. */
int python_resolve(tsr_component *c, const char *api_dir, python_target *t, tsr_error *err);

/* The version and shared library of an interpreter (runs it once; the
 * answer is kept for the process). 0, or -1 with the cause in why. */
int python_probe(const char *python, python_target *t, char *why, size_t n);

/* snprintf for paths: -1 when out is too small (nothing of it is used then). */
int path_fmt(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Run argv (argv[0] looked up in PATH when it has no '/') in cwd with its
 * stdout appended to log_fd and its stderr to err_fd (log_fd again, or
 * the host's 2 to show a tool's own progress); 0 when it exits with 0,
 * else -1 with the cause in why. */
int python_run_logged(char *const argv[], const char *cwd, int log_fd, int err_fd, char *why,
                      size_t n);

#endif
