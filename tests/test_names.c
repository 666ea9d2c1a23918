/* SPDX-License-Identifier: MIT */
/* Name helpers: every error code, dtype and endpoint has a name, and the
 * names convert back. */
#include "test_util.h"

/* Every code from TSR_OK to TSR_E_VALUE has its own non-empty description. */
Test(names, strerror_every_code_distinct) {
    for (int a = 0; a >= TSR_E_VALUE; a--) {
        const char *sa = tsr_strerror(a);
        cr_assert(sa != NULL && sa[0] != '\0', "no text for code %d", a);
        for (int b = a - 1; b >= TSR_E_VALUE; b--)
            cr_assert_str_neq(sa, tsr_strerror(b), "codes %d and %d share \"%s\"", a, b, sa);
    }
}

/* Codes outside the table still get a non-empty text. */
Test(names, strerror_unknown_codes) {
    int codes[] = {1, 42, TSR_E_VALUE - 1, -1000, -2147483647 - 1};
    for (int k = 0; k < 5; k++) {
        const char *s = tsr_strerror(codes[k]);
        cr_assert(s != NULL && s[0] != '\0', "no text for code %d", codes[k]);
    }
}

/* dtype names are Tesseract's (numpy's), sizes are those of the element
 * types, and every name converts back to its dtype. */
Test(names, dtype_names_sizes_round_trip) {
    static const struct {
        tsr_dtype dtype;
        const char *name;
        size_t size;
    } table[] = {
        {TSR_BOOL, "bool", 1},         {TSR_INT8, "int8", 1},
        {TSR_INT16, "int16", 2},       {TSR_INT32, "int32", 4},
        {TSR_INT64, "int64", 8},       {TSR_UINT8, "uint8", 1},
        {TSR_UINT16, "uint16", 2},     {TSR_UINT32, "uint32", 4},
        {TSR_UINT64, "uint64", 8},     {TSR_FLOAT16, "float16", 2},
        {TSR_FLOAT32, "float32", sizeof(float)}, {TSR_FLOAT64, "float64", sizeof(double)},
        {TSR_COMPLEX64, "complex64", 2 * sizeof(float)},
        {TSR_COMPLEX128, "complex128", 2 * sizeof(double)},
    };
    cr_assert_eq(sizeof table / sizeof table[0], (size_t)TSR_DTYPE_COUNT - 1);
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        cr_assert_str_eq(tsr_dtype_name(table[k].dtype), table[k].name);
        cr_assert_eq(tsr_dtype_from_name(table[k].name), (int)table[k].dtype, "%s", table[k].name);
        cr_assert_eq(tsr_dtype_size(table[k].dtype), table[k].size, "%s", table[k].name);
    }
}

/* Invalid dtypes have no name and no size; unknown names give
 * TSR_DTYPE_INVALID. */
Test(names, dtype_invalid_values) {
    tsr_dtype bad[] = {TSR_DTYPE_INVALID, TSR_DTYPE_COUNT, (tsr_dtype)99, (tsr_dtype)-1};
    for (int k = 0; k < 4; k++) {
        cr_assert_null(tsr_dtype_name(bad[k]), "dtype %d has a name", (int)bad[k]);
        cr_assert_eq(tsr_dtype_size(bad[k]), 0);
    }
    const char *names[] = {"", "float", "float65", "double", "float64 ", "invalid"};
    for (int k = 0; k < 6; k++)
        cr_assert_eq(tsr_dtype_from_name(names[k]), -1, "\"%s\" accepted", names[k]);
    cr_assert_eq(tsr_dtype_from_name(NULL), -1);
}

/* Endpoint names are Tesseract's and convert back; abstract_eval is also
 * accepted with a dash. */
Test(names, endpoint_names_round_trip) {
    const char *names[TSR_EP_COUNT] = {"apply", "jvp", "vjp", "jacobian", "abstract_eval",
                                          "hvp"};
    for (int ep = 0; ep < TSR_EP_COUNT; ep++) {
        cr_assert_str_eq(tsr_endpoint_name((tsr_endpoint)ep), names[ep]);
        cr_assert_eq(tsr_endpoint_from_name(names[ep]), ep);
    }
    cr_assert_eq(tsr_endpoint_from_name("abstract-eval"), TSR_EP_ABSTRACT_EVAL);
}

/* Unknown endpoint names give -1. */
Test(names, endpoint_unknown_names) {
    const char *bad[] = {"", "Apply", "gradient", "abstract", "jvp2"};
    for (int k = 0; k < 5; k++) cr_assert_eq(tsr_endpoint_from_name(bad[k]), -1, "\"%s\"", bad[k]);
    cr_assert_eq(tsr_endpoint_from_name(NULL), -1);
}
