// SPDX-License-Identifier: MIT
// double_conv.h's two conversions over libdouble-conversion: the library's
// only C++ file, built without exceptions or RTTI so that nothing of the
// C++ runtime crosses into the C code that calls it.
#include "double_conv.h"

#include <double-conversion/double-to-string.h>
#include <double-conversion/strtod.h>

using double_conversion::DoubleToStringConverter;
using double_conversion::Vector;

extern "C" int dconv_shortest(double v, char digits[DCONV_DIGITS_MAX], int *point) {
    bool sign = false;
    int length = 0;
    DoubleToStringConverter::DoubleToAscii(v, DoubleToStringConverter::SHORTEST, 0, digits,
                                           DCONV_DIGITS_MAX, &sign, &length, point);
    return length;
}

extern "C" double dconv_parse(const char *digits, int n, int exponent) {
    return double_conversion::Strtod(Vector<const char>(digits, n), exponent);
}
