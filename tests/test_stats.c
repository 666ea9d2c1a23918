/* SPDX-License-Identifier: MIT */
/* tsr_component_stats and its struct_size: a host built against another release's
 * tsr_stats (fewer or more counters) reads what both sides know, and the
 * library never writes past struct_size. What calls cost: per endpoint
 * counts, errors and time, in process and in worker mode (wait and copy
 * times). No figure is compared with a duration: only > 0 and sums. */
#include <criterion/criterion.h>
#include <string.h>

#include "cli_run.h"
#include "worker_util.h"

/* tsr_stats as 0.1 declared it: a host built then must keep working. */
typedef struct {
    size_t struct_size;
    uint64_t calls, bytes_copied, bytes_by_ref, worker_starts, worker_deaths;
} stats_0_1;

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
    s.struct_size = sizeof(stats_0_1) - 1;   /* smaller than any tsr_stats published */
    cr_assert_eq(tsr_component_stats(c, &s), TSR_E_ARGUMENT);
    cr_assert_eq(s.calls, 0xababababababababu, "written although struct_size was too small");
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

Test(stats, a_host_built_with_the_first_header_reads_its_counters_and_nothing_more) {
    tsr_component *c = noop_after_one_call();
    struct {
        stats_0_1 old;
        unsigned char after[sizeof(tsr_stats)];
    } s;
    memset(&s, 0xab, sizeof s);
    s.old.struct_size = sizeof s.old;
    cr_assert_eq(tsr_component_stats(c, (tsr_stats *)(void *)&s.old), 0);
    cr_assert_eq(s.old.struct_size, sizeof s.old);
    cr_assert_eq(s.old.calls, 1);
    cr_assert_eq(s.old.worker_starts, 0);
    for (size_t i = 0; i < sizeof s.after; i++)
        cr_assert_eq(s.after[i], 0xab, "byte %zu past the old struct_size was written", i);
    tsr_close(c);
}

/* apply twice, jvp and vjp once each, and an apply that fails before it
 * reaches the plugin (its input unbound). x has n doubles. */
static void run_mix(tsr_component *c, double *xs, int64_t n) {
    tsr_array x = f64_vec(xs, n);
    tsr_call *apply = new_call(c, TSR_EP_APPLY);
    bind_ok(apply, "x", x);
    run_ok(apply);
    run_ok(apply);
    tsr_call_free(apply);
    const char *in[] = {"x"}, *out[] = {"y"};
    tsr_call *jvp = new_call(c, TSR_EP_JVP);
    bind_ok(jvp, "x", x);
    wrt_ok(jvp, in, 1, out, 1);
    seed_ok(jvp, "x", x);
    run_ok(jvp);
    tsr_call_free(jvp);
    tsr_call *vjp = new_call(c, TSR_EP_VJP);
    bind_ok(vjp, "x", x);
    wrt_ok(vjp, in, 1, out, 1);
    seed_ok(vjp, "y", x);
    run_ok(vjp);
    tsr_call_free(vjp);
    tsr_call *bad = new_call(c, TSR_EP_APPLY);
    run_fails(bad, TSR_E_MISSING);
    tsr_call_free(bad);
}

static void expect_mix_counted(const tsr_stats *s) {
    cr_expect_eq(s->endpoint_calls[TSR_EP_APPLY], 3, "two good applies and a failed one");
    cr_expect_eq(s->endpoint_errors[TSR_EP_APPLY], 1);
    cr_expect_eq(s->endpoint_calls[TSR_EP_JVP], 1);
    cr_expect_eq(s->endpoint_calls[TSR_EP_VJP], 1);
    cr_expect_eq(s->endpoint_errors[TSR_EP_JVP] + s->endpoint_errors[TSR_EP_VJP], 0);
    cr_expect_eq(s->endpoint_calls[TSR_EP_JACOBIAN] + s->endpoint_calls[TSR_EP_ABSTRACT_EVAL], 0);
    cr_expect_eq(s->endpoint_ns[TSR_EP_JACOBIAN] + s->endpoint_ns[TSR_EP_ABSTRACT_EVAL], 0,
                 "an endpoint never called has no time");
    for (int e = TSR_EP_COUNT; e < TSR_STATS_ENDPOINTS; e++)
        cr_expect_eq(s->endpoint_calls[e] + s->endpoint_ns[e] + s->endpoint_errors[e], 0,
                     "slot %d past the endpoints stays zero", e);
    cr_expect_gt(s->endpoint_ns[TSR_EP_APPLY], 0);
    cr_expect_gt(s->endpoint_ns[TSR_EP_JVP], 0);
    cr_expect_gt(s->endpoint_ns[TSR_EP_VJP], 0);
    uint64_t counted = 0, failed = 0;
    for (int e = 0; e < TSR_STATS_ENDPOINTS; e++) {
        counted += s->endpoint_calls[e];
        failed += s->endpoint_errors[e];
    }
    /* The failed apply never reached the plugin: calls counts the others. */
    cr_expect_eq(counted - failed, s->calls, "per-endpoint %llu - %llu errors vs %llu runs",
                 (unsigned long long)counted, (unsigned long long)failed,
                 (unsigned long long)s->calls);
}

