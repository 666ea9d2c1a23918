/* SPDX-License-Identifier: MIT */
/* A component's counters: calls, bytes copied and passed by reference,
 * worker starts and deaths. Backends count with relaxed atomics. */
#include <stddef.h>
#include <string.h>

#include "internal.h"

/* The smallest tsr_stats ever published (0.1); a smaller struct_size means
 * the caller did not set it. */
#define STATS_SIZE_0_1 (offsetof(tsr_stats, worker_deaths) + sizeof(uint64_t))

TSR_API int tsr_component_stats(const tsr_component *c, tsr_stats *out) {
    if (!out || out->struct_size < STATS_SIZE_0_1) return TSR_E_ARGUMENT;
    size_t size = out->struct_size;
    tsr_stats s = {.struct_size = size};
    if (c) {
        s.calls = atomic_load(&c->stats[BACKEND_STAT_CALLS]);
        s.bytes_copied = atomic_load(&c->stats[BACKEND_STAT_COPIED]);
        s.bytes_by_ref = atomic_load(&c->stats[BACKEND_STAT_BY_REF]);
        s.worker_starts = atomic_load(&c->stats[BACKEND_STAT_STARTS]);
        s.worker_deaths = atomic_load(&c->stats[BACKEND_STAT_DEATHS]);
    }
    /* A caller built with a newer header sees 0 for the counters we lack;
     * one built with an older header gets only what it has room for. */
    if (size > sizeof s) {
        memset((char *)out + sizeof s, 0, size - sizeof s);
        size = sizeof s;
    }
    memcpy(out, &s, size);
    return c ? 0 : TSR_E_ARGUMENT;
}
