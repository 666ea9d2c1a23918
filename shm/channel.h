/* SPDX-License-Identifier: MIT */
/*
 * The host<->worker channel: one control block in a shared-memory segment
 * of its own (a memfd the worker inherits), and two eventfd doorbells.
 *
 * One request is in flight at a time. Each side announces a new state by
 * storing it (sequentially consistent) and rings the peer's doorbell only
 * if the peer said it sleeps. The waiting side spins on the state for a
 * tunable time (a chain of cheap calls then costs a few hundred ns per
 * round trip) and then sleeps in poll() on its doorbell, together with
 * other fds: the peer's pidfd, so that a dead peer wakes it at once, and
 * for the host the worker's output pipe. An idle side uses no CPU.
 *
 * Sequence of states for one call:
 *   host:   writes the request, posts CHAN_REQUEST
 *   worker: runs the endpoint; for a result whose shape depends on values
 *           it writes the shape into the result's wire_array and posts
 *           CHAN_ALLOC (alloc_index = k); the host allocates in the arena,
 *           sets the binref (or status/message on refusal) and posts
 *           CHAN_ALLOC_DONE; this may repeat
 *   worker: writes status, message and (on success) each result's dtype,
 *           rank and shape, posts CHAN_DONE; binrefs are left as the host
 *           wrote them
 * At start the host writes the configuration into the data area before it
 * starts the worker; the worker reads it, then overwrites it with the
 * component's schema as JSON text (NUL-terminated, at chan_data() + 0)
 * and posts CHAN_READY with status 0, or posts CHAN_READY with a failure
 * status and message and exits.
 * The host posts CHAN_EXIT to make an idle worker leave.
 *
 * The segment is sparse: only the first 64 KiB are allocated (and faulted
 * in) at creation. A writer that needs more of the data area calls
 * chan_reserve first, so that running out is an error, never a SIGBUS.
 */
#ifndef TESSERA_CODECS_CHANNEL_H
#define TESSERA_CODECS_CHANNEL_H

#include <poll.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/tessera.h"
#include "arena.h"

#define CHAN_MAGIC 0x54535243u   /* "TSRC" */
#define CHAN_VERSION 4u
/* The control segment is created sparse at this size; only the pages a
 * request touches are ever allocated. */
#define CHAN_SEGMENT_BYTES (16u << 20)

/* The lowest TSR_E_* code: a status from the other side that is not
 * between it and -1 is not a code, and is not passed on as one. */
#define CHAN_STATUS_MIN TSR_E_VALUE

enum chan_state {
    CHAN_IDLE = 0,
    CHAN_REQUEST = 1,     /* host -> worker */
    CHAN_ALLOC = 2,       /* worker -> host */
    CHAN_ALLOC_DONE = 3,  /* host -> worker */
    CHAN_DONE = 4,        /* worker -> host */
    CHAN_READY = 5,       /* worker -> host, once */
    CHAN_EXIT = 6         /* host -> worker */
};
#define CHAN_BIT(s) (1u << (s))

/* An array as it crosses: where its bytes are, and its header. */
typedef struct wire_array {
    binref ref;
    int32_t dtype;
    int32_t rank;
    int64_t shape[TSR_MAX_RANK];
} wire_array;

