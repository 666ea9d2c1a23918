/* SPDX-License-Identifier: MIT */
/* Gradient checks (gradcheck*.c): the state of one check, shared by its
 * parts. Not part of the public API.
 *   gradcheck.c          tsr_gradcheck_run: options, the base point, dispatch
 *   gradcheck_select.c   which endpoints and fields are checked
 *   gradcheck_sample.c   the PRNG, sampling, element access
 *   gradcheck_eval.c     running apply and the derivative endpoints
 *   gradcheck_fd.c       the finite-difference strategy
 *   gradcheck_noise.c    how noisy apply is, for the FD tolerance
 *   gradcheck_dense.c    jvp and vjp against a verified jacobian
 *   gradcheck_taylor.c   Taylor remainder convergence
 *   gradcheck_repeat.c   each endpoint's last call, run again, must agree
 *   gradcheck_hvp.c      hvp against differences of the vjp or of apply
 *   gradcheck_report.c   the report object and its accessors
 *   gradcheck_json.c     the report as JSON
 */
#ifndef TESSERA_CORE_GRADCHECK_INTERNAL_H
#define TESSERA_CORE_GRADCHECK_INTERNAL_H

#include <stdint.h>

#include "tessera/gradcheck.h"

/* A selected input: the caller's values, and a copy that FD perturbs. */
typedef struct gc_in {
    int32_t field;               /* schema index */
    const char *name;
    tsr_dtype dtype;
    int32_t rank;
    int64_t shape[TSR_MAX_FIELD_RANK];
    int64_t n;
    const void *orig;            /* the caller's data */
    void *work;                  /* perturbed copy, bound to the apply call */
    void *seed;                  /* a tangent buffer, shaped like the input */
    int64_t *sample;             /* sorted flat indices */
    int64_t n_sample;
    double eps, h0;              /* FD step and Taylor first step */
} gc_in;

/* A selected output, and where it lies in a column of all of them. */
typedef struct gc_out {
    int32_t field;
    const char *name;
    tsr_dtype dtype;
    int32_t rank;
    int64_t shape[TSR_MAX_FIELD_RANK];
    int64_t n;
    int64_t offset;              /* in a column of every selected output */
    void *seed;                  /* a cotangent buffer, shaped like the output */
    int64_t *sample;
    int64_t n_sample;
    int64_t sample_offset;       /* in a vector of every sampled output element */
} gc_out;

typedef struct gc_session {
    tsr_component *c;
    tsr_error *err;
    /* resolved options */
    uint32_t endpoints;
    int64_t max_evals;
    uint64_t seed;
    double rtol, atol;           /* 0: by dtype */
    double eps, h0;              /* 0: by dtype */
    int absolute_step;
    int32_t taylor_steps;
    double min_order;
    tsr_gradcheck_progress_fn progress;
    void *progress_user;
    /* fields */
    const tsr_array *point;      /* the caller's inputs, schema order */
    gc_in *in;
    int32_t n_in;
    gc_out *out;
    int32_t n_out;
    const char **in_names, **out_names;
    int64_t m_total;             /* elements of every selected output */
    int64_t m_sampled;           /* sampled output elements, all outputs */
    double *base;                /* f(x) of the selected outputs, m_total */
    /* calls */
    tsr_call *apply, *jvp, *vjp, *jac;
    int64_t done, total;         /* progress */
    int uncounted;               /* calls not counted in summaries or progress (repeats) */
    tsr_gradcheck_report *rep;
} gc_session;

/* ---- gradcheck_sample.c --------------------------------------------------- */

/* splitmix64: a stream per purpose and field, so that restricting the check
 * to fewer fields keeps the draws of the others. */
uint64_t gc_rng_init(uint64_t seed, uint32_t purpose, int32_t field);
uint64_t gc_rng_next(uint64_t *state);
double gc_rng_unit(uint64_t *state);                 /* [0, 1) */
double gc_rng_sym(uint64_t *state);                  /* [-1, 1) */
double gc_rng_direction(uint64_t *state);            /* +-[0.5, 1) */
/* k distinct sorted indices from [0, n) (all when k >= n) into out. */
int64_t gc_sample(uint64_t *state, int64_t n, int64_t k, int64_t *out);

