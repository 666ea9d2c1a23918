/* SPDX-License-Identifier: MIT */
/*
 * The table of FFI ops (ffi_table.c): what one tessera_call custom call in an XLA program runs (a
 * component, an endpoint, its wrt fields, a batch size, where each XLA
 * result comes from). Compiled programs name an op by a 64-bit handle
 * (an attribute of the custom call): generation << 32 | table index.
 *
 * Inputs the caller left out are no operands: the op's calls never bind
 * them, so the library gives each its default or marks it absent
 * (TSR_FIELD_OPTIONAL), as for any caller that leaves it out.
 *
 * Ops live in a table that only grows, so the handler (on XLA's threads,
 * without the GIL) can always read the entry a handle points to. An op
 * answers only while `live` equals the handle: closing its component
 * clears `live` and waits for the calls in flight before releasing
 * anything, and a program run after that gets an error, not a stale
 * component.
 */
#ifndef TESSERA_PY_FFI_TABLE_H
#define TESSERA_PY_FFI_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <tessera/tessera.h>

typedef struct ffi_op {
    _Atomic uint64_t live;      /* the handle this op answers to; 0: none */
    _Atomic int inflight;       /* handler calls using the op now */
    uint32_t generation;        /* bumped at each reuse of the entry */
    tsr_component *c;
    tsr_endpoint ep;
    int32_t n_inputs;           /* operands: the given inputs in schema order ... */
    int32_t *input_at;          /* ... operand i binds input input_at[i] ... */
    int32_t n_seeds;            /* ... then tangents (jvp), cotangents (vjp), or
                                   cotangents of wrt_out then tangents of wrt_in (hvp) */
    char **seed_names;
    int32_t n_wrt_in, n_wrt_out;
    char **wrt_in, **wrt_out;
    int64_t batch;              /* > 0: operands carry a leading batch axis */
    int32_t n_rets;
    int32_t *ret_map;           /* XLA result k <- call result ret_map[k]; -1: NaN */
    pthread_mutex_t lock;       /* guards the idle calls */
    tsr_call **idle;
    int32_t n_idle, cap_idle;
} ffi_op;

/* The op a handle names, counted in flight, or NULL if it is not live.
 * Release with ffi_op_leave. Called without the GIL. */
ffi_op *ffi_op_enter(uint64_t handle);
void ffi_op_leave(ffi_op *op);

/* A call object for one run (NULL when out of memory or when the wrt
 * fields are refused, with the message in *why), and its return. */
tsr_call *ffi_op_take_call(ffi_op *op, char *why, size_t n);
void ffi_op_give_call(ffi_op *op, tsr_call *call);

/* Invalidate every op of a component closed at exit (core_close_all). */
void ffi_ops_abandon(const tsr_component *c);

/* The owner's side (ffi_ops.c), with the GIL held. */

/* A free entry and its index, or NULL when out of memory. */
ffi_op *ffi_table_alloc(uint32_t *index);
/* Give an entry back for reuse (cleared and invalidated first). */
void ffi_table_release(uint32_t index);
/* The entry at an index handed out by ffi_table_alloc. */
ffi_op *ffi_table_entry(uint32_t index);
/* Stop answering and wait for the handler calls in flight. */
void ffi_op_invalidate(ffi_op *op);
/* Release what the op holds; free_calls is 0 when its component was
 * already closed (at exit). */
void ffi_op_clear(ffi_op *op, int free_calls);
/* Free n names made with malloc, and their array (names may be NULL). */
void ffi_names_free(char **names, int32_t n);

#endif /* TESSERA_PY_FFI_TABLE_H */
