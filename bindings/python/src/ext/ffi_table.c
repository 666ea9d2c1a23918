/* SPDX-License-Identifier: MIT */
/* The table of FFI ops (see ffi_table.h): entries handed out and taken
 * back by their owners (ffi_ops.c), looked up by handle on XLA's threads
 * (ffi_handler.c). No Python here. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "ffi_table.h"

#define CHUNK_BITS 8
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096u              /* up to a million ops alive at once */

static ffi_op *_Atomic chunks[MAX_CHUNKS];
static uint32_t n_entries;            /* entries handed out so far */
static uint32_t *free_list;           /* retired entries, for reuse */
static uint32_t n_free, cap_free;
/* Allocation and retirement happen with the GIL held; this lock covers the
 * exit hook, which may run while XLA threads still look ops up. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

ffi_op *ffi_table_entry(uint32_t index) {
    ffi_op *chunk = atomic_load(&chunks[index >> CHUNK_BITS]);
    return chunk ? &chunk[index & (CHUNK_SIZE - 1)] : NULL;
}

ffi_op *ffi_table_alloc(uint32_t *index) {
    pthread_mutex_lock(&table_lock);
    ffi_op *op = NULL;
    if (n_free > 0) {
        *index = free_list[--n_free];
        op = ffi_table_entry(*index);
    } else if (n_entries < MAX_CHUNKS * CHUNK_SIZE) {
        uint32_t i = n_entries;
        if (!atomic_load(&chunks[i >> CHUNK_BITS])) {
            ffi_op *chunk = calloc(CHUNK_SIZE, sizeof *chunk);
            if (chunk) {
                for (uint32_t k = 0; k < CHUNK_SIZE; k++) pthread_mutex_init(&chunk[k].lock, NULL);
                atomic_store(&chunks[i >> CHUNK_BITS], chunk);
            }
        }
        if ((op = ffi_table_entry(i))) {
            *index = i;
            n_entries++;
        }
    }
    pthread_mutex_unlock(&table_lock);
    return op;
}

void ffi_table_release(uint32_t index) {
    pthread_mutex_lock(&table_lock);
    if (n_free == cap_free) {
        uint32_t cap = cap_free ? 2 * cap_free : 64;
        uint32_t *grown = realloc(free_list, cap * sizeof *grown);
        if (!grown) {  /* the entry is lost, nothing else */
            pthread_mutex_unlock(&table_lock);
            return;
        }
        free_list = grown;
        cap_free = cap;
    }
    free_list[n_free++] = index;
    pthread_mutex_unlock(&table_lock);
}

ffi_op *ffi_op_enter(uint64_t handle) {
    uint32_t index = (uint32_t)handle;
    if (index >= MAX_CHUNKS * CHUNK_SIZE) return NULL;
    ffi_op *op = ffi_table_entry(index);
    if (!op) return NULL;
    atomic_fetch_add(&op->inflight, 1);
    if (atomic_load(&op->live) != handle) {
        atomic_fetch_sub(&op->inflight, 1);
        return NULL;
    }
    return op;
}

void ffi_op_leave(ffi_op *op) { atomic_fetch_sub(&op->inflight, 1); }

tsr_call *ffi_op_take_call(ffi_op *op, char *why, size_t n) {
    tsr_call *call = NULL;
    pthread_mutex_lock(&op->lock);
    if (op->n_idle > 0) call = op->idle[--op->n_idle];
    pthread_mutex_unlock(&op->lock);
    if (call) return call;
    if (!(call = tsr_call_new(op->c, op->ep))) {
        snprintf(why, n, "out of memory for a call object");
        return NULL;
    }
    if (op->ep != TSR_EP_APPLY &&
        tsr_call_set_wrt(call, (const char *const *)op->wrt_in, op->n_wrt_in,
                         (const char *const *)op->wrt_out, op->n_wrt_out) != 0) {
        snprintf(why, n, "%s", tsr_call_errmsg(call));
        tsr_call_free(call);
        return NULL;
    }
    return call;
}

void ffi_op_give_call(ffi_op *op, tsr_call *call) {
    pthread_mutex_lock(&op->lock);
    if (op->n_idle == op->cap_idle) {
        int32_t cap = op->cap_idle ? 2 * op->cap_idle : 4;
        tsr_call **grown = realloc(op->idle, (size_t)cap * sizeof *grown);
        if (grown) {
            op->idle = grown;
            op->cap_idle = cap;
        }
    }
    if (op->n_idle < op->cap_idle) {
        op->idle[op->n_idle++] = call;
        call = NULL;
    }
    pthread_mutex_unlock(&op->lock);
    tsr_call_free(call);
}

void ffi_names_free(char **names, int32_t n) {
    for (int32_t k = 0; names && k < n; k++) free(names[k]);
    free(names);
}

void ffi_op_invalidate(ffi_op *op) {
    atomic_store(&op->live, 0);
    while (atomic_load(&op->inflight) > 0) sched_yield();
}

void ffi_op_clear(ffi_op *op, int free_calls) {
    for (int32_t k = 0; k < op->n_idle; k++)
        if (free_calls) tsr_call_free(op->idle[k]);
    free(op->idle);
    ffi_names_free(op->seed_names, op->n_seeds);
    ffi_names_free(op->wrt_in, op->n_wrt_in);
    ffi_names_free(op->wrt_out, op->n_wrt_out);
    free(op->input_at);
    free(op->ret_map);
    op->idle = NULL;
    op->n_idle = op->cap_idle = 0;
    op->seed_names = op->wrt_in = op->wrt_out = NULL;
    op->input_at = op->ret_map = NULL;
    op->c = NULL;
}

void ffi_ops_abandon(const tsr_component *c) {
    pthread_mutex_lock(&table_lock);
    for (uint32_t i = 0; i < n_entries; i++) {
        ffi_op *op = ffi_table_entry(i);
        if (op && op->c == c && atomic_load(&op->live)) ffi_op_invalidate(op);
    }
    pthread_mutex_unlock(&table_lock);
}