int gc_is_real(tsr_dtype dt);                        /* float32 or float64 */
double gc_unit_roundoff(tsr_dtype dt);
double gc_get(const void *data, tsr_dtype dt, int64_t i);
/* Stores v (rounded to dt); returns the value stored. */
double gc_set(void *data, tsr_dtype dt, int64_t i, double v);
/* The multi-index (C order) of a flat index into an array of that shape. */
void gc_unravel(int64_t index, int32_t rank, const int64_t *shape, int64_t *multi);

/* Tolerances of an (input, output) pair. */
double gc_rtol(const gc_session *s, const gc_in *in, const gc_out *out);
double gc_atol(const gc_session *s, const gc_in *in, const gc_out *out);

/* ---- gradcheck_select.c -------------------------------------------------- */

int gc_select(gc_session *s, const tsr_gradcheck_options *o);
/* Sizes, samples and buffers, once the base point has run. */
int gc_prepare(gc_session *s);

/* ---- gradcheck_eval.c --------------------------------------------------- */

int gc_fail(gc_session *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int gc_call_failed(gc_session *s, tsr_call *call, const char *what);
void gc_progress(gc_session *s, int64_t more_total, int64_t done);
/* Bind every input of a call to the caller's point. */
int gc_bind_point(gc_session *s, tsr_call *call);
/* apply at the current work copies; out[o] receives each selected output. */
int gc_apply(gc_session *s, const tsr_array **out);
/* Run jvp with jvp_inputs = selected input k (-1: all of them), every
 * selected output, and the inputs' seed buffers as tangents. */
int gc_run_jvp(gc_session *s, int32_t k);
/* Run vjp with every selected input, vjp_outputs = selected output o (-1:
 * all of them), and the outputs' seed buffers as cotangents. */
int gc_run_vjp(gc_session *s, int32_t o);
/* Run jacobian for every selected pair. */
int gc_run_jacobian(gc_session *s);
/* A result of the last jvp (output o) or vjp (input k), or a jacobian block. */
const tsr_array *gc_jvp_result(gc_session *s, int32_t o);
const tsr_array *gc_vjp_result(gc_session *s, int32_t k);
const tsr_array *gc_jac_block(gc_session *s, int32_t o, int32_t k);

/* ---- gradcheck_noise.c -------------------------------------------------- */

/* Points of the noise probe: GC_NOISE_POINTS - 1 applies per input field. */
#define GC_NOISE_POINTS (TSR_GRADCHECK_NOISE_PROBE_EVALS + 1)
/* delta[j]: the noise (standard deviation) of output element j of the
 * column (m_total) when input k moves; table holds GC_NOISE_POINTS *
 * m_total doubles, res n_out pointers. */
int gc_noise_levels(gc_session *s, int32_t k, double *delta, double *table, const tsr_array **res);

/* ---- strategies --------------------------------------------------------- */

int gc_run_fd(gc_session *s);
int gc_check_dense(gc_session *s);
int gc_run_taylor(gc_session *s);
/* After a strategy: each endpoint's last call run again gives the same
 * results (TSR_E_PLUGIN_RESULT naming the first difference otherwise). */
int gc_check_repeatable(gc_session *s);
/* hvp (when selected), last: it reuses the seed and working buffers. */
int gc_check_hvp(gc_session *s);

/* ---- gradcheck_report.c ------------------------------------------------- */

tsr_gradcheck_report *gc_report_new(int taylor, int64_t max_failures);
tsr_gradcheck_summary *gc_summary(tsr_gradcheck_report *r, tsr_endpoint ep);
void gc_count_apply(tsr_gradcheck_report *r);
int gc_add_skip(tsr_gradcheck_report *r, const char *field, int is_input, const char *reason);

/* One comparison: got against want, failing when |got - want| > tol.
 * scale is what rel_err divides by. Returns 0 or TSR_E_NOMEM. */
typedef struct gc_cmp {
    tsr_endpoint ep;
    tsr_gradcheck_reference ref;
    const gc_in *in;
    const gc_out *out;
    int64_t in_index, out_index;   /* -1: dense */
    double got, want, tol, scale;
} gc_cmp;
int gc_compare(tsr_gradcheck_report *r, const gc_cmp *cmp);

/* A Taylor test; the arrays are copied. */
int gc_add_taylor(tsr_gradcheck_report *r, tsr_endpoint ep, const char *input, const char *output,
                  int32_t n_steps, const double *step, const double *residual, const double *floor_,
                  double min_order);

#endif
