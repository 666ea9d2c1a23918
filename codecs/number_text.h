/* SPDX-License-Identifier: MIT */
/*
 * Numbers as JSON text and back, one at a time, without snprintf or
 * strtod: the writer (json_writer.c) and the numeric lists of the JSON
 * encoding (list_text.c, array_encode.c) use these on every element.
 * Doubles take the shortest digits that read back exactly
 * (double_conv.h), laid out as "%.*g" lays them out at max(15, digits)
 * digits, so the text is the one the library has always written; reals
 * are read correctly rounded. Neither depends on the locale.
 */
#ifndef TESSERA_CODECS_NUMBER_TEXT_H
#define TESSERA_CODECS_NUMBER_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The room the writers below need at out: a text is at most 24 bytes (no
 * NUL), and they use the rest as scratch. */
#define NUMTEXT_MAX 40

/* A finite double, shortest round-trip form, always with a '.' or an
 * exponent ("1.0", "-0.0", "0.1", "1e+20", "5e-324"). Returns the length. */
size_t numtext_double(double v, char *out);
size_t numtext_int(int64_t v, char *out);
size_t numtext_uint(uint64_t v, char *out);

/* The JSON number p[0..n) (already validated: -?(0|[1-9][0-9]*)(.[0-9]+)?
 * ([eE][+-]?[0-9]+)?), of any length, as the nearest double. 0: *out
 * set; -1: it overflows a double (as strtod's ERANGE). */
int numtext_real(const char *p, size_t n, double *out);

#endif /* TESSERA_CODECS_NUMBER_TEXT_H */
