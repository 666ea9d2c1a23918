/* SPDX-License-Identifier: MIT */
/*
 * codecs/number_text.c: doubles printed in their shortest round-trip form
 * (the very text of the "%.*g" search it replaced), read back bit for bit,
 * reals read as strtod reads them, integers as printf prints them; over
 * random bit patterns of the whole double range and the hard cases
 * (subnormals, DBL_MAX, DBL_MIN, powers of ten, float32 values).
 */
#include <criterion/criterion.h>

#include <float.h>
#include <stdbool.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/number_text.h"

/* The form the writer gave before number_text.c, as the reference. */
static void printf_shortest(double v, char *text, size_t size) {
    int n = 0;
    int first = v != 0.0 && fabs(v) < DBL_MIN ? 1 : 15;
    for (int digits = first; digits <= 17; digits++) {
        n = snprintf(text, size, "%.*g", digits, v);
        if (strtod(text, NULL) == v) break;
    }
    if (strpbrk(text, ".eE") == NULL) memcpy(text + n, ".0", 3);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t next_bits(void) { /* splitmix64: reproducible */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double from_bits(uint64_t b) {
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static uint64_t bits_of(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static int significant_digits(const char *t) {
    int n = 0;
    bool lead = true;
    for (; *t != '\0' && *t != 'e'; t++) {
        if (*t < '0' || *t > '9') continue;
        if (lead && *t == '0') continue;
        lead = false;
        n++;
    }
    return n;
}

static int shorter_than_printf;

/* Prints v, checks the text against the reference and reads it back. */
static void check_double(double v) {
    char got[NUMTEXT_MAX + 1], want[64];
    size_t n = numtext_double(v, got);
    cr_assert(n <= NUMTEXT_MAX);
    got[n] = '\0';
    printf_shortest(v, want, sizeof want);
    /* The search missed the shortest form only beside a power of two,
     * where the interval that reads back is narrower below than above. */
    if (strcmp(got, want) != 0) {
        cr_assert_lt(significant_digits(got), significant_digits(want),
                     "bits %016" PRIx64 ": %s against %s", bits_of(v), got, want);
        cr_assert_eq(bits_of(v) & 0x000FFFFFFFFFFFFFu, 0, "%s: not a power of two", got);
        shorter_than_printf++;
    }
    double back = 0.0;
    cr_assert_eq(numtext_real(got, n, &back), 0, "%s", got);
    cr_assert_eq(bits_of(back), bits_of(v), "%s reads back as another double", got);
}

static void hard_cases(void (*check)(double)) {
    const double fixed[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 100.0, 1e15,
                            1e16, 1e17, 1e21, 1e22, 1e23, 123456789012345680.0,
                            1234567890123456.0, 9007199254740993.0, 0.0001, 0.00001,
                            DBL_MAX, -DBL_MAX, DBL_MIN, DBL_EPSILON, 5e-324, -5e-324,
                            2.2250738585072009e-308, 4.9406564584124654e-324, 1.7976931348623157e308,
                            9.5e-5, 5e-5, 2.5, 0.5, 1e-7, 1.5e300};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) check(fixed[k]);
    for (int e = -323; e <= 308; e++) {
        char t[32];
        snprintf(t, sizeof t, "1e%d", e);
        check(strtod(t, NULL));
        check(-strtod(t, NULL));
    }
    for (int e = -1074; e <= 1023; e++) check(ldexp(1.0, e));
    for (uint64_t b = 1; b < 2000; b++) check(from_bits(b)); /* the smallest subnormals */
    check(from_bits(0x000FFFFFFFFFFFFFu)); /* the largest subnormal */
    check(nextafter(DBL_MAX, 0.0));
}

Test(number_text, doubles_print_the_printf_search_text_or_a_shorter_one_and_read_back_exactly) {
    hard_cases(check_double);
    cr_assert_gt(shorter_than_printf, 0, "2^-1017 is one the search printed with 17 digits");
    for (int k = 0; k < 300000; k++) {
        double v = from_bits(next_bits());
        if (isfinite(v)) check_double(v);
    }
}

Test(number_text, float32_values_print_as_their_doubles_and_read_back_exactly) {
    for (int k = 0; k < 200000; k++) {
        uint32_t b = (uint32_t)next_bits();
        float f;
        memcpy(&f, &b, sizeof f);
        if (!isfinite(f)) continue;
        check_double((double)f);
        char t[NUMTEXT_MAX + 1];
        size_t n = numtext_double((double)f, t);
        double back;
        cr_assert_eq(numtext_real(t, n, &back), 0);
        cr_assert_eq((float)back, f);
    }
    check_double((double)FLT_MAX);
    check_double((double)FLT_MIN);
    check_double((double)0.1f);
}

/* A random JSON real: digits, a fraction, an exponent. */
static size_t random_real(char *t, size_t size) {
    uint64_t r = next_bits();
    int idigits = (int)(r % 20), fdigits = (int)((r >> 8) % 25);
    size_t o = 0;
    if (r & (1u << 20)) t[o++] = '-';
    if (idigits == 0) t[o++] = '0';
    else {
        t[o++] = (char)('1' + next_bits() % 9);
        for (int k = 1; k < idigits; k++) t[o++] = (char)('0' + next_bits() % 10);
    }
    if (fdigits > 0) {
        t[o++] = '.';
        for (int k = 0; k < fdigits; k++) t[o++] = (char)('0' + next_bits() % 10);
    }
    if ((r >> 24) & 1) {
        o += (size_t)snprintf(t + o, size - o, "%c%s%d", (r >> 25) & 1 ? 'e' : 'E',
                              (r >> 26) & 1 ? "-" : ((r >> 27) & 1 ? "+" : ""),
                              (int)((r >> 32) % 340));
    }
    t[o] = '\0';
    return o;
}

Test(number_text, reals_read_as_strtod_reads_them) {
    char t[128];
    for (int k = 0; k < 300000; k++) {
        size_t n = random_real(t, sizeof t);
        double got = 0.0;
        int rc = numtext_real(t, n, &got);
        double want = strtod(t, NULL);
        if (isinf(want)) {
            cr_assert_eq(rc, -1, "%s overflows", t);
            continue;
        }
        cr_assert_eq(rc, 0, "%s", t);
        cr_assert_eq(bits_of(got), bits_of(want), "%s: %a against strtod's %a", t, got, want);
    }
}

Test(number_text, overflow_is_told_and_underflow_reads_as_zero) {
    double v = 1.0;
    cr_assert_eq(numtext_real("1e309", 5, &v), -1);
    cr_assert_eq(numtext_real("-1.8e308", 8, &v), -1);
    cr_assert_eq(numtext_real("1.7976931348623159e308", 22, &v), -1);
    cr_assert_eq(numtext_real("1.7976931348623157e308", 22, &v), 0);
    cr_assert_eq(v, DBL_MAX);
    cr_assert_eq(numtext_real("1e-400", 6, &v), 0);
    cr_assert_eq(bits_of(v), 0);
    cr_assert_eq(numtext_real("-0.0", 4, &v), 0);
    cr_assert(v == 0.0 && signbit(v), "-0.0 keeps its sign");
    cr_assert_eq(numtext_real("0e99999999", 10, &v), 0);
    cr_assert_eq(v, 0.0);
    cr_assert_eq(numtext_real("1e99999999", 10, &v), -1);
    cr_assert_eq(numtext_real("1e-99999999", 11, &v), 0);
    cr_assert_eq(v, 0.0);
}

Test(number_text, thousands_of_digits_read_as_strtod_reads_them) {
    size_t cap = 200010;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    /* 2^53 + 1 is halfway between two doubles: it reads as 2^53 (even),
     * and as 2^53 + 2 with any nonzero digit however far behind it. */
    const size_t lengths[] = {17, 800, 5000, 200000};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        size_t n = lengths[k];
        memcpy(t, "9007199254740993", 16);
        if (n > 16) {
            t[16] = '.';
            memset(t + 17, '0', n - 17);
        }
        t[n] = '\0';
        double v;
        cr_assert_eq(numtext_real(t, n, &v), 0);
        cr_assert_eq(v, 9007199254740992.0, "%zu digits: halfway reads as even", n);
        if (n > 17) {
            t[n - 1] = '1';
            cr_assert_eq(numtext_real(t, n, &v), 0);
            cr_assert_eq(v, 9007199254740994.0, "%zu digits: the last one rounds up", n);
            cr_assert_eq(bits_of(v), bits_of(strtod(t, NULL)));
        }
    }
    /* 0.000...0001e200000: the exponent makes up for the zeros. */
    memcpy(t, "0.", 2);
    memset(t + 2, '0', 199990);
    memcpy(t + 199992, "1e199995", 9);
    double v;
    cr_assert_eq(numtext_real(t, strlen(t), &v), 0);
    cr_assert_eq(bits_of(v), bits_of(strtod(t, NULL)), "%a", v);
    free(t);
}

Test(number_text, integers_print_as_printf_prints_them) {
    const int64_t ints[] = {0, 1, -1, 9, 10, -10, 12345, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN,
                            INT64_MAX - 1, INT64_MIN + 1, 1000000000000000000};
    char got[NUMTEXT_MAX + 1], want[32];
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        got[numtext_int(ints[k], got)] = '\0';
        snprintf(want, sizeof want, "%" PRId64, ints[k]);
        cr_assert_str_eq(got, want);
    }
    for (int k = 0; k < 100000; k++) {
        uint64_t u = next_bits() >> (next_bits() % 64);
        got[numtext_uint(u, got)] = '\0';
        snprintf(want, sizeof want, "%" PRIu64, u);
        cr_assert_str_eq(got, want);
        got[numtext_int((int64_t)u, got)] = '\0';
        snprintf(want, sizeof want, "%" PRId64, (int64_t)u);
        cr_assert_str_eq(got, want);
    }
    got[numtext_uint(UINT64_MAX, got)] = '\0';
    cr_assert_str_eq(got, "18446744073709551615");
}
