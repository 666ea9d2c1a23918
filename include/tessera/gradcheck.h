/* SPDX-License-Identifier: MIT */
/*
 * Tessera gradient checks: compare a component's derivative endpoints
 * (jvp, vjp, jacobian) with finite differences of its apply, and its hvp
 * with finite differences of its vjp (or of apply).
 *
 *     tsr_gradcheck_options o = {.struct_size = sizeof o, .seed = 7};
 *     tsr_gradcheck_report *r;
 *     tsr_error err = TSR_ERROR_INIT;
 *     if (tsr_gradcheck_run(c, inputs, &o, &r, &err) != 0) {
 *         fprintf(stderr, "%s\n", err.message);   // could not check
 *     } else if (!tsr_gradcheck_passed(r)) {
 *         ...                                      // a derivative is wrong
 *     }
 *     tsr_gradcheck_report_free(r);
 *
 * The check calls the component only through the public call API, so it
 * works in every mode (inproc, isolated, worker).
 *
 * What is checked
 *   Selected inputs and outputs: the differentiable fields (or those named
 *   in the options). Fields of dtype float32 and float64 are checked;
 *   float16 and complex fields are listed as skipped with the reason.
 *   Every other input is held fixed at the value given.
 *   Selected endpoints: those the plugin implements itself (or those named
 *   in the options; an endpoint the host serves by finite differences,
 *   see plugin.h fd_method, is checked only when named).
 *
 * Sampling. For each selected input field, up to max_evals flat element
 * indices are drawn without replacement (all of them when the field is no
 * larger); likewise for each selected output field. The same draw serves
 * every (input, output) pair, so the finite differences of one input
 * element serve all outputs. Draws come from a PRNG seeded by `seed`: the
 * same options give the same checks.
 *
 * Finite differences. For a sampled input element i with value x_i, the
 * step is h = eps * max(|x_i|, 1) (relative, the default) or h = eps
 * (absolute_step). The column i of every selected output is the central
 * difference (f(x + h e_i) - f(x - h e_i)) / (x_i^+ - x_i^-), dividing by
 * the step as represented in the input's dtype: 2 apply calls per
 * sampled input element.
 *
 * Noise. A solver's outputs carry rounding far above the unit roundoff, and
 * a central difference divides it by the step. Before its differences,
 * each selected input field gets a noise probe: apply at 6 more points
 * x + p h' v (p = -3..3, v random on that field, h' = eps / 100), and
 * More and Wild's ECnoise estimate of each output element's noise delta
 * from the higher differences of those values.
 *
 * Cost: 1 + sum over selected input fields of (6 + 2 * sampled elements)
 * apply calls, plus the endpoint calls below.
 *
 * Strategy (the default, non-Taylor mode), in this order:
 *   1. jacobian (when checked): one call for every selected pair; the
 *      block's column i, every output element, against the FD column.
 *   2. jvp, when jacobian was checked and passed every comparison: one jvp
 *      call with a random dense tangent on every selected input, every
 *      output element compared with J t computed from the verified blocks;
 *      vjp likewise: one call with a random dense cotangent on every
 *      selected output, every input element compared with c^T J. The
 *      tolerance scale of these comparisons is sum |J| |t| (sum |c| |J|)
 *      rather than the value itself, which may cancel.
 *   3. Otherwise (jacobian not checked, or it failed):
 *      jvp: tangent e_i for each sampled input element, one call each, every
 *      output element compared with the FD column (when jacobian is also
 *      checked and failed: the sampled output elements only, from stored
 *      FD values, so that no apply is repeated);
 *      vjp: cotangent e_j for each sampled output element j, one call each
 *      (all selected inputs at once), its value at each sampled input
 *      element compared with the FD value.
 *   A comparison passes when |got - want| <= atol + rtol * |want| + noise,
 *   where noise = max(8 u max(|f(x+h e_i)|, |f(x-h e_i)|), 16 delta) /
 *   (x_i^+ - x_i^-) bounds the error of the central difference itself (u:
 *   the output's unit roundoff; zero in the dense comparisons of step 2).
 *   NaN never passes.
 *
 * Taylor mode (taylor = 1; no step or tolerance to choose, eps only sizes
 * the noise probe): for each selected
 * input field I, a random direction v (dense on I, zero elsewhere; scaled
 * by max(|x_k|, 1) unless absolute_step) and, for each selected output O,
 * a random cotangent w; with h_k = h0 / 2^k (k = 0 .. taylor_steps-1):
 *   jvp       r(h) = || f_O(x + h v) - f_O(x) - h jvp(v)_O ||_2
 *   jacobian  r(h) = || f_O(x + h v) - f_O(x) - h (J v)_O ||_2
 *   vjp       r(h) = | w . (f_O(x + h v) - f_O(x)) - h vjp(w)_I . v |
 * A correct derivative gives r = O(h^2), a wrong one r = O(h). The observed
 * orders are log2(r(h_k) / r(h_k+1)); an order counts only where both
 * residuals exceed their floor: 1024 u (||f_O(x)|| + ||f_O(x + h v)||)
 * (for vjp weighted by |w|), plus the input's rounding of x + h v, plus 16
 * times the noise of the residual from the noise probe (above, run for
 * each input field). The (endpoint, I, O) test passes when the last two
 * counted orders are >= taylor_min_order (the early, large steps may be
 * pre-asymptotic), or when none counts: the residual is at rounding level,
 * as for a linear map. Cost: 1 + n_inputs * (6 + taylor_steps) applies,
 * one jvp call per input field, one vjp call per output field, one
 * jacobian call.
 *
 * hvp (TSR_CHECK_HVP; by default when the component has a native hvp),
 * in either mode, after the others: one hvp call over every selected
 * input and output, with a random dense cotangent w (entries in [-1, 1))
 * and tangent v (entries +-[0.5, 1)). Along v the step is the largest
 * that moves no element by more than its own relative step:
 * t = step * min_i max(|x_i|, 1) / |v_i| (1 instead of max(|x_i|, 1) with
 * absolute_step).
 *   With a native vjp that did not fail its own checks (reference
 *     VS_VJP_FD): (vjp_w(x + t v) -
 *     vjp_w(x - t v)) / 2t, step eps, every element of every selected
 *     input compared; noise = 8 u max(|vjp+|, |vjp-|) / 2t. 2 vjp calls
 *     (progress counts them, vjp's summary does not).
 *   Otherwise (reference VS_FD): second differences of g = w . f at each
 *     sampled input element i, (g(+h e_i + t v) - g(+h e_i - t v) -
 *     g(-h e_i + t v) + g(-h e_i - t v)) / 4 h t, h = step * max(|x_i|, 1),
 *     step eps^(3/4) when eps is given, else u^(1/4) (1e-4 for float64);
 *     noise = 16 u sum_j |w_j f_j| / (h t). 4 applies per sampled element.
 *   A comparison passes when |got - want| <= atol + rtol |want| + noise
 *   (tolerances of the input's dtype). Failures have output NULL and
 *   out_index -1 (a dense cotangent).
 *
 * Errors: tsr_gradcheck_run returns 0 when the check ran to the end,
 * whatever it found (see tsr_gradcheck_passed), or a negative TSR_E_*
 * code, with err filled, when it could not: bad options, a field named
 * twice or a step too small to move an input in its dtype (TSR_E_ARGUMENT),
 * an unknown field (TSR_E_UNKNOWN_FIELD), a field that is not
 * differentiable (TSR_E_NOT_DIFFERENTIABLE), an endpoint the component
 * lacks (TSR_E_UNSUPPORTED), inputs or a call the component refused or
 * failed (the call's code and message), out of memory (TSR_E_NOMEM).
 *
 * Thread safety: tsr_gradcheck_run uses call objects of its own, so it may
 * run while other threads call the same component (and several checks may
 * run at once); the progress function is called from the calling thread.
 * A report is read-only once returned: its accessors may be used from any
 * number of threads until tsr_gradcheck_report_free. Nothing here writes to
 * stdout or stderr.
 */
