/* SPDX-License-Identifier: MIT */
/*
 * The two conversions between doubles and decimal digits that must be
 * exact, from libdouble-conversion (a C++ library, wrapped by
 * double_conv.cc behind this C interface; nothing it does can throw):
 * the shortest digits that read back as the same double, and the double
 * nearest to a string of digits times a power of ten. Neither depends on
 * the locale.
 */
#ifndef TESSERA_CODECS_DOUBLE_CONV_H
#define TESSERA_CODECS_DOUBLE_CONV_H

#ifdef __cplusplus
extern "C" {
#endif

/* Room for the digits of dconv_shortest and a NUL. */
#define DCONV_DIGITS_MAX 18

/* The shortest decimal digits of the finite v > 0 that read back as v
 * (the nearest such when several): v ~ 0.d1d2...dn x 10^point. Returns n
 * (1..17); digits is NUL-terminated. */
int dconv_shortest(double v, char digits[DCONV_DIGITS_MAX], int *point);

/* The double nearest to digits[0..n) x 10^exponent, correctly rounded;
 * digits: 1..DCONV_PARSE_DIGITS_MAX of [0-9], the first not '0'. Too large
 * a value gives infinity, too small 0. */
double dconv_parse(const char *digits, int n, int exponent);
#define DCONV_PARSE_DIGITS_MAX 768

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CODECS_DOUBLE_CONV_H */