Test(stats, each_endpoint_counts_its_calls_errors_and_time_in_process) {
    tsr_component *c = open_mode(BUNDLED_PLUGIN("noop"), TSR_MODE_INPROC);
    double xs[4] = {1, 2, 3, 4};
    run_mix(c, xs, 4);
    tsr_stats s = stats_of(c);
    expect_mix_counted(&s);
    cr_expect_eq(s.worker_wait_ns, 0, "no worker, no wait");
    cr_expect_eq(s.copy_ns, 0, "in process, nothing is copied");
    tsr_close(c);
}

Test(stats, worker_mode_counts_the_wait_and_the_copies_inside_the_calls_time) {
    tsr_component *c = open_mode(BUNDLED_PLUGIN("noop"), TSR_MODE_WORKER);
    /* On the heap, outside the arena: every run copies x in. */
    int64_t n = 1 << 16;
    double *xs = calloc((size_t)n, sizeof *xs);
    cr_assert_not_null(xs);
    run_mix(c, xs, n);
    tsr_stats s = stats_of(c);
    expect_mix_counted(&s);
    uint64_t total = 0;
    for (int e = 0; e < TSR_EP_COUNT; e++) total += s.endpoint_ns[e];
    cr_expect_gt(s.worker_wait_ns, 0);
    cr_expect_gt(s.bytes_copied, 0);
    cr_expect_gt(s.copy_ns, 0, "%llu bytes copied in no time", (unsigned long long)s.bytes_copied);
    cr_expect_leq(s.worker_wait_ns + s.copy_ns, total,
                  "wait %llu + copy %llu ns are parts of the calls' %llu ns",
                  (unsigned long long)s.worker_wait_ns, (unsigned long long)s.copy_ns,
                  (unsigned long long)total);
    tsr_close(c);
    free(xs);
}

Test(stats, worker_mode_inputs_in_the_arena_cost_no_copy_time) {
    tsr_component *c = open_mode(BUNDLED_PLUGIN("noop"), TSR_MODE_WORKER);
    int64_t n = 1024;
    double *xs = tsr_component_alloc(c, (size_t)n * sizeof *xs);
    cr_assert_not_null(xs);
    memset(xs, 0, (size_t)n * sizeof *xs);
    tsr_array x = f64_vec(xs, n);
    tsr_call *apply = new_call(c, TSR_EP_APPLY);
    bind_ok(apply, "x", x);
    run_ok(apply);
    tsr_call_free(apply);
    tsr_stats s = stats_of(c);
    cr_expect_gt(s.bytes_by_ref, 0);
    cr_expect_eq(s.bytes_copied, 0);
    cr_expect_eq(s.copy_ns, 0, "passed by reference: no copy to time");
    cr_expect_gt(s.worker_wait_ns, 0);
    tsr_component_free_buffer(c, xs);
    tsr_close(c);
}

Test(stats, worker_mode_with_files_counts_writing_and_reading_them_as_copy_time) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "transport", "files");
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), o);
    tsr_options_free(o);
    double xs[4] = {1, 2, 3, 4};
    tsr_call *apply = new_call(c, TSR_EP_APPLY);
    bind_ok(apply, "x", f64_vec(xs, 4));
    run_ok(apply);
    tsr_call_free(apply);
    tsr_stats s = stats_of(c);
    cr_expect_gt(s.copy_ns, 0);
    cr_expect_leq(s.copy_ns + s.worker_wait_ns, s.endpoint_ns[TSR_EP_APPLY]);
    tsr_close(c);
}

