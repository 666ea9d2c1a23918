/* SPDX-License-Identifier: MIT */
/* A component's counters: calls, bytes copied and passed by reference,
 * worker starts and deaths, and what calls cost at each endpoint (count,
 * errors, wall time; in worker mode the wait for the worker and the
 * copies). Backends and tsr_call_run count with relaxed atomics: a
 * reading is a consistent figure of each counter, not a snapshot of all. */
#include <stddef.h>
#include <string.h>

#include "internal.h"

/* The smallest tsr_stats ever published (0.1); a smaller struct_size means
 * the caller did not set it. */
#define STATS_SIZE_0_1 (offsetof(tsr_stats, worker_deaths) + sizeof(uint64_t))

_Static_assert(TSR_EP_COUNT <= TSR_STATS_ENDPOINTS, "tsr_stats has a slot for every endpoint");

void stats_count_call(tsr_call *call, uint64_t started_ns, int rc) {
    tsr_component *c = call->comp;
    uint64_t now = started_ns ? backend_now_ns() : 0;
    uint64_t ns = now > started_ns ? now - started_ns : 0;
    int ep = (int)call->ep;   /* checked by tsr_call_new */
    atomic_fetch_add_explicit(&c->ep_calls[ep], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->ep_ns[ep], ns, memory_order_relaxed);
    if (rc < 0) atomic_fetch_add_explicit(&c->ep_errors[ep], 1, memory_order_relaxed);
    /* Only a host that asked for debug pays for the line; ms= as in
     * tessera serve's access log. */
    if (c->opts.log_off || c->opts.log_level > TSR_LOG_DEBUG) return;
    if (rc < 0)
        comp_log(c, TSR_LOG_DEBUG, "call %s rc=%d error=%s ms=%.3f", tsr_endpoint_name(call->ep),
                 rc, tsr_error_type(rc), (double)ns / 1e6);
    else
        comp_log(c, TSR_LOG_DEBUG, "call %s rc=0 ms=%.3f", tsr_endpoint_name(call->ep),
                 (double)ns / 1e6);
}

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
        for (int e = 0; e < TSR_EP_COUNT; e++) {
            s.endpoint_calls[e] = atomic_load(&c->ep_calls[e]);
            s.endpoint_ns[e] = atomic_load(&c->ep_ns[e]);
            s.endpoint_errors[e] = atomic_load(&c->ep_errors[e]);
        }
        s.worker_wait_ns = atomic_load(&c->stats[BACKEND_STAT_WAIT_NS]);
        s.copy_ns = atomic_load(&c->stats[BACKEND_STAT_COPY_NS]);
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
