/* SPDX-License-Identifier: MIT */
/* Result buffers the caller owns (tsr_call_set_result_buffer): a host that
 * already holds the memory its results must end up in (XLA's output
 * buffers under jax.jit) has the plugin write there, so no result is
 * copied after the call.
 *
 * Where the component's buffers come from a buffer source (worker mode:
 * the shared-memory arena), the plugin cannot reach the caller's memory:
 * the result is written into the arena as before and copied into the
 * caller's buffer once the run succeeded ("copy-out"). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static int copy_out(const tsr_call *call) { return call->comp->buffers.alloc != NULL; }

static size_t array_bytes_or_max(const tsr_array *a) {
    size_t bytes;
    return shape_bytes(a, &bytes) == 0 ? bytes : SIZE_MAX;
}

TSR_API int tsr_call_set_result_buffer(tsr_call *call, int32_t k, void *data, size_t bytes) {
    if (!call) return TSR_E_ARGUMENT;
    if (k < 0 || k >= call->cap_results)
        return call_fail(call, TSR_E_ARGUMENT,
                         "tsr_call_set_result_buffer: result index %d out of range (at most %d "
                         "results)",
                         (int)k, (int)call->cap_results);
    result_target *t = &call->targets[k];
    int had = t->ptr != NULL;
    if (!data) {
        if (had) {
            call->n_targets--;
            /* The cached arguments, or the last results, name the
             * caller's memory: size and place the results again. */
            call->validated = 0;
        }
        *t = (result_target){0};
        return 0;
    }
    if (!had) call->n_targets++;
    *t = (result_target){data, bytes};
    /* A loop that hands new memory each run keeps the fast path: only the
     * pointer moves when the last run sized this result and it fits. */
    if (call->validated && k < call->n_results && call->expect[k].data &&
        array_bytes_or_max(&call->expect[k]) <= bytes) {
        if (!copy_out(call)) call->results[k].data = call->expect[k].data = data;
        return 0;
    }
    call->validated = 0;
    return 0;
}

void *result_place(tsr_call *call, int32_t k, size_t bytes, const char *name, int *code,
                   char *why, size_t n) {
    const result_target *t = &call->targets[k];
    if (t->ptr && t->bytes < bytes) {
        *code = TSR_E_ARGUMENT;
        snprintf(why, n, "%s needs %zu bytes, and the result buffer set for it holds %zu", name,
                 bytes, t->bytes);
        return NULL;
    }
    if (t->ptr && !copy_out(call)) return t->ptr;
    char cause[300];
    void *p = result_reserve(call->comp, &call->bufs[k], bytes, cause, sizeof cause);
    if (!p) {
        *code = buffer_fail_code(call->comp);
        snprintf(why, n, "cannot allocate %zu bytes for %s: %s", bytes, name, cause);
    }
    return p;
}

void results_aim(tsr_call *call) {
    if (!call->n_targets || !copy_out(call)) return;
    for (int32_t k = 0; k < call->n_results; k++)
        if (call->targets[k].ptr && call->expect[k].data)
            call->results[k].data = call->expect[k].data;
}

void results_deliver(tsr_call *call) {
    if (!call->n_targets || !copy_out(call)) return;
    for (int32_t k = 0; k < call->n_results; k++) {
        const result_target *t = &call->targets[k];
        tsr_array *r = &call->results[k];
        if (!t->ptr || !r->data || r->data == t->ptr) continue;
        size_t bytes = array_bytes_or_max(r);
        /* Text comes with its NUL (result_place asked room for it). */
        if (bytes != SIZE_MAX && result_is_text(call, k)) bytes++;
        if (bytes > t->bytes) continue;   /* result_place refused it before the run */
        memcpy(t->ptr, r->data, bytes);
        r->data = t->ptr;
    }
}