typedef struct chan_block {
    uint32_t magic;
    uint32_t version;
    uint64_t size;                  /* bytes of the segment */
    _Atomic uint32_t state;
    _Atomic uint32_t host_sleeping;
    _Atomic uint32_t worker_sleeping;
    /* The host clears it before CHAN_REQUEST and sets it to cancel the
     * call: the worker refuses a request it has not started, and the
     * plugin's tsr_ctx_cancelled reads it. */
    _Atomic uint32_t cancel;
    /* the request (host -> worker): how the worker prepares the results
     * before the endpoint runs (option unwritten: 0 zeros, 1 a marker it
     * checks afterwards) */
    int32_t unwritten;
    int32_t endpoint;
    int32_t n_inputs, n_wrt_in, n_wrt_out, n_seeds, n_results;
    int32_t alloc_index;            /* CHAN_ALLOC: which result */
    /* Bytes of the request's paths (chan_request_paths), 0 when no entry
     * of its derivative lists is on a JSON field. */
    uint32_t paths_bytes;
    /* The host clears it before CHAN_REQUEST, the worker sets it when it
     * takes the request: a worker found dead with taken == 0 died idle,
     * and the request can safely go to a restarted worker. */
    _Atomic int32_t taken;
    /* The CPU each side ran on when it last posted a state (-1: not yet,
     * or unknown): a waiter whose peer keeps to its own CPU, wait after
     * wait, yields at once instead of spinning (chan_wait.c). */
    _Atomic int32_t host_cpu, worker_cpu;
    /* When each side last rang the other's doorbell (CLOCK_MONOTONIC ns):
     * a waiter that slept learns from it how long its peer took, its own
     * wake-up left out (chan_wait.c). */
    _Atomic uint64_t host_rang_ns, worker_rang_ns;
    /* the answer (worker -> host) */
    int32_t status;                 /* 0 or a TSR_E_* code */
    int32_t plugin_status;          /* what the endpoint returned */
    char message[TSR_ERRMSG_MAX];   /* NUL-terminated */
    /* Variable area, at chan_data(): for a request, in order and each
     * 8-byte aligned: int32 wrt_in[n_wrt_in], int32 wrt_out[n_wrt_out],
     * wire_array inputs[n_inputs], seeds[n_seeds], results[n_results];
     * then paths_bytes bytes of paths: for each entry of wrt_in, then of
     * wrt_out, whose field is JSON (and for no other), its path inside the
     * field (the field's name, or it followed by ".{key}", ".[N]", ".name"
     * parts), NUL-terminated, in order.
     * At start: the configuration (host -> worker) as JSON text
     * {"KEY": "VALUE", ...}; the worker replaces it with the schema
     * (worker -> host) as JSON text, both at chan_data() + 0.
     * A result the plugin is to allocate (its shape depends on values) has
     * ref.bytes == 0 and -1 for the dims it decides; a derivative result at
     * an entry on a JSON field always has ref.bytes == 0 (dtype float64 and
     * rank 0 until the plugin sets its own: with CHAN_ALLOC the worker
     * writes its dtype, rank and shape, and the host checks the dtype is a
     * float one). For abstract_eval
     * only headers count: binrefs are ignored, results may have -1 dims.
     * Every other array's ref.bytes must equal its element count times
     * its dtype's size, and dtypes and ranks must be the schema's. */
} chan_block;

/* The alignment an array's bytes need on the wire: its element's size (a
 * complex element is a pair, aligned as one of its parts). The worker
 * refuses binrefs that break it; the host stages inputs that would. */
static inline uint64_t wire_alignment(tsr_dtype dtype) {
    size_t size = tsr_dtype_size(dtype);
    if (dtype == TSR_COMPLEX64 || dtype == TSR_COMPLEX128) size /= 2;
    return size ? (uint64_t)size : 1;
}

/* Pointers into the variable area of a request. */
typedef struct chan_request_view {
    int32_t *wrt_in, *wrt_out;
    wire_array *inputs, *seeds, *results;
} chan_request_view;

static inline char *chan_data(chan_block *b) { return (char *)b + ((sizeof *b + 63) & ~(size_t)63); }
/* From the constant size, never from b->size, which the peer could change. */
static inline size_t chan_data_capacity(const chan_block *b) {
    (void)b;
    return (size_t)CHAN_SEGMENT_BYTES - ((sizeof *b + 63) & ~(size_t)63);
}
/* Bytes the variable area needs for these counts; 0 when a count is
 * negative or they do not fit the data area (and when all are 0). */
size_t chan_request_bytes(int32_t n_inputs, int32_t n_wrt_in, int32_t n_wrt_out, int32_t n_seeds,
                          int32_t n_results);
/* Lay out the request whose counts are in b; -1 if they are negative or do
 * not fit (a worker must check this before trusting any count). */
int chan_request_layout(chan_block *b, chan_request_view *v);
/* The same for counts the caller knows: the host lays out its own request
 * from its own counts, never from the block, which the worker may have
 * changed. */
int chan_request_layout_of(chan_block *b, int32_t n_inputs, int32_t n_wrt_in, int32_t n_wrt_out,
                           int32_t n_seeds, int32_t n_results, chan_request_view *v);

/* Where the request's paths start (after request_bytes, what
 * chan_request_bytes gives for its counts), or NULL when paths_bytes more
 * do not fit the data area. */
static inline char *chan_request_paths(chan_block *b, size_t request_bytes, uint32_t paths_bytes) {
    size_t cap = chan_data_capacity(b);
    if (request_bytes > cap || paths_bytes > cap - request_bytes) return NULL;
    return chan_data(b) + request_bytes;
}

