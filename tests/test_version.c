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