#ifndef TESSERA_GRADCHECK_H
#define TESSERA_GRADCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Endpoints to check, a bitmask. */
#define TSR_CHECK_JVP (1u << TSR_EP_JVP)
#define TSR_CHECK_VJP (1u << TSR_EP_VJP)
#define TSR_CHECK_JACOBIAN (1u << TSR_EP_JACOBIAN)
#define TSR_CHECK_HVP (1u << TSR_EP_HVP)
#define TSR_CHECK_ALL (TSR_CHECK_JVP | TSR_CHECK_VJP | TSR_CHECK_JACOBIAN | TSR_CHECK_HVP)

/* Progress: `done` of `total` endpoint calls made (apply and derivatives).
 * total may grow once, when a failed jacobian makes jvp and vjp fall back
 * to element-by-element checks. */
typedef void (*tsr_gradcheck_progress_fn)(void *user, int64_t done, int64_t total);

/* Defaults, used for members left zero. */
#define TSR_GRADCHECK_DEFAULT_MAX_EVALS 100
#define TSR_GRADCHECK_DEFAULT_MAX_FAILURES 1000
#define TSR_GRADCHECK_DEFAULT_TAYLOR_STEPS 8
#define TSR_GRADCHECK_MAX_TAYLOR_STEPS 40
#define TSR_GRADCHECK_NOISE_PROBE_EVALS 6   /* applies of the noise probe per input field */
#define TSR_GRADCHECK_DEFAULT_MIN_ORDER 1.8
/* Per dtype: float64 / float32 (a pair with a float32 field uses the
 * float32 values). */