/* One side's handle on a channel. */
typedef struct chan_end {
    chan_block *blk;
    int fd;                         /* the segment; closed by chan_close */
    size_t reserved;                /* bytes of the segment known allocated */
    int my_bell;                    /* eventfd this side sleeps on */
    int peer_bell;                  /* eventfd this side rings */
    _Atomic uint32_t *my_sleeping;
    _Atomic uint32_t *peer_sleeping;
    _Atomic int32_t *my_cpu;        /* where this side posts its CPU */
    _Atomic int32_t *peer_cpu;
    _Atomic uint64_t *my_rang_ns;   /* where this side notes when it rang */
    _Atomic uint64_t *peer_rang_ns;
    uint64_t spin_ns;               /* the longest spin before sleeping */
    int spin_adaptive;              /* spin about twice the recent waits, at most spin_ns */
    uint64_t wait_est_ns;           /* the recent waits' moving average (adaptive) */
    uint32_t long_waits;            /* waits in a row past spin_ns: pauses, until too many */
    uint64_t crowded_until;         /* adaptive: spins do not yield before this time */
    uint64_t together_until;        /* until then the peer shares this CPU: yield at once */
    uint32_t same_cpu_waits;        /* waits in a row that found the peer on this CPU */
    int slept;                      /* the last chan_wait slept (made system calls) */
    int return_on_signal;           /* chan_wait returns CHAN_WAIT_SIGNAL when a signal
                                       handler interrupts its sleep (else it sleeps on) */
    int in_file;                    /* the host's block is a file (chan_create_file) */
} chan_end;

/* Host side: create the control segment (a memfd: no name, sealed at its
 * size) and both eventfds; fds are close-on-exec. The worker receives
 * them by inheritance (see worker_proc.h): the segment (*chan_fd, the same
 * fd as host->fd), its doorbell host->peer_bell and the host's doorbell
 * host->my_bell. host->spin_ns starts at 0.
 * Returns 0, TSR_E_SHM or TSR_E_WORKER (no eventfd) with a cause in why. */
int chan_create(chan_end *host, int *chan_fd, char *why, size_t n);
/* The same with the control block in a file of directory dir that has no
 * name (for the files transport, where shared memory may be unusable): a
 * MAP_SHARED file mapping, the same layout, nothing to unlink. Returns 0,
 * TSR_E_IO or TSR_E_WORKER. */
int chan_create_file(chan_end *host, int *chan_fd, const char *dir, char *why, size_t n);
/* Worker side: map the control block from an inherited fd, which the end
 * then owns (as it owns the two eventfds). */
int chan_attach(chan_end *worker, int chan_fd, int my_bell, int peer_bell, char *why, size_t n);
/* Make sure the first data_bytes of the data area are allocated (cheap when
 * they are). Call before writing more than the first 64 KiB. Returns 0,
 * TSR_E_ARGUMENT when they exceed the data area, or TSR_E_SHM. */
int chan_reserve(chan_end *e, size_t data_bytes, char *why, size_t n);
/* Unmap and close the segment's fd and the eventfds. Nothing has a name:
 * the kernel frees the segment when neither side holds it any more. */
void chan_close(chan_end *e);

/* Store a new state and ring the peer if it sleeps. */
void chan_post(chan_end *e, uint32_t state);

/* Ask the kernel, once per thread, for a 100 us time slice (chan_slice.c):
 * chan_wait calls it for the library's adaptive waits. */
void chan_short_slice(void);

#define CHAN_WAIT_TIMEOUT (-1)
#define CHAN_WAIT_FD (-2)
#define CHAN_WAIT_ERROR (-3)   /* poll() failed or the doorbell is invalid (errno kept) */
#define CHAN_WAIT_SIGNAL (-4)  /* a signal handler ran (only with e->return_on_signal) */
/*
 * Wait until the state is one of want_mask (CHAN_BIT(...)). Spins for
 * e->spin_ns (or, with spin_adaptive, about twice the recent waits, at
 * most that; yielding the CPU past the first microseconds), then sleeps on the doorbell and on extra[0..n_extra) (events
 * POLLIN) for at most timeout_ms in total (-1: no limit). Returns the state
 * reached, CHAN_WAIT_TIMEOUT, or CHAN_WAIT_FD with *ready set to the index
 * of an extra fd that became readable (the caller handles it and may wait
 * again with the time that is left), CHAN_WAIT_SIGNAL (see return_on_signal)
 * or CHAN_WAIT_ERROR. A state reached wins over a readable fd. At most 8 extra fds; negative fds are ignored.
 */
int chan_wait(chan_end *e, uint32_t want_mask, struct pollfd *extra, int n_extra, int timeout_ms,
              int *ready);

#endif
