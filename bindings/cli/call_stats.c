/* SPDX-License-Identifier: MIT */
/* --stats: what a command's calls cost, from tsr_component_stats, on
 * stderr after the call. Times in milliseconds as "ms=" with three
 * decimals, as tessera serve's access log and the debug call lines. */
#include <stdio.h>

#include "cli.h"

static double ms(uint64_t ns) { return (double)ns / 1e6; }

void cli_print_stats(const tsr_component *c) {
    tsr_stats s = TSR_STATS_INIT;
    if (tsr_component_stats(c, &s) != 0) return;
    for (int e = 0; e < TSR_STATS_ENDPOINTS; e++) {
        if (!s.endpoint_calls[e]) continue;
        const char *name = tsr_endpoint_name((tsr_endpoint)e);
        fprintf(stderr, "tessera: stats: %s calls=%llu errors=%llu ms=%.3f mean_ms=%.3f\n",
                name ? name : "?", (unsigned long long)s.endpoint_calls[e],
                (unsigned long long)s.endpoint_errors[e], ms(s.endpoint_ns[e]),
                ms(s.endpoint_ns[e]) / (double)s.endpoint_calls[e]);
    }
    fprintf(stderr,
            "tessera: stats: worker_wait_ms=%.3f copy_ms=%.3f bytes_copied=%llu bytes_by_ref=%llu "
            "worker_starts=%llu worker_deaths=%llu\n",
            ms(s.worker_wait_ns), ms(s.copy_ns), (unsigned long long)s.bytes_copied,
            (unsigned long long)s.bytes_by_ref, (unsigned long long)s.worker_starts,
            (unsigned long long)s.worker_deaths);
}