/* A batch of n is n calls at its endpoint, each timed alone. */
Test(stats, a_batch_counts_one_call_per_item) {
    tsr_component *c = open_mode(BUNDLED_PLUGIN("noop"), TSR_MODE_INPROC);
    double xs[3 * 2] = {1, 2, 3, 4, 5, 6};
    tsr_array x = f64_mat(xs, 3, 2);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", x);
    cr_assert_eq(tsr_call_run_batch(call, 3), 0, "%s", tsr_call_errmsg(call));
    tsr_call_free(call);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.endpoint_calls[TSR_EP_APPLY], 3);
    cr_expect_eq(s.calls, 3);
    cr_expect_gt(s.endpoint_ns[TSR_EP_APPLY], 0);
    tsr_close(c);
}

Test(stats, call_timing_off_counts_calls_and_errors_without_time) {
    tsr_options *o = mode_options(TSR_MODE_INPROC);
    set_option(o, "call_timing", "off");
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), o);
    tsr_options_free(o);
    double xs[4] = {1, 2, 3, 4};
    run_mix(c, xs, 4);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.endpoint_calls[TSR_EP_APPLY], 3);
    cr_expect_eq(s.endpoint_errors[TSR_EP_APPLY], 1);
    cr_expect_eq(s.endpoint_calls[TSR_EP_JVP], 1);
    for (int e = 0; e < TSR_STATS_ENDPOINTS; e++) cr_expect_eq(s.endpoint_ns[e], 0, "slot %d", e);
    tsr_close(c);
}

Test(stats, call_timing_takes_on_or_off_only) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "call_timing", "no", &err), TSR_E_ARGUMENT);
    assert_contains(err.message, "call_timing");
    assert_contains(err.message, "on or off");
    cr_expect_eq(tsr_options_set(o, "call_timing", "on", &err), 0);
    tsr_options_free(o);
}

/* tessera apply --stats: the figures on stderr after the result, the
 * result itself untouched on stdout; a failed call is counted too. */
Test(stats, the_cli_prints_what_a_call_cost_with_stats) {
    const char *modes[] = {"inproc", "worker"};
    for (int m = 0; m < 2; m++) {
        cli_run r = run_cli(NULL, "apply", "--stats", "--mode", modes[m], BUNDLED_PLUGIN("noop"),
                            "{\"inputs\": {\"x\": [1, 2]}}");
        cr_expect_eq(r.status, 0, "%s: %s", modes[m], r.err);
        assert_contains(r.out, "\"buffer\":[1.0,2.0]");
        cr_expect_null(strstr(r.out, "stats"), "stats on stdout: %s", r.out);
        assert_contains(r.err, "tessera: stats: apply calls=1 errors=0 ms=");
        assert_contains(r.err, " mean_ms=");
        assert_contains(r.err, "tessera: stats: worker_wait_ms=");
        assert_contains(r.err, m ? "worker_starts=1" : "worker_starts=0");
        run_free(&r);
    }
    /* x's shape breaks the schema's rank: the call runs and fails. */
    cli_run r = run_cli(NULL, "apply", "--stats", BUNDLED_PLUGIN("noop"),
                        "{\"inputs\": {\"x\": [[1, 2]]}}");
    cr_expect_eq(r.status, EXIT_CALL, "%s", r.err);
    assert_contains(r.err, "tessera: stats: apply calls=1 errors=1 ms=");
    run_free(&r);
    /* A payload refused before any call: no endpoint line, the rest. */
    r = run_cli(NULL, "apply", "--stats", BUNDLED_PLUGIN("noop"), "{\"inputs\": {}}");
    cr_expect_eq(r.status, EXIT_PAYLOAD, "%s", r.err);
    cr_expect_null(strstr(r.err, "stats: apply"), "%s", r.err);
    assert_contains(r.err, "tessera: stats: worker_wait_ms=0.000");
    run_free(&r);
}

Test(stats, stats_is_an_option_of_endpoint_calls_only) {
    cli_run r = run_cli(NULL, "schema", "--stats", BUNDLED_PLUGIN("noop"));
    cr_expect_eq(r.status, EXIT_USAGE, "%s", r.err);
    assert_contains(r.err, "--stats");
    run_free(&r);
}
