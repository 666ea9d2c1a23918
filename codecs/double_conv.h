/* SPDX-License-Identifier: MIT */
/*
 * The two conversions between doubles and decimal text that must be
 * exact, behind a C interface over two header-only C++ libraries
 * (double_conv.cc): Dragonbox for the shortest decimal that reads back as
 * the same double, fast_float for the double nearest to a decimal text.
 * Both are noexcept and neither depends on the locale or on the rounding
 * mode of the calling thread.
 */
#ifndef TESSERA_CODECS_DOUBLE_CONV_H
#define TESSERA_CODECS_DOUBLE_CONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The shortest decimal of the finite v > 0 that reads back as v, the
 * nearest to v when several: v ~ significand x 10^exponent, the
 * significand (at most 17 digits) without trailing zeros. */
void dconv_shortest(double v, uint64_t *significand, int *exponent);

/* The decimal number p[0..n) (a JSON number, already validated) as the
 * nearest double, correctly rounded: 0, or -1 when it overflows a double
 * (*out is then infinite). Too small a value reads as 0. */
int dconv_parse(const char *p, size_t n, double *out);

/* The same for the number that starts at p and ends at a delimiter (or at
 * end): a pointer past it, or NULL when there is no number at p. */
const char *dconv_read(const char *p, const char *end, double *out);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CODECS_DOUBLE_CONV_H */
