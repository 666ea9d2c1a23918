/* SPDX-License-Identifier: MIT */
/*
 * Writes the generated seed corpora of the fuzz targets that take binary
 * or machine-made input: valid worker requests for every endpoint of the
 * contract test plugin (worker_request/), the answers its worker gives
 * (worker_answer/) and the schema it sends (worker_schema/). Built with the fuzz targets; run by hand when the
 * channel's layout changes:
 *
 *   write_seeds tests/fuzz/corpus
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fuzz_worker.h"
#include "core/schema_json.h"
#include "worker/worker.h"

static chan_block *b;
static uint64_t next_offset;

/* A wire array whose bytes lie in segment 0 (none for shapes only). */
static wire_array wire(tsr_dtype dtype, int32_t rank, const int64_t *shape, int with_data) {
    wire_array w;
    memset(&w, 0, sizeof w);
    w.dtype = dtype;
    w.rank = rank;
    uint64_t count = 1;
    for (int32_t d = 0; d < rank; d++) {
        w.shape[d] = shape[d];
        count *= shape[d] < 0 ? 0 : (uint64_t)shape[d];
    }
    int unknown = 0;
    for (int32_t d = 0; d < rank; d++) unknown |= shape[d] < 0;
    if (with_data && !unknown) {
        w.ref.offset = next_offset;
        w.ref.bytes = count * tsr_dtype_size(dtype);
        next_offset += (w.ref.bytes + 63) / 64 * 64 + 64;
    }
    return w;
}

static void write_seed(const char *dir, const char *name) {
    chan_request_view v;
    if (chan_request_layout(b, &v) != 0) abort();
    size_t data = chan_request_bytes(b->n_inputs, b->n_wrt_in, b->n_wrt_out, b->n_seeds,
                                     b->n_results);
    char path[4096];
    snprintf(path, sizeof path, "%s/worker_request/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&b->endpoint, 1, FUZZ_HEADER_BYTES, f) != FUZZ_HEADER_BYTES ||
        fwrite(chan_data(b), 1, data, f) != data || fclose(f) != 0) {
        fprintf(stderr, "write_seeds: cannot write %s\n", path);
        exit(1);
    }
}

static void begin(tsr_endpoint ep, int32_t n_wi, int32_t n_wo, int32_t n_s, int32_t n_r) {
    memset(b, 0, sizeof *b);
    b->endpoint = ep;
    b->n_inputs = 5;
    b->n_wrt_in = n_wi;
    b->n_wrt_out = n_wo;
    b->n_seeds = n_s;
    b->n_results = n_r;
    b->alloc_index = -1;
    next_offset = 0;
}

/* The contract plugin's inputs with n = 2, m = 1, 3 flags, k = 2. */
static const int64_t nodes[] = {2, 2}, cells[] = {1, 3}, flags[] = {3}, z[] = {2};
static const int64_t unknown[] = {-1}, none[] = {0};

static void inputs(chan_request_view *v, int with_data) {
    v->inputs[0] = wire(TSR_FLOAT64, 2, nodes, with_data);
    v->inputs[1] = wire(TSR_INT32, 2, cells, with_data);
    v->inputs[2] = wire(TSR_BOOL, 1, flags, with_data);
    v->inputs[3] = wire(TSR_FLOAT32, 0, none, with_data);
    v->inputs[4] = wire(TSR_COMPLEX128, 1, z, with_data);
}

