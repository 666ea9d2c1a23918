/* SPDX-License-Identifier: MIT */
/* What the rest of the core may ask of a manifest before choosing its
 * backend (manifest_may_exit.c). */
#ifndef TESSERA_CORE_MANIFEST_H
#define TESSERA_CORE_MANIFEST_H

#include <stddef.h>

/* 1 when path is a manifest whose "may_exit" says that its routines may
 * end the process (reason: the manifest's words, or a generic one), so
 * that the host can run it in a worker unless told otherwise; 0 when it
 * is not a manifest, cannot be read, or does not say so. */
int manifest_may_exit(const char *path, char *reason, size_t n);

#endif
