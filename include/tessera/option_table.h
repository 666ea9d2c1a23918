/* SPDX-License-Identifier: MIT */
/* The table of library options (the keys of tsr_options_set): the one
 * place their values, defaults and meaning are written down. The parser,
 * `tessera help options` and docs/reference/options.md all read it. */
#ifndef TESSERA_OPTION_TABLE_H
#define TESSERA_OPTION_TABLE_H

#include <stddef.h>

#include "tessera/tessera.h"

/* One option. Every string is static, never NULL except default_value. */
typedef struct tsr_option_info {
    const char *key;           /* "mode" */
    const char *values;        /* what it takes: "inproc, isolated, worker" */
    const char *default_value; /* the default as tsr_options_set takes it, or
                                * NULL when it is found at tsr_open (a path) */
    const char *default_text;  /* the default as a reader wants it */
    const char *modes;         /* where it applies: "every mode", "worker", ... */
    const char *summary;       /* one line */
    const char *details;       /* more, as sentences; "" when none */
    const char *sample;        /* a value tsr_options_set accepts */
} tsr_option_info;

/* The index-th option of the table, in the documented order.
 * Thread: any thread; the table is constant.
 * Ownership: the entry and its strings are static, owned by the library
 *   (never free them).
 * Returns: the entry, or NULL past the last one. */
TSR_API const tsr_option_info *tsr_option_info_at(size_t index);

#endif /* TESSERA_OPTION_TABLE_H */
