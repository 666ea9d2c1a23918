/* SPDX-License-Identifier: MIT */
/* Gradient checks: the PRNG, sampling without replacement, element access
 * and per-dtype tolerances. */
#include <float.h>

#include "gradcheck_internal.h"

/* splitmix64 (Steele, Lea, Flood 2014): small, fast, good enough to draw
 * indices and directions, and its state is one integer. */
uint64_t gc_rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t gc_rng_init(uint64_t seed, uint32_t purpose, int32_t field) {
    uint64_t s = seed;
    uint64_t mixed = gc_rng_next(&s) ^ ((uint64_t)purpose << 32) ^ (uint32_t)field;
    return gc_rng_next(&mixed);
}

double gc_rng_unit(uint64_t *state) { return (double)(gc_rng_next(state) >> 11) * 0x1.0p-53; }

double gc_rng_sym(uint64_t *state) { return 2.0 * gc_rng_unit(state) - 1.0; }

/* Magnitudes in [0.5, 1): a direction with a tiny component would hide
 * that component's derivative under rounding. */
double gc_rng_direction(uint64_t *state) {
    double u = gc_rng_sym(state);
    return u < 0 ? u - 0.5 * (1.0 + u) : u + 0.5 * (1.0 - u);
}

/* Selection sampling (Knuth's Algorithm S): one pass, sorted, exactly k. */
int64_t gc_sample(uint64_t *state, int64_t n, int64_t k, int64_t *out) {
    if (k >= n) {
        for (int64_t i = 0; i < n; i++) out[i] = i;
        return n;
    }
    int64_t chosen = 0;
    for (int64_t i = 0; i < n && chosen < k; i++) {
        if ((double)(n - i) * gc_rng_unit(state) < (double)(k - chosen)) out[chosen++] = i;
    }
    return chosen;
}

int gc_is_real(tsr_dtype dt) { return dt == TSR_FLOAT32 || dt == TSR_FLOAT64; }

double gc_unit_roundoff(tsr_dtype dt) {
    return dt == TSR_FLOAT32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
}

double gc_get(const void *data, tsr_dtype dt, int64_t i) {
    return dt == TSR_FLOAT32 ? (double)((const float *)data)[i] : ((const double *)data)[i];
}

double gc_set(void *data, tsr_dtype dt, int64_t i, double v) {
    if (dt == TSR_FLOAT32) {
        ((float *)data)[i] = (float)v;
        return (double)((float *)data)[i];
    }
    ((double *)data)[i] = v;
    return v;
}

void gc_unravel(int64_t index, int32_t rank, const int64_t *shape, int64_t *multi) {
    for (int32_t d = rank - 1; d >= 0; d--) {
        int64_t n = shape[d] > 0 ? shape[d] : 1;
        multi[d] = index % n;
        index /= n;
    }
}

static int pair_is_f32(const gc_in *in, const gc_out *out) {
    return (in && in->dtype == TSR_FLOAT32) || (out && out->dtype == TSR_FLOAT32);
}

double gc_rtol(const gc_session *s, const gc_in *in, const gc_out *out) {
    if (s->rtol > 0) return s->rtol;
    return pair_is_f32(in, out) ? TSR_GRADCHECK_F32_RTOL : TSR_GRADCHECK_F64_RTOL;
}

double gc_atol(const gc_session *s, const gc_in *in, const gc_out *out) {
    if (s->atol > 0) return s->atol;
    return pair_is_f32(in, out) ? TSR_GRADCHECK_F32_ATOL : TSR_GRADCHECK_F64_ATOL;
}