static void requests(const char *dir) {
    chan_request_view v;
    /* apply: flags and ragged are the plugin's to size */
    begin(TSR_EP_APPLY, 0, 0, 0, 6);
    chan_request_layout(b, &v);
    inputs(&v, 1);
    v.results[0] = wire(TSR_FLOAT64, 2, nodes, 1);
    v.results[1] = wire(TSR_INT32, 2, cells, 1);
    v.results[2] = wire(TSR_BOOL, 1, unknown, 1);
    v.results[3] = wire(TSR_FLOAT64, 0, none, 1);
    v.results[4] = wire(TSR_COMPLEX128, 1, z, 1);
    v.results[5] = wire(TSR_FLOAT64, 1, unknown, 1);
    write_seed(dir, "apply.bin");
    /* abstract_eval: shapes only */
    begin(TSR_EP_ABSTRACT_EVAL, 0, 0, 0, 6);
    chan_request_layout(b, &v);
    inputs(&v, 0);
    v.results[0] = wire(TSR_FLOAT64, 2, nodes, 0);
    v.results[1] = wire(TSR_INT32, 2, cells, 0);
    v.results[2] = wire(TSR_BOOL, 1, unknown, 0);
    v.results[3] = wire(TSR_FLOAT64, 0, none, 0);
    v.results[4] = wire(TSR_COMPLEX128, 1, z, 0);
    v.results[5] = wire(TSR_FLOAT64, 1, unknown, 0);
    write_seed(dir, "abstract_eval.bin");
    /* jvp of moved.nodes and total along mesh.nodes and scale */
    begin(TSR_EP_JVP, 2, 2, 2, 2);
    chan_request_layout(b, &v);
    inputs(&v, 1);
    v.wrt_in[0] = 0, v.wrt_in[1] = 3, v.wrt_out[0] = 0, v.wrt_out[1] = 3;
    v.seeds[0] = wire(TSR_FLOAT64, 2, nodes, 1);
    v.seeds[1] = wire(TSR_FLOAT32, 0, none, 1);
    v.results[0] = wire(TSR_FLOAT64, 2, nodes, 1);
    v.results[1] = wire(TSR_FLOAT64, 0, none, 1);
    write_seed(dir, "jvp.bin");
    /* vjp of moved.nodes and z into mesh.nodes and z */
    begin(TSR_EP_VJP, 2, 2, 2, 2);
    chan_request_layout(b, &v);
    inputs(&v, 1);
    v.wrt_in[0] = 0, v.wrt_in[1] = 4, v.wrt_out[0] = 0, v.wrt_out[1] = 4;
    v.seeds[0] = wire(TSR_FLOAT64, 2, nodes, 1);
    v.seeds[1] = wire(TSR_COMPLEX128, 1, z, 1);
    v.results[0] = wire(TSR_FLOAT64, 2, nodes, 1);
    v.results[1] = wire(TSR_COMPLEX128, 1, z, 1);
    write_seed(dir, "vjp.bin");
    /* jacobian of moved.nodes and total by mesh.nodes and scale */
    begin(TSR_EP_JACOBIAN, 2, 2, 0, 4);
    chan_request_layout(b, &v);
    inputs(&v, 1);
    v.wrt_in[0] = 0, v.wrt_in[1] = 3, v.wrt_out[0] = 0, v.wrt_out[1] = 3;
    static const int64_t block[] = {2, 2, 2, 2};
    v.results[0] = wire(TSR_FLOAT64, 4, block, 1);
    v.results[1] = wire(TSR_FLOAT64, 2, nodes, 1);
    v.results[2] = wire(TSR_FLOAT64, 2, nodes, 1);
    v.results[3] = wire(TSR_FLOAT64, 0, none, 1);
    write_seed(dir, "jacobian.bin");
}

/* ---- answers, for fuzz_worker_answer -------------------------------------- */

/* What a worker leaves in the block for the host: endpoint ep's results at
 * their place in the host's layout, with the shapes the contract plugin
 * gives them; apply first asks for flags and ragged (CHAN_ALLOC). */
