/* SPDX-License-Identifier: MIT */
/*
 * manifest_may_exit: what the host can learn of a manifest before choosing
 * how to run it (backends/manifest/manifest.h): whether its routines may end
 * the process, and the manifest's reason.
 */
#include <criterion/criterion.h>

#include "backends/manifest/manifest.h"

#define MANIFEST(name) TSR_TEST_MANIFEST_DIR "/" name ".json"

Test(manifest_probe, may_exit_with_the_manifests_reason) {
    char reason[128] = "";
    cr_assert_eq(manifest_may_exit(MANIFEST("lapack_dposv"), reason, sizeof reason), 1);
    cr_expect_str_eq(reason, "XERBLA stops the program on an illegal argument");
}

Test(manifest_probe, not_declared_unreadable_or_not_a_manifest_is_no) {
    char reason[64] = "unchanged";
    cr_expect_eq(manifest_may_exit(MANIFEST("fx_sum"), reason, sizeof reason), 0);
    cr_expect_eq(manifest_may_exit(MANIFEST("bad_may_exit"), reason, sizeof reason), 0,
                 "a value of the wrong kind is the loader's to refuse");
    cr_expect_eq(manifest_may_exit(MANIFEST("no_such_manifest"), reason, sizeof reason), 0);
    cr_expect_eq(manifest_may_exit(TSR_TEST_MANIFEST_DIR "/libmanifest_fixture.so", reason,
                                   sizeof reason),
                 0);
    cr_expect_str_eq(reason, "unchanged");
}
