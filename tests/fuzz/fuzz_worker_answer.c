/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the host's side of a worker-mode call, reading what the
 * worker wrote into the control block: its CHAN_ALLOC requests (the shape
 * of a result it sizes itself) and its final answer (status, message, the
 * results' dtypes, ranks, shapes and binrefs). A broken or hostile worker
 * must make the call fail with a message, never crash or corrupt the host.
 *
 * The call is real: the contract test plugin opened in worker mode (a
 * worker is started once, and never sent a request), the call validated
 * by call_validate with its results allocated in the component's arena;
 * the block is private memory standing in for the channel.
 *
 * Input: the endpoint (byte 0 % 5), the number of CHAN_ALLOC rounds before
 * the answer (byte 1 % 4), then one chunk per round and one for the
 * answer, of equal length: each chunk is FUZZ_HEADER_BYTES of the block's
 * fields (endpoint .. plugin_status), then the data area.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/internal.h"
#include "fuzz_target.h"
#include "fuzz_worker.h"
#include "backends/worker/pool.h"

static tsr_component *comp;
static chan_block *blk;
static size_t last_len;

static void teardown(void) { tsr_close(comp); }

static void setup(void) {
    tsr_error err = TSR_ERROR_INIT;
    blk = mmap(NULL, CHAN_SEGMENT_BYTES, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    /* Small limits: a hostile worker may size results as large as they
     * allow. */
    tsr_options *o = tsr_options_new();
    if (blk == MAP_FAILED || !o || tsr_options_set(o, "mode", "worker", &err) != 0 ||
        tsr_options_set(o, "worker_exe", FUZZ_WORKER, &err) != 0 ||
        tsr_options_set(o, "transport", "shm", &err) != 0 ||
        tsr_options_set(o, "max_array_bytes", "1048576", &err) != 0 ||
        tsr_options_set(o, "max_call_bytes", "1048576", &err) != 0 ||
        tsr_options_set(o, "max_arena_bytes", "4194304", &err) != 0 ||
        tsr_open(FUZZ_PLUGIN, o, &comp, &err) != 0) {
        fprintf(stderr, "fuzz_worker_answer: setup failed: %s\n", err.message);
        abort();
    }
    tsr_options_free(o);
    atexit(teardown);
}

static double nodes[4] = {1, 2, 3, 4}, d_nodes[4] = {1, 0, 0, 1};
static int32_t cells[3] = {0, 1, 2};
static _Bool flags[3] = {1, 0, 1};
static float scale = 0.5f;
static double z[4] = {1, -1, 0.5, 2};

static tsr_call *make_call(tsr_endpoint ep) {
    tsr_call *call = tsr_call_new(comp, ep);
    if (!call) return NULL;
    tsr_array a[5] = {{nodes, TSR_FLOAT64, 2, {2, 2}}, {cells, TSR_INT32, 2, {1, 3}},
                      {flags, TSR_BOOL, 1, {3}}, {&scale, TSR_FLOAT32, 0, {0}},
                      {z, TSR_COMPLEX128, 1, {2}}};
    for (int32_t i = 0; i < 5; i++) tsr_call_set_input_at(call, i, &a[i]);
    const char *in[2] = {"mesh.nodes", "scale"}, *out[2] = {"moved.nodes", "total"};
    if (ep == TSR_EP_JVP || ep == TSR_EP_VJP || ep == TSR_EP_JACOBIAN)
        tsr_call_set_wrt(call, in, 2, out, 2);
    tsr_array tn = {d_nodes, TSR_FLOAT64, 2, {2, 2}}, ts = {&scale, TSR_FLOAT32, 0, {0}};
    tsr_array tt = {&z[0], TSR_FLOAT64, 0, {0}};
    if (ep == TSR_EP_JVP) {
        tsr_call_set_seed(call, "mesh.nodes", &tn);
        tsr_call_set_seed(call, "scale", &ts);
    } else if (ep == TSR_EP_VJP) {
        tsr_call_set_seed(call, "moved.nodes", &tn);
        tsr_call_set_seed(call, "total", &tt);
    }
    return call;
}

/* Lay a chunk over the block, as a worker would have written it. */
static void overlay(const uint8_t *chunk, size_t len) {
    size_t head = len < FUZZ_HEADER_BYTES ? len : FUZZ_HEADER_BYTES;
    memset(&blk->endpoint, 0, FUZZ_HEADER_BYTES);
    memcpy(&blk->endpoint, chunk, head);
    size_t rest = len - head;
    char *area = chan_data(blk);
    if (last_len > rest) memset(area + rest, 0, last_len - rest);
    if (rest) memcpy(area, chunk + head, rest);
    last_len = rest;
}

static void check_code(int rc, const tsr_call *call) {
    if (rc > 0 || rc < CHAN_STATUS_MIN || (rc && tsr_call_errmsg(call)[0] == '\0')) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    if (!comp) setup();
    tsr_endpoint ep = (tsr_endpoint)(data[0] % TSR_EP_COUNT);
    int rounds = data[1] % 4;
    data += 2;
    size -= 2;
    size_t chunk = size / (size_t)(rounds + 1);
    tsr_call *call = make_call(ep);
    if (!call) return 0;
    int rc = call_validate(call);
    for (int r = 0; !rc && r < rounds; r++) {
        overlay(data + (size_t)r * chunk, chunk);
        worker_answer_alloc(call, blk);
        /* The host's answer: a status that is 0 or a real code. */
        int32_t st = blk->status;
        if (st > 0 || st < CHAN_STATUS_MIN) __builtin_trap();
    }
    if (!rc) {
        overlay(data + (size_t)rounds * chunk, size - (size_t)rounds * chunk);
        rc = worker_answer_done(call, blk);
        if (!rc) rc = results_check(call);
    }
    check_code(rc, call);
    tsr_call_free(call);
    return 0;
}