static void answers(const char *dir) {
    static const struct {
        const char *name;
        tsr_endpoint ep;
        int32_t n_wi, n_wo, n_s, n_r;
    } eps[] = {{"apply", TSR_EP_APPLY, 0, 0, 0, 6},     {"jvp", TSR_EP_JVP, 2, 2, 2, 2},
               {"vjp", TSR_EP_VJP, 2, 2, 2, 2},         {"jacobian", TSR_EP_JACOBIAN, 2, 2, 0, 4},
               {"abstract_eval", TSR_EP_ABSTRACT_EVAL, 0, 0, 0, 6}};
    static const int64_t block[] = {2, 2, 2, 2}, three[] = {3}, two[] = {2};
    for (size_t e = 0; e < sizeof eps / sizeof eps[0]; e++) {
        chan_request_view v;
        int rounds = eps[e].ep == TSR_EP_APPLY ? 2 : 0;
        size_t area = chan_request_bytes(5, eps[e].n_wi, eps[e].n_wo, eps[e].n_s, eps[e].n_r);
        char path[4096];
        snprintf(path, sizeof path, "%s/worker_answer/%s.bin", dir, eps[e].name);
        FILE *f = fopen(path, "wb");
        unsigned char sel[2] = {(unsigned char)eps[e].ep, (unsigned char)rounds};
        if (!f || fwrite(sel, 1, 2, f) != 2) exit(1);
        for (int r = 0; r <= rounds; r++) {
            memset(b, 0, sizeof *b + area + 64);
            chan_request_layout_of(b, 5, eps[e].n_wi, eps[e].n_wo, eps[e].n_s, eps[e].n_r, &v);
            wire_array *res = v.results;
            if (r < rounds) { /* CHAN_ALLOC: flags (3,), then ragged (2,) */
                b->alloc_index = r == 0 ? 2 : 5;
                res[b->alloc_index] = wire(r == 0 ? TSR_BOOL : TSR_FLOAT64, 1, r == 0 ? three : two, 0);
            } else if (eps[e].ep == TSR_EP_APPLY || eps[e].ep == TSR_EP_ABSTRACT_EVAL) {
                res[0] = wire(TSR_FLOAT64, 2, nodes, 0);
                res[1] = wire(TSR_INT32, 2, cells, 0);
                res[2] = wire(TSR_BOOL, 1, three, 0);
                res[3] = wire(TSR_FLOAT64, 0, none, 0);
                res[4] = wire(TSR_COMPLEX128, 1, z, 0);
                res[5] = wire(TSR_FLOAT64, 1, two, 0);
            } else if (eps[e].ep == TSR_EP_JACOBIAN) {
                res[0] = wire(TSR_FLOAT64, 4, block, 0);
                res[1] = wire(TSR_FLOAT64, 2, nodes, 0);
                res[2] = wire(TSR_FLOAT64, 2, nodes, 0);
                res[3] = wire(TSR_FLOAT64, 0, none, 0);
            } else { /* jvp: moved.nodes, total; vjp: mesh.nodes, scale */
                res[0] = wire(TSR_FLOAT64, 2, nodes, 0);
                res[1] = wire(eps[e].ep == TSR_EP_JVP ? TSR_FLOAT64 : TSR_FLOAT32, 0, none, 0);
            }
            if (fwrite(&b->endpoint, 1, FUZZ_HEADER_BYTES, f) != FUZZ_HEADER_BYTES ||
                fwrite(chan_data(b), 1, area, f) != area)
                exit(1);
        }
        if (fclose(f) != 0) exit(1);
    }
}

static void schema(const char *dir, const tsr_component *c) {
    schema_worker_extra extra = {.implemented = (1u << TSR_EP_COUNT) - 1};
    char *text = schema_json_for_worker(c, &extra);
    char path[4096];
    snprintf(path, sizeof path, "%s/worker_schema/contract.json", dir);
    FILE *f = fopen(path, "w");
    if (!text || !f || fputs(text, f) == EOF || fclose(f) != 0) {
        fprintf(stderr, "write_seeds: cannot write %s\n", path);
        exit(1);
    }
    free(text);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: write_seeds CORPUS_DIR\n");
        return 2;
    }
    b = mmap(NULL, CHAN_SEGMENT_BYTES, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    tsr_component *c;
    tsr_error err = TSR_ERROR_INIT;
    if (b == MAP_FAILED || tsr_open(FUZZ_PLUGIN, NULL, &c, &err) != 0) {
        fprintf(stderr, "write_seeds: %s\n", b == MAP_FAILED ? "mmap failed" : err.message);
        return 1;
    }
    requests(argv[1]);
    answers(argv[1]);
    schema(argv[1], c);
    tsr_close(c);
    printf("write_seeds: seeds written under %s\n", argv[1]);
    return 0;
}
