/* SPDX-License-Identifier: MIT */
/* tsr_call_run: a call's run, its endpoint's own code or, for a derivative
 * a plugin leaves to finite differences, the fallback
 * (gradcheck/fd_fallback.c), between the steps of call.c. Above both: the
 * fallback runs its apply calls with call_run_native, below it. */
#include "internal.h"

static int run_once(tsr_call *call) {
    call_run_state s;
    int rc = call_run_begin(call, &s);
    if (rc < 0) return rc;
    if (rc == 1) rc = 0;
    else rc = s.by_fd ? fd_invoke(call) : call->comp->backend->invoke(call);
    return call_run_end(call, &s, rc);
}

TSR_API int tsr_call_run(tsr_call *call) {
    if (!call) return TSR_E_ARGUMENT;
    /* What the run costs (stats.c): one clock pair, relaxed adds. */
    uint64_t started = call_timed(call) ? backend_now_ns() : 0;
    tsr_call *root = call->cancel_root;
    /* The fast path pays two relaxed loads and a test. */
    int rc = (root->check_fn || cancel_pending(call)) ? cancel_begin(call) : 0;
    if (!rc) rc = run_once(call);
    if (root == call && cancel_pending(call)) rc = cancel_end(call, rc);
    stats_count_call(call, started, rc);
    return rc;
}
