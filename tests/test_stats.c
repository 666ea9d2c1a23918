/* SPDX-License-Identifier: MIT */
/* tsr_component_stats and its struct_size: a host built against another release's
 * tsr_stats (fewer or more counters) reads what both sides know, and the
 * library never writes past struct_size. */
#include <criterion/criterion.h>
#include <string.h>

#include "test_util.h"

/* tsr_stats as a later release might declare it: one counter appended. */
typedef struct {
    tsr_stats v1;
    uint64_t later_counter;
} stats_next;

static tsr_component *noop_after_one_call(void) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), NULL);
    double xs[2] = {1, 2};
    tsr_array x = {.data = xs, .dtype = TSR_FLOAT64, .rank = 1, .shape = {2}};
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    cr_assert_not_null(call);
    cr_assert_eq(tsr_call_set_input(call, "x", &x), 0);
    cr_assert_eq(tsr_call_run(call), 0, "%s", tsr_call_errmsg(call));
    tsr_call_free(call);
    return c;
}

Test(stats, counts_with_struct_size_set) {
    tsr_component *c = noop_after_one_call();
    tsr_stats s = TSR_STATS_INIT;
    cr_assert_eq(tsr_component_stats(c, &s), 0);
    cr_assert_eq(s.struct_size, sizeof s, "struct_size is left as the caller set it");
    cr_assert_eq(s.calls, 1);
    cr_assert_eq(s.worker_starts, 0);
    tsr_close(c);
}

Test(stats, a_struct_size_left_unset_is_refused_and_nothing_is_written) {
    tsr_component *c = noop_after_one_call();
    tsr_stats s;
    memset(&s, 0xab, sizeof s);
    s.struct_size = 0;
    cr_assert_eq(tsr_component_stats(c, &s), TSR_E_ARGUMENT);
    cr_assert_eq(s.calls, 0xababababababababu, "written although struct_size was 0");
    s.struct_size = sizeof s - 1;
    cr_assert_eq(tsr_component_stats(c, &s), TSR_E_ARGUMENT);
    cr_assert_eq(tsr_component_stats(c, NULL), TSR_E_ARGUMENT);
    tsr_close(c);
}

Test(stats, a_host_with_a_newer_header_reads_zero_for_counters_the_library_lacks) {
    tsr_component *c = noop_after_one_call();
    stats_next s;
    memset(&s, 0xab, sizeof s);
    s.v1.struct_size = sizeof s;
    cr_assert_eq(tsr_component_stats(c, &s.v1), 0);
    cr_assert_eq(s.v1.struct_size, sizeof s);
    cr_assert_eq(s.v1.calls, 1);
    cr_assert_eq(s.later_counter, 0);
    tsr_close(c);
}

Test(stats, the_library_writes_nothing_past_struct_size) {
    tsr_component *c = noop_after_one_call();
    stats_next s;
    memset(&s, 0xab, sizeof s);
    s.v1.struct_size = sizeof s.v1;
    cr_assert_eq(tsr_component_stats(c, &s.v1), 0);
    cr_assert_eq(s.v1.calls, 1);
    cr_assert_eq(s.later_counter, 0xababababababababu, "written past struct_size");
    tsr_close(c);
}

Test(stats, no_component_gives_zeros_and_an_error) {
    tsr_stats s;
    memset(&s, 0xab, sizeof s);
    s.struct_size = sizeof s;
    cr_assert_eq(tsr_component_stats(NULL, &s), TSR_E_ARGUMENT);
    cr_assert_eq(s.calls, 0);
    cr_assert_eq(s.worker_deaths, 0);
}
