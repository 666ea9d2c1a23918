/* SPDX-License-Identifier: MIT */
/* "what: " before a binref message, shared by the reader, the probe and
 * both ways of moving bytes (a file of its own, so that these depend on
 * it and not on each other). */
#include <stdio.h>

#include "binref_io.h"

void binref_what_prefix(char *buf, size_t size, const char *what) {
    if (what != NULL && what[0] != '\0') snprintf(buf, size, "%s: ", what);
    else if (size > 0) buf[0] = '\0';
}
