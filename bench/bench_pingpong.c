/* SPDX-License-Identifier: MIT */
/*
 * The floor under a worker-mode call, alone and quickly: a futex ping-pong
 * between two processes (bench/pingpong.c, the same baseline bench_worker
 * measures in its round-trip section), for bench/report.py.
 *
 *     bench_pingpong [--batches B] [--calls K] [--spin NS]...
 *
 * Prints one CSV line per spin setting: spin_ns,batches,calls_per_batch,
 * p10_ns,median_ns,p90_ns (nanoseconds per round trip over the batches).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "pingpong.h"

int main(int argc, char **argv) {
    int batches = 20, calls = 2000, n_spins = 0;
    long long spins[8];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--batches") && i + 1 < argc) batches = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--spin") && i + 1 < argc && n_spins < 8)
            spins[n_spins++] = atoll(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_pingpong [--batches B] [--calls K] [--spin NS]...\n");
            return 2;
        }
    }
    if (n_spins == 0) spins[n_spins++] = 200000;
    if (batches < 1) batches = 1;
    if (calls < 1) calls = 1;
    double *v = malloc(sizeof(double) * (size_t)batches);
    if (!v) return 1;
    pingpong pp;
    if (pingpong_start(&pp) != 0) {
        perror("bench_pingpong: cannot start the answering process");
        free(v);
        return 1;
    }
    printf("spin_ns,batches,calls_per_batch,p10_ns,median_ns,p90_ns\n");
    for (int s = 0; s < n_spins; s++) {
        pingpong_set_spin(&pp, spins[s]);
        pingpong_roundtrip(&pp);
        for (int b = 0; b < batches; b++) {
            int64_t t0 = bench_now_ns();
            for (int k = 0; k < calls; k++) pingpong_roundtrip(&pp);
            v[b] = (double)(bench_now_ns() - t0) / calls;
        }
        double p10 = bench_quantile(v, (size_t)batches, 0.1);
        double med = bench_quantile(v, (size_t)batches, 0.5);
        double p90 = bench_quantile(v, (size_t)batches, 0.9);
        printf("%lld,%d,%d,%.1f,%.1f,%.1f\n", spins[s], batches, calls, p10, med, p90);
    }
    pingpong_stop(&pp);
    free(v);
    return 0;
}
