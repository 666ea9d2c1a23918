/* SPDX-License-Identifier: MIT */
/* The version: one number, set in CMake, seen alike by the headers, the
 * library and the runtime query. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <tessera/tessera.h>

Test(version, the_library_reports_the_version_of_the_headers_it_was_built_with) {
    cr_assert_not_null(tsr_version());
    cr_assert_str_eq(tsr_version(), TSR_VERSION_STRING);
}

Test(version, the_string_is_major_minor_patch_of_the_numeric_macros) {
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", TSR_VERSION_MAJOR, TSR_VERSION_MINOR,
             TSR_VERSION_PATCH);
    cr_assert_str_eq(TSR_VERSION_STRING, want);
}

Test(version, the_numbers_are_usable_in_preprocessor_conditions) {
#if TSR_VERSION_MAJOR < 0 || TSR_VERSION_MINOR < 0 || TSR_VERSION_PATCH < 0
    cr_assert_fail("negative version component");
#endif
    cr_assert_geq(TSR_VERSION_MAJOR * 1000000 + TSR_VERSION_MINOR * 1000 + TSR_VERSION_PATCH, 1000,
                  "0.1.0 or later");
}

Test(version, the_same_pointer_each_time_a_static_string) {
    cr_assert_eq(tsr_version(), tsr_version());
    cr_assert_eq(strchr(tsr_version(), ' '), NULL);
}

Test(version, the_number_is_major_minor_patch_and_the_library_reports_its_own) {
    cr_assert_eq(TSR_VERSION_NUMBER,
                 TSR_VERSION_MAJOR * 10000 + TSR_VERSION_MINOR * 100 + TSR_VERSION_PATCH);
    cr_assert_eq(tsr_version_number(), TSR_VERSION_NUMBER);
    /* The string the library reports, read back, is the number it reports. */
    int major = -1, minor = -1, patch = -1;
    cr_assert_eq(sscanf(tsr_version(), "%d.%d.%d", &major, &minor, &patch), 3);
    cr_assert_eq(tsr_version_number(), TSR_MAKE_VERSION(major, minor, patch));
}

Test(version, the_number_compares_in_preprocessor_conditions_and_in_code) {
#if TSR_VERSION_NUMBER < TSR_MAKE_VERSION(0, 2, 0)
    cr_assert_fail("this release is 0.2.0 or later: tsr_version_number came with it");
#endif
#if !(TSR_VERSION_NUMBER >= TSR_MAKE_VERSION(TSR_VERSION_MAJOR, TSR_VERSION_MINOR, 0))
    cr_assert_fail("a release compares at least equal to its own x.y.0");
#endif
    /* Each part outweighs every value of the parts after it. */
    cr_assert_gt(TSR_MAKE_VERSION(0, 10, 0), TSR_MAKE_VERSION(0, 9, 99));
    cr_assert_gt(TSR_MAKE_VERSION(1, 0, 0), TSR_MAKE_VERSION(0, 99, 99));
    cr_assert_gt(TSR_MAKE_VERSION(0, 2, 1), TSR_MAKE_VERSION(0, 2, 0));
    cr_assert_lt(tsr_version_number(), TSR_MAKE_VERSION(TSR_VERSION_MAJOR + 1, 0, 0));
}
