/* SPDX-License-Identifier: MIT */
/* UTF-8 well-formedness, for TEXT fields (plugin.h, "Field kinds"). */
#ifndef TESSERA_CODECS_UTF8_H
#define TESSERA_CODECS_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Whether s (n bytes; s may be NULL when n is 0) is well-formed UTF-8:
 * no overlong forms, no surrogates, nothing past U+10FFFF. */
int utf8_valid(const unsigned char *s, size_t n);

#endif
