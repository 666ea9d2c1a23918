/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a request as the worker finds it in shared memory. The
 * worker's own code (worker_run_request) runs in this process on a fake
 * worker_state: a real arena (created here, its segment handed over a
 * socket pair to a real arena view), the contract test plugin loaded
 * in-process, and a private control
 * block standing in for the channel's segment. A corrupted or hostile
 * request must end in an answer with an error status, never in a fault of
 * the worker, and never reach the plugin with arguments it could not get
 * from a real host (the plugin traps on those).
 *
 * Input: the request fields of chan_block (endpoint .. plugin_status,
 * FUZZ_HEADER_BYTES of them), then the variable area (wrt lists and wire
 * arrays; binrefs name segment 0 of the 1 MiB arena).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_target.h"
#include "fuzz_worker.h"
#include "worker/worker.h"

static worker_state ws;
static arena *host_arena;
static size_t last_len;         /* bytes of the data area the last input wrote */

/* What the run made goes when it ends (memfds: nothing could outlive it). */
static void teardown(void) {
    served_free(ws.srv);
    tsr_close(ws.comp);
    arena_destroy(host_arena);
}

static void setup(void) {
    char why[512];
    tsr_error err = TSR_ERROR_INIT;
    void *blk = mmap(NULL, CHAN_SEGMENT_BYTES, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int pair[2] = {-1, -1};
    uint32_t sent = 0;
    if (blk == MAP_FAILED || arena_create(&host_arena, FUZZ_ARENA_BYTES, why, sizeof why) != 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0 ||
        arena_send_segments(host_arena, pair[0], &sent, why, sizeof why) != 0 ||
        arena_view_open(&ws.view, pair[1], why, sizeof why) != 0 ||
        tsr_open(FUZZ_PLUGIN, NULL, &ws.comp, &err) != 0 || !(ws.srv = served_new(ws.comp))) {
        fprintf(stderr, "fuzz_worker_request: setup failed\n");
        abort();
    }
    close(pair[0]);   /* the segment is in the view's queue already */
    atexit(teardown);
    /* The arena holds whatever a host left there: a pattern. */
    void *all = arena_alloc(host_arena, FUZZ_ARENA_BYTES, why, sizeof why);
    if (all) memset(all, 0x3c, FUZZ_ARENA_BYTES);
    ws.end.blk = blk;
    ws.end.fd = ws.end.my_bell = ws.end.peer_bell = -1;
    ws.host_pidfd = -1;
    /* No host answers CHAN_ALLOC here: tsr_ctx_alloc is refused at once. */
    ws.host_gone = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ws.comp) setup();
    chan_block *b = ws.end.blk;
    size_t head = size < FUZZ_HEADER_BYTES ? size : FUZZ_HEADER_BYTES;
    memset(&b->endpoint, 0, FUZZ_HEADER_BYTES);
    memcpy(&b->endpoint, data, head);
    size_t rest = size - head;
    if (rest > chan_data_capacity(b)) rest = chan_data_capacity(b);
    char *area = chan_data(b);
    if (last_len > rest) memset(area + rest, 0, last_len - rest);
    if (rest) memcpy(area, data + head, rest);
    last_len = rest;
    memset(b->message, 0x7f, sizeof b->message);
    worker_run_request(&ws);
    /* The answer: 0 or a real code, and a terminated message (one that
     * says something when the request failed). */
    int32_t st = b->status;
    if (st > 0 || st < CHAN_STATUS_MIN || memchr(b->message, '\0', sizeof b->message) == NULL ||
        (st != 0 && b->message[0] == '\0'))
        __builtin_trap();
    return 0;
}
