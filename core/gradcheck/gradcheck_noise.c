/* SPDX-License-Identifier: MIT */
/* Gradient checks: how noisy apply is. A solver's output carries rounding
 * far above the unit roundoff (ill-conditioned systems, long time loops),
 * and a central difference divides that noise by the step: without an
 * estimate of it, a correct derivative fails. The estimate follows More and
 * Wild's ECnoise ("Estimating computational noise", SIAM J. Sci. Comput.
 * 33(3), 2011): apply at NOISE_POINTS equally spaced points along a random
 * direction, and read the noise off the higher differences of each output. */
#include <math.h>
#include <string.h>

#include "gradcheck_internal.h"

enum { PURPOSE_NOISE = 7 };

/* The step of the noise probe, relative to the FD step: small enough that
 * the smooth part of the third and higher differences vanishes, large
 * enough to change the input's bits. */
#define PROBE_FRACTION 1e-2

/* ECnoise on n values f[0..n-1] (overwritten). Returns the noise's standard
 * deviation, 0 when the values do not differ, and when no level qualifies
 * the smallest of the second and higher levels. */
static double ecnoise(double *f, int n) {
    double level[GC_NOISE_POINTS], gamma = 1.0;
    int sign_change[GC_NOISE_POINTS];
    for (int j = 1; j < n; j++) {
        int zeros = 0;
        double sum = 0.0, lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < n - j; i++) {
            f[i] = f[i + 1] - f[i];
            zeros += f[i] == 0.0;
            sum += f[i] * f[i];
            lo = fmin(lo, f[i]);
            hi = fmax(hi, f[i]);
        }
        if (j == 1 && 2 * zeros >= n - 1) return 0.0; /* below resolution */
        gamma *= 0.5 * j / (2.0 * j - 1.0);
        level[j] = sqrt(gamma * sum / (n - j));
        sign_change[j] = lo * hi < 0.0;
    }
    for (int k = 1; k + 2 < n; k++) {
        double lo = fmin(level[k], fmin(level[k + 1], level[k + 2]));
        double hi = fmax(level[k], fmax(level[k + 1], level[k + 2]));
        if (hi <= 4.0 * lo && sign_change[k]) return level[k];
    }
    double least = INFINITY;
    for (int k = 2; k < n; k++) least = fmin(least, level[k]);
    return isfinite(least) ? least : 0.0;
}

int gc_noise_levels(gc_session *s, int32_t k, double *delta, double *table, const tsr_array **res) {
    gc_in *in = &s->in[k];
    const int half = GC_NOISE_POINTS / 2;
    uint64_t rng = gc_rng_init(s->seed, PURPOSE_NOISE, in->field);
    double h = in->eps * PROBE_FRACTION;
    memcpy(table + (size_t)half * s->m_total, s->base, (size_t)s->m_total * sizeof *table);
    int rc = 0;
    for (int p = -half; !rc && p <= half; p++) {
        if (p == 0) continue;
        uint64_t r = rng; /* the same direction at every point */
        for (int64_t i = 0; i < in->n; i++) {
            double x = gc_get(in->orig, in->dtype, i);
            double scale = s->absolute_step ? 1.0 : fmax(fabs(x), 1.0);
            gc_set(in->work, in->dtype, i, x + p * h * scale * gc_rng_direction(&r));
        }
        rc = gc_apply(s, res);
        for (int32_t o = 0; !rc && o < s->n_out; o++)
            for (int64_t j = 0; j < s->out[o].n; j++)
                table[(size_t)(p + half) * s->m_total + s->out[o].offset + j] =
                    gc_get(res[o]->data, res[o]->dtype, j);
    }
    if (in->n > 0) memcpy(in->work, in->orig, (size_t)in->n * tsr_dtype_size(in->dtype));
    if (rc) return rc;
    for (int64_t j = 0; j < s->m_total; j++) {
        double f[GC_NOISE_POINTS];
        for (int p = 0; p < GC_NOISE_POINTS; p++) f[p] = table[(size_t)p * s->m_total + j];
        delta[j] = ecnoise(f, GC_NOISE_POINTS);
    }
    return 0;
}
