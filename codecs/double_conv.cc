// SPDX-License-Identifier: MIT
// double_conv.h's two conversions over Dragonbox and fast_float, both
// header-only: the library's only C++ file, built without exceptions or
// RTTI, calling only noexcept templates, so that nothing of the C++
// runtime is linked and nothing crosses into the C code that calls it.
#include "double_conv.h"

#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <system_error>
#include <type_traits>

// Everything the two libraries define here (template instances, their
// tables) stays inside libtessera: hidden, so neither libtessera.so nor
// libtessera.a exports it (gcc is also told -fno-gnu-unique: objcopy
// --localize-hidden leaves "unique" symbols global, and they would pin the
// library in memory once loaded). The standard headers they use come
// first, outside the pragma: declared hidden, the C library's
// __assert_fail (asserts on, in the coverage build) would not link.
#pragma GCC visibility push(hidden)
#include <dragonbox/dragonbox.h>
#include <fast_float/fast_float.h>
#pragma GCC visibility pop

extern "C" void dconv_shortest(double v, uint64_t *significand, int *exponent) {
    // The sign is the caller's; v is positive, finite and nonzero here.
    auto d = jkj::dragonbox::to_decimal(v, jkj::dragonbox::policy::sign::ignore);
    *significand = d.significand;
    *exponent = d.exponent;
}

extern "C" int dconv_parse(const char *p, size_t n, double *out) {
    double v = 0.0;
    fast_float::from_chars_result r = fast_float::from_chars(p, p + n, v);
    // A validated JSON number is read whole; anything else is a bug upstream,
    // answered as the overflow it cannot be mistaken for a value of.
    if (r.ec != std::errc() || r.ptr != p + n) return -1;
    *out = v;
    return std::isinf(v) ? -1 : 0;
}

extern "C" const char *dconv_read(const char *p, const char *end, double *out) {
    double v = 0.0;
    fast_float::from_chars_result r = fast_float::from_chars(p, end, v);
    if (r.ec != std::errc()) return nullptr;
    *out = v;
    return r.ptr;
}