#define TSR_GRADCHECK_F64_RTOL 1e-5
#define TSR_GRADCHECK_F64_ATOL 1e-8
#define TSR_GRADCHECK_F64_EPS 1e-5
#define TSR_GRADCHECK_F64_TAYLOR_H0 1e-3
#define TSR_GRADCHECK_F32_RTOL 1e-2
#define TSR_GRADCHECK_F32_ATOL 1e-4
#define TSR_GRADCHECK_F32_EPS 1e-3
#define TSR_GRADCHECK_F32_TAYLOR_H0 1e-1

/*
 * Options. struct_size first, so that the struct can grow: members past
 * struct_size, and members left zero, take their defaults, so
 *     tsr_gradcheck_options o = {.struct_size = sizeof o};
 * asks for the defaults (as does passing NULL). Strings are borrowed for
 * the duration of tsr_gradcheck_run.
 */
typedef struct tsr_gradcheck_options {
    uint32_t struct_size;
    uint32_t endpoints;               /* TSR_CHECK_*; 0: every native derivative endpoint */
    const char *const *input_paths;   /* inputs to differentiate */
    int32_t n_input_paths;            /* 0: every differentiable input */
    const char *const *output_paths;  /* outputs to differentiate */
    int32_t n_output_paths;           /* 0: every differentiable output */
    int64_t max_evals;        /* sampled elements per field; 0: 100 */
    uint64_t seed;            /* of the sampling and the random seeds; any value */
    double rtol;              /* 0: by dtype (see above); must not be negative */
    double atol;              /* 0: by dtype */
    double eps;               /* FD step; 0: by dtype */
    int absolute_step;        /* 1: h = eps; 0: h = eps * max(|x_i|, 1) */
    int taylor;               /* 1: Taylor remainder convergence instead of FD */
    int32_t taylor_steps;     /* number of steps h0, h0/2, ...; 0: 8; 3 .. 40 */
    double taylor_h0;         /* first step; 0: by dtype */
    double taylor_min_order;  /* 0: 1.8 */
    int64_t max_failures;     /* failures kept in the report (all are counted); 0: 1000 */
    tsr_gradcheck_progress_fn progress;   /* NULL: none */
    void *progress_user;
} tsr_gradcheck_options;

typedef struct tsr_gradcheck_report tsr_gradcheck_report;

/*
 * Check the derivatives of c at the point `inputs`: tsr_component_n_inputs(c)
 * arrays in schema order (every input, as tsr_call_set_input takes them;
 * the check copies what it perturbs and never writes to them). opts may
 * be NULL for the defaults. On success *out is a report (free it with
 * tsr_gradcheck_report_free); on failure *out is NULL and err (if not
 * NULL) holds the code and a message naming the field or endpoint.
 * Thread: any thread; calls of c from other threads may run meanwhile
 *   (the check runs its own tsr_call objects).
 * Ownership: inputs and opts are read during the call only; *out belongs
 *   to the caller until tsr_gradcheck_report_free.
 * Returns: 0 (whatever the verdict: see tsr_gradcheck_passed) or a
 *   negative TSR_E_* code.
 */
TSR_API int tsr_gradcheck_run(tsr_component *c, const tsr_array *inputs,
                              const tsr_gradcheck_options *opts, tsr_gradcheck_report **out,
                              tsr_error *err);

/* Free a report. Accepts NULL.
 * Thread: the thread that owns r; no other may read it meanwhile. */
TSR_API void tsr_gradcheck_report_free(tsr_gradcheck_report *r);

/* Whether every check passed (also when there was nothing to check).
 * Thread: reports are read-only; any number of threads may read one.
 * Returns: 1 or 0. */
TSR_API int tsr_gradcheck_passed(const tsr_gradcheck_report *r);
/* The number of apply calls the check made, the unperturbed one included.
 * Thread: as tsr_gradcheck_passed.
 * Returns: the count (0 for r NULL). */
TSR_API int64_t tsr_gradcheck_apply_evals(const tsr_gradcheck_report *r);
/* Whether the report is of Taylor mode (opts->taylor).
 * Thread: as tsr_gradcheck_passed.
 * Returns: 1 or 0. */
TSR_API int tsr_gradcheck_is_taylor(const tsr_gradcheck_report *r);

/* What was compared with what. */
typedef enum tsr_gradcheck_reference {
    TSR_GRADCHECK_VS_NONE = 0,      /* not checked */
    TSR_GRADCHECK_VS_FD = 1,        /* finite differences of apply */
    TSR_GRADCHECK_VS_JACOBIAN = 2,  /* the jacobian, verified against FD first */
    TSR_GRADCHECK_VS_TAYLOR = 3,    /* Taylor remainder convergence */
    TSR_GRADCHECK_VS_VJP_FD = 4     /* hvp: central differences of the native vjp */
} tsr_gradcheck_reference;

/* One endpoint's outcome. */
typedef struct tsr_gradcheck_summary {
    int checked;                 /* 1 if the endpoint was checked */
    tsr_gradcheck_reference reference;
    int64_t checks;              /* element comparisons; Taylor: (input, output) tests */
    int64_t failures;            /* comparisons or tests that failed */
    double max_abs_err;          /* over all comparisons (0 in Taylor mode) */
    double max_rel_err;
    int64_t calls;               /* calls of this endpoint */
} tsr_gradcheck_summary;

/* The summary of one derivative endpoint's checks.
 * Thread: as tsr_gradcheck_passed.
 * Ownership: the summary belongs to r and lives as long as it.
 * Returns: the summary of jvp, vjp, jacobian or hvp; NULL for any other endpoint. */
TSR_API const tsr_gradcheck_summary *tsr_gradcheck_summary_of(const tsr_gradcheck_report *r,
                                                              tsr_endpoint ep);

/* One failed comparison. Names live as long as the component. */
typedef struct tsr_gradcheck_failure {
    tsr_endpoint endpoint;
    tsr_gradcheck_reference reference;
    const char *input;       /* NULL: a dense tangent over every selected input */
    const char *output;      /* NULL: a dense cotangent over every selected output */
    int64_t in_index;        /* flat (C order) index into the input; -1: a dense direction */
    int64_t out_index;       /* flat index into the output; -1: a dense cotangent */
    int32_t in_rank, out_rank;
    int64_t in_multi[TSR_MAX_FIELD_RANK];   /* in_index as a multi-index */
    int64_t out_multi[TSR_MAX_FIELD_RANK];
    double got;              /* the endpoint's value */
    double want;             /* the reference value (FD, or from the jacobian) */
    double abs_err;          /* |got - want| */
    double rel_err;          /* abs_err / max(|want|, atol) (dense: the scale for |want|) */
    double tolerance;        /* the bound abs_err exceeded */
} tsr_gradcheck_failure;

/* The number of failures kept (at most max_failures; the summaries count
 * them all).
 * Thread: as tsr_gradcheck_passed.
 * Returns: the count. */
TSR_API int64_t tsr_gradcheck_n_failures(const tsr_gradcheck_report *r);
/* Failure k of the kept ones, 0 <= k < tsr_gradcheck_n_failures(r).
 * Thread: as tsr_gradcheck_passed.
 * Ownership: the failure belongs to r; its names live as long as the component.
 * Returns: the failure, or NULL for k out of range. */
TSR_API const tsr_gradcheck_failure *tsr_gradcheck_failure_at(const tsr_gradcheck_report *r,
                                                              int64_t k);

/* A field left out of the check. */
typedef struct tsr_gradcheck_skip {
    const char *field;
    int is_input;            /* 1 input, 0 output */
    const char *reason;      /* e.g. "complex128 fields are not checked" */
} tsr_gradcheck_skip;

/* The number of fields left out of the check (complex, integer, ...).
 * Thread: as tsr_gradcheck_passed.
 * Returns: the count. */
TSR_API int32_t tsr_gradcheck_n_skipped(const tsr_gradcheck_report *r);
/* Skipped field k, 0 <= k < tsr_gradcheck_n_skipped(r).
 * Thread: as tsr_gradcheck_passed.
 * Ownership: belongs to r; its strings live as long as the component.
 * Returns: the entry, or NULL for k out of range. */
TSR_API const tsr_gradcheck_skip *tsr_gradcheck_skipped_at(const tsr_gradcheck_report *r,
                                                           int32_t k);

/* One Taylor test: an endpoint and an (input, output) pair. */
typedef struct tsr_gradcheck_taylor {
    tsr_endpoint endpoint;
    const char *input;
    const char *output;
    int32_t n_steps;
    const double *step;      /* n_steps values of h */
    const double *residual;  /* n_steps values of r(h) */
    const double *floor;     /* n_steps rounding floors: a residual counts above its floor */
    const double *order;     /* n_steps - 1 orders; NaN where not counted (rounding floor) */
    int32_t n_counted;       /* orders counted */
    int passed;
} tsr_gradcheck_taylor;

/* The number of Taylor tests in a Taylor-mode report (0 otherwise).
 * Thread: as tsr_gradcheck_passed.
 * Returns: the count. */
TSR_API int32_t tsr_gradcheck_n_taylor(const tsr_gradcheck_report *r);
/* Taylor test k, 0 <= k < tsr_gradcheck_n_taylor(r).
 * Thread: as tsr_gradcheck_passed.
 * Ownership: the test and its arrays belong to r and live as long as it.
 * Returns: the test, or NULL for k out of range. */
TSR_API const tsr_gradcheck_taylor *tsr_gradcheck_taylor_at(const tsr_gradcheck_report *r,
                                                            int32_t k);

/*
 * The report as compact JSON:
 *   {"passed", "taylor", "apply_evals",
 *    "endpoints": {"jvp": {"checked", "reference", "checks", "failures",
 *                          "max_abs_err", "max_rel_err", "calls"}, "vjp", "jacobian",
 *                  "hvp"},
 *    "failures": [{"endpoint", "reference", "input", "output", "in_index",
 *                  "out_index", "in_multi", "out_multi", "got", "want",
 *                  "abs_err", "rel_err", "tolerance"}, ...],
 *    "skipped": [{"field", "kind", "reason"}, ...],
 *    "taylor_tests": [{"endpoint", "input", "output", "steps", "residuals",
 *                      "floors", "orders", "passed"}, ...]}
 * reference is "fd", "jacobian", "taylor", "vjp_fd" (hvp against
 * differences of the vjp) or null; an index of -1 is null;
 * non-finite numbers are null.
 * Thread: as tsr_gradcheck_passed.
 * Ownership: *out belongs to the caller: release it with tsr_json_free
 *   (payload.h); on failure it is NULL.
 * Returns: 0, or TSR_E_NOMEM / TSR_E_ARGUMENT with err set.
 */
TSR_API int tsr_gradcheck_report_json(const tsr_gradcheck_report *r, char **out, tsr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_GRADCHECK_H */
